# SPDX-License-Identifier: Apache-2.0
# src/cluster: the cluster context (store, string table, decoders, locator).
noinst_LIBRARIES += src/cluster/libcluster.a
src_cluster_libcluster_a_SOURCES = \
	src/cluster/store.c src/cluster/store.h \
	src/cluster/strtab.c src/cluster/strtab.h \
	src/cluster/decode.c src/cluster/decode.h \
	src/cluster/pmap.c src/cluster/pmap.h \
	src/cluster/prefix.c src/cluster/prefix.h \
	src/cluster/locator.c src/cluster/locator.h

check_PROGRAMS += tests/unit/test_store
TESTS += tests/unit/test_store
tests_unit_test_store_SOURCES = tests/unit/test_store.c
tests_unit_test_store_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_store_LDADD = $(LIBCLUSTER) $(LIBCOMMON) $(CMOCKA_LIBS) $(CJSON_LIBS) \
	$(URCU_LIBS) $(PTHREAD_LIBS)
