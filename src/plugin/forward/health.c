/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward/health.c — upstream health checks, as CoreDNS's proxy package.
 *
 * A query that fails on an upstream (network error, timeout) starts that
 * upstream's probe loop: every health_check interval (0.5 s) a `. IN NS`
 * query (RD unless no_rec; `domain` changes the name) goes to the upstream
 * through c-ares (common/exchange.h) over UDP (TCP with force_tcp; a tls://
 * upstream always over a fresh TLS connection, verified as queries are)
 * with a 1 s timeout. Any reply counts as
 * healthy and ends the loop with the failure counter reset to 0; each
 * failure increments it and coredns_proxy_healthcheck_failures_total. An
 * upstream is down while the counter exceeds max_fails (max_fails 0: never).
 * `health_check 0` turns the probes off.
 *
 * Each upstream has its own periodic thread, asleep unless a probe loop
 * runs, so probes never block the serving workers or each other (the
 * exchange waits, on that thread only).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "plugin/forward/forward.h"
#include "common/exchange.h"
#include "runtime/metrics.h"
#include "runtime/periodic.h"

#define PROBE_TIMEOUT_MS 1000

void fwd_metrics_init(fwd_metrics *m, metrics_registry *reg)
{
    static const char *const hc[] = { "proxy_name", "to", NULL };
    static const char *const dur[] = { "proxy_name", "to", "rcode", NULL };
    double b[16];
    metrics_exponential_buckets(b, 16, 0.00025, 2);
    m->hc_fail = metrics_family(reg, "coredns_proxy_healthcheck_failures_total",
                                "Counter of the number of failed healthchecks.",
                                METRIC_COUNTER, hc, NULL, 0);
    m->duration = metrics_family(reg, "coredns_proxy_request_duration_seconds",
                                 "Histogram of the time each request took.",
                                 METRIC_HISTOGRAM, dur, b, 16);
    m->broken = metrics_family(reg, "coredns_forward_healthcheck_broken_total",
                               "Counter of the number of complete failures of the healthchecks.",
                               METRIC_COUNTER, NULL, NULL, 0);
    static const char *const cc[] = { "proxy_name", "to", "proto", NULL };
    m->conn_hits = metrics_family(reg, "coredns_proxy_conn_cache_hits_total",
                                  "Counter of connection cache hits per upstream and protocol.",
                                  METRIC_COUNTER, cc, NULL, 0);
    m->conn_misses = metrics_family(reg, "coredns_proxy_conn_cache_misses_total",
                                    "Counter of connection cache misses per upstream and protocol.",
                                    METRIC_COUNTER, cc, NULL, 0);
    m->mismatched = metrics_family(reg, "topodns_forward_mismatched_replies_total",
                                   "Counter of tls:// replies dropped because their ID or "
                                   "question is not the query's.",
                                   METRIC_COUNTER, hc, NULL, 0);
    m->rejects = metrics_family(reg, "coredns_forward_max_concurrent_rejects_total",
                                "Counter of the number of queries rejected because the "
                                "concurrent queries were at maximum.",
                                METRIC_COUNTER, NULL, NULL, 0);
}

void fwd_metric_hc_failure(const fwd_upstream *u)
{
    const char *lv[] = { "forward", u->to };
    metrics_add(u->st->m->hc_fail, lv, 1);
}

/* The probe query: `<domain> IN NS`, RD unless no_rec, no EDNS. Returns
 * its length. */
static size_t build_probe(const fwd_stanza *st, uint8_t *buf, size_t cap, uint16_t id)
{
    dns_query q = { .id = id, .flags = st->hc_rd ? F_RD : 0, .qname = st->hc_domain,
                    .qtype = T_NS, .qclass = C_IN };
    int n = msg_query(&q, buf, cap);
    return n < 0 ? 0 : (size_t)n;
}

int fwd_probe(const fwd_stanza *st, const fwd_upstream *u)
{
    assert(st && u && u->st == st);
    uint8_t q[512];
    uint16_t id = (uint16_t)(rand() & 0xffff);
    size_t qlen = build_probe(st, q, sizeof q, id);
    if (qlen == 0)
        return -1;
    if (u->tls) {                    /* always over TLS, as CoreDNS's tcp-tls checks */
        struct timespec end;
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += PROBE_TIMEOUT_MS / 1000;
        return fwd_tls_probe(st, u, q, qlen, id, &end);
    }
    /* c-ares matches the reply's ID and question; any rcode is an answer. */
    dns_exchange_opts o = { .to = (const struct sockaddr *)&u->sa,
                            .src = st->has_src ? (const struct sockaddr *)&st->src : NULL,
                            .tcp = st->force_tcp, .timeout_ms = PROBE_TIMEOUT_MS };
    uint8_t hdr[12];
    size_t rlen;
    char err[128];
    if (dns_exchange(&o, q, qlen, hdr, sizeof hdr, &rlen, err, sizeof err) < 0)
        return -1;
    return rlen >= 12 && (hdr[2] & 0x80) ? 0 : -1;
}

/* The probe loop of one upstream: runs while `probing` is set. */
static double probe_loop(void *arg)
{
    fwd_upstream *u = arg;
    if (!atomic_load(&u->probing))
        return -1;
    if (fwd_probe(u->st, u) == 0) {
        atomic_store(&u->fails, 0);
        atomic_store(&u->probing, 0);
        return -1;
    }
    fwd_metric_hc_failure(u);
    if (atomic_load(&u->fails) != ~0u)
        atomic_fetch_add(&u->fails, 1);
    return u->st->hc_interval;
}

void fwd_health_kick(fwd_upstream *u)
{
    if (!u->hc || atomic_exchange(&u->probing, 1))
        return;
    periodic_kick(u->hc);
}

int fwd_health_start(fwd_stanza *st, char *err, size_t errlen)
{
    if (st->hc_interval <= 0 || st->max_fails == 0)
        return 0;
    for (size_t i = 0; i < st->nups; i++) {
        fwd_upstream *u = &st->ups[i];
        if (u->hc)
            continue;
        if (!(u->hc = periodic_start(probe_loop, u, 0, 0))) {
            snprintf(err, errlen, "plugin/forward: cannot start the health check thread");
            return -1;
        }
    }
    return 0;
}

void fwd_health_stop(fwd_stanza *st)
{
    for (size_t i = 0; i < st->nups && i < FWD_MAX_UP; i++) {
        periodic_stop(st->ups[i].hc);
        st->ups[i].hc = NULL;
    }
}
