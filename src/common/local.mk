# SPDX-License-Identifier: Apache-2.0
# src/common: what every layer may use (log lines, Go formats, Go regular
# expressions, CIDRs, socket addresses, file reads, resolv.conf search lists,
# thread names, one DNS exchange on c-ares for background threads, growable
# arrays and string buffers, the system CA store).
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = \
	src/common/log.c src/common/log.h \
	src/common/gofmt.c src/common/gofmt.h \
	src/common/goregex.cc src/common/goregex.h \
	src/common/cidr.c src/common/cidr.h \
	src/common/addr.c src/common/addr.h \
	src/common/file.c src/common/file.h \
	src/common/sbuf.c src/common/sbuf.h \
	src/common/vec.c src/common/vec.h \
	src/common/tlsca.c src/common/tlsca.h \
	src/common/thread.c src/common/thread.h \
	src/common/resolvconf.c src/common/resolvconf.h \
	src/common/exchange.c src/common/exchange.h

check_PROGRAMS += tests/unit/test_cidr
TESTS += tests/unit/test_cidr
tests_unit_test_cidr_SOURCES = tests/unit/test_cidr.c
tests_unit_test_cidr_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_cidr_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_addr
TESTS += tests/unit/test_addr
tests_unit_test_addr_SOURCES = tests/unit/test_addr.c
tests_unit_test_addr_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_addr_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_goregex
TESTS += tests/unit/test_goregex
tests_unit_test_goregex_SOURCES = tests/unit/test_goregex.c
tests_unit_test_goregex_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_goregex_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS) $(RE2_LIBS) $(PTHREAD_LIBS)

# The fuzz harness of the pattern scan and RE2 behind it: a libFuzzer target
# when built with -DFUZZING_LIBFUZZER (scripts/fuzz goregex); here its main()
# runs a fixed set of generated patterns as a test.
check_PROGRAMS += tests/fuzz/fuzz_goregex
TESTS += tests/fuzz/fuzz_goregex
tests_fuzz_fuzz_goregex_SOURCES = tests/fuzz/fuzz_goregex.c
tests_fuzz_fuzz_goregex_CFLAGS = $(AM_CFLAGS) $(FUZZ_DEFS)
tests_fuzz_fuzz_goregex_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_goregex_LDADD = $(LIBCOMMON) $(RE2_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += tests/fuzz/goregex.dict tests/fuzz/corpus_goregex

TESTS += tests/integration/threads.sh
EXTRA_DIST += tests/integration/threads.sh

check_PROGRAMS += tests/unit/test_vec
TESTS += tests/unit/test_vec
tests_unit_test_vec_SOURCES = tests/unit/test_vec.c
tests_unit_test_vec_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_vec_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_tlsca
TESTS += tests/unit/test_tlsca
tests_unit_test_tlsca_SOURCES = tests/unit/test_tlsca.c
tests_unit_test_tlsca_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_tlsca_LDADD = $(LIBCOMMON) $(CMOCKA_LIBS) $(LIBEVENT_OPENSSL_LIBS) $(CRYPTO_LIBS)
