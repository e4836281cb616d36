src_plugin_libplugins_a_SOURCES += src/plugin/timeouts/timeouts.c
TESTS += tests/integration/timeouts.sh
EXTRA_DIST += tests/integration/timeouts.sh src/plugin/timeouts/README.md
