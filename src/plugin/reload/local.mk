# src/plugin/reload: sources and tests of the reload plugin
