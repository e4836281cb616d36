src_plugin_libplugins_a_SOURCES += src/plugin/any/any.c
TESTS += tests/integration/any.sh
EXTRA_DIST += tests/integration/any.sh
