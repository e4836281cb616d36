# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/nsid/nsid.c
TESTS += tests/integration/nsid.sh
EXTRA_DIST += tests/integration/nsid.sh src/plugin/nsid/README.md
# the nsid plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_nsid
TESTS += tests/unit/test_nsid
tests_unit_test_nsid_SOURCES = tests/unit/test_nsid.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_nsid_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_nsid_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
