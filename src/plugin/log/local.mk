# SPDX-License-Identifier: Apache-2.0
# src/plugin/log: sources and tests of the log plugin
src_plugin_libplugins_a_SOURCES += src/plugin/log/log.c src/plugin/log/replacer.c \
	src/plugin/log/replacer.h
EXTRA_DIST += src/plugin/log/README.md

# unit tests for log, errors and reload (formats, classes, consolidation, hashes)
check_PROGRAMS += tests/unit/test_log
TESTS += tests/unit/test_log
tests_unit_test_log_SOURCES = tests/unit/test_log.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_log_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_log_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

TESTS += tests/integration/log.sh
EXTRA_DIST += tests/integration/log.sh
