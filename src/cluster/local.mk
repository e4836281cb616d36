src_libtopo_a_SOURCES += \
	src/cluster/store.c src/cluster/store.h \
	src/cluster/decode.c src/cluster/decode.h \
	src/cluster/pmap.c src/cluster/pmap.h \
	src/cluster/locator.c src/cluster/locator.h

check_PROGRAMS += tests/unit/test_store
TESTS += tests/unit/test_store
tests_unit_test_store_SOURCES = tests/unit/test_store.c
tests_unit_test_store_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_store_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_store_LDADD = $(UNIT_DEPS)
tests_unit_test_store_DEPENDENCIES = src/libtopo.a
