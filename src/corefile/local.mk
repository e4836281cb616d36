# SPDX-License-Identifier: Apache-2.0
# src/corefile: the Corefile lexer, parser and dispenser.
noinst_LIBRARIES += src/corefile/libcorefile.a
src_corefile_libcorefile_a_SOURCES = src/corefile/corefile.h \
	src/corefile/cf_private.h \
	src/corefile/lexer.c \
	src/corefile/parser.c \
	src/corefile/dispenser.c

check_PROGRAMS += tests/unit/test_corefile
TESTS += tests/unit/test_corefile
tests_unit_test_corefile_SOURCES = tests/unit/test_corefile.c
tests_unit_test_corefile_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_corefile_LDADD = $(LIBCOREFILE) $(LIBCOMMON) $(CMOCKA_LIBS)
# Its fuzz harness (tests/fuzz/fuzz_corefile.c) is registered in tests/fuzz/local.mk.
