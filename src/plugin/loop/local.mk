# src/plugin/loop: forwarding-loop detection by self-probe
src_plugin_libplugins_a_SOURCES += src/plugin/loop/loop.c
TESTS += tests/integration/loop.sh
EXTRA_DIST += tests/integration/loop.sh
