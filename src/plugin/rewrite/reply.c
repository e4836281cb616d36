/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reply.c — the rewrite plugin's serve(): the query rewritten for the
 * plugins after it, and the reply they write brought back to the client's
 * question (see rewrite.h).
 *
 * The reply side, as CoreDNS's ResponseReverter: when a rule with `stop`
 * matched, or any rule that matched left response actions, a write hook
 * rebuilds the reply: the original question, then every record of the
 * authority, answer and additional sections through the actions in
 * reverse order (owner and value names mapped back, TTLs clamped, the
 * rcode changed; with no record at all the rcode actions run once). An
 * inner plugin that returns SERVFAIL, REFUSED, FORMERR or NOTIMP without
 * writing gets its bare reply written by rewrite itself (a finish hook),
 * so that reply is rewritten too.
 *
 * EDNS: a query rewritten by an edns0 rule gets an OPT record (UDP size
 * 4096) if it had none, as in CoreDNS; the options a `local` rule uses are
 * echoed in replies that have no OPT record of their own, as CoreDNS marks
 * them supported; `revert` takes an option set by the rule out of the
 * reply again, or puts back the data a replace changed.
 *
 * The cname rule: the first CNAME in the answer whose target the rule
 * matches is followed: its target is rewritten and looked up from the top
 * of the server with the query's type (an internal request on the
 * worker's event loop, the client's address kept); the answer becomes the
 * CNAME records up to that one, its target replaced, then the lookup's
 * answer, with its TC bit. While the lookup runs the reply is held
 * (req_hold_write); a lookup that finishes at once needs no hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/rewrite/rewrite.h"
#include "common/log.h"

/* Internal lookups nest at most this deep (a cname rule whose target
 * leads back to a name it rewrites). */
#define RW_CNAME_DEPTH 4

/* ---- records ------------------------------------------------------------ */

/* Length of the uncompressed name at rdata[off], within len; 0 if none. */
static size_t wire_name_len(const uint8_t *rdata, size_t len, size_t off)
{
    size_t i = off;
    while (i < len) {
        uint8_t l = rdata[i];
        if (l == 0)
            return i + 1 - off;
        if (l > 63)
            return 0;
        i += 1 + (size_t)l;
    }
    return 0;
}

/* Where a record's rewritable value name starts (CoreDNS's
 * getRecordValueForRewrite), or -1 for types without one. */
static long value_offset(uint16_t type, const uint8_t *rdata, size_t len)
{
    switch (type) {
    case T_CNAME: case T_NS: case T_PTR: case T_DNAME: case T_SOA:
        return 0;
    case T_MX:
        return 2;
    case T_SRV:
        return 6;
    case 35: {                      /* NAPTR: order, preference, 3 strings */
        size_t off = 4;
        for (int i = 0; i < 3; i++) {
            if (off >= len)
                return -1;
            off += 1 + (size_t)rdata[off];
        }
        return off < len ? (long)off : -1;
    }
    default:
        return -1;
    }
}

/* CoreDNS's remapStringRewriter: the name itself or a name under it. */
static int remap(const char *from, const char *to, const char *src, char *out, size_t cap)
{
    size_t n = strlen(src), k = strlen(from);
    if (!strcmp(src, from)) {
        snprintf(out, cap, "%s", to);
        return strcmp(out, src) != 0;
    }
    if (n > k && src[n - k - 1] == '.' && !strcmp(src + n - k, from)) {
        snprintf(out, cap, "%.*s%s", (int)(n - k), src, to);
        return strcmp(out, src) != 0;
    }
    return 0;
}

static int act_string(const rw_act *a, const char *src, char *out, size_t cap)
{
    return a->s ? rw_str_apply(a->s, src, out, cap)
                : remap(a->remap_from, a->remap_to, src, out, cap);
}

typedef struct rec {
    uint8_t owner[DNAME_MAX];
    uint16_t type, rclass;
    uint32_t ttl;
    uint8_t rdata[4096];
    size_t rdlen;
} rec;

