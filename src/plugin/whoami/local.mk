src_plugin_libplugins_a_SOURCES += src/plugin/whoami/whoami.c
TESTS += tests/integration/whoami.sh
EXTRA_DIST += tests/integration/whoami.sh
