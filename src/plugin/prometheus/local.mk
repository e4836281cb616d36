# SPDX-License-Identifier: Apache-2.0
# src/plugin/prometheus: sources and tests of the prometheus plugin
src_plugin_libplugins_a_SOURCES += src/plugin/prometheus/prometheus.c src/plugin/prometheus/prometheus.h
TESTS += tests/integration/prometheus.sh
EXTRA_DIST += tests/integration/prometheus.sh src/plugin/prometheus/README.md
# revision.h is generated (BUILT_SOURCES), which only `make`, `make all` and
# `make check` build first: a direct `make src/topodns` needs the edge.
src/plugin/prometheus/prometheus.$(OBJEXT): src/common/revision.h
# the prometheus plugin's per-request series and its Corefile stanza
check_PROGRAMS += tests/unit/test_prometheus
TESTS += tests/unit/test_prometheus
tests_unit_test_prometheus_SOURCES = tests/unit/test_prometheus.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_prometheus_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_prometheus_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