/* A record's value name rewritten by one action. */
static void rewrite_value(const rw_act *a, rec *x)
{
    long off = value_offset(x->type, x->rdata, x->rdlen);
    if (off < 0)
        return;
    size_t nl = wire_name_len(x->rdata, x->rdlen, (size_t)off);
    if (!nl)
        return;
    char s[RW_NAME_MAX], out[RW_NAME_MAX];
    dname_to_str(s, sizeof s, x->rdata + off);
    if (!act_string(a, s, out, sizeof out))
        return;
    uint8_t dn[DNAME_MAX];
    if (dname_from_str(dn, out) < 0)
        return;
    size_t dl = dname_len(dn), tail = x->rdlen - (size_t)off - nl;
    if ((size_t)off + dl + tail > sizeof x->rdata)
        return;
    memmove(x->rdata + off + dl, x->rdata + off + nl, tail);
    memcpy(x->rdata + off, dn, dl);
    x->rdlen = (size_t)off + dl + tail;
}

/* Every action, last first, on one record (and the rcode of out). */
static void apply_actions(const rw_state *st, rec *x, dns_msg *out)
{
    for (size_t i = st->nacts; i-- > 0;) {
        const rw_act *a = &st->acts[i];
        switch (a->kind) {
        case ACT_NAME: {
            char s[RW_NAME_MAX], o[RW_NAME_MAX];
            uint8_t dn[DNAME_MAX];
            dname_to_str(s, sizeof s, x->owner);
            if (act_string(a, s, o, sizeof o) && dname_from_str(dn, o) >= 0)
                memcpy(x->owner, dn, dname_len(dn));
            break;
        }
        case ACT_VALUE:
            rewrite_value(a, x);
            break;
        case ACT_TTL:
            if (x->ttl < a->rule->ttl_min)
                x->ttl = a->rule->ttl_min;
            else if (x->ttl > a->rule->ttl_max)
                x->ttl = a->rule->ttl_max;
            break;
        case ACT_RCODE:
            if (out->rcode == (unsigned)a->rule->rc_old)
                out->rcode = (uint16_t)a->rule->rc_new;
            break;
        default:
            break;
        }
    }
}

static void rcode_actions(const rw_state *st, dns_msg *out)
{
    for (size_t i = st->nacts; i-- > 0;)
        if (st->acts[i].kind == ACT_RCODE && out->rcode == (unsigned)st->acts[i].rule->rc_old)
            out->rcode = (uint16_t)st->acts[i].rule->rc_new;
}

/* ---- EDNS ------------------------------------------------------------- */

static int echoed(const rw_conf *c, uint16_t code)
{
    if (code == EDNS_OPT_NSID || (code >= 9 && code <= 12))
        return 1;
    for (size_t i = 0; i < c->necho; i++)
        if (c->echo_codes[i] == code)
            return 1;
    return 0;
}

static void opt_restore(dns_edns *e, uint16_t code, const uint8_t *data, uint16_t len)
{
    /* the first option of that code gets its original data back */
    dns_edns tmp = *e;
    tmp.opts_len = 0;
    int done = 0;
    for (size_t off = 0; off + 4 <= e->opts_len;) {
        uint16_t c = (uint16_t)(e->opts[off] << 8 | e->opts[off + 1]);
        uint16_t l = (uint16_t)(e->opts[off + 2] << 8 | e->opts[off + 3]);
        if (c == code && !done) {
            edns_opt_add(&tmp, c, data ? data : (const uint8_t *)"", len);
            done = 1;
        } else {
            edns_opt_add(&tmp, c, e->opts + off + 4, l);
        }
        off += 4 + (size_t)l;
    }
    e->opts_len = tmp.opts_len;
    memcpy(e->opts, tmp.opts, tmp.opts_len);
}

/* The reply's options: the query's echoed ones when the reply has no OPT
 * record of its own, then the reverts. The query's ECS option, which the
 * server echoes, is reverted in the (already answered) query itself. */
