src_plugin_libplugins_a_SOURCES += src/plugin/loadbalance/loadbalance.c
TESTS += tests/integration/loadbalance.sh
EXTRA_DIST += tests/integration/loadbalance.sh
