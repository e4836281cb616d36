# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/any/any.c
TESTS += tests/integration/any.sh
EXTRA_DIST += tests/integration/any.sh
# the any plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_any
TESTS += tests/unit/test_any
tests_unit_test_any_SOURCES = tests/unit/test_any.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_any_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_any_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
