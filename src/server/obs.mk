# Observability: the metrics registry and the HTTP endpoints (owner: obs).
src_libtopo_a_SOURCES += src/server/metrics.h src/server/http.h \
	src/server/metrics.c src/server/http.c
check_PROGRAMS += tests/unit/test_metrics
TESTS += tests/unit/test_metrics
tests_unit_test_metrics_SOURCES = tests/unit/test_metrics.c
tests_unit_test_metrics_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_metrics_LDFLAGS = $(UNIT_WHOLE)
tests_unit_test_metrics_LDADD = $(UNIT_DEPS)
tests_unit_test_metrics_DEPENDENCIES = src/libtopo.a
