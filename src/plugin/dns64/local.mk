# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/dns64/dns64.c
TESTS += tests/integration/dns64.sh
EXTRA_DIST += tests/integration/dns64.sh
# Whole Corefiles through the real server: hosts wildcards, dns64.
check_PROGRAMS += tests/unit/test_corefile_answers
TESTS += tests/unit/test_corefile_answers
tests_unit_test_corefile_answers_SOURCES = tests/unit/test_corefile_answers.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_corefile_answers_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_corefile_answers_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
# the dns64 plugin's own logic: its Corefile stanza and what it does
check_PROGRAMS += tests/unit/test_dns64
TESTS += tests/unit/test_dns64
tests_unit_test_dns64_SOURCES = tests/unit/test_dns64.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_dns64_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_dns64_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
