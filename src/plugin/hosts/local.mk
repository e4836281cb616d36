src_plugin_libplugins_a_SOURCES += src/plugin/hosts/hosts.c src/plugin/hosts/hosts.h
TESTS += tests/integration/hosts.sh
EXTRA_DIST += tests/integration/hosts.sh
