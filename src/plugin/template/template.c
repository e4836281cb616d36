/* SPDX-License-Identifier: Apache-2.0 */
/*
 * template — answers built from Go-style templates over the query.
 *
 *   template CLASS TYPE [ZONE...] {
 *       match REGEX...
 *       answer RR...
 *       additional RR...
 *       authority RR...
 *       rcode CODE
 *       ederror CODE [REASON]
 *       fallthrough [ZONE...]
 *       upstream                  (accepted and ignored, as in CoreDNS)
 *   }
 *
 * As CoreDNS's template: every `template` of a server block is one
 * template of one handler, tried in the order written. A query outside
 * every template's zones goes to the next plugin. For each template: a
 * query outside its zones, or of another class or type (ANY on either side
 * matches), goes on to the next template; else the first of its regexes
 * that matches the lower-cased name wins, and when none does the query
 * falls through to the next template if `fallthrough` covers the name,
 * or gets SERVFAIL. A match renders the answer, additional and authority
 * records (tmpl.h), parses each as one zone-file record (origin ".", TTL
 * 3600 and class IN when left out) and writes them with the template's
 * rcode and the AA bit; rcode SERVFAIL writes nothing. A rendering or
 * parsing failure is SERVFAIL with the error for the errors plugin.
 *
 * For an A or AAAA query, each CNAME the answer holds is looked up through
 * the server's own chain (CoreDNS's upstream): an internal request from
 * the top of the server, with the client's address, RD bit and EDNS size;
 * its answer records go right after the CNAME and its TC bit onto the
 * reply. The lookups run asynchronously on the worker's event loop
 * (REQ_ASYNC, server/lookup.h); each sub-request is one level deeper (dns_req.depth) and
 * none is made at depth TEMPLATE_MAX_DEPTH, so templates whose CNAMEs
 * lead back to themselves stop.
 *
 * The instance (templates, compiled regexes and templates, zones) is
 * written by setup on the loading thread, read by workers, freed by
 * destroy. A waiting query's state (twait) is the query's own, freed when
 * its reply is written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <string.h>
#include <ldns/ldns.h>
#include "common/goregex.h"
#include "plugin/template/tmpl.h"
#include "server/lookup.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

#define TEMPLATE_MAX_DEPTH 4
#define TEMPLATE_MAX_ARGS 256

/* Sections in the order CoreDNS renders them. */
static const int sec_order[3] = { SEC_ANSWER, SEC_ADDITIONAL, SEC_AUTHORITY };
static const char *const sec_label[SEC_COUNT] = { "answer", "authority", "additional" };

typedef struct tzone {
    char str[DNAME_STR_MAX];
    uint8_t wire[DNAME_MAX];
} tzone;

typedef struct ttemplate {
    int qclass, qtype;
    tzone *zones;
    size_t nzones;
    goregex **re;
    size_t nre;
    tmpl **sec[SEC_COUNT];
    size_t nsec[SEC_COUNT];
    int rcode;
    int ede;                        /* ederror given */
    uint16_t ede_code;
    char *ede_reason;
    long nfall;                     /* -1: no fallthrough */
    tzone *fall;
    unsigned uses;                  /* TMPL_USES_* of its templates */
} ttemplate;

typedef struct tplugin {
    ttemplate *t;
    size_t n;
    struct instance *ins;
    metric_family *m_match, *m_tfail, *m_rrfail;
} tplugin;

/* ---- setup ------------------------------------------------------------ */

static int add_zone(cf_disp *d, tzone **zones, size_t *n, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k < 0)
        return cf_err(d, "plugin/template: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(*zones, *n + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/template: out of memory");
    }
    for (int i = 0; i < k; i++) {
        size_t zl = strnlen(z[i], DNAME_STR_MAX - 1);
        memcpy((*zones)[*n].str, z[i], zl);
        (*zones)[*n].str[zl] = '\0';
        if (dname_from_str((*zones)[*n].wire, z[i]) < 0) {
            free(z);
            return cf_err(d, "plugin/template: invalid zone '%s'", text);
        }
        (*n)++;
    }
    free(z);
    return 0;
}

