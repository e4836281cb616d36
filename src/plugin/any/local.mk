# src/plugin/any: sources and tests of the any plugin
