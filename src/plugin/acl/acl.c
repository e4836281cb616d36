/* SPDX-License-Identifier: Apache-2.0 */
/*
 * acl — allow, block, filter or drop queries by source address and type.
 *
 *   acl [ZONES...] {
 *       allow|block|filter|drop [type QTYPE...] [net SOURCE...]
 *   }
 *
 * Every occurrence of the directive is a rule: its zones (the arguments,
 * else the server block's) and its policies (the lines of its block, in
 * order). A query is checked against each rule in Corefile order, as
 * CoreDNS's acl does: a rule whose zones do not hold the qname is skipped;
 * otherwise its first policy that matches the query type (`type`, default
 * every type; `*` every type) and the client address (`net`, CIDRs or
 * addresses, default and `*` every address) decides:
 *   block   REFUSED with an extended DNS error 15 (Blocked)
 *   filter  NOERROR, empty answer, extended DNS error 17 (Filtered)
 *   drop    no reply at all (req_drop)
 *   allow   the query goes on to the next plugin; no later rule is checked.
 * A rule none of whose policies matches leaves the query to the next rule;
 * a query no rule decided goes on to the next plugin as well.
 * Blocked and filtered replies carry their own OPT record (UDP size 4096,
 * DO, the EDE option; edns.keep), which CoreDNS sends even to a query
 * without EDNS; to an EDNS query the server echoes it with the client's
 * size and DO as usual.
 *
 * Metrics (families looked up at setup in the instance's registry):
 * coredns_acl_{blocked,filtered,dropped}_requests_total{server,zone,view}
 * and coredns_acl_allowed_requests_total{server,view}; zone is the rule's
 * longest zone holding the qname, view is always empty.
 *
 * The instance (rules, families) is built by setup on the loading thread,
 * read by workers, freed by destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include "common/cidr.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

enum { ACT_NONE, ACT_ALLOW, ACT_BLOCK, ACT_FILTER, ACT_DROP };
enum { EDE_BLOCKED = 15, EDE_FILTERED = 17 };

#define ACL_MAX_ARGS 256

typedef struct acl_policy {
    int action;
    int all_types;
    uint16_t *types;
    size_t ntypes;
    cidr *nets;
    size_t nnets;
} acl_policy;

typedef struct acl_zone {
    uint8_t wire[DNAME_MAX];
    char name[DNAME_STR_MAX];
} acl_zone;

typedef struct acl_rule {
    acl_zone *zones;
    size_t nzones;
    acl_policy *pol;
    size_t npol;
} acl_rule;

typedef struct acl {
    acl_rule *rules;
    size_t nrules;
    metric_family *blocked, *filtered, *allowed, *dropped;
} acl;

static void acl_destroy(void *p)
{
    acl *a = p;
    if (!a)
        return;
    for (size_t i = 0; i < a->nrules; i++) {
        acl_rule *r = &a->rules[i];
        for (size_t j = 0; j < r->npol; j++) {
            free(r->pol[j].types);
            free(r->pol[j].nets);
        }
        free(r->pol);
        free(r->zones);
    }
    free(a->rules);
    free(a);
}

/* ---- setup: zones ------------------------------------------------------- */

static int add_zone(cf_disp *d, acl_rule *r, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k < 0)
        return cf_err(d, "plugin/acl: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(r->zones, r->nzones + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/acl: out of memory");
    }
    for (int i = 0; i < k; i++) {
        acl_zone *x = &r->zones[r->nzones++];
        size_t l = strnlen(z[i], sizeof x->name - 1);
        memcpy(x->name, z[i], l);
        x->name[l] = '\0';
        dname_from_str(x->wire, z[i]);
    }
    free(z);
    return 0;
}

static int rule_zones(cf_disp *d, const setup_ctx *ctx, acl_rule *r)
{
    const char *args[ACL_MAX_ARGS];
    int n = cf_remaining_args(d, args, ACL_MAX_ARGS);
    if (n > ACL_MAX_ARGS)
        return cf_err(d, "plugin/acl: too many zones");
    for (int i = 0; i < n; i++)
        if (add_zone(d, r, args[i]) < 0)
            return -1;
    for (size_t i = 0; n == 0 && ctx && i < ctx->blk->nkeys; i++)
        if (add_zone(d, r, ctx->blk->keys[i].zone) < 0)
            return -1;
    return 0;
}

/* ---- setup: policies ---------------------------------------------------- */

/* miekg/dns StringToType: the mnemonic exactly as written ("A", "AAAA"). */
static int type_from_str(const char *s, uint16_t *out)
{
    char buf[16];
    if (!strncmp(s, "TYPE", 4))
        return -1;
    for (unsigned t = 1; t <= 65535; t++)
        if (!strcmp(rr_type_name((uint16_t)t, buf), s)) {
            *out = (uint16_t)t;
            return 0;
        }
    return -1;
}

static int add_net(acl_policy *p, const cidr *c)
{
    if (VEC_RESIZE(p->nets, p->nnets + 1) < 0)
        return -1;
    p->nets[p->nnets++] = *c;
    return 0;
}