static void template_free(ttemplate *t)
{
    free(t->zones);
    for (size_t i = 0; i < t->nre; i++)
        goregex_free(t->re[i]);
    free(t->re);
    for (int s = 0; s < SEC_COUNT; s++) {
        for (size_t i = 0; i < t->nsec[s]; i++)
            tmpl_free(t->sec[s][i]);
        free(t->sec[s]);
    }
    free(t->ede_reason);
    free(t->fall);
}

static void tplugin_destroy(void *inst)
{
    tplugin *p = inst;
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        template_free(&p->t[i]);
    free(p->t);
    free(p);
}

static int add_regexes(cf_disp *d, ttemplate *t, const char **args, int n)
{
    for (int i = 0; i < n; i++) {
        size_t len = strlen(args[i]);
        if (len > GOREGEX_MAX_LEN)
            return cf_err(d, "plugin/template: regex pattern too long: %zu > %d", len,
                          GOREGEX_MAX_LEN);
        goregex *g = NULL;
        char err[256];
        if (goregex_compile(args[i], &g, err, sizeof err) != GOREGEX_OK)
            return cf_err(d, "plugin/template: could not parse regex: %s, %s", args[i], err);
        if (VEC_RESIZE(t->re, t->nre + 1) < 0) {
            goregex_free(g);
            return cf_err(d, "plugin/template: out of memory");
        }
        t->re[t->nre++] = g;
    }
    return 0;
}

static int add_templates(cf_disp *d, ttemplate *t, int sec, const char **args, int n)
{
    for (int i = 0; i < n; i++) {
        tmpl *c = NULL;
        char err[256];
        if (tmpl_compile(args[i], &c, err, sizeof err) < 0)
            return cf_err(d, "plugin/template: could not compile template: %s, %s", args[i], err);
        if (VEC_RESIZE(t->sec[sec], t->nsec[sec] + 1) < 0) {
            tmpl_free(c);
            return cf_err(d, "plugin/template: out of memory");
        }
        t->sec[sec][t->nsec[sec]++] = c;
        t->uses |= tmpl_uses(c);
    }
    return 0;
}

/* One line of a template's block. */
static int parse_prop(cf_disp *d, ttemplate *t)
{
    const char *prop = cf_val(d), *args[TEMPLATE_MAX_ARGS];
    char key[32];
    snprintf(key, sizeof key, "%s", prop);
    int n = cf_remaining_args(d, args, TEMPLATE_MAX_ARGS);
    if (n > TEMPLATE_MAX_ARGS)
        return cf_err(d, "plugin/template: more than %d arguments", TEMPLATE_MAX_ARGS);
    if (!strcmp(key, "match")) {
        if (n == 0)
            return cf_arg_err(d);
        return add_regexes(d, t, args, n);
    }
    if (!strcmp(key, "answer") || !strcmp(key, "additional") || !strcmp(key, "authority")) {
        if (n == 0)
            return cf_arg_err(d);
        int sec = key[0] == 'a' && key[1] == 'n' ? SEC_ANSWER
                : key[1] == 'd' ? SEC_ADDITIONAL : SEC_AUTHORITY;
        return add_templates(d, t, sec, args, n);
    }
    if (!strcmp(key, "rcode")) {
        /* CoreDNS reads one argument; a second one is then read as the
         * next property, which is an argument error. */
        if (n != 1)
            return cf_arg_err(d);
        int rc = rcode_from_name(args[0]);
        if (rc < 0)
            return cf_err(d, "plugin/template: unknown rcode %s", args[0]);
        t->rcode = rc;
        return 0;
    }
    if (!strcmp(key, "ederror")) {
        if (n != 1 && n != 2)
            return cf_arg_err(d);
        char *end;
        errno = 0;
        unsigned long code = strtoul(args[0], &end, 10);
        if (!*args[0] || *end || args[0][0] == '-' || args[0][0] == '+' || code > 65535)
            return cf_err(d, "plugin/template: error parsing extended DNS error code %s, "
                             "strconv.ParseUint: parsing \"%s\": %s", cf_val(d), args[0],
                          code > 65535 && !*end && args[0][0] != '-' && args[0][0] != '+'
                              ? "value out of range" : "invalid syntax");
        t->ede = 1;
        t->ede_code = (uint16_t)code;
        free(t->ede_reason);
        t->ede_reason = n == 2 ? strdup(args[1]) : NULL;
        if (n == 2 && !t->ede_reason)
            return cf_err(d, "plugin/template: out of memory");
        return 0;
    }
    if (!strcmp(key, "fallthrough")) {
        size_t nf = 0;
        free(t->fall);
        t->fall = NULL;
        if (n == 0)
            return add_zone(d, &t->fall, &nf, ".") < 0 ? -1 : (t->nfall = (long)nf, 0);
        for (int i = 0; i < n; i++)
            if (add_zone(d, &t->fall, &nf, args[i]) < 0)
                return -1;
        t->nfall = (long)nf;
        return 0;
    }
    if (!strcmp(key, "upstream"))
        return 0;
    if (!strcmp(key, "var") || !strcmp(key, "expr"))
        return cf_err(d, "plugin/template: %s is not supported (expressions are not "
                         "implemented)", key);
    return cf_arg_err(d);
}

