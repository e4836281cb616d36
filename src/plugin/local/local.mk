# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/local/local.c
TESTS += tests/integration/local.sh
EXTRA_DIST += tests/integration/local.sh src/plugin/local/README.md
# the local plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_local
TESTS += tests/unit/test_local
tests_unit_test_local_SOURCES = tests/unit/test_local.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_local_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_local_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
