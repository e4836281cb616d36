# SPDX-License-Identifier: Apache-2.0
src_plugin_libplugins_a_SOURCES += src/plugin/k8s_external/k8s_external.c
TESTS += tests/integration/k8s_external.sh
EXTRA_DIST += tests/integration/k8s_external.sh src/plugin/k8s_external/README.md \
	tests/data/kubernetes/k8s_external.yaml
# the k8s_external plugin on its own, fed by a source of the test's making
check_PROGRAMS += tests/unit/test_k8s_external
TESTS += tests/unit/test_k8s_external
tests_unit_test_k8s_external_SOURCES = tests/unit/test_k8s_external.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_k8s_external_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_k8s_external_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
