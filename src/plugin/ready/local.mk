# src/plugin/ready: sources and tests of the ready plugin
