# SPDX-License-Identifier: Apache-2.0
# src/plugin/forward: proxying to upstream resolvers on c-ares
src_plugin_libplugins_a_SOURCES += src/plugin/forward/forward.h src/plugin/forward/setup.c \
	src/plugin/forward/forward.c src/plugin/forward/health.c src/plugin/forward/tls.c
TESTS += tests/integration/forward.sh tests/integration/dot_replies.sh
EXTRA_DIST += tests/integration/forward.sh tests/integration/forward_upstream.py \
	tests/integration/dot_replies.sh tests/integration/dot_upstream.py
check_PROGRAMS += tests/unit/test_forward
TESTS += tests/unit/test_forward
tests_unit_test_forward_SOURCES = tests/unit/test_forward.c
tests_unit_test_forward_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_forward_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