static void fix_edns(rw_state *st, dns_msg *out)
{
    dns_req *r = st->r;
    const dns_edns *qe = &r->q.edns;
    if (!out->edns.present && qe->present) {
        out->edns.present = 1;
        out->edns.opts_len = 0;
        for (size_t off = 0; off + 4 <= qe->opts_len;) {
            uint16_t c = (uint16_t)(qe->opts[off] << 8 | qe->opts[off + 1]);
            uint16_t l = (uint16_t)(qe->opts[off + 2] << 8 | qe->opts[off + 3]);
            if (echoed(st->conf, c))
                edns_opt_add(&out->edns, c, qe->opts + off + 4, l);
            off += 4 + (size_t)l;
        }
    }
    for (size_t i = st->nacts; i-- > 0;) {
        const rw_act *a = &st->acts[i];
        if (a->kind == ACT_OPT_REMOVE) {
            if (a->code == EDNS_OPT_ECS) {
                r->q.edns.has_ecs = 0;
                out->edns.has_ecs = 0;
            } else {
                edns_opt_remove(&out->edns, a->code);
            }
        } else if (a->kind == ACT_OPT_RESTORE) {
            if (a->code == EDNS_OPT_ECS) {
                r->q.edns.ecs = st->orig_ecs;
                if (out->edns.has_ecs)
                    out->edns.ecs = st->orig_ecs;
            } else {
                opt_restore(&out->edns, a->code, a->data, a->len);
            }
        }
    }
}

/* ---- the rebuilt reply ------------------------------------------------- */

static int add_rec(dns_msg *m, int sec, const rec *x)
{
    return msg_add_rr(m, sec, x->owner, x->type, x->rclass, x->ttl, x->rdata, (uint16_t)x->rdlen);
}

static int load_rec(rec *x, const dns_rr *rr)
{
    size_t ol = dname_len(rr->owner);
    if (ol > sizeof x->owner || rr->rdlen > sizeof x->rdata)
        return -1;
    memcpy(x->owner, rr->owner, ol);
    x->type = rr->type;
    x->rclass = rr->rclass;
    x->ttl = rr->ttl;
    memcpy(x->rdata, rr->rdata, rr->rdlen);
    x->rdlen = rr->rdlen;
    return 0;
}

int rw_rebuild(rw_state *st, dns_msg *resp)
{
    dns_msg out, ans;
    msg_init(&out);
    msg_init(&ans);
    out.id = resp->id;
    out.flags = resp->flags;
    out.rcode = resp->rcode;
    out.has_question = 1;
    memcpy(out.qname, st->orig_qname, dname_len(st->orig_qname));
    out.qtype = st->orig_qtype;
    out.qclass = st->orig_qclass;
    out.edns = resp->edns;
    rec *x = malloc(sizeof *x);
    int rc = x ? 0 : -1;
    static const int order[3] = { SEC_AUTHORITY, SEC_ANSWER, SEC_ADDITIONAL };
    unsigned nrec = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        int sec = order[s];
        for (unsigned i = 0; i < msg_count(resp, sec) && rc == 0; i++, nrec++) {
            dns_rr rr = msg_rr(resp, sec, i);
            if (load_rec(x, &rr) < 0) {
                rc = -1;
                break;
            }
            apply_actions(st, x, &out);
            rc = add_rec(sec == SEC_ANSWER ? &ans : &out, sec, x);
        }
    }
    if (rc == 0 && nrec == 0)
        rcode_actions(st, &out);
    /* the answer: as rewritten, or cut at the followed CNAME */
    int cut = st->looked_up && st->cname_act;
    const dns_msg *lk = cut ? lookup_reply(st->ls, 0) : NULL;   /* NULL: not kept */
    for (unsigned i = 0; i < msg_count(&ans, SEC_ANSWER) && rc == 0; i++) {
        dns_rr rr = msg_rr(&ans, SEC_ANSWER, i);
        if (cut && rr.type != T_CNAME)
            continue;
        if (load_rec(x, &rr) < 0) {
            rc = -1;
            break;
        }
        if (cut && i == st->cname_index) {
            size_t dl = dname_len(st->cname_to);
            memcpy(x->rdata, st->cname_to, dl);
            x->rdlen = dl;
        }
        rc = add_rec(&out, SEC_ANSWER, x);
        if (cut && i == st->cname_index)
            break;
    }
    if (lk) {
        for (unsigned i = 0; i < msg_count(lk, SEC_ANSWER) && rc == 0; i++) {
            dns_rr rr = msg_rr(lk, SEC_ANSWER, i);
            rc = msg_add_rr(&out, SEC_ANSWER, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
        }
        out.flags = (uint16_t)((out.flags & ~F_TC) | (lk->flags & F_TC));
    } else if (cut) {
        out.flags = (uint16_t)(out.flags & ~F_TC);
    }
    free(x);
    msg_free(&ans);
    if (rc < 0) {
        msg_free(&out);
        return -1;
    }
    fix_edns(st, &out);
    msg_free(resp);
    *resp = out;
    return 0;
}

