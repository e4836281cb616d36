# SPDX-License-Identifier: Apache-2.0
# src/topology: the topology engine (decision, hint consumption, the hint
# producers, the observer).
noinst_LIBRARIES += src/topology/libtopology.a
src_topology_libtopology_a_SOURCES = \
	src/topology/topology.h src/topology/internal.h \
	src/topology/engine.c \
	src/topology/decide.c \
	src/topology/compute.c \
	src/topology/observer.c \
	src/topology/metrics.c \
	src/topology/alloc.h \
	src/topology/alloc_cpu.c \
	src/topology/alloc_local.c \
	src/topology/trafficdist.c
TOPOLOGY_LIBS = $(LIBTOPOLOGY) $(LIBRUNTIME) $(LIBCLUSTER) $(LIBCOMMON)

check_PROGRAMS += tests/unit/test_topology
TESTS += tests/unit/test_topology
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_topology_LDADD = $(TOPOLOGY_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

TESTS += tests/integration/topology.sh
EXTRA_DIST += tests/integration/topology.sh tests/data/topology/cluster.yaml

# The hint producers are pure functions: their test needs nothing else.
check_PROGRAMS += tests/unit/test_alloc
TESTS += tests/unit/test_alloc
tests_unit_test_alloc_SOURCES = tests/unit/test_alloc.c
tests_unit_test_alloc_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_alloc_LDADD = $(LIBTOPOLOGY) $(LIBCLUSTER) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# Its fuzz harness (tests/fuzz/fuzz_store.c) is registered in tests/fuzz/local.mk.
