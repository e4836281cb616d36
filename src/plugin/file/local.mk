# SPDX-License-Identifier: Apache-2.0
# src/plugin/file: sources and tests of the file plugin
src_plugin_libplugins_a_SOURCES += src/plugin/file/file.c src/plugin/file/file.h \
	src/plugin/file/zone.c src/plugin/file/lookup.c src/plugin/file/xfr.c

check_PROGRAMS += tests/unit/test_file
TESTS += tests/unit/test_file tests/integration/file.sh
EXTRA_DIST += tests/integration/file.sh src/plugin/file/README.md \
	zones/README.md zones/example.org.zone zones/10.in-addr.arpa.zone
tests_unit_test_file_SOURCES = tests/unit/test_file.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_file_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_file_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
