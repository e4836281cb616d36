# src/plugin/log: sources and tests of the log plugin
