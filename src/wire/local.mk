# SPDX-License-Identifier: Apache-2.0
# src/wire: the wire library (domain names and DNS messages). It depends on
# nothing of topodns; its tests link only libwire.a (and ldns).
noinst_LIBRARIES += src/wire/libwire.a
src_wire_libwire_a_SOURCES = src/wire/dname.c src/wire/dname.h src/wire/msg.c src/wire/msg.h

check_PROGRAMS += tests/unit/test_dname tests/unit/test_msg
TESTS += tests/unit/test_dname tests/unit/test_msg
tests_unit_test_dname_SOURCES = tests/unit/test_dname.c
tests_unit_test_dname_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_dname_LDADD = $(LIBWIRE) $(CMOCKA_LIBS) $(LDNS_LIBS)
tests_unit_test_msg_SOURCES = tests/unit/test_msg.c
tests_unit_test_msg_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_msg_LDADD = $(LIBWIRE) $(CMOCKA_LIBS) $(LDNS_LIBS)

# Its fuzz harness (tests/fuzz/fuzz_msg.c) is registered in tests/fuzz/local.mk.
