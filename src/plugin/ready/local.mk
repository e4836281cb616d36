# src/plugin/ready: sources and tests of the ready plugin
src_plugin_libplugins_a_SOURCES += src/plugin/ready/ready.c
TESTS += tests/integration/ready.sh
EXTRA_DIST += tests/integration/ready.sh src/plugin/ready/README.md
