src_plugin_libplugins_a_SOURCES += src/plugin/dns64/dns64.c
TESTS += tests/integration/dns64.sh
EXTRA_DIST += tests/integration/dns64.sh
