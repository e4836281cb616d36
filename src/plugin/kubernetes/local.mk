# SPDX-License-Identifier: Apache-2.0
# src/plugin/kubernetes: the kubernetes plugin and its tests
src_plugin_libplugins_a_SOURCES += \
	src/plugin/kubernetes/kubernetes.c src/plugin/kubernetes/kubernetes.h \
	src/plugin/kubernetes/setup.c \
	src/plugin/kubernetes/selector.c src/plugin/kubernetes/selector.h \
	src/plugin/kubernetes/names.c src/plugin/kubernetes/names.h \
	src/plugin/kubernetes/lookup.c src/plugin/kubernetes/lookup.h \
	src/plugin/kubernetes/answer.c \
	src/plugin/kubernetes/apex.c \
	src/plugin/kubernetes/ptr.c \
	src/plugin/kubernetes/topo.c \
	src/plugin/kubernetes/rendered.c \
	src/plugin/kubernetes/chase.c src/plugin/kubernetes/chase.h \
	src/plugin/kubernetes/xfr.c \
	src/plugin/kubernetes/autopath.c \
	src/plugin/kubernetes/external.c \
	src/plugin/kubernetes/context.c src/plugin/kubernetes/context.h \
	src/plugin/kubernetes/metadata.c \
	src/plugin/kubernetes/scratch.c src/plugin/kubernetes/scratch.h \
	src/plugin/kubernetes/zone.c \
	src/plugin/kubernetes/programming.c
EXTRA_DIST += src/plugin/kubernetes/README.md

check_PROGRAMS += tests/unit/test_kubernetes
TESTS += tests/unit/test_kubernetes
tests_unit_test_kubernetes_SOURCES = tests/unit/test_kubernetes.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_kubernetes_CFLAGS = $(UNIT_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_kubernetes_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
EXTRA_DIST += tests/data/kubernetes/cluster.json tests/data/kubernetes/zonal.json \
	tests/data/kubernetes/chase.yaml tests/data/kubernetes/acceptance.tsv \
	tests/data/kubernetes/acceptance.py tests/data/kubernetes/interwebs.test.db \
	tests/data/kubernetes/10.in-addr.arpa.db
TESTS += tests/integration/prerender_parity.sh
EXTRA_DIST += tests/integration/prerender_parity.sh tests/data/kubernetes/prerender_parity.py
TESTS += tests/integration/reload_handover.sh
EXTRA_DIST += tests/integration/reload_handover.sh
TESTS += tests/integration/k8s_strings.sh
EXTRA_DIST += tests/integration/k8s_strings.sh tests/integration/asker.py
TESTS += tests/integration/kubernetes.sh tests/integration/k8s_acceptance.sh \
	tests/integration/k8s_changes.sh tests/integration/k8s_chase.sh \
	tests/integration/k8s_ready.sh tests/integration/k8s_options.sh \
	tests/integration/multicluster.sh
EXTRA_DIST += tests/integration/kubernetes.sh tests/integration/kubernetes_lib.sh \
	tests/integration/k8s_acceptance.sh tests/integration/k8s_changes.sh \
	tests/integration/k8s_chase.sh tests/integration/k8s_ready.sh \
	tests/integration/k8s_options.sh tests/integration/multicluster.sh \
	tests/data/kubernetes/multicluster.yaml tests/data/kubernetes/k8s_external.yaml \
	conf/Corefile.kubeadm
# the instruction-ratio test of large headless Services (issue 23)
check_PROGRAMS += tests/unit/bigsvc_cost
tests_unit_bigsvc_cost_SOURCES = tests/unit/bigsvc_cost.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_bigsvc_cost_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_bigsvc_cost_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
TESTS += tests/integration/bigsvc_cost.sh
EXTRA_DIST += tests/integration/bigsvc_cost.sh