static int add_any_net(acl_policy *p)
{
    cidr v4, v6;
    if (cidr_parse("0.0.0.0/0", &v4) < 0 || cidr_parse("::/0", &v6) < 0)
        return -1;
    return add_net(p, &v4) < 0 || add_net(p, &v6) < 0 ? -1 : 0;
}

/* A CIDR, or an address taken as /32 or /128, read by common/cidr as Go's
 * net.ParseCIDR. CoreDNS appends that length before parsing, so its
 * message shows it. */
static int parse_net(cf_disp *d, acl_policy *p, const char *tok)
{
    cidr c;
    if (cidr_parse_host(tok, &c) < 0)
        return cf_err(d, "illegal CIDR notation \"%s%s\"", tok,
                      strchr(tok, '/') ? "" : strchr(tok, ':') ? "/128" : "/32");
    return add_net(p, &c) < 0 ? cf_err(d, "plugin/acl: out of memory") : 0;
}

static int add_type(cf_disp *d, acl_policy *p, const char *tok)
{
    uint16_t t;
    if (type_from_str(tok, &t) < 0)
        return cf_err(d, "unexpected token \"%s\"; expect legal QTYPE", tok);
    if (VEC_RESIZE(p->types, p->ntypes + 1) < 0)
        return cf_err(d, "plugin/acl: out of memory");
    p->types[p->ntypes++] = t;
    return 0;
}

static int is_section(const char *s)
{
    return !strcasecmp(s, "type") || !strcasecmp(s, "net");
}

/* One `type ...` or `net ...` section of a policy line: toks[0] is its
 * name, n the tokens up to the next section. `*` ends the section. */
static int parse_section(cf_disp *d, acl_policy *p, const char **toks, int n, int *has_type,
                         int *has_net)
{
    int is_type = !strcasecmp(toks[0], "type");
    if (n == 1)
        return cf_err(d, "no token specified in \"%s\" section", is_type ? "type" : "net");
    *(is_type ? has_type : has_net) = 1;
    for (int i = 1; i < n; i++) {
        if (!strcmp(toks[i], "*")) {
            if (is_type)
                p->all_types = 1;
            else if (add_any_net(p) < 0)
                return cf_err(d, "plugin/acl: out of memory");
            break;
        }
        if ((is_type ? add_type(d, p, toks[i]) : parse_net(d, p, toks[i])) < 0)
            return -1;
    }
    return 0;
}

static int parse_action(cf_disp *d, acl_policy *p)
{
    const char *a = cf_val(d);
    p->action = !strcasecmp(a, "allow") ? ACT_ALLOW : !strcasecmp(a, "block") ? ACT_BLOCK
              : !strcasecmp(a, "filter") ? ACT_FILTER : !strcasecmp(a, "drop") ? ACT_DROP
              : ACT_NONE;
    if (p->action == ACT_NONE)
        return cf_err(d, "unexpected token \"%s\"; expect 'allow', 'block', 'filter' or 'drop'",
                      a);
    return 0;
}

/* One line of the block: ACTION [type QTYPE...] [net SOURCE...]. */
static int parse_policy(cf_disp *d, acl_policy *p)
{
    if (parse_action(d, p) < 0)
        return -1;
    const char *toks[ACL_MAX_ARGS];
    int n = cf_remaining_args(d, toks, ACL_MAX_ARGS);
    if (n > ACL_MAX_ARGS)
        return cf_err(d, "plugin/acl: too many arguments");
    int has_type = 0, has_net = 0;
    for (int i = 0; i < n;) {
        if (!is_section(toks[i]))
            return cf_err(d, "unexpected token \"%s\"; expect 'type | net'", toks[i]);
        int j = i + 1;
        while (j < n && !is_section(toks[j]))
            j++;
        if (parse_section(d, p, toks + i, j - i, &has_type, &has_net) < 0)
            return -1;
        i = j;
    }
    if (!has_type)
        p->all_types = 1;
    if (!has_net && add_any_net(p) < 0)
        return cf_err(d, "plugin/acl: out of memory");
    return 0;
}

static int parse_rule(cf_disp *d, const setup_ctx *ctx, acl_rule *r)
{
    if (rule_zones(d, ctx, r) < 0)
        return -1;
    while (cf_next_block(d)) {
        if (VEC_RESIZE(r->pol, r->npol + 1) < 0)
            return cf_err(d, "plugin/acl: out of memory");
        memset(&r->pol[r->npol], 0, sizeof *r->pol);
        if (parse_policy(d, &r->pol[r->npol++]) < 0)
            return -1;
    }
    return 0;
}

