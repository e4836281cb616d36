src_libtopo_a_SOURCES += \
	src/plugin/topology/topology.c src/plugin/topology/topo_plugin.h \
	src/plugin/topology/explain.c \
	src/plugin/topology/observer.c

TESTS += tests/integration/manifests.sh
EXTRA_DIST += tests/integration/manifests.sh conf/kube-dns.yaml
