# src/plugin/loadbalance: sources and tests of the loadbalance plugin
