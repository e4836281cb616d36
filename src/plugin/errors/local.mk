# src/plugin/errors: sources and tests of the errors plugin
