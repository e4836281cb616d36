# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += \
	src/plugin/topology/topology.c src/plugin/topology/topo_plugin.h \
	src/plugin/topology/explain.c

check_PROGRAMS += tests/unit/test_topology_plugin
TESTS += tests/unit/test_topology_plugin
tests_unit_test_topology_plugin_SOURCES = tests/unit/test_topology_plugin.c \
	tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_topology_plugin_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_topology_plugin_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

TESTS += tests/integration/node_local.sh
EXTRA_DIST += tests/integration/node_local.sh

TESTS += tests/integration/topology_locate.sh
EXTRA_DIST += tests/integration/topology_locate.sh tests/integration/answers.py