/* ---- the cname rule's lookup ------------------------------------------- */

/* CoreDNS's getFromAndToTarget: the target a CNAME must have for the rule
 * to follow it, and the new one; 0 when the rule does not apply. */
static int cname_targets(const rw_rule *rule, const char *target, char *from, char *to, size_t cap)
{
    switch (rule->match) {
    case RW_EXACT:
        snprintf(from, cap, "%s", rule->from);
        snprintf(to, cap, "%s", rule->to);
        return 1;
    case RW_PREFIX:
        if (strncmp(target, rule->from, strlen(rule->from)))
            return 0;
        snprintf(from, cap, "%s", target);
        snprintf(to, cap, "%s%s", rule->to, target + strlen(rule->from));
        return 1;
    case RW_SUFFIX: {
        size_t n = strlen(target), k = strlen(rule->from);
        if (n < k || strcmp(target + n - k, rule->from))
            return 0;
        snprintf(from, cap, "%s", target);
        snprintf(to, cap, "%.*s%s", (int)(n - k), target, rule->to);
        return 1;
    }
    case RW_SUBSTRING: {
        if (!strstr(target, rule->from))
            return 0;
        snprintf(from, cap, "%s", target);
        /* every occurrence replaced */
        size_t o = 0, fl = strlen(rule->from), tl = strlen(rule->to);
        for (const char *p = target; *p && o + 1 < cap;) {
            if (fl && !strncmp(p, rule->from, fl)) {
                for (size_t j = 0; j < tl && o + 1 < cap; j++)
                    to[o++] = rule->to[j];
                p += fl;
            } else {
                to[o++] = *p++;
            }
        }
        to[o] = '\0';
        return 1;
    }
    case RW_REGEX: {
        long m[2 * (RW_MAX_GROUPS + 1)];
        if (!goregex_match(rule->re, target, m, RW_MAX_GROUPS + 1))
            return 0;
        snprintf(from, cap, "%s", target);
        rw_expand(rule->to, target, m, goregex_ngroups(rule->re), to, cap);
        return 1;
    }
    }
    return 0;
}