static int parse_template(cf_disp *d, setup_ctx *ctx, ttemplate *t)
{
    if (!cf_next_arg(d))
        return cf_arg_err(d);
    t->qclass = rr_class_from_name(cf_val(d));
    if (t->qclass < 0)
        return cf_err(d, "plugin/template: invalid query class %s", cf_val(d));
    if (!cf_next_arg(d))
        return cf_arg_err(d);
    t->qtype = rr_type_from_name(cf_val(d));
    if (t->qtype < 0)
        return cf_err(d, "plugin/template: invalid RR class %s", cf_val(d));
    const char *args[TEMPLATE_MAX_ARGS];
    int n = cf_remaining_args(d, args, TEMPLATE_MAX_ARGS);
    if (n > TEMPLATE_MAX_ARGS)
        return cf_err(d, "plugin/template: more than %d zones", TEMPLATE_MAX_ARGS);
    for (int i = 0; i < n; i++)
        if (add_zone(d, &t->zones, &t->nzones, args[i]) < 0)
            return -1;
    if (n == 0)
        for (size_t i = 0; i < ctx->blk->nkeys; i++)
            if (add_zone(d, &t->zones, &t->nzones, ctx->blk->keys[i].zone) < 0)
                return -1;
    while (cf_next_block(d))
        if (parse_prop(d, t) < 0)
            return -1;
    if (t->nre == 0) {
        const char *all = ".*";
        if (add_regexes(d, t, &all, 1) < 0)
            return -1;
    }
    return 0;
}

static void register_metrics(tplugin *p, struct instance *ins);

static int tplugin_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    tplugin *p = calloc(1, sizeof *p);
    if (!p)
        return cf_err(d, "plugin/template: out of memory");
    p->ins = ctx->ins;
    while (cf_next(d)) {
        if (VEC_RESIZE(p->t, p->n + 1) < 0) {
            tplugin_destroy(p);
            return cf_err(d, "plugin/template: out of memory");
        }
        ttemplate *t = &p->t[p->n++];
        memset(t, 0, sizeof *t);
        t->nfall = -1;
        if (parse_template(d, ctx, t) < 0) {
            tplugin_destroy(p);
            return -1;
        }
    }
    if (ctx->ins)
        register_metrics(p, ctx->ins);
    *inst = p;
    return 0;
}

/* The counters, in the instance's registry (they outlive reloads). */
static void register_metrics(tplugin *p, struct instance *ins)
{
    static const char *const l_match[] = { "server", "zone", "view", "class", "type", NULL };
    static const char *const l_fail[] = { "server", "zone", "view", "class", "type", "section",
                                          "template", NULL };
    metrics_registry *reg = instance_metrics(ins);
    p->m_match = metrics_family(reg, "coredns_template_matches_total",
                                "Counter of template regex matches.", METRIC_COUNTER, l_match,
                                NULL, 0);
    p->m_tfail = metrics_family(reg, "coredns_template_template_failures_total",
                                "Counter of go template failures.", METRIC_COUNTER, l_fail, NULL, 0);
    p->m_rrfail = metrics_family(reg, "coredns_template_rr_failures_total",
                                 "Counter of mis-templated RRs.", METRIC_COUNTER, l_fail, NULL, 0);
}

