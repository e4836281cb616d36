src_plugin_libplugins_a_SOURCES += src/plugin/bind/bind.c
TESTS += tests/integration/bind.sh
EXTRA_DIST += tests/integration/bind.sh
