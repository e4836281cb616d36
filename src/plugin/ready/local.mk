# SPDX-License-Identifier: Apache-2.0
# src/plugin/ready: sources and tests of the ready plugin
src_plugin_libplugins_a_SOURCES += src/plugin/ready/ready.c
TESTS += tests/integration/ready.sh
EXTRA_DIST += tests/integration/ready.sh src/plugin/ready/README.md
# the ready plugin's Corefile stanza
check_PROGRAMS += tests/unit/test_ready
TESTS += tests/unit/test_ready
tests_unit_test_ready_SOURCES = tests/unit/test_ready.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_ready_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_ready_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
