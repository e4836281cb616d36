# src/plugin/health: sources and tests of the health plugin
