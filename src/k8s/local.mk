src_libtopo_a_SOURCES += src/k8s/k8s.h src/k8s/config.c src/k8s/client.c

check_PROGRAMS += tests/k8s_sync_check
tests_k8s_sync_check_SOURCES = tests/k8s_sync_check.c
tests_k8s_sync_check_LDFLAGS = $(UNIT_WHOLE)
tests_k8s_sync_check_LDADD = $(DEP_LIBS)
tests_k8s_sync_check_DEPENDENCIES = src/libtopo.a
TESTS += tests/integration/k8s_client.sh
EXTRA_DIST += tests/integration/k8s_client.sh
