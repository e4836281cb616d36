/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loop — detect forwarding loops by sending a query to ourselves.
 *
 *   loop
 *
 * As CoreDNS's loop plugin: at start a background thread sends
 * `HINFO <random>.<random>.<zone>` (zone = the block's first key) to the
 * block's own listen address, for up to 30 s, once a second until one
 * exchange succeeds; two seconds after that success (or at the 30 s
 * deadline) the plugin disables itself. While enabled, serve() counts the
 * HINFO queries for that exact name; when the probe has come back more than
 * twice the query is going round in circles (we forward it, someone
 * forwards it back), and the process exits with
 *
 *   [FATAL] plugin/loop: Loop (<remote> -> <listen>) detected for zone "<z>",
 *   see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO <q>"
 *
 * A failed exchange (timeout, no answer) resets the count, as in CoreDNS.
 * Every other query passes straight through.
 */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <openssl/rand.h>
#include "server/plugin.h"
#include "common/addr.h"
#include "common/log.h"
#include "common/exchange.h"
#include "wire/msg.h"
#include "runtime/periodic.h"
#include "server/server.h"

#define LOOP_DEADLINE 30.0
#define LOOP_EXCHANGE_MS 2000

typedef struct loop {
    char zone[DNAME_STR_MAX];
    uint8_t zone_wire[DNAME_MAX];
    char qname[DNAME_STR_MAX];
    uint8_t qwire[DNAME_MAX];
    char target[64];                 /* numeric address probes go to */
    int port;
    char listen[96];                 /* "<bind>:<port>" as CoreDNS prints it */
    atomic_int seen;
    atomic_int off;
    int state;                       /* 0 probing, 1 succeeded */
    struct timespec started;
    periodic *task;
} loop;

/* A random 62-bit integer in decimal, like CoreDNS's secureRandIntString. */
static void rand_label(char *out, size_t cap)
{
    uint64_t v = 0;
    if (RAND_bytes((unsigned char *)&v, sizeof v) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    snprintf(out, cap, "%llu", (unsigned long long)(v & ((1ull << 62) - 1)));
}

static int loop_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    int n = 0;
    while (cf_next(d)) {
        if (n++ > 0)
            return cf_err(d, "plugin/loop: this plugin can only be used once per Server Block");
        if (cf_next_arg(d))
            return cf_arg_err(d);
    }
    loop *l = calloc(1, sizeof *l);
    if (!l)
        return cf_err(d, "plugin/loop: out of memory");
    const char *z = ctx->blk && ctx->blk->nkeys ? ctx->blk->keys[0].zone : ".";
    snprintf(l->zone, sizeof l->zone, "%s", z);
    dname_from_str(l->zone_wire, l->zone);
    char a[32], b[32];
    rand_label(a, sizeof a);
    rand_label(b, sizeof b);
    if (strlen(z) > DNAME_STR_MAX - 2 * sizeof a - 4) {
        free(l);
        return cf_err(d, "plugin/loop: zone too long for the probe name");
    }
    snprintf(l->qname, sizeof l->qname, "%.31s.%.31s.%.900s", a, b, strcmp(z, ".") ? z : "");
    if (dname_from_str(l->qwire, l->qname) < 0) {
        free(l);
        return cf_err(d, "plugin/loop: zone too long for the probe name");
    }
    *inst = l;
    return 0;
}

/* One HINFO exchange with ourselves (UDP, 2 s, on the probe thread, never
 * a worker): 0 when any reply came back. */
static int exchange(loop *l)
{
    uint8_t q[12 + DNAME_MAX + 4];
    uint16_t id;
    RAND_bytes((unsigned char *)&id, sizeof id);
    dns_query hq = { .id = id, .flags = F_RD, .qname = l->qwire, .qtype = T_HINFO,
                     .qclass = C_IN };
    int qlen = msg_query(&hq, q, sizeof q);
    if (qlen < 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t sl;
    if (addr_parse_ip(l->target, l->port, &ss, &sl) != 0)
        return -1;
    /* through c-ares: it matches the reply's ID and question; any rcode counts */
    dns_exchange_opts o = { .to = (const struct sockaddr *)&ss, .timeout_ms = LOOP_EXCHANGE_MS };
    size_t rlen;
    char err[128];
    (void)sl;
    return dns_exchange(&o, q, (size_t)qlen, NULL, 0, &rlen, err, sizeof err);
}

static double elapsed(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The probe task: once a second until an exchange succeeds (30 s at most);
 * 2 s after the success the plugin switches itself off. */
static double prober(void *arg)
{
    loop *l = arg;
    if (l->state == 1 || elapsed(&l->started) >= LOOP_DEADLINE) {
        atomic_store(&l->off, 1);
        return -1;
    }
    if (exchange(l) < 0) {
        atomic_store(&l->seen, 0);
        return 1.0;
    }
    l->state = 1;
    return 2.0;
}

static int loop_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    loop *l = inst;
    const char *bind = NULL;
    for (size_t i = 0; i < instance_nblocks(ins); i++) {
        server_block *b = instance_block(ins, i);
        if (b->nkeys && !strcmp(b->keys[0].zone, l->zone)) {
            l->port = b->keys[0].port;
            bind = b->nbind ? b->bind[0] : NULL;
            break;
        }
    }
    const char *def = addr_default_bind();
    snprintf(l->target, sizeof l->target, "%s", bind ? bind : def ? def : "127.0.0.1");
    if (!strcmp(l->target, "0.0.0.0"))
        snprintf(l->target, sizeof l->target, "127.0.0.1");
    else if (!strcmp(l->target, "::"))
        snprintf(l->target, sizeof l->target, "::1");
    if (bind && strchr(bind, ':'))
        snprintf(l->listen, sizeof l->listen, "[%s]:%d", bind, l->port);
    else
        snprintf(l->listen, sizeof l->listen, "%s:%d", bind ? bind : "", l->port);
    clock_gettime(CLOCK_MONOTONIC, &l->started);
    if (!(l->task = periodic_start(prober, l, 0, 0))) {
        snprintf(err, errlen, "plugin/loop: cannot start the probe thread");
        return -1;
    }
    return 0;
}

static int loop_serve(const handler *h, dns_req *r)
{
    loop *l = h->inst;
    if (r->q.qtype != T_HINFO || atomic_load(&l->off) || !dname_is_sub(r->q.qname, l->zone_wire))
        return plugin_next(h, r);
    if (dname_equal(r->q.qname, l->qwire))
        atomic_fetch_add(&l->seen, 1);
    if (atomic_load(&l->seen) > 2) {
        char addr[64], remote[80];
        int port = 0;
        req_peer_str(r, addr, sizeof addr, &port);
        snprintf(remote, sizeof remote, r->peer.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", addr, port);
        log_fatal("plugin/loop: Loop (%s -> %s) detected for zone \"%s\", see "
                  "https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO %s\"",
                  remote, l->listen, l->zone, l->qname);
    }
    return plugin_next(h, r);
}

static void loop_stop(void *inst)
{
    loop *l = inst;
    periodic_stop(l->task);
    l->task = NULL;
}

static void loop_destroy(void *inst)
{
    free(inst);
}

const plugin_def plugin_loop = {
    .name = "loop",
    .flags = PLUGIN_ONCE,
    .setup = loop_setup,
    .start = loop_start,
    .stop = loop_stop,
    .destroy = loop_destroy,
    .serve = loop_serve,
};
