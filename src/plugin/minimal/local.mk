# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/minimal/minimal.c
TESTS += tests/integration/minimal.sh
EXTRA_DIST += tests/integration/minimal.sh src/plugin/minimal/README.md
# the minimal plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_minimal
TESTS += tests/unit/test_minimal
tests_unit_test_minimal_SOURCES = tests/unit/test_minimal.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_minimal_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_minimal_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
