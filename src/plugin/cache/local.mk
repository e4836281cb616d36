# SPDX-License-Identifier: Apache-2.0
# src/plugin/cache: the cache plugin (CoreDNS's, plus topology variants)
src_plugin_libplugins_a_SOURCES += src/plugin/cache/cache.h src/plugin/cache/setup.c \
	src/plugin/cache/classify.c src/plugin/cache/table.c src/plugin/cache/cache.c
check_PROGRAMS += tests/unit/test_cache
TESTS += tests/unit/test_cache
tests_unit_test_cache_SOURCES = tests/unit/test_cache.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_cache_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_cache_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
TESTS += tests/integration/cache.sh
EXTRA_DIST += tests/integration/cache.sh
TESTS += tests/integration/cache_topology.sh
EXTRA_DIST += tests/integration/cache_topology.sh
