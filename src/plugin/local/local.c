/* SPDX-License-Identifier: Apache-2.0 */
/*
 * local — answers local names (RFC 6761) without passing them on.
 *
 *   local { localhost_prefix on|off }
 *
 * As CoreDNS's local plugin, every reply not authoritative, TTL 604800:
 *   - a name under localhost. (RFC 6761 6.3), or, unless
 *     `localhost_prefix off`, a name whose first label is localhost
 *     (localhost.example.org: a search-path expansion): A 127.0.0.1,
 *     AAAA ::1, other types NODATA (SOA owned by the name); counted in
 *     coredns_local_localhost_requests_total and logged at DEBUG;
 *   - in the zones localhost., 0.in-addr.arpa., 127.in-addr.arpa. and
 *     255.in-addr.arpa.: at a zone apex SOA and NS answer, localhost. has
 *     A 127.0.0.1 and AAAA ::1, other types are NODATA;
 *     1.0.0.127.in-addr.arpa. has PTR localhost.; every other name is
 *     NXDOMAIN with the zone's SOA (localhost. root.localhost. 1 0 0 0
 *     604800, owned by the zone as queried).
 * Anything else goes to the next plugin.
 *
 * The instance (the prefix switch and the counter's family) is written by
 * setup on the loading thread, read by workers, freed by destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "common/log.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"

#define LOCAL_TTL 604800

typedef struct local {
    int prefix;                     /* localhost_prefix on */
    metric_family *count;
} local;

static int parse_block(cf_disp *d, local *l)
{
    while (cf_next_block(d)) {
        if (strcmp(cf_val(d), "localhost_prefix") != 0)
            return cf_prop_err(d);
        const char *args[2];
        if (cf_remaining_args(d, args, 2) != 1)
            return cf_arg_err(d);
        if (strcmp(args[0], "on") && strcmp(args[0], "off"))
            return cf_err(d, "localhost_prefix expects 'on' or 'off', got \"%s\"", args[0]);
        l->prefix = !strcmp(args[0], "on");
    }
    return 0;
}

static int local_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    local *l = calloc(1, sizeof *l);
    if (!l)
        return cf_err(d, "plugin/local: out of memory");
    l->prefix = 1;
    while (cf_next(d)) {
        if (cf_next_arg(d) || parse_block(d, l) < 0) {
            if (!d->err[0])
                cf_arg_err(d);
            free(l);
            return -1;
        }
    }
    l->count = metrics_family(ctx ? instance_metrics(ctx->ins) : NULL,
                              "coredns_local_localhost_requests_total",
                              "Counter of localhost.<domain> requests.", METRIC_COUNTER, NULL,
                              NULL, 0);
    *inst = l;
    return 0;
}

static void local_destroy(void *inst)
{
    free(inst);
}

/* ---- records ------------------------------------------------------------ */

static const uint8_t localhost[] = "\x09localhost";
static const uint8_t root_localhost[] = "\x04root\x09localhost";

static void add_soa(dns_msg *m, int sec, const uint8_t *owner)
{
    msg_add_soa(m, sec, owner, LOCAL_TTL, localhost, root_localhost, 1, 0, 0, 0, LOCAL_TTL);
}

static void add_loopback(dns_msg *m, const uint8_t *owner, uint16_t qtype)
{
    struct in_addr a4 = { htonl(0x7f000001) };
    struct in6_addr a6 = IN6ADDR_LOOPBACK_INIT;
    if (qtype == T_A)
        msg_add_a(m, SEC_ANSWER, owner, LOCAL_TTL, &a4);
    else
        msg_add_aaaa(m, SEC_ANSWER, owner, LOCAL_TTL, &a6);
}

/* ---- names -------------------------------------------------------------- */

