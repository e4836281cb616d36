# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/timeouts/timeouts.c
TESTS += tests/integration/timeouts.sh
EXTRA_DIST += tests/integration/timeouts.sh src/plugin/timeouts/README.md
# the timeouts plugin's own logic: its Corefile stanza and what it does
check_PROGRAMS += tests/unit/test_timeouts
TESTS += tests/unit/test_timeouts
tests_unit_test_timeouts_SOURCES = tests/unit/test_timeouts.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_timeouts_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_timeouts_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
