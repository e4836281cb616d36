/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loadbalance — reorders address records in replies.
 *
 *   loadbalance [round_robin | weighted WEIGHTFILE { reload DURATION }]
 *
 * Registered as a write hook, so it applies to whatever an inner plugin
 * writes (file, kubernetes, cache). On NOERROR replies that are not zone
 * transfers, as CoreDNS does:
 * - round_robin: each section becomes CNAMEs first, then the records that
 *   are neither addresses nor MX, then the A/AAAA records shuffled, then
 *   the MX records shuffled;
 * - weighted (questions for A, AAAA and SRV only): the answer and
 *   additional sections become CNAMEs, the others, the A/AAAA records, the
 *   MX records, each group in its order, except that one address record,
 *   picked at random by the weights of WEIGHTFILE (weights.h), is swapped
 *   to the first place of the addresses.
 *
 * The weight table is immutable once built. A background thread (periodic)
 * re-reads WEIGHTFILE every `reload` (default 30s, 0 never) and publishes a
 * new table when its content changed; a file that no longer parses is logged
 * and the last table kept. Workers read the table pointer inside an RCU
 * read-side section, so they never wait for a reload.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu/urcu-memb.h>
#include "cluster/pmap.h"
#include "common/file.h"
#include "common/log.h"
#include "runtime/periodic.h"
#include "server/plugin.h"
#include "wire/msg.h"
#include "plugin/loadbalance/weights.h"

typedef struct lb_inst {
    char *path;                         /* WEIGHTFILE; NULL: round_robin */
    double reload;                      /* seconds, 0 = never */
    char *text;                         /* the content the table was built from */
    _Atomic(lbw_table *) cur;           /* NULL until the file was read */
    periodic *task;                     /* the reload task, NULL when off */
    const char *cf_file;                /* setup only: where WEIGHTFILE is written */
    int cf_line;
} lb_inst;

/* per-thread xorshift64*: no locks on the serving path */
static _Thread_local uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    if (!rng) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)(uintptr_t)&rng ^ (uint64_t)ts.tv_sec;
        rng |= 1;
    }
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 2685821657736338717ull) >> 33) % n;
}

static void shuffle(unsigned *idx, unsigned n)
{
    for (unsigned j = 0; n > 1 && j < n - 1; j++) {
        unsigned p = j + rnd(n - j);
        unsigned t = idx[j];
        idx[j] = idx[p];
        idx[p] = t;
    }
}

enum { K_CNAME, K_OTHER, K_ADDR, K_MX };

static int kind(uint16_t type)
{
    switch (type) {
    case T_CNAME: return K_CNAME;
    case T_A: case T_AAAA: return K_ADDR;
    case T_MX: return K_MX;
    default: return K_OTHER;
    }
}

static void reorder(dns_msg *m, int sec)
{
    unsigned n = msg_count(m, sec);
    if (n < 2 || n > 4096)
        return;
    unsigned perm[4096], at = 0;
    for (int k = K_CNAME; k <= K_MX; k++) {
        unsigned start = at;
        for (unsigned i = 0; i < n; i++)
            if (kind(msg_rr(m, sec, i).type) == k)
                perm[at++] = i;
        if (k == K_ADDR || k == K_MX)
            shuffle(perm + start, at - start);
    }
    msg_permute(m, sec, perm, n);
}

