src_plugin_libplugins_a_SOURCES += src/plugin/bufsize/bufsize.c
TESTS += tests/integration/bufsize.sh
EXTRA_DIST += tests/integration/bufsize.sh
EXTRA_DIST += src/plugin/bufsize/README.md
