src_libtopo_a_SOURCES += \
	src/topology/topology.h \
	src/topology/client.c \
	src/topology/decide.c \
	src/topology/compute.c src/topology/internal.h \
	src/topology/metrics.c

check_PROGRAMS += tests/unit/test_topology
TESTS += tests/unit/test_topology
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_topology_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_topology_LDADD = $(UNIT_DEPS)
tests_unit_test_topology_DEPENDENCIES = src/libtopo.a

TESTS += tests/integration/topology.sh
EXTRA_DIST += tests/integration/topology.sh tests/data/topology/cluster.yaml

# alloc (engineer alloc)
src_libtopo_a_SOURCES += \
	src/topology/alloc.h \
	src/topology/alloc_cpu.c \
	src/topology/alloc_local.c \
	src/topology/trafficdist.c

check_PROGRAMS += tests/unit/test_alloc
TESTS += tests/unit/test_alloc
tests_unit_test_alloc_SOURCES = tests/unit/test_alloc.c
tests_unit_test_alloc_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_alloc_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_alloc_LDADD = $(UNIT_DEPS)
tests_unit_test_alloc_DEPENDENCIES = src/libtopo.a

# The store/topology fuzz harness (libFuzzer with -DFUZZING_LIBFUZZER; a
# deterministic damage sweep over the topology fixture under make check).
check_PROGRAMS += tests/fuzz/fuzz_store
TESTS += tests/fuzz/fuzz_store.sh
EXTRA_DIST += tests/fuzz/fuzz_store.sh
tests_fuzz_fuzz_store_SOURCES = tests/fuzz/fuzz_store.c
tests_fuzz_fuzz_store_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_store_LDFLAGS = $(UNIT_WHOLE)
tests_fuzz_fuzz_store_LDADD = $(DEP_LIBS)
tests_fuzz_fuzz_store_DEPENDENCIES = src/libtopo.a
