src_plugin_libplugins_a_SOURCES += \
	src/plugin/topology/topology.c src/plugin/topology/topo_plugin.h \
	src/plugin/topology/explain.c

TESTS += tests/integration/manifests.sh
EXTRA_DIST += tests/integration/manifests.sh conf/kube-dns.yaml
