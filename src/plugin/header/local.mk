# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/header/header.c
TESTS += tests/integration/header.sh
EXTRA_DIST += tests/integration/header.sh src/plugin/header/README.md
# the header plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_header
TESTS += tests/unit/test_header
tests_unit_test_header_SOURCES = tests/unit/test_header.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_header_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_header_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