/* weighted: CNAMEs, others, addresses (the picked one first), MX. */
static void reorder_weighted(const lbw_table *t, dns_msg *m, int sec)
{
    unsigned n = msg_count(m, sec);
    if (n == 0 || n > 4096)
        return;
    unsigned perm[4096], at = 0, addr_at = 0, naddr = 0;
    for (int k = K_CNAME; k <= K_MX; k++) {
        if (k == K_ADDR)
            addr_at = at;
        for (unsigned i = 0; i < n; i++)
            if (kind(msg_rr(m, sec, i).type) == k)
                perm[at++] = i;
        if (k == K_ADDR)
            naddr = at - addr_at;
    }
    if (naddr == 0)
        return;                         /* CoreDNS: no change at all */
    unsigned w[4096];
    uint32_t sum = 0;
    for (unsigned i = 0; i < naddr; i++) {
        dns_rr rr = msg_rr(m, sec, perm[addr_at + i]);
        uint8_t owner[DNAME_MAX], a[16] = {0};
        memcpy(owner, rr.owner, dname_len(rr.owner));
        dname_lower(owner);
        int family = 4;
        if (rr.type == T_A && rr.rdlen == 4) {
            memcpy(a, rr.rdata, 4);
        } else if (rr.type == T_AAAA && rr.rdlen == 16) {
            static const uint8_t mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
            if (memcmp(rr.rdata, mapped, 12) == 0) {
                memcpy(a, rr.rdata + 12, 4);
            } else {
                memcpy(a, rr.rdata, 16);
                family = 6;
            }
        }
        w[i] = lbw_weight(t, owner, family, a);
        sum += w[i];
    }
    unsigned top = lbw_pick(w, naddr, rnd(sum));
    unsigned tmp = perm[addr_at];
    perm[addr_at] = perm[addr_at + top];
    perm[addr_at + top] = tmp;
    msg_permute(m, sec, perm, n);
}

static void on_write(dns_req *r, void *data)
{
    lb_inst *lb = data;
    if (r->resp.rcode != RC_NOERROR || r->q.qtype == T_AXFR || r->q.qtype == T_IXFR)
        return;
    if (!lb || !lb->path) {
        for (int sec = 0; sec < SEC_COUNT; sec++)
            reorder(&r->resp, sec);
        return;
    }
    if (r->q.qtype != T_A && r->q.qtype != T_AAAA && r->q.qtype != T_SRV)
        return;
    pmap_read_lock();
    const lbw_table *t = atomic_load(&lb->cur);
    reorder_weighted(t, &r->resp, SEC_ANSWER);
    reorder_weighted(t, &r->resp, SEC_ADDITIONAL);
    pmap_read_unlock();
}

/* ---- the weight file ---------------------------------------------------- */

/* Read the file; publish a new table when its content changed. 1 when the
 * file cannot be read, -1 when it does not parse (err set), else 0. The
 * old table is freed after a grace period (the caller may block). */
static int weights_load(lb_inst *lb, char *err, size_t errlen)
{
    const char *why = NULL;
    char *text = file_read(lb->path, NULL, FILE_REGULAR, &why);
    if (!text) {
        snprintf(err, errlen, "weight file open error: %s: %s", lb->path, why ? why : "unreadable");
        return 1;
    }
    if (lb->text && strcmp(lb->text, text) == 0) {
        free(text);
        return 0;
    }
    lbw_table *t = lbw_parse(text, lb->path, err, errlen);
    if (!t) {
        free(text);
        return -1;
    }
    free(lb->text);
    lb->text = text;
    lbw_table *old = atomic_exchange(&lb->cur, t);
    if (old) {
        urcu_memb_synchronize_rcu();
        lbw_free(old);
    }
    return 0;
}

static double reloader(void *arg)
{
    lb_inst *lb = arg;
    char err[512];
    int rc = weights_load(lb, err, sizeof err);
    if (rc != 0)
        log_error("plugin/loadbalance: %s", err);
    return lb->reload;
}

/* ---- setup -------------------------------------------------------------- */

static void lb_destroy(void *p)
{
    lb_inst *lb = p;
    if (!lb)
        return;
    lbw_free(atomic_load(&lb->cur));
    free(lb->text);
    free(lb->path);
    free(lb);
}

