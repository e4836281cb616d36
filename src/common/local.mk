# src/common: what every layer may use (log lines, Go formats, Go regular
# expressions, file reads, resolv.conf search lists, thread names).
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = \
	src/common/log.c src/common/log.h \
	src/common/gofmt.c src/common/gofmt.h \
	src/common/goregex.cc src/common/goregex.h \
	src/common/file.c src/common/file.h \
	src/common/sbuf.c src/common/sbuf.h \
	src/common/thread.c src/common/thread.h \
	src/common/resolvconf.c src/common/resolvconf.h

check_PROGRAMS += tests/unit/test_goregex
TESTS += tests/unit/test_goregex
tests_unit_test_goregex_SOURCES = tests/unit/test_goregex.c
tests_unit_test_goregex_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_goregex_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS) $(RE2_LIBS) $(PTHREAD_LIBS)

TESTS += tests/integration/threads.sh
EXTRA_DIST += tests/integration/threads.sh