/* ---- serving ---------------------------------------------------------- */

/* The longest of zones that name lies in, or NULL. */
static const tzone *zone_match(const uint8_t *name, const tzone *zones, size_t n)
{
    const tzone *best = NULL;
    size_t bestlen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = dname_len(zones[i].wire);
        if (dname_is_sub(name, zones[i].wire) && (!best || l > bestlen)) {
            best = &zones[i];
            bestlen = l;
        }
    }
    return best;
}

/* A query waiting for the lookups of its CNAME targets (server/lookup.h). */
typedef struct twait {
    dns_req *r;
    const handler *h;
    const ttemplate *t;
    dns_msg parts;                  /* the rendered records */
    lookup_set *ls;
    int *lk;                        /* answer record i → its lookup, or -1 */
} twait;

static void twait_free(twait *w)
{
    lookup_free(w->ls);
    free(w->lk);
    msg_free(&w->parts);
    free(w);
}

static void copy_section(dns_msg *dst, const dns_msg *src, int sec)
{
    for (unsigned i = 0; i < msg_count(src, sec); i++) {
        dns_rr rr = msg_rr(src, sec, i);
        msg_add_rr(dst, sec, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
    }
}

/* Build the reply from the rendered records and the lookups, and send it. */
static int write_reply(twait *w)
{
    dns_req *r = w->r;
    const ttemplate *t = w->t;
    dns_msg *m = &r->resp;
    msg_reply_to(m, &r->q);
    m->flags |= F_AA;
    m->rcode = (uint16_t)t->rcode;
    for (unsigned i = 0; i < msg_count(&w->parts, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(&w->parts, SEC_ANSWER, i);
        msg_add_rr(m, SEC_ANSWER, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
        const dns_msg *reply = w->lk ? lookup_reply(w->ls, w->lk[i]) : NULL;
        if (reply) {
            m->flags = (uint16_t)((m->flags & ~F_TC) | (reply->flags & F_TC));
            copy_section(m, reply, SEC_ANSWER);
        }
    }
    copy_section(m, &w->parts, SEC_AUTHORITY);
    copy_section(m, &w->parts, SEC_ADDITIONAL);
    if (t->ede) {
        m->edns.present = 1;
        m->edns.keep = 1;
        m->edns.udp_size = 4096;
        m->edns.do_bit = 1;
        size_t rl = t->ede_reason ? strlen(t->ede_reason) : 0;
        uint8_t opt[2 + 256];
        if (rl > sizeof opt - 2)
            rl = sizeof opt - 2;
        opt[0] = (uint8_t)(t->ede_code >> 8);
        opt[1] = (uint8_t)t->ede_code;
        if (rl)
            memcpy(opt + 2, t->ede_reason, rl);
        edns_opt_add(&m->edns, EDNS_OPT_EDE, opt, (uint16_t)(2 + rl));
    }
    r->owners_own_case = 1;             /* {{ .Name }} is lower case: a cache keeps it */
    req_write(r, w->h);
    return t->rcode;
}

static void chase_done(lookup_set *ls, void *data)
{
    (void)ls;
    twait *w = data;
    dns_req *r = w->r;
    int rc = write_reply(w);
    twait_free(w);
    req_finish(r, rc);
}

/* Parse one rendered record into sec of m: 0, or -1 with err. */
static int parse_rr(const char *text, dns_msg *m, int sec, char *err, size_t errlen)
{
    ldns_rr *lr = NULL;
    ldns_rdf *origin = ldns_dname_new_frm_str(".");
    if (!origin) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ldns_status st = ldns_rr_new_frm_str(&lr, text, 3600, origin, NULL);
    ldns_rdf_deep_free(origin);
    if (st != LDNS_STATUS_OK || !lr) {
        snprintf(err, errlen, "bad record \"%s\": %s", text, ldns_get_errorstr_by_id(st));
        if (lr)
            ldns_rr_free(lr);
        return -1;
    }
    int rc = -1;
    ldns_buffer *b = ldns_buffer_new(512);
    const ldns_rdf *o = ldns_rr_owner(lr);
    if (b && o && ldns_rdf_size(o) <= DNAME_MAX &&
        ldns_rr_rdata2buffer_wire(b, lr) == LDNS_STATUS_OK && ldns_buffer_position(b) <= 65535) {
        uint8_t owner[DNAME_MAX];
        memcpy(owner, ldns_rdf_data(o), ldns_rdf_size(o));
        rc = msg_add_rr(m, sec, owner, (uint16_t)ldns_rr_get_type(lr),
                        (uint16_t)ldns_rr_get_class(lr), ldns_rr_ttl(lr),
                        ldns_buffer_begin(b), (uint16_t)ldns_buffer_position(b));
    }
    if (rc < 0)
        snprintf(err, errlen, "bad record \"%s\"", text);
    ldns_buffer_free(b);
    ldns_rr_free(lr);
    return rc;
}

/* miekg/dns's Question.String(): ";name.\tIN\t A". */
static void question_text(const dns_req *r, char *out, size_t cap)
{
    char name[DNAME_STR_MAX], cb[16], tb[16];
    dname_to_str(name, sizeof name, r->q.qname);
    snprintf(out, cap, ";%s\t%s\t %s", name, rr_class_name(r->q.qclass, cb),
             rr_type_name(r->q.qtype, tb));
}

/* The request as miekg/dns's Msg.String() prints it (dig-like). */
static char *message_text(const dns_req *r)
{
    static const char *const opcodes[] = { "QUERY", "IQUERY", "STATUS", "", "NOTIFY", "UPDATE" };
    const dns_msg *q = &r->q;
    size_t cap = 4096;
    char *s = malloc(cap), rb[16], op[16];
    if (!s)
        return NULL;
    unsigned opc = msg_opcode(q);
    if (opc < 6 && opcodes[opc][0])
        snprintf(op, sizeof op, "%s", opcodes[opc]);
    else
        snprintf(op, sizeof op, "%u", opc);
    size_t n = (size_t)snprintf(s, cap, ";; opcode: %s, status: %s, id: %u\n;; flags:%s%s%s%s%s%s%s%s; "
                                "QUERY: %d, ANSWER: %u, AUTHORITY: %u, ADDITIONAL: %u\n",
                                op, rcode_name(q->rcode, rb), q->id,
                                q->flags & F_QR ? " qr" : "", q->flags & F_AA ? " aa" : "",
                                q->flags & F_TC ? " tc" : "", q->flags & F_RD ? " rd" : "",
                                q->flags & F_RA ? " ra" : "", q->flags & 0x0040 ? " z" : "",
                                q->flags & F_AD ? " ad" : "", q->flags & F_CD ? " cd" : "",
                                q->has_question ? 1 : 0, msg_count(q, SEC_ANSWER),
                                msg_count(q, SEC_AUTHORITY),
                                msg_count(q, SEC_ADDITIONAL) + (q->edns.present ? 1u : 0u));
    if (q->edns.present && n < cap) {
        n += (size_t)snprintf(s + n, cap - n, "\n;; OPT PSEUDOSECTION:\n; EDNS: version %u; flags:%s; "
                              "udp: %u", q->edns.version, q->edns.do_bit ? " do" : "",
                              q->edns.udp_size);
        if (q->edns.has_ecs && n < cap) {
            char a[64] = "";
            const dns_ecs *e = &q->edns.ecs;
            inet_ntop(e->family == 2 ? AF_INET6 : AF_INET, e->addr, a, sizeof a);
            n += (size_t)snprintf(s + n, cap - n, "\n; SUBNET: %s/%u/%u", a, e->source_prefix,
                                  e->scope_prefix);
        }
        if (n < cap)
            n += (size_t)snprintf(s + n, cap - n, "\n");
    }
    if (q->has_question && n < cap) {
        char qt[DNAME_STR_MAX + 40];
        question_text(r, qt, sizeof qt);
        n += (size_t)snprintf(s + n, cap - n, "\n;; QUESTION SECTION:\n%s\n", qt);
    }
    static const char *const heads[SEC_COUNT] = { "ANSWER", "AUTHORITY", "ADDITIONAL" };
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned cnt = msg_count(q, sec);
        if (!cnt || n >= cap)
            continue;
        n += (size_t)snprintf(s + n, cap - n, "\n;; %s SECTION:\n", heads[sec]);
        for (unsigned i = 0; i < cnt && n < cap; i++) {
            dns_rr rr = msg_rr(q, sec, i);
            char line[1024];
            if (rr_to_str(&rr, line, sizeof line) >= 0)
                n += (size_t)snprintf(s + n, cap - n, "%s\n", line);
        }
    }
    return s;
}

static const char *meta_fn(const void *ctx, const char *label, char *buf, size_t cap)
{
    return req_meta_get(ctx, label, buf, cap);
}

/* 1 when name falls through t (its fallthrough zones cover it). */
static int falls(const ttemplate *t, const uint8_t *name)
{
    return t->nfall >= 0 && zone_match(name, t->fall, (size_t)t->nfall) != NULL;
}

static int answer(const handler *h, dns_req *r, const ttemplate *t, const tzone *zone,
                  const goregex *re, const char *name)
{
    const tplugin *p = h->inst;
    char cls[16], typ[16];
    rr_class_name(r->q.qclass != C_ANY ? r->q.qclass : (uint16_t)t->qclass, cls);
    rr_type_name(r->q.qtype != T_ANY ? r->q.qtype : (uint16_t)t->qtype, typ);
    const char *server = r->server ? r->server : "";
    const char *lm[] = { server, zone->str, "", cls, typ };
    metrics_add(p->m_match, lm, 1);
    if (t->rcode == RC_SERVFAIL)
        return RC_SERVFAIL;

    size_t ng = goregex_ngroups(re) + 1;
    const char **match = calloc(ng, sizeof *match), **gname = calloc(ng, sizeof *gname);
    char *blob = malloc(strlen(name) * ng + ng);
    long *off = malloc(2 * ng * sizeof *off);
    twait *w = calloc(1, sizeof *w);
    char *msgtext = NULL, qtext[DNAME_STR_MAX + 40] = "", remote[64] = "", qname[DNAME_STR_MAX];
    int rc = RC_SERVFAIL;
    if (!match || !gname || !blob || !off || !w || !goregex_match(re, name, off, ng)) {
        req_error(r, "template", "plugin/template: out of memory");
        goto out;
    }
    msg_init(&w->parts);
    w->r = r;
    w->h = h;
    w->t = t;
    char *bp = blob;
    for (size_t i = 0; i < ng; i++) {
        long s = off[2 * i], e = off[2 * i + 1];
        size_t l = s >= 0 && e >= s ? (size_t)(e - s) : 0;
        memcpy(bp, s >= 0 ? name + s : "", l);
        bp[l] = '\0';
        match[i] = bp;
        bp += l + 1;
        gname[i] = goregex_name(re, i);
    }
    int port;
    req_peer_str(r, remote, sizeof remote, &port);
    if (t->uses & TMPL_USES_MESSAGE)
        msgtext = message_text(r);
    if (t->uses & TMPL_USES_QUESTION)
        question_text(r, qtext, sizeof qtext);
    dname_to_str(qname, sizeof qname, r->q.qname);
    tmpl_data d = {
        .zone = zone->str, .name = name, .regex = goregex_source(re), .cls = cls, .type = typ,
        .remote = remote, .match = match, .gname = gname, .nmatch = ng,
        .message = msgtext ? msgtext : "", .question = qtext, .qname = qname, .id = r->q.id,
        .qtype = r->q.qtype, .qclass = r->q.qclass, .meta = meta_fn, .meta_ctx = r,
    };
    for (int k = 0; k < 3; k++) {
        int sec = sec_order[k];
        for (size_t i = 0; i < t->nsec[sec]; i++) {
            char *text = NULL, err[512];
            const char *lf[] = { server, zone->str, "", cls, typ, sec_label[sec],
                                 tmpl_string(t->sec[sec][i]) };
            if (tmpl_exec(t->sec[sec][i], &d, &text, err, sizeof err) < 0) {
                metrics_add(p->m_tfail, lf, 1);
                req_error(r, "template", "template: %s: %s", sec_label[sec], err);
                goto out;
            }
            if (parse_rr(text, &w->parts, sec, err, sizeof err) < 0) {
                metrics_add(p->m_rrfail, lf, 1);
                req_error(r, "template", "%s", err);
                free(text);
                goto out;
            }
            free(text);
        }
    }
    /* CNAME targets of an A/AAAA answer: looked up through the server, with
     * the client's address, RD bit and EDNS size (a TCP client without EDNS
     * asks for 65535 so that the lookup is not cut to 512 octets). */
    unsigned nans = msg_count(&w->parts, SEC_ANSWER);
    if ((r->q.qtype == T_A || r->q.qtype == T_AAAA) && p->ins && nans > 0) {
        w->ls = lookup_new(p->ins, r, TEMPLATE_MAX_DEPTH,
                           LOOKUP_CLIENT_RD | LOOKUP_CLIENT_PEER | LOOKUP_TCP_65535);
        w->lk = malloc(nans * sizeof *w->lk);
        if (!w->ls || !w->lk) {
            req_error(r, "template", "plugin/template: cannot look up the CNAME target");
            goto out;
        }
        for (unsigned i = 0; i < nans; i++) {
            dns_rr rr = msg_rr(&w->parts, SEC_ANSWER, i);
            w->lk[i] = rr.type == T_CNAME && rr.rdlen > 0 ? lookup_add(w->ls, rr.rdata, r->q.qtype)
                                                          : -1;
        }
        if (lookup_run(w->ls, chase_done, w)) {
            w = NULL;               /* chase_done owns it now */
            rc = REQ_ASYNC;
            goto out;
        }
    }
    rc = write_reply(w);
out:
    if (w)
        twait_free(w);
    free(match);
    free(gname);
    free(blob);
    free(off);
    free(msgtext);
    return rc;
}

static int tplugin_serve(const handler *h, dns_req *r)
{
    const tplugin *p = h->inst;
    if (!r->q.has_question)
        return plugin_next(h, r);
    uint8_t lname[DNAME_MAX];
    memcpy(lname, r->q.qname, dname_len(r->q.qname));
    dname_lower(lname);
    int inzone = 0;
    for (size_t i = 0; i < p->n && !inzone; i++)
        inzone = zone_match(lname, p->t[i].zones, p->t[i].nzones) != NULL;
    if (!inzone)
        return plugin_next(h, r);
    char name[DNAME_STR_MAX];
    dname_to_str(name, sizeof name, lname);
    for (size_t i = 0; i < p->n; i++) {
        const ttemplate *t = &p->t[i];
        const tzone *z = zone_match(lname, t->zones, t->nzones);
        if (!z)
            continue;
        if (t->qclass != C_ANY && r->q.qclass != C_ANY && r->q.qclass != t->qclass)
            continue;
        if (t->qtype != T_ANY && r->q.qtype != T_ANY && r->q.qtype != t->qtype)
            continue;
        for (size_t k = 0; k < t->nre; k++) {
            if (goregex_match(t->re[k], name, NULL, 0))   /* groups: in answer() */
                return answer(h, r, t, z, t->re[k], name);
        }
        if (!falls(t, lname))
            return RC_SERVFAIL;
    }
    return plugin_next(h, r);
}

const plugin_def plugin_template = {
    .name = "template",
    .setup = tplugin_setup,
    .destroy = tplugin_destroy,
    .serve = tplugin_serve,
};
