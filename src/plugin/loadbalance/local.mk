# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/loadbalance/loadbalance.c \
	src/plugin/loadbalance/weights.c src/plugin/loadbalance/weights.h
TESTS += tests/integration/loadbalance.sh
EXTRA_DIST += tests/integration/loadbalance.sh
# The weight file of `loadbalance weighted` and the weighted pick.
check_PROGRAMS += tests/unit/test_lb_weights
TESTS += tests/unit/test_lb_weights
tests_unit_test_lb_weights_SOURCES = tests/unit/test_lb_weights.c
tests_unit_test_lb_weights_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_lb_weights_LDADD = $(LIBPLUGINS) $(LIBWIRE) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)
# the loadbalance plugin's own logic: its Corefile stanza and its answers
check_PROGRAMS += tests/unit/test_loadbalance
TESTS += tests/unit/test_loadbalance
tests_unit_test_loadbalance_SOURCES = tests/unit/test_loadbalance.c tests/unit/testenv.c tests/unit/testenv.h src/plugins.c
tests_unit_test_loadbalance_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_loadbalance_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
