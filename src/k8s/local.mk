# SPDX-License-Identifier: Apache-2.0
# src/k8s: the Kubernetes API client (libcurl multi on its own thread) and
# the list/watch reflectors.
noinst_LIBRARIES += src/k8s/libk8s.a
src_k8s_libk8s_a_SOURCES = src/k8s/k8s.h src/k8s/config.c src/k8s/client.c \
	src/k8s/reflector.h src/k8s/reflector.c \
	src/k8s/jsonarena.h src/k8s/jsonarena.c \
	src/k8s/jsonsel.h src/k8s/jsonsel.c src/k8s/fields.c
K8S_LIBS = $(LIBK8S) $(LIBRUNTIME) $(LIBCOREFILE) $(LIBCLUSTER) $(LIBWIRE) $(LIBCOMMON)

check_PROGRAMS += tests/k8s_sync_check
tests_k8s_sync_check_SOURCES = tests/k8s_sync_check.c
tests_k8s_sync_check_LDADD = $(K8S_LIBS) $(DEP_LIBS)
TESTS += tests/integration/k8s_client.sh
EXTRA_DIST += tests/integration/k8s_client.sh
# the real topodns against kubesim: an API restored from a saved state (lower
# resourceVersion, other objects) is followed; answers converge within 2 s of
# the faults stopping
TESTS += tests/integration/k8s_recovery.sh
EXTRA_DIST += tests/integration/k8s_recovery.sh
# the real topodns against an API server that misbehaves (kube_hostile.py in
# front of kubesim): objects the parser refuses are skipped, a 410 loop and a
# continue token that repeats are slowed by the backoff
TESTS += tests/integration/k8s_hostile.sh
EXTRA_DIST += tests/integration/k8s_hostile.sh tests/integration/kube_hostile.py

check_PROGRAMS += tests/unit/test_k8s_config
TESTS += tests/unit/test_k8s_config
tests_unit_test_k8s_config_SOURCES = tests/unit/test_k8s_config.c
tests_unit_test_k8s_config_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_k8s_config_LDADD = $(K8S_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

check_PROGRAMS += tests/unit/test_reflector
TESTS += tests/unit/test_reflector
tests_unit_test_reflector_SOURCES = tests/unit/test_reflector.c
tests_unit_test_reflector_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_reflector_LDADD = $(LIBK8S) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# the selective parser against cJSON, and what the store decodes from real
# objects through the reflector's rules
check_PROGRAMS += tests/unit/test_jsonsel
TESTS += tests/unit/test_jsonsel
tests_unit_test_jsonsel_SOURCES = tests/unit/test_jsonsel.c tests/fuzz/jsonsel_diff.h
tests_unit_test_jsonsel_CFLAGS = $(UNIT_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_jsonsel_LDADD = $(LIBK8S) $(LIBCLUSTER) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)
EXTRA_DIST += tests/data/kubernetes/objects.jsonl

TESTS += tests/integration/k8s_tls.sh
EXTRA_DIST += tests/integration/k8s_tls.sh

# bench/applyrate (hand-run benchmark helper, see bench/README.md): built only
# on request, `make bench/applyrate`
EXTRA_PROGRAMS = bench/applyrate
bench_applyrate_SOURCES = bench/applyrate.c
bench_applyrate_LDADD = $(K8S_LIBS) $(DEP_LIBS)

TESTS += tests/integration/k8s_http2.sh
EXTRA_DIST += tests/integration/k8s_http2.sh