static int weighted_block(cf_disp *d, lb_inst *lb)
{
    while (cf_next_block(d)) {
        if (strcmp(cf_val(d), "reload") != 0)
            return cf_err(d, "plugin/loadbalance: unknown property '%s'", cf_val(d));
        const char *t[2];
        int n = cf_remaining_args(d, t, 2);
        if (n < 1)
            return cf_err(d, "plugin/loadbalance: reload duration value is missing");
        if (n > 1)
            return cf_err(d, "plugin/loadbalance: unexpected argument");
        if (cf_parse_duration(d, t[0], &lb->reload) < 0)
            return -1;
        if (lb->reload < 0)
            return cf_err(d, "plugin/loadbalance: invalid reload duration '%s'", t[0]);
    }
    return 0;
}

static int lb_parse(cf_disp *d, lb_inst *lb)
{
    while (cf_next(d)) {
        const char *args[4];
        int n = cf_remaining_args(d, args, 4);
        if (n >= 1 && strcmp(args[0], "weighted") == 0) {
            if (n < 2)
                return cf_err(d, "plugin/loadbalance: missing weight file argument");
            if (n > 2)
                return cf_err(d, "plugin/loadbalance: unexpected argument(s)");
            free(lb->path);
            lb->cf_file = cf_file_name(d);
            lb->cf_line = cf_line(d);
            if (!(lb->path = strdup(args[1])))
                return cf_err(d, "plugin/loadbalance: out of memory");
            const char *what;
            if (file_check_regular(lb->path, &what) == 0)
                return cf_err(d, "plugin/loadbalance: %s %s", lb->path, what);
            if (weighted_block(d, lb) < 0)
                return -1;
            continue;
        }
        if (n > 1)
            return cf_arg_err(d);
        if (n == 1 && strcmp(args[0], "round_robin") != 0)
            return cf_err(d, "plugin/loadbalance: unknown policy: %s", args[0]);
        if (cf_next_block(d))
            return cf_prop_err(d);
    }
    return 0;
}

static int lb_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    lb_inst *lb = calloc(1, sizeof *lb);
    if (!lb)
        return cf_err(d, "plugin/loadbalance: out of memory");
    lb->reload = 30;
    if (lb_parse(d, lb) < 0) {
        lb_destroy(lb);
        return -1;
    }
    if (lb->path) {
        /* as CoreDNS at start-up: a file that does not parse is an error; one
         * that cannot be opened is an error too unless a reload will look
         * for it again (a warning, and no weights until then) */
        char err[512];
        int rc = weights_load(lb, err, sizeof err);
        if (rc < 0 || (rc > 0 && lb->reload == 0)) {
            /* at WEIGHTFILE's line, as cf_err() words it */
            char msg[2048];
            snprintf(msg, sizeof msg, "%s:%d: plugin/loadbalance: %s near '%s'",
                     lb->cf_file, lb->cf_line, err, lb->path);
            size_t ml = strnlen(msg, sizeof d->err - 1);
            memcpy(d->err, msg, ml);
            d->err[ml] = '\0';
            lb_destroy(lb);
            return -1;
        }
        if (rc > 0)
            log_warning("plugin/loadbalance: Failed to open weight file:%s. Will try again in %gs",
                        err, lb->reload);
    }
    *inst = lb;
    return 0;
}

static int lb_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    lb_inst *lb = inst;
    if (lb->path && lb->reload > 0 &&
        !(lb->task = periodic_start(reloader, lb, lb->reload, PERIODIC_RCU))) {
        snprintf(err, errlen, "plugin/loadbalance: cannot start the reload thread");
        return -1;
    }
    return 0;
}

static void lb_stop(void *inst)
{
    lb_inst *lb = inst;
    periodic_stop(lb->task);
    lb->task = NULL;
}

static int lb_serve(const handler *h, dns_req *r)
{
    req_on_write(r, on_write, h->inst);
    return plugin_next(h, r);
}

const plugin_def plugin_loadbalance = {
    .name = "loadbalance",
    .flags = PLUGIN_ONCE,
    .setup = lb_setup,
    .start = lb_start,
    .stop = lb_stop,
    .destroy = lb_destroy,
    .serve = lb_serve,
};
