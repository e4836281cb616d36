# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/debug/debug.c
TESTS += tests/integration/debug.sh
EXTRA_DIST += tests/integration/debug.sh src/plugin/debug/README.md
# the debug plugin's own logic: its Corefile stanza and what it does
check_PROGRAMS += tests/unit/test_debug
TESTS += tests/unit/test_debug
tests_unit_test_debug_SOURCES = tests/unit/test_debug.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_debug_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_debug_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
