# src/plugin/log: sources and tests of the log plugin
src_libtopo_a_SOURCES += src/plugin/log/log.c src/plugin/log/replacer.c \
	src/plugin/log/replacer.h src/plugin/log/gofmt.c src/plugin/log/gofmt.h
EXTRA_DIST += src/plugin/log/README.md

# unit tests for log, errors and reload (formats, classes, consolidation, hashes)
check_PROGRAMS += tests/unit/test_log
TESTS += tests/unit/test_log
tests_unit_test_log_SOURCES = tests/unit/test_log.c
tests_unit_test_log_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_log_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_log_LDADD = $(UNIT_DEPS)
tests_unit_test_log_DEPENDENCIES = src/libtopo.a

TESTS += tests/integration/log.sh
EXTRA_DIST += tests/integration/log.sh
