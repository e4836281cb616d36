# src/plugin/whoami: sources and tests of the whoami plugin
