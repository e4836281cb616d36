# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/tls/tls.c
TESTS += tests/integration/dot.sh
EXTRA_DIST += tests/integration/dot.sh src/plugin/tls/README.md
check_PROGRAMS += tests/unit/test_tls
TESTS += tests/unit/test_tls
tests_unit_test_tls_SOURCES = tests/unit/test_tls.c tests/unit/testenv.c tests/unit/testenv.h \
	src/plugins.c
tests_unit_test_tls_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_tls_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
