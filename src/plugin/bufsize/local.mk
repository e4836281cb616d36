# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/bufsize/bufsize.c
TESTS += tests/integration/bufsize.sh
EXTRA_DIST += tests/integration/bufsize.sh
EXTRA_DIST += src/plugin/bufsize/README.md
# the bufsize plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_bufsize
TESTS += tests/unit/test_bufsize
tests_unit_test_bufsize_SOURCES = tests/unit/test_bufsize.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_bufsize_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_bufsize_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
