# SPDX-License-Identifier: Apache-2.0
# kubesim: in-memory Kubernetes API server for tests (see tests/kubesim/README.md).
# Built by plain `make` (noinst), never part of src/libtopo.a.
noinst_PROGRAMS = tests/kubesim/kubesim
KUBESIM_CORE = \
	tests/kubesim/kubesim.h \
	tests/kubesim/selector.c tests/kubesim/selector.h \
	tests/kubesim/mergepatch.c tests/kubesim/mergepatch.h \
	tests/kubesim/jsonpatch.c tests/kubesim/jsonpatch.h \
	tests/kubesim/yamljson.c tests/kubesim/yamljson.h \
	tests/kubesim/kinds.c tests/kubesim/store.c tests/kubesim/objects.c tests/kubesim/crd.c \
	tests/kubesim/openapi.c \
	tests/kubesim/watch.c tests/kubesim/http.c tests/kubesim/faults.c \
	tests/kubesim/generate.c tests/kubesim/b64url.c tests/kubesim/b64url.h
KUBESIM_LIBS = $(LIBEVENT_OPENSSL_LIBS) $(LIBEVENT_LIBS) $(CJSON_LIBS) $(YAML_LIBS) \
	$(CRYPTO_LIBS) -lm
tests_kubesim_kubesim_SOURCES = $(KUBESIM_CORE) tests/kubesim/main.c
tests_kubesim_kubesim_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_OPENSSL_CFLAGS)
tests_kubesim_kubesim_LDADD = $(KUBESIM_LIBS)

# Unit tests: selector parser/matcher, RFC 7386 merge patch, RFC 6902 JSON
# patch (+ YAML loader), base64url of continue tokens; and, on the whole
# core without HTTP: CRDs (validation, status, served kinds, delete),
# dryRun, version order, the OpenAPI v3 document, --generate podCIDRs=1.
check_PROGRAMS += tests/unit/test_kubesim
TESTS += tests/unit/test_kubesim
tests_unit_test_kubesim_SOURCES = tests/unit/test_kubesim.c $(KUBESIM_CORE)
tests_unit_test_kubesim_CFLAGS = $(UNIT_CC_FLAGS) $(LIBEVENT_OPENSSL_CFLAGS)
tests_unit_test_kubesim_LDADD = $(CMOCKA_LIBS) $(KUBESIM_LIBS)

# Integration: kubectl and curl against the real binary; the official Python
# client (python3-kubernetes) against it.
TESTS += tests/integration/kubesim_kubectl.sh tests/integration/kubesim_pyclient.sh \
	tests/integration/kubesim_crd.sh
EXTRA_DIST += tests/integration/kubesim_kubectl.sh tests/kubesim/README.md \
	tests/integration/kubesim_pyclient.sh tests/integration/kubesim_pyclient.py \
	tests/integration/kubesim_crd.sh tests/data/cni/cilium-crd.yaml \
	tests/data/cni/ciliumnodes.yaml tests/data/cni/calico-crd.yaml \
	tests/data/cni/blockaffinities.yaml
