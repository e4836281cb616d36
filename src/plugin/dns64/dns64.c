/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dns64 — DNS64 (RFC 6147): AAAA records synthesized from A records.
 *
 *   dns64 [PREFIX] {
 *       prefix PREFIX          # default 64:ff9b::/96; /32, /40, /48, /56, /64 or /96
 *       translate_all          # also when the reply already holds AAAA records
 *       allow_ipv4             # also for clients that asked over IPv4
 *   }
 *
 * As CoreDNS's dns64: a question of type AAAA and class IN from an IPv6
 * client (any client with allow_ipv4) goes on through the chain; a write
 * hook looks at the reply the plugins after this one write. An NXDOMAIN
 * reply (RFC 6147 5.1.2), or one whose answer holds an AAAA record (5.1.1;
 * not with translate_all), goes out unchanged. Otherwise the same name is
 * asked for A from the top of the server (server/lookup.h: the client's
 * address, RD set, its EDNS size), the reply held meanwhile
 * (req_hold_write), and the reply becomes CoreDNS's synthesis:
 * - a fresh reply to the question (QR, opcode, RD and CD copied, no AA),
 *   NOERROR, TC as the A reply had it;
 * - answer: the A reply's answer with each A record turned into an AAAA
 *   record (the IPv4 address embedded in PREFIX as RFC 6052 2.2 lays it
 *   out, octet 8 left 0) whose TTL is the smaller of the A record's and of
 *   the SOA record's in the first reply's authority section (600 without
 *   one, 5.1.7); other records (CNAMEs) unchanged (5.3.3);
 * - authority and additional: the A reply's (5.3.2).
 * Replies the plugins after it return without writing (SERVFAIL from a
 * missing next plugin) are not touched, and PTR questions for the prefix
 * are left to the chain, as in CoreDNS.
 *
 * Memory: the per-request state is calloc'd in serve() and freed by the
 * request's done hook; the lookup set is freed when its reply was used.
 * The instance is immutable after setup.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "common/cidr.h"
#include "common/log.h"
#include "server/lookup.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"
#include "wire/msg.h"

/* Lookups nest at most this deep (an A question never comes back here,
 * but a chain of plugins looking names up might). */
#define DNS64_DEPTH 4

typedef struct dns64 {
    uint8_t prefix[16];
    int prefix_len;                     /* 32, 40, 48, 56, 64 or 96 */
    int translate_all;
    int allow_ipv4;
    struct instance *ins;               /* the lookups go through it */
    metric_family *m_translated;        /* the instance registry's */
} dns64;

typedef struct d64_state {
    const dns64 *d;
    dns_req *r;
    lookup_set *ls;
    uint32_t soa_ttl;                   /* from the first reply's authority */
    int started;
} d64_state;

/* RFC 6052 2.2: the IPv4 address after prefix_len bits, skipping octet 8. */
static void embed(const dns64 *d, const uint8_t *v4, uint8_t *out)
{
    memset(out, 0, 16);
    int i = 0, j = 0;
    for (; i < d->prefix_len / 8; i++)
        out[i] = d->prefix[i];
    for (; i < 8 && j < 4; i++, j++)
        out[i] = v4[j];
    if (i == 8)
        i++;
    for (; j < 4; i++, j++)
        out[i] = v4[j];
}

