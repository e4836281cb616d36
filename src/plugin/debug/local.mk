src_plugin_libplugins_a_SOURCES += src/plugin/debug/debug.c
TESTS += tests/integration/debug.sh
EXTRA_DIST += tests/integration/debug.sh src/plugin/debug/README.md
