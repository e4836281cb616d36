src_plugin_libplugins_a_SOURCES += src/plugin/local/local.c
TESTS += tests/integration/local.sh
EXTRA_DIST += tests/integration/local.sh src/plugin/local/README.md
