# SPDX-License-Identifier: Apache-2.0
# src/plugin/loop: forwarding-loop detection by self-probe
src_plugin_libplugins_a_SOURCES += src/plugin/loop/loop.c
TESTS += tests/integration/loop.sh
EXTRA_DIST += tests/integration/loop.sh
# the loop plugin's stanza and its pass-through
check_PROGRAMS += tests/unit/test_loop
TESTS += tests/unit/test_loop
tests_unit_test_loop_SOURCES = tests/unit/test_loop.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_loop_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_loop_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
