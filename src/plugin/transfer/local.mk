# SPDX-License-Identifier: Apache-2.0
# src/plugin/transfer: outgoing zone transfers (AXFR/IXFR) from the zone
# sources the block's plugins publish (src/server/transfer.h)
src_plugin_libplugins_a_SOURCES += src/plugin/transfer/transfer.c
EXTRA_DIST += src/plugin/transfer/README.md
TESTS += tests/integration/transfer.sh
EXTRA_DIST += tests/integration/transfer.sh
check_PROGRAMS += tests/unit/test_transfer
TESTS += tests/unit/test_transfer
tests_unit_test_transfer_SOURCES = tests/unit/test_transfer.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_transfer_CFLAGS = $(UNIT_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_transfer_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
TESTS += tests/integration/xfr_stall.sh
EXTRA_DIST += tests/integration/xfr_stall.sh tests/integration/xfrprobe.py
TESTS += tests/integration/xfr_backpressure.sh
EXTRA_DIST += tests/integration/xfr_backpressure.sh tests/integration/xfr_reader.py