static void metrics_init(acl *a, metrics_registry *reg)
{
    static const char *const szv[] = { "server", "zone", "view", NULL };
    static const char *const sv[] = { "server", "view", NULL };
    a->blocked = metrics_family(reg, "coredns_acl_blocked_requests_total",
                                "Counter of DNS requests being blocked.", METRIC_COUNTER, szv,
                                NULL, 0);
    a->filtered = metrics_family(reg, "coredns_acl_filtered_requests_total",
                                 "Counter of DNS requests being filtered.", METRIC_COUNTER, szv,
                                 NULL, 0);
    a->allowed = metrics_family(reg, "coredns_acl_allowed_requests_total",
                                "Counter of DNS requests being allowed.", METRIC_COUNTER, sv,
                                NULL, 0);
    a->dropped = metrics_family(reg, "coredns_acl_dropped_requests_total",
                                "Counter of DNS requests being dropped.", METRIC_COUNTER, szv,
                                NULL, 0);
}

static int acl_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    acl *a = calloc(1, sizeof *a);
    if (!a)
        return cf_err(d, "plugin/acl: out of memory");
    while (cf_next(d)) {
        if (VEC_RESIZE(a->rules, a->nrules + 1) < 0) {
            acl_destroy(a);
            return cf_err(d, "plugin/acl: out of memory");
        }
        memset(&a->rules[a->nrules], 0, sizeof *a->rules);
        if (parse_rule(d, ctx, &a->rules[a->nrules++]) < 0) {
            acl_destroy(a);
            return -1;
        }
    }
    metrics_init(a, ctx ? instance_metrics(ctx->ins) : NULL);
    *inst = a;
    return 0;
}

/* ---- serving ------------------------------------------------------------ */

/* The rule's longest zone holding name (plugin.Zones.Matches), or NULL. */
static const acl_zone *rule_zone(const acl_rule *r, const uint8_t *name)
{
    const acl_zone *best = NULL;
    for (size_t i = 0; i < r->nzones; i++)
        if (dname_is_sub(name, r->zones[i].wire) &&
            (!best || dname_len(r->zones[i].wire) > dname_len(best->wire)))
            best = &r->zones[i];
    return best;
}

static int policy_matches(const acl_policy *p, uint16_t qtype, int family, const uint8_t *addr)
{
    int t = p->all_types;
    for (size_t i = 0; !t && i < p->ntypes; i++)
        t = p->types[i] == qtype;
    if (!t)
        return 0;
    for (size_t i = 0; i < p->nnets; i++)
        if (cidr_contains(&p->nets[i], family, addr))
            return 1;
    return 0;
}

/* The action of the rule's first matching policy, ACT_NONE without one.
 * An IPv4-mapped IPv6 client is the IPv4 address, as Go's To4() sees it. */
static int rule_action(const acl_rule *r, const dns_req *q)
{
    int family = q->peer.ss_family;
    const uint8_t *addr = family == AF_INET6
        ? ((const struct sockaddr_in6 *)&q->peer)->sin6_addr.s6_addr
        : (const uint8_t *)&((const struct sockaddr_in *)&q->peer)->sin_addr;
    if (family == AF_INET6 &&
        IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)&q->peer)->sin6_addr)) {
        family = AF_INET;
        addr += 12;
    }
    for (size_t i = 0; i < r->npol; i++)
        if (policy_matches(&r->pol[i], q->q.qtype, family, addr))
            return r->pol[i].action;
    return ACT_NONE;
}

/* REFUSED (block) or NOERROR (filter) with the extended error code. */
static int write_denial(const handler *h, dns_req *r, int rcode, uint16_t ede)
{
    msg_reply_to(&r->resp, &r->q);
    r->resp.rcode = (uint16_t)rcode;
    r->resp.edns.present = 1;
    r->resp.edns.keep = 1;
    r->resp.edns.udp_size = 4096;
    r->resp.edns.do_bit = 1;
    const uint8_t info[2] = { (uint8_t)(ede >> 8), (uint8_t)ede };
    edns_opt_add(&r->resp.edns, EDNS_OPT_EDE, info, sizeof info);
    return req_write(r, h);
}

static int acl_serve(const handler *h, dns_req *r)
{
    const acl *a = h->inst;
    const char *server = r->server ? r->server : "";
    int act = ACT_NONE;
    for (size_t i = 0; i < a->nrules && act != ACT_ALLOW; i++) {
        const acl_zone *z = rule_zone(&a->rules[i], r->q.qname);
        if (!z)
            continue;
        const char *lv[] = { server, z->name, "" };
        switch ((act = rule_action(&a->rules[i], r))) {
        case ACT_DROP:
            metrics_add(a->dropped, lv, 1);
            return req_drop(r);
        case ACT_BLOCK:
            metrics_add(a->blocked, lv, 1);
            return write_denial(h, r, RC_REFUSED, EDE_BLOCKED);
        case ACT_FILTER:
            metrics_add(a->filtered, lv, 1);
            return write_denial(h, r, RC_NOERROR, EDE_FILTERED);
        default:
            break;                  /* allow: done; no policy: the next rule */
        }
    }
    const char *sv[] = { server, "" };
    metrics_add(a->allowed, sv, 1);
    return plugin_next(h, r);
}

const plugin_def plugin_acl = {
    .name = "acl",
    .setup = acl_setup,
    .destroy = acl_destroy,
    .serve = acl_serve,
};
