# src/plugin/bind: sources and tests of the bind plugin
