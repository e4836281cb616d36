# SPDX-License-Identifier: Apache-2.0
# src/plugin/autopath: server-side search path completion
src_plugin_libplugins_a_SOURCES += src/plugin/autopath/autopath.c \
	src/plugin/autopath/autopath.h src/plugin/autopath/search.c
EXTRA_DIST += src/plugin/autopath/README.md

check_PROGRAMS += tests/unit/test_autopath
TESTS += tests/unit/test_autopath
tests_unit_test_autopath_SOURCES = tests/unit/test_autopath.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_autopath_CFLAGS = $(UNIT_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_autopath_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
TESTS += tests/integration/autopath.sh
EXTRA_DIST += tests/integration/autopath.sh
