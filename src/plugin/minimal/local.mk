src_plugin_libplugins_a_SOURCES += src/plugin/minimal/minimal.c
TESTS += tests/integration/minimal.sh
EXTRA_DIST += tests/integration/minimal.sh src/plugin/minimal/README.md
