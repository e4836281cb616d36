# src/plugin/hosts: sources and tests of the hosts plugin
