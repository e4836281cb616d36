# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/bind/bind.c
TESTS += tests/integration/bind.sh
EXTRA_DIST += tests/integration/bind.sh
# the bind plugin's own logic: its Corefile stanza and what it does
check_PROGRAMS += tests/unit/test_bind
TESTS += tests/unit/test_bind
tests_unit_test_bind_SOURCES = tests/unit/test_bind.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_bind_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_bind_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
