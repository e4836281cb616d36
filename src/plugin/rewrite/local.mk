# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/rewrite/rewrite.h src/plugin/rewrite/setup.c \
	src/plugin/rewrite/query.c src/plugin/rewrite/reply.c
TESTS += tests/integration/rewrite.sh
EXTRA_DIST += tests/integration/rewrite.sh src/plugin/rewrite/README.md

check_PROGRAMS += tests/unit/test_rewrite
TESTS += tests/unit/test_rewrite
tests_unit_test_rewrite_SOURCES = tests/unit/test_rewrite.c tests/unit/testenv.c tests/unit/testenv.h \
	src/plugins.c
tests_unit_test_rewrite_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_rewrite_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
