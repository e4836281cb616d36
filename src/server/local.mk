# SPDX-License-Identifier: Apache-2.0
# src/server: listeners, the request lifecycle, the chain (plugin interface
# and order) and the HTTP endpoints (the metrics registry is in src/runtime).
noinst_LIBRARIES += src/server/libserver.a
src_server_libserver_a_SOURCES = \
	src/server/core.h \
	src/server/plugin.h src/server/order.h \
	src/server/request.c src/server/request.h \
	src/server/dispatch.c src/server/internal.c \
	src/server/lookup.c src/server/lookup.h \
	src/server/server.c src/server/server.h \
	src/server/listener.c src/server/tcp.c src/server/tls.c \
	src/server/accept.c src/server/accept.h \
	src/server/loophook.c src/server/loophook.h \
	src/server/zone.c src/server/zone.h \
	src/server/sources.c src/server/transfer.h src/server/autopath.h src/server/external.h \
	src/server/tap.h src/server/reqtopo.h \
	src/server/http.c src/server/http.h
TESTS += tests/integration/server.sh tests/integration/process.sh tests/integration/check.sh \
	tests/integration/slowloris.sh \
	tests/integration/reply_source.sh tests/integration/reply_source_netns.sh
EXTRA_DIST += tests/integration/server.sh tests/integration/rawdns.py \
	tests/integration/slowloris.sh tests/integration/slowtcp.py \
	tests/integration/reply_source.sh tests/integration/reply_source_netns.sh \
	tests/integration/process.sh tests/integration/check.sh
# HTTP endpoint bounds (header/body size, deadlines, connection cap) and
# accept() errors under a lowered descriptor limit.
TESTS += tests/integration/http_limits.sh tests/integration/fd_exhaustion.sh
EXTRA_DIST += tests/integration/http_limits.sh tests/integration/fd_exhaustion.sh \
	tests/integration/httpslow.py
check_PROGRAMS += tests/unit/test_httpbounds
TESTS += tests/unit/test_httpbounds
tests_unit_test_httpbounds_SOURCES = tests/unit/test_httpbounds.c
tests_unit_test_httpbounds_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_httpbounds_LDADD = $(LIBSERVER) $(LIBRUNTIME) $(LIBCOREFILE) $(LIBCLUSTER) \
	$(LIBWIRE) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# Saturation (RSS and fds flat) and 50 reloads under load: abuse.sh
# (ABUSE_SECONDS=60 for the long form; 20 s here).
TESTS += tests/integration/abuse.sh
EXTRA_DIST += tests/integration/abuse.sh tests/integration/abuse.py

# The registry and the HTTP endpoints; the prometheus plugin's reporting.
check_PROGRAMS += tests/unit/test_metrics
TESTS += tests/unit/test_metrics
tests_unit_test_metrics_SOURCES = tests/unit/test_metrics.c
tests_unit_test_metrics_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_metrics_LDADD = $(LIBPLUGINS) $(LIBSERVER) $(LIBRUNTIME) $(LIBCOREFILE) $(LIBCLUSTER) \
	$(LIBWIRE) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# Lookup sets: questions a handler asks the whole server (lookup.h).
check_PROGRAMS += tests/unit/test_lookup
TESTS += tests/unit/test_lookup
tests_unit_test_lookup_SOURCES = tests/unit/test_lookup.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_lookup_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_lookup_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)

# Zones as written in Corefiles: names and CIDRs of any prefix length.
check_PROGRAMS += tests/unit/test_zone
TESTS += tests/unit/test_zone
tests_unit_test_zone_SOURCES = tests/unit/test_zone.c
tests_unit_test_zone_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_zone_LDADD = $(LIBSERVER) $(LIBWIRE) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# Per-loop cleanup hooks (loop_on_free) and their call from listeners_stop.
check_PROGRAMS += tests/unit/test_loophook
TESTS += tests/unit/test_loophook
tests_unit_test_loophook_SOURCES = tests/unit/test_loophook.c
tests_unit_test_loophook_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_loophook_LDADD = $(LIBSERVER) $(LIBRUNTIME) $(LIBCOREFILE) $(LIBCLUSTER) \
	$(LIBWIRE) $(LIBCOMMON) $(CMOCKA_LIBS) $(DEP_LIBS)

# The request lifecycle with dispatch and internal requests (request.c,
# dispatch.c, internal.c), and the transports over real sockets on
# 127.0.0.1 (listener.c, tcp.c).
check_PROGRAMS += tests/unit/test_request tests/unit/test_transport
TESTS += tests/unit/test_request tests/unit/test_transport
tests_unit_test_request_SOURCES = tests/unit/test_request.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_request_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_request_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
tests_unit_test_transport_SOURCES = tests/unit/test_transport.c tests/unit/testenv.c \
	tests/unit/testenv.h src/plugins.c
tests_unit_test_transport_CFLAGS = $(UNIT_CC_FLAGS)
tests_unit_test_transport_LDADD = $(ALL_LIBS) $(CMOCKA_LIBS) $(DEP_LIBS)
