src_plugin_libplugins_a_SOURCES += src/plugin/chaos/chaos.c
TESTS += tests/integration/chaos.sh
EXTRA_DIST += tests/integration/chaos.sh src/plugin/chaos/README.md
