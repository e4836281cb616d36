# SPDX-License-Identifier: Apache-2.0
# src/runtime: what the server, the API client and the topology engine all
# use at run time: the metrics registry and periodic background tasks.
# It sits above src/cluster (periodic tasks register with the store's RCU)
# and below src/k8s, src/topology and src/server.
noinst_LIBRARIES += src/runtime/libruntime.a
src_runtime_libruntime_a_SOURCES = \
	src/runtime/metrics.c src/runtime/metrics.h \
	src/runtime/periodic.c src/runtime/periodic.h

# Periodic tasks: the delay, the interval, kick and stop.
check_PROGRAMS += tests/unit/test_periodic
TESTS += tests/unit/test_periodic
tests_unit_test_periodic_SOURCES = tests/unit/test_periodic.c
tests_unit_test_periodic_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_periodic_LDADD = $(LIBRUNTIME) $(LIBCLUSTER) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)