/* The reply of r becomes the synthesis from the A reply a. */
static void synthesize(d64_state *st, const dns_msg *a)
{
    dns_req *r = st->r;
    dns_edns edns = r->resp.edns;       /* what the server echoes stays */
    msg_reset(&r->resp);
    msg_reply_to(&r->resp, &r->q);
    r->resp.edns = edns;
    r->resp.rcode = RC_NOERROR;
    if (a && (a->flags & F_TC))
        r->resp.flags |= F_TC;
    for (unsigned i = 0; a && i < msg_count(a, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(a, SEC_ANSWER, i);
        if (rr.type == T_A && rr.rdlen == 4) {
            uint8_t v6[16];
            embed(st->d, rr.rdata, v6);
            uint32_t ttl = rr.ttl < st->soa_ttl ? rr.ttl : st->soa_ttl;
            msg_add_aaaa(&r->resp, SEC_ANSWER, rr.owner, ttl, (const struct in6_addr *)v6);
        } else {
            msg_add_rr(&r->resp, SEC_ANSWER, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
        }
    }
    for (int sec = SEC_AUTHORITY; a && sec <= SEC_ADDITIONAL; sec++)
        for (unsigned i = 0; i < msg_count(a, sec); i++) {
            dns_rr rr = msg_rr(a, sec, i);
            msg_add_rr(&r->resp, sec, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
        }
    const char *server = r->server ? r->server : "";
    metrics_add(st->d->m_translated, &server, 1);
}

static void lookup_done(lookup_set *ls, void *data)
{
    d64_state *st = data;
    synthesize(st, lookup_reply(ls, 0));
    lookup_free(ls);
    st->ls = NULL;
    req_release_write(st->r);
}

/* RFC 6147 5.1.1 and 5.1.2: does this reply get a synthesis? */
static int wants_synthesis(const dns64 *d, const dns_msg *resp)
{
    if (resp->rcode == RC_NXDOMAIN)
        return 0;
    if (d->translate_all)
        return 1;
    for (unsigned i = 0; i < msg_count(resp, SEC_ANSWER); i++)
        if (msg_rr(resp, SEC_ANSWER, i).type == T_AAAA)
            return 0;
    return 1;
}

static void on_write(dns_req *r, void *data)
{
    d64_state *st = data;
    if (st->started || !wants_synthesis(st->d, &r->resp))
        return;
    st->started = 1;
    st->soa_ttl = 600;
    for (unsigned i = 0; i < msg_count(&r->resp, SEC_AUTHORITY); i++) {
        dns_rr rr = msg_rr(&r->resp, SEC_AUTHORITY, i);
        if (rr.type == T_SOA)
            st->soa_ttl = rr.ttl;
    }
    st->ls = lookup_new(st->d->ins, r, DNS64_DEPTH, LOOKUP_CLIENT_PEER);
    if (!st->ls || lookup_add(st->ls, r->q.qname, T_A) < 0) {
        log_error("plugin/dns64: cannot ask for the A records of the question; reply left as is");
        lookup_free(st->ls);
        st->ls = NULL;
        return;
    }
    if (lookup_run(st->ls, lookup_done, st)) {
        req_hold_write(r);
        return;
    }
    synthesize(st, lookup_reply(st->ls, 0));
    lookup_free(st->ls);
    st->ls = NULL;
}

static void on_done(dns_req *r, int rcode, void *data)
{
    (void)r;
    (void)rcode;
    d64_state *st = data;
    lookup_free(st->ls);
    free(st);
}

static int dns64_serve(const handler *h, dns_req *r)
{
    const dns64 *d = h->inst;
    if ((!d->allow_ipv4 && req_family(r) == 1) || r->q.qtype != T_AAAA || r->q.qclass != C_IN)
        return plugin_next(h, r);
    d64_state *st = calloc(1, sizeof *st);
    if (!st)
        return plugin_next(h, r);
    st->d = d;
    st->r = r;
    if (req_on_done(r, on_done, st) < 0) {
        free(st);
        log_error("plugin/dns64: too many hooks on one request; no synthesis");
        return plugin_next(h, r);
    }
    if (req_on_write(r, on_write, st) < 0)
        log_error("plugin/dns64: too many hooks on one request; no synthesis");
    return plugin_next(h, r);
}

/* ---- setup -------------------------------------------------------------- */

/* net.ParseCIDR (common/cidr's cidr_parse: the network, host bits clear),
 * then CoreDNS's checks: IPv6, a prefix of 32..96 bits, a multiple of 8. */
static int parse_prefix(cf_disp *d, dns64 *x, const char *text)
{
    cidr c;
    if (cidr_parse(text, &c) < 0)
        return cf_err(d, "plugin/dns64: invalid CIDR address: %s", text);
    if (c.family == AF_INET)
        return cf_err(d, "plugin/dns64: invalid netmask 32 IPv6 address: \"%s\"", text);
    assert(c.family == AF_INET6 && c.bits <= 128);
    if (c.bits % 8 != 0 || c.bits < 32 || c.bits > 96) {
        char net[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, c.addr, net, sizeof net);
        return cf_err(d, "plugin/dns64: invalid prefix length \"%s/%u\"", net, c.bits);
    }
    memcpy(x->prefix, c.addr, 16);
    x->prefix_len = (int)c.bits;
    return 0;
}

static int parse(cf_disp *d, dns64 *x)
{
    while (cf_next(d)) {
        const char *args[2];
        int n = cf_remaining_args(d, args, 2);
        if (n > 1)
            return cf_arg_err(d);
        if (n == 1 && parse_prefix(d, x, args[0]) < 0)
            return -1;
        while (cf_next_block(d)) {
            const char *p = cf_val(d);
            if (strcmp(p, "prefix") == 0) {
                if (!cf_next_arg(d))
                    return cf_arg_err(d);
                if (parse_prefix(d, x, cf_val(d)) < 0)
                    return -1;
            } else if (strcmp(p, "translate_all") == 0) {
                x->translate_all = 1;
            } else if (strcmp(p, "allow_ipv4") == 0) {
                x->allow_ipv4 = 1;
            } else {
                return cf_err(d, "plugin/dns64: unknown property '%s'", p);
            }
        }
    }
    return 0;
}

static int dns64_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    dns64 *x = calloc(1, sizeof *x);
    if (!x)
        return cf_err(d, "plugin/dns64: out of memory");
    static const uint8_t well_known[16] = { 0x00, 0x64, 0xff, 0x9b };   /* 64:ff9b::/96, RFC 6052 */
    memcpy(x->prefix, well_known, sizeof well_known);
    x->prefix_len = 96;
    x->ins = ctx->ins;
    if (parse(d, x) < 0) {
        free(x);
        return -1;
    }
    if (ctx->ins) {
        static const char *const labels[] = { "server", NULL };
        x->m_translated = metrics_family(instance_metrics(ctx->ins),
                                         "coredns_dns64_requests_translated_total",
                                         "Counter of DNS requests translated by dns64.",
                                         METRIC_COUNTER, labels, NULL, 0);
    }
    *inst = x;
    return 0;
}

static void dns64_destroy(void *p)
{
    free(p);
}

const plugin_def plugin_dns64 = {
    .name = "dns64",
    .setup = dns64_setup,
    .destroy = dns64_destroy,
    .serve = dns64_serve,
};