static int label_is(const uint8_t *label, const char *text)
{
    size_t n = strlen(text);
    if (label[0] != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((label[1 + i] | 0x20) != text[i])
            return 0;
    return 1;
}

/* localhost.<anything> (the prefix form) or <anything>.localhost. */
static int is_localhost_query(const local *l, const uint8_t *qname)
{
    int labels = dname_labels(qname);
    if (labels < 2)
        return 0;
    if (label_is(dname_suffix(qname, 1), "localhost"))
        return 1;
    return l->prefix && label_is(qname, "localhost");
}

static const char *const zones[] = {
    "localhost.", "0.in-addr.arpa.", "127.in-addr.arpa.", "255.in-addr.arpa."
};

/* Labels of the local zone holding name, or -1. */
static int local_zone(const uint8_t *name)
{
    uint8_t z[DNAME_MAX];
    for (size_t i = 0; i < sizeof zones / sizeof zones[0]; i++)
        if (dname_from_str(z, zones[i]) > 0 && dname_is_sub(name, z))
            return dname_labels(z);
    return -1;
}

/* ---- serving ------------------------------------------------------------ */

static int serve_localhost(const handler *h, const local *l, dns_req *r)
{
    metrics_add(l->count, NULL, 1);
    if (req_debug(r)) {
        char name[DNAME_STR_MAX], tb[16], addr[64];
        dname_to_str(name, sizeof name, r->q.qname);
        req_peer_str(r, addr, sizeof addr, NULL);
        log_debug("plugin/local: Intercepting localhost query for \"%s\" %s, from %s", name,
                  rr_type_name(r->q.qtype, tb), addr);
    }
    msg_reply_to(&r->resp, &r->q);
    if (r->q.qtype == T_A || r->q.qtype == T_AAAA)
        add_loopback(&r->resp, r->q.qname, r->q.qtype);
    else
        add_soa(&r->resp, SEC_AUTHORITY, r->q.qname);
    return req_write(r, h);
}

/* A name at the apex of one of the zones. */
static void serve_apex(dns_msg *m, const uint8_t *qname, uint16_t qtype)
{
    int is_localhost = dname_labels(qname) == 1 && label_is(qname, "localhost");
    if ((qtype == T_A || qtype == T_AAAA) && is_localhost)
        add_loopback(m, qname, qtype);
    else if (qtype == T_SOA)
        add_soa(m, SEC_ANSWER, qname);
    else if (qtype == T_NS)
        msg_add_name(m, SEC_ANSWER, qname, T_NS, LOCAL_TTL, localhost);
    else
        add_soa(m, SEC_AUTHORITY, qname);
}

static int is_loopback_ptr_name(const uint8_t *qname)
{
    uint8_t want[DNAME_MAX];
    return dname_from_str(want, "1.0.0.127.in-addr.arpa.") > 0 && dname_equal(qname, want);
}

static int local_serve(const handler *h, dns_req *r)
{
    const local *l = h->inst;
    const uint8_t *qn = r->q.qname;
    if (is_localhost_query(l, qn))
        return serve_localhost(h, l, r);
    int zl = local_zone(qn);
    if (zl < 0)
        return plugin_next(h, r);
    const uint8_t *zone_q = dname_suffix(qn, zl);     /* as the client spelled it */
    dns_msg *m = &r->resp;
    msg_reply_to(m, &r->q);
    if (dname_labels(qn) == zl)
        serve_apex(m, qn, r->q.qtype);
    else if (is_loopback_ptr_name(qn) && r->q.qtype == T_PTR)
        msg_add_name(m, SEC_ANSWER, qn, T_PTR, LOCAL_TTL, localhost);
    else if (is_loopback_ptr_name(qn))
        add_soa(m, SEC_AUTHORITY, zone_q);
    if (!msg_count(m, SEC_ANSWER) && !msg_count(m, SEC_AUTHORITY)) {
        add_soa(m, SEC_AUTHORITY, zone_q);
        m->rcode = RC_NXDOMAIN;
    }
    return req_write(r, h);
}

const plugin_def plugin_local = {
    .name = "local",
    .setup = local_setup,
    .destroy = local_destroy,
    .serve = local_serve,
};
