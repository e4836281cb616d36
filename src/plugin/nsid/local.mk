src_plugin_libplugins_a_SOURCES += src/plugin/nsid/nsid.c
TESTS += tests/integration/nsid.sh
EXTRA_DIST += tests/integration/nsid.sh src/plugin/nsid/README.md
