src_plugin_libplugins_a_SOURCES += \
	src/plugin/topology/topology.c src/plugin/topology/topo_plugin.h \
	src/plugin/topology/explain.c
