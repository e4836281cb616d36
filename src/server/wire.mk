# Wire library: domain names and DNS messages (no dependency on the server).
src_libtopo_a_SOURCES += src/server/dname.c src/server/dname.h src/server/msg.c src/server/msg.h

check_PROGRAMS += tests/unit/test_dname tests/unit/test_msg tests/fuzz/fuzz_msg
TESTS += tests/unit/test_dname tests/unit/test_msg tests/fuzz/fuzz_msg
tests_unit_test_dname_SOURCES = tests/unit/test_dname.c
tests_unit_test_dname_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_dname_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_dname_LDADD = $(UNIT_DEPS)
tests_unit_test_dname_DEPENDENCIES = src/libtopo.a
tests_unit_test_msg_SOURCES = tests/unit/test_msg.c
tests_unit_test_msg_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_msg_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_msg_LDADD = $(UNIT_DEPS)
tests_unit_test_msg_DEPENDENCIES = src/libtopo.a

# The message fuzz harness. Built with -fsanitize=fuzzer it is a libFuzzer
# target (see its top comment); here its standalone main() replays the
# corpus in tests/fuzz/corpus_msg/ (found through $top_srcdir) as a test.
tests_fuzz_fuzz_msg_SOURCES = tests/fuzz/fuzz_msg.c
tests_fuzz_fuzz_msg_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_msg_LDFLAGS = $(UNIT_WHOLE)
tests_fuzz_fuzz_msg_LDADD = $(DEP_LIBS)
tests_fuzz_fuzz_msg_DEPENDENCIES = src/libtopo.a
EXTRA_DIST += tests/fuzz/corpus_msg
