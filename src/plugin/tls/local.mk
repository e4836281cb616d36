src_plugin_libplugins_a_SOURCES += src/plugin/tls/tls.c
TESTS += tests/integration/dot.sh
EXTRA_DIST += tests/integration/dot.sh src/plugin/tls/README.md
