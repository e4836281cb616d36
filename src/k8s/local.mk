src_libtopo_a_SOURCES += src/k8s/k8s.h src/k8s/config.c src/k8s/client.c \
	src/k8s/reflector.h src/k8s/reflector.c \
	src/k8s/jsonarena.h src/k8s/jsonarena.c

check_PROGRAMS += tests/k8s_sync_check
tests_k8s_sync_check_SOURCES = tests/k8s_sync_check.c
tests_k8s_sync_check_LDFLAGS = $(UNIT_WHOLE)
tests_k8s_sync_check_LDADD = $(DEP_LIBS)
tests_k8s_sync_check_DEPENDENCIES = src/libtopo.a
TESTS += tests/integration/k8s_client.sh
EXTRA_DIST += tests/integration/k8s_client.sh

check_PROGRAMS += tests/unit/test_k8s_config
TESTS += tests/unit/test_k8s_config
tests_unit_test_k8s_config_SOURCES = tests/unit/test_k8s_config.c
tests_unit_test_k8s_config_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_k8s_config_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_k8s_config_LDADD = $(UNIT_DEPS)
tests_unit_test_k8s_config_DEPENDENCIES = src/libtopo.a

check_PROGRAMS += tests/unit/test_reflector
TESTS += tests/unit/test_reflector
tests_unit_test_reflector_SOURCES = tests/unit/test_reflector.c
tests_unit_test_reflector_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_reflector_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_reflector_LDADD = $(UNIT_DEPS)
tests_unit_test_reflector_DEPENDENCIES = src/libtopo.a

TESTS += tests/integration/k8s_tls.sh
EXTRA_DIST += tests/integration/k8s_tls.sh

# bench/applyrate (hand-run benchmark helper, see bench/README.md): built only
# on request, `make bench/applyrate`
EXTRA_PROGRAMS = bench/applyrate
bench_applyrate_SOURCES = bench/applyrate.c
bench_applyrate_LDFLAGS = $(UNIT_WHOLE)
bench_applyrate_LDADD = $(DEP_LIBS)
bench_applyrate_DEPENDENCIES = src/libtopo.a

TESTS += tests/integration/k8s_http2.sh
EXTRA_DIST += tests/integration/k8s_http2.sh
