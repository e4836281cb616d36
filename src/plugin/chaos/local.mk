# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/chaos/chaos.c
TESTS += tests/integration/chaos.sh
EXTRA_DIST += tests/integration/chaos.sh src/plugin/chaos/README.md
# the chaos plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_chaos
TESTS += tests/unit/test_chaos
tests_unit_test_chaos_SOURCES = tests/unit/test_chaos.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_chaos_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_chaos_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
