# SPDX-License-Identifier: Apache-2.0
# src/plugin/health: sources and tests of the health plugin
src_plugin_libplugins_a_SOURCES += src/plugin/health/health.c
TESTS += tests/integration/health.sh
EXTRA_DIST += tests/integration/health.sh src/plugin/health/README.md
# the health plugin's Corefile stanza
check_PROGRAMS += tests/unit/test_health
TESTS += tests/unit/test_health
tests_unit_test_health_SOURCES = tests/unit/test_health.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_health_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_health_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
