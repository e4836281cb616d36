# src/plugin/health: sources and tests of the health plugin
src_plugin_libplugins_a_SOURCES += src/plugin/health/health.c
TESTS += tests/integration/health.sh
EXTRA_DIST += tests/integration/health.sh src/plugin/health/README.md
