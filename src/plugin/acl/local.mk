# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/acl/acl.c
TESTS += tests/integration/acl.sh
EXTRA_DIST += tests/integration/acl.sh src/plugin/acl/README.md

check_PROGRAMS += tests/unit/test_acl
TESTS += tests/unit/test_acl
tests_unit_test_acl_SOURCES = tests/unit/test_acl.c tests/unit/testenv.c tests/unit/testenv.h \
	src/plugins.c
tests_unit_test_acl_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_acl_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
