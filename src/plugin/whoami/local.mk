# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/whoami/whoami.c
TESTS += tests/integration/whoami.sh
EXTRA_DIST += tests/integration/whoami.sh
# the whoami plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_whoami
TESTS += tests/unit/test_whoami
tests_unit_test_whoami_SOURCES = tests/unit/test_whoami.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_whoami_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_whoami_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
