src_plugin_libplugins_a_SOURCES += src/plugin/header/header.c
TESTS += tests/integration/header.sh
EXTRA_DIST += tests/integration/header.sh src/plugin/header/README.md
