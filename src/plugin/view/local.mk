# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/view/view.c src/plugin/view/expr.c \
	src/plugin/view/expr.h
TESTS += tests/integration/view.sh
EXTRA_DIST += tests/integration/view.sh src/plugin/view/README.md

check_PROGRAMS += tests/unit/test_view_expr
TESTS += tests/unit/test_view_expr
tests_unit_test_view_expr_SOURCES = tests/unit/test_view_expr.c
tests_unit_test_view_expr_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_view_expr_LDADD = $(LIBPLUGINS) $(CORE_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
# the view plugin's block logic: routing between blocks of one zone, stanza errors
check_PROGRAMS += tests/unit/test_view
TESTS += tests/unit/test_view
tests_unit_test_view_SOURCES = tests/unit/test_view.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_view_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_view_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
