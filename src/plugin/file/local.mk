# src/plugin/file: sources and tests of the file plugin
