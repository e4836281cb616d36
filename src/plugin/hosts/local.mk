# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/hosts/hosts.c src/plugin/hosts/hosts.h
TESTS += tests/integration/hosts.sh
EXTRA_DIST += tests/integration/hosts.sh
# the hosts plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_hosts
TESTS += tests/unit/test_hosts
tests_unit_test_hosts_SOURCES = tests/unit/test_hosts.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_hosts_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_hosts_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