/* The first answer CNAME a cname action follows: sets st->cname_*. */
static int find_cname(rw_state *st, const dns_msg *resp)
{
    for (unsigned i = 0; i < msg_count(resp, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(resp, SEC_ANSWER, i);
        if (rr.type != T_CNAME)
            continue;
        char target[RW_NAME_MAX], from[RW_NAME_MAX], to[RW_NAME_MAX];
        dname_to_str(target, sizeof target, rr.rdata);
        for (size_t k = st->nacts; k-- > 0;) {
            const rw_act *a = &st->acts[k];
            if (a->kind != ACT_CNAME || !cname_targets(a->rule, target, from, to, sizeof from) ||
                strcmp(target, from))
                continue;
            if (dname_from_str(st->cname_to, to) < 0) {
                log_error("plugin/rewrite: upstream lookup failed: invalid name %s", to);
                return 0;
            }
            st->cname_act = a;
            st->cname_index = i;
            return 1;
        }
    }
    return 0;
}

static void lookup_done(lookup_set *ls, void *data)
{
    (void)ls;
    rw_state *st = data;
    st->looked_up = 1;
    if (rw_rebuild(st, &st->r->resp) < 0)
        log_error("plugin/rewrite: out of memory rewriting the reply");
    req_release_write(st->r);
}

/* Start the lookup of the new target (server/lookup.h: through the whole
 * server, from the client's address, RD set, the client's EDNS size); 1
 * when it runs on (the reply is held), 0 when it finished or could not be
 * made. */
static int start_lookup(rw_state *st)
{
    dns_req *r = st->r;
    if (!st->conf->ins || r->depth >= RW_CNAME_DEPTH)
        return 0;
    st->ls = lookup_new(st->conf->ins, r, RW_CNAME_DEPTH, LOOKUP_CLIENT_PEER);
    if (!st->ls || lookup_add(st->ls, st->cname_to, r->q.qtype) < 0) {
        log_error("plugin/rewrite: upstream lookup failed: cannot make the query");
        lookup_free(st->ls);
        st->ls = NULL;
        return 0;
    }
    if (lookup_run(st->ls, lookup_done, st))
        return 1;
    st->looked_up = 1;
    return 0;
}

/* ---- hooks and serve ---------------------------------------------------- */

static void rw_write(dns_req *r, void *data)
{
    rw_state *st = data;
    (void)r;
    if (!st->ls && find_cname(st, &r->resp) && start_lookup(st)) {
        req_hold_write(r);
        return;
    }
    if (rw_rebuild(st, &r->resp) < 0)
        log_error("plugin/rewrite: out of memory rewriting the reply");
}

/* An error the plugins after this one returned without writing is
 * written here, so that the reply goes through rw_write. */
static void rw_finish(dns_req *r, int rcode, void *data)
{
    rw_state *st = data;
    if (r->written || r->noreply || rcode_client_write(rcode))
        return;
    msg_reply_to(&r->resp, &r->q);
    r->resp.rcode = (uint16_t)rcode;
    req_write(r, st->h);
}

static void rw_done(dns_req *r, int rcode, void *data)
{
    (void)r;
    (void)rcode;
    rw_state_free(data);
}

static int rw_serve(const handler *h, dns_req *r)
{
    const rw_conf *c = h->inst;
    rw_state *st = calloc(1, sizeof *st);
    if (!st)
        return plugin_next(h, r);
    st->conf = c;
    st->h = h;
    st->r = r;
    memcpy(st->orig_qname, r->q.qname, dname_len(r->q.qname));
    st->orig_qtype = r->q.qtype;
    st->orig_qclass = r->q.qclass;
    st->orig_ecs = r->q.edns.ecs;
    st->orig_has_ecs = r->q.edns.has_ecs;

    dns_msg q;
    msg_init(&q);
    if (msg_copy(&q, &r->q) < 0) {
        rw_state_free(st);
        return plugin_next(h, r);
    }
    char name[RW_NAME_MAX];
    dname_to_str(name, sizeof name, q.qname);
    for (char *p = name; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    int changed = 0, wrap = 0;
    for (size_t i = 0; i < c->nrules; i++) {
        const rw_rule *rule = &c->rules[i];
        int res = rw_apply(rule, &q, name, st);
        if (res == RW_ERROR) {
            req_error(r, "rewrite", "invalid name after rewrite: %s", name);
            msg_free(&q);
            rw_state_free(st);
            return RC_SERVFAIL;
        }
        if (res != RW_DONE)
            continue;
        changed |= rule->kind != RW_TTL && rule->kind != RW_RCODE && rule->kind != RW_CNAME;
        if (rule->stop) {
            wrap = 1;
            break;
        }
    }
    wrap |= st->nacts > 0;
    if (changed) {
        size_t cap = r->rawlen + EDNS_OPTS_MAX + 512;
        uint8_t *wire = malloc(cap);
        int n = wire ? msg_encode(&q, wire, cap, 65535, 0) : -1;
        int set = n < 0 ? -1 : req_set_query(r, wire, (size_t)n);
        free(wire);
        if (set < 0) {
            req_error(r, "rewrite", "invalid name after rewrite: %s", name);
            msg_free(&q);
            rw_state_free(st);
            return RC_SERVFAIL;
        }
    }
    msg_free(&q);
    if (!wrap) {
        rw_state_free(st);
        return plugin_next(h, r);
    }
    /* the done hook owns st from here on */
    if (req_on_done(r, rw_done, st) < 0) {
        log_error("plugin/rewrite: too many hooks on one request; reply not rewritten");
        rw_state_free(st);
    } else if (req_on_write(r, rw_write, st) < 0 || req_on_finish(r, rw_finish, st) < 0) {
        log_error("plugin/rewrite: too many hooks on one request; reply not rewritten");
    }
    return plugin_next(h, r);
}

static int rw_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    rw_conf *c = calloc(1, sizeof *c);
    if (!c)
        return cf_err(d, "plugin/rewrite: out of memory");
    c->ins = ctx->ins;
    if (rw_parse(d, c) < 0) {
        rw_conf_free(c);
        free(c);
        return -1;
    }
    *inst = c;
    return 0;
}

static void rw_destroy(void *inst)
{
    rw_conf *c = inst;
    rw_conf_free(c);
    free(c);
}

const plugin_def plugin_rewrite = {
    .name = "rewrite",
    .setup = rw_setup,
    .destroy = rw_destroy,
    .serve = rw_serve,
};
