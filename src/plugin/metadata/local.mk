# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/metadata/metadata.c
TESTS += tests/integration/metadata.sh
EXTRA_DIST += tests/integration/metadata.sh src/plugin/metadata/README.md

check_PROGRAMS += tests/unit/test_metadata
TESTS += tests/unit/test_metadata
tests_unit_test_metadata_SOURCES = tests/unit/test_metadata.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_metadata_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_metadata_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
