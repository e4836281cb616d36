/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hosts — answers from a hosts file and inline entries.
 *
 *   hosts [FILE [ZONES...]] {
 *       [INLINE...]            # "ADDRESS NAME..." lines, hosts-file syntax
 *       ttl SECONDS            # default 3600
 *       no_reverse             # no PTR records
 *       reload DURATION        # default 5s, 0 = never
 *       fallthrough [ZONES...]
 *   }
 *
 * As CoreDNS's hosts plugin: A/AAAA for names in the plugin's zones,
 * PTR for the addresses (any reverse name); an owner written `*.NAME`
 * answers a name one label below NAME (not NAME itself, not deeper) for a
 * family (A or AAAA) that the exact name has no address of, and never gives
 * a PTR; a name that exists but has no
 * record of the asked type gets NODATA without SOA (there is none); a name
 * that does not exist falls through when `fallthrough` covers it, else
 * SERVFAIL (CoreDNS: no SOA to build an NXDOMAIN with). PTR misses and names
 * outside the zones always go to the next plugin.
 *
 * The table is immutable once built. A background thread re-reads the file
 * when its mtime or size changes and publishes a new table; readers load the
 * pointer inside an RCU read-side section (workers are RCU readers), so they
 * never wait for a reload.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <arpa/inet.h>
#include <urcu/urcu-memb.h>
#include <uthash.h>
#include "cluster/pmap.h"
#include "server/plugin.h"
#include "common/addr.h"
#include "common/file.h"
#include "common/log.h"
#include "runtime/metrics.h"
#include "runtime/periodic.h"
#include "server/server.h"
#include "server/zone.h"
#include "hosts.h"
#include "common/vec.h"

typedef struct haddr { uint8_t family; uint8_t a[16]; } haddr;

typedef struct hname {                  /* lower-cased name → addresses */
    UT_hash_handle hh;
    haddr *addrs;
    size_t n;
    uint8_t wire[DNAME_MAX];
    size_t wlen;
} hname;

typedef struct hrev {                   /* address → names */
    UT_hash_handle hh;
    haddr key;
    uint8_t (*names)[DNAME_MAX];
    size_t n;
} hrev;

typedef struct table {
    hname *names;
    hrev *rev;
    size_t entries;
} table;

typedef struct hosts {
    char *path;
    char *inline_text;                  /* inline lines, newline-separated */
    uint8_t (*zones)[DNAME_MAX];
    size_t nzones;
    uint8_t (*fall)[DNAME_MAX];         /* fallthrough zones; nfall = -1 off */
    long nfall;
    uint32_t ttl;
    int no_reverse;
    double reload;
    _Atomic(table *) cur;
    struct timespec mtime;
    off_t size;
    periodic *task;                 /* the reload task, NULL when off */
    metric_family *m_entries, *m_reload_ts;  /* the instance registry's */
} hosts;

/* ---- the table -------------------------------------------------------- */

static void table_free(void *p)
{
    table *t = p;
    if (!t)
        return;
    hname *n, *tn;
    HASH_ITER(hh, t->names, n, tn) {
        HASH_DEL(t->names, n);
        free(n->addrs);
        free(n);
    }
    hrev *r, *tr;
    HASH_ITER(hh, t->rev, r, tr) {
        HASH_DEL(t->rev, r);
        free(r->names);
        free(r);
    }
    free(t);
}

/* A hosts-file address as CoreDNS reads one: a zone is dropped, and
 * ::ffff:a.b.c.d is the IPv4 address. */
static int parse_addr(const char *s, haddr *out)
{
    int fam;
    memset(out, 0, sizeof *out);
    if (addr_parse_bytes(s, strlen(s), ADDR_ZONE | ADDR_UNMAP, &fam, out->a) < 0)
        return -1;
    out->family = fam == AF_INET ? 4 : 6;
    return 0;
}

static void add_entry(table *t, const haddr *a, const char *name)
{
    uint8_t wire[DNAME_MAX];
    int wl = dname_from_str(wire, name);
    if (wl < 0)
        return;
    dname_lower(wire);
    hname *n;
    HASH_FIND(hh, t->names, wire, (size_t)wl, n);
    if (!n) {
        if (!(n = calloc(1, sizeof *n)))
            return;
        memcpy(n->wire, wire, (size_t)wl);
        n->wlen = (size_t)wl;
        HASH_ADD(hh, t->names, wire, n->wlen, n);
    }
    for (size_t i = 0; i < n->n; i++)
        if (memcmp(&n->addrs[i], a, sizeof *a) == 0)
            return;                     /* duplicate line */
    if (VEC_RESIZE(n->addrs, n->n + 1) < 0)
        return;
    n->addrs[n->n++] = *a;
    t->entries++;
    if (wire[0] == 1 && wire[1] == '*')
        return;                         /* a wildcard owner has no PTR */
    hrev *r;
    HASH_FIND(hh, t->rev, a, sizeof *a, r);
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return;
        r->key = *a;
        HASH_ADD(hh, t->rev, key, sizeof r->key, r);
    }
    if (VEC_RESIZE(r->names, r->n + 1) < 0)
        return;
    memcpy(r->names[r->n++], wire, (size_t)wl);
}

/* hosts-file syntax: ADDRESS NAME... per line, '#' comments */
static void parse_text(table *t, const char *text)
{
    const char *p = text;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[4096];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *tok = strtok_r(line, " \t\r", &save);
        haddr a;
        if (tok && parse_addr(tok, &a) == 0)
            while ((tok = strtok_r(NULL, " \t\r", &save)))
                add_entry(t, &a, tok);
        p = eol ? eol + 1 : NULL;
    }
}

/* Build a table from the file (when readable) and the inline entries. */
static table *build(hosts *h)
{
    table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (h->inline_text)
        parse_text(t, h->inline_text);
    if (h->path) {
        struct stat st;
        char *text = stat(h->path, &st) == 0 ? file_read(h->path, NULL, FILE_REGULAR, NULL) : NULL;
        if (text) {
            parse_text(t, text);
            h->mtime = st.st_mtim;
            h->size = st.st_size;
            free(text);
        }
    }
    return t;
}

/* Publish t and free the old table once no worker can still read it. The
 * caller (the reload thread, or hosts_reread's other caller) may block: it
 * waits for the grace period itself (every read-side section that might
 * hold the old table has ended) instead of handing the free to liburcu's
 * call_rcu thread, which batches its callbacks with 10 ms sleeps. */
static void publish(hosts *h, table *t)
{
    assert(h && t);
    table *old = atomic_exchange(&h->cur, t);
    metrics_set(h->m_entries, NULL, (double)t->entries);
    metrics_set(h->m_reload_ts, NULL, (double)time(NULL));
    if (old) {
        urcu_memb_synchronize_rcu();
        table_free(old);
    }
}

/* ---- reload task ------------------------------------------------------ */

void hosts_reread(void *inst)
{
    assert(inst);
    assert(!pmap_read_ongoing());           /* it waits for a grace period */
    hosts *h = inst;
    table *t = build(h);
    if (t)
        publish(h, t);
}

/* Every `reload`: re-read the file when its modification time or size
 * changed, and publish the new table. */
static double reloader(void *arg)
{
    hosts *h = arg;
    struct stat st;
    if (stat(h->path, &st) == 0 &&
        (st.st_mtim.tv_sec != h->mtime.tv_sec || st.st_mtim.tv_nsec != h->mtime.tv_nsec ||
         st.st_size != h->size))
        hosts_reread(h);
    return h->reload;
}

/* ---- setup ------------------------------------------------------------ */

static int add_zones(cf_disp *d, uint8_t (**zones)[DNAME_MAX], size_t *n, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k < 0)
        return cf_err(d, "plugin/hosts: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(*zones, *n + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/hosts: out of memory");
    }
    for (int i = 0; i < k; i++)
        dname_from_str((*zones)[(*n)++], z[i]);
    free(z);
    return 0;
}

static void hosts_destroy(void *p)
{
    hosts *h = p;
    if (!h)
        return;
    table_free(atomic_load(&h->cur));
    free(h->path);
    free(h->inline_text);
    free(h->zones);
    free(h->fall);
    free(h);
}

static int append_inline(hosts *h, cf_disp *d)
{
    const char *args[256], *addr = cf_val(d);      /* before the args move on */
    size_t have = h->inline_text ? strlen(h->inline_text) : 0, need = strlen(addr) + 2;
    int n = cf_remaining_args(d, args, 256);
    for (int i = 0; i < n && i < 256; i++)
        need += strlen(args[i]) + 1;
    char *s = realloc(h->inline_text, have + need + 1);
    if (!s)
        return cf_err(d, "plugin/hosts: out of memory");
    h->inline_text = s;
    int w = snprintf(s + have, need + 1, "%s", addr);
    for (int i = 0; i < n && i < 256; i++)
        w += snprintf(s + have + (size_t)w, need + 1 - (size_t)w, " %s", args[i]);
    snprintf(s + have + (size_t)w, need + 1 - (size_t)w, "\n");
    return 0;
}

static int parse_prop(hosts *h, cf_disp *d)
{
    const char *p = cf_val(d), *args[64];
    if (!strcmp(p, "ttl") || !strcmp(p, "reload")) {
        if (cf_remaining_args(d, args, 64) != 1)
            return cf_arg_err(d);
        if (!strcmp(p, "reload"))
            return cf_parse_duration(d, args[0], &h->reload);
        unsigned long v;
        if (cf_parse_uint(d, args[0], 1, 4294967295ul, &v) < 0)
            return -1;
        h->ttl = (uint32_t)v;
        return 0;
    }
    if (!strcmp(p, "no_reverse")) {
        if (cf_next_arg(d))
            return cf_arg_err(d);
        h->no_reverse = 1;
        return 0;
    }
    if (!strcmp(p, "fallthrough")) {
        int n = cf_remaining_args(d, args, 64);
        size_t nf = 0;
        for (int i = 0; i < n && i < 64; i++)
            if (add_zones(d, &h->fall, &nf, args[i]) < 0)
                return -1;
        h->nfall = (long)nf;
        return 0;
    }
    haddr a;
    if (parse_addr(p, &a) == 0)
        return append_inline(h, d);
    return cf_prop_err(d);
}

/* A FILE that exists must be a regular file: a device such as /dev/zero
 * would never end, a FIFO would block. The error is at FILE's token (the
 * directive's when the default is used). A missing file only warns. */
static int check_path(cf_disp *d, const char *path)
{
    const char *what;
    if (!path)
        return cf_err(d, "plugin/hosts: out of memory");
    if (file_check_regular(path, &what) == 0)
        return cf_err(d, "plugin/hosts: %s %s", path, what);
    return 0;
}

static int hosts_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    hosts *h = calloc(1, sizeof *h);
    if (!h)
        return cf_err(d, "plugin/hosts: out of memory");
    h->ttl = 3600;
    h->reload = 5;
    h->nfall = -1;
    int rc = 0;
    while (rc == 0 && cf_next(d)) {
        const char *args[64];
        free(h->path);
        h->path = strdup(cf_next_arg(d) ? cf_val(d) : "/etc/hosts");
        rc = check_path(d, h->path);
        int n = rc == 0 ? cf_remaining_args(d, args, 64) : 0;
        for (int i = 0; rc == 0 && i < n && i < 64; i++)
            rc = add_zones(d, &h->zones, &h->nzones, args[i]);
        while (rc == 0 && cf_next_block(d))
            rc = parse_prop(h, d);
    }
    if (rc == 0 && h->nzones == 0)
        for (size_t i = 0; rc == 0 && i < ctx->blk->nkeys; i++)
            rc = add_zones(d, &h->zones, &h->nzones, ctx->blk->keys[i].zone);
    if (rc == 0) {
        struct stat st;
        if (h->path && stat(h->path, &st) < 0)
            log_warning("plugin/hosts: File does not exist: %s", h->path);
        table *t = build(h);
        if (!t)
            rc = cf_err(d, "plugin/hosts: out of memory");
        else
            atomic_store(&h->cur, t);
    }
    if (rc < 0) {
        hosts_destroy(h);
        return -1;
    }
    *inst = h;
    return 0;
}

static int hosts_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    hosts *h = inst;
    metrics_registry *reg = instance_metrics(ins);
    h->m_entries = metrics_family(reg, "coredns_hosts_entries",
                                  "The combined number of entries in hosts and Corefile.",
                                  METRIC_GAUGE, NULL, NULL, 0);
    h->m_reload_ts = metrics_family(reg, "coredns_hosts_reload_timestamp_seconds",
                                    "The timestamp of the last reload of hosts file.",
                                    METRIC_GAUGE, NULL, NULL, 0);
    metrics_set(h->m_entries, NULL, (double)atomic_load(&h->cur)->entries);
    metrics_set(h->m_reload_ts, NULL, (double)time(NULL));
    if (h->reload > 0 && h->path) {
        if (!(h->task = periodic_start(reloader, h, h->reload, PERIODIC_RCU))) {
            snprintf(err, errlen, "plugin/hosts: cannot start the reload thread");
            return -1;
        }
    }
    return 0;
}

static void hosts_stop(void *inst)
{
    hosts *h = inst;
    if (!h->task)
        return;
    periodic_stop(h->task);
    h->task = NULL;
}

/* ---- serving ---------------------------------------------------------- */

static int in_zones(const uint8_t *name, uint8_t (*zones)[DNAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dname_is_sub(name, zones[i]))
            return 1;
    return 0;
}

/* "d.c.b.a.in-addr.arpa." → a.b.c.d: exactly four labels that make a
 * dotted quad (addr_parse_bytes's IPv4: 0..255 each, no sign, no leading
 * zero; an IPv6 spelling such as "::ffff:1.2.3.4" is refused by its family),
 * never a number converted out of range (sscanf's %u is undefined there, and
 * wrapped 4294967297 to 1). */
static int reverse_v4(const char *s, haddr *out)
{
    static const char suffix[] = ".in-addr.arpa.";
    size_t n = strlen(s), sl = sizeof suffix - 1;
    char labels[16], addr[16], *lab[5], *save = NULL;
    int k = 0;
    if (n <= sl || n - sl >= sizeof labels || strcmp(s + n - sl, suffix) != 0)
        return -1;
    memcpy(labels, s, n - sl);
    labels[n - sl] = '\0';
    for (char *t = strtok_r(labels, ".", &save); t && k < 5; t = strtok_r(NULL, ".", &save))
        lab[k++] = t;
    if (k != 4)
        return -1;
    snprintf(addr, sizeof addr, "%s.%s.%s.%s", lab[3], lab[2], lab[1], lab[0]);
    int fam;
    if (addr_parse_bytes(addr, strlen(addr), 0, &fam, out->a) < 0 || fam != AF_INET)
        return -1;
    out->family = 4;
    return 0;
}

/* x.x.x.x.in-addr.arpa / 32 nibbles.ip6.arpa → address */
static int reverse_addr(const uint8_t *qn, haddr *out)
{
    char s[DNAME_STR_MAX];
    dname_to_str(s, sizeof s, qn);
    for (char *c = s; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    memset(out, 0, sizeof *out);
    if (reverse_v4(s, out) == 0)
        return 0;
    memset(out, 0, sizeof *out);
    if (strlen(s) == 64 + strlen("ip6.arpa.") && !strcmp(s + 64, "ip6.arpa.")) {
        for (int i = 0; i < 32; i++) {
            char c = s[2 * (31 - i)];
            int v = isdigit((unsigned char)c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (v < 0 || s[2 * (31 - i) + 1] != '.')
                return -1;
            out->a[i / 2] |= (uint8_t)(i % 2 ? v : v << 4);
        }
        out->family = 6;
        return 0;
    }
    return -1;
}

/* Does n hold an address of this family (4 or 6)? */
static int has_family(const hname *n, int family)
{
    for (size_t i = 0; n && i < n->n; i++)
        if (n->addrs[i].family == family)
            return 1;
    return 0;
}

/* The entry that answers lname for a family, as CoreDNS's hosts plugin
 * looks up each family: the exact name when it has an address of that
 * family, else the wildcard `*.<lname less its first label>` when that has
 * one; NULL when neither does. */
static const hname *lookup_family(const table *t, const uint8_t *lname, int family)
{
    hname *n;
    size_t len = dname_len(lname);
    HASH_FIND(hh, t->names, lname, len, n);
    if (has_family(n, family))
        return n;
    if (lname[0] == 0)
        return NULL;
    uint8_t wild[DNAME_MAX];
    size_t rest = len - 1 - lname[0];   /* the name less its first label */
    wild[0] = 1;
    wild[1] = '*';
    memcpy(wild + 2, lname + 1 + lname[0], rest);
    HASH_FIND(hh, t->names, wild, rest + 2, n);
    return has_family(n, family) ? n : NULL;
}

static int hosts_serve(const handler *h0, dns_req *r)
{
    hosts *h = h0->inst;
    const uint8_t *qn = r->q.qname;
    uint8_t lname[DNAME_MAX];
    memcpy(lname, qn, dname_len(qn));
    dname_lower(lname);
    int inzone = in_zones(lname, h->zones, h->nzones);
    if (!inzone && r->q.qtype != T_PTR)
        return plugin_next(h0, r);
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    size_t answers = 0;
    int exists = 0;
    pmap_read_lock();
    table *t = atomic_load(&h->cur);
    if (r->q.qtype == T_PTR) {
        haddr a;
        hrev *rv = NULL;
        if (!h->no_reverse && reverse_addr(lname, &a) == 0)
            HASH_FIND(hh, t->rev, &a, sizeof a, rv);
        for (size_t i = 0; rv && i < rv->n; i++)
            answers += msg_add_name(&r->resp, SEC_ANSWER, qn, T_PTR, h->ttl, rv->names[i]) == 0;
        if (!answers) {
            pmap_read_unlock();
            return plugin_next(h0, r);
        }
        exists = 1;
    } else {
        const hname *n4 = lookup_family(t, lname, 4), *n6 = lookup_family(t, lname, 6);
        exists = n4 || n6;
        const hname *n = r->q.qtype == T_A ? n4 : r->q.qtype == T_AAAA ? n6 : NULL;
        for (size_t i = 0; n && i < n->n; i++) {
            if (r->q.qtype == T_A && n->addrs[i].family == 4)
                answers += msg_add_a(&r->resp, SEC_ANSWER, qn, h->ttl, (const struct in_addr *)n->addrs[i].a) == 0;
            else if (r->q.qtype == T_AAAA && n->addrs[i].family == 6)
                answers += msg_add_aaaa(&r->resp, SEC_ANSWER, qn, h->ttl, (const struct in6_addr *)n->addrs[i].a) == 0;
        }
    }
    pmap_read_unlock();
    if (!answers && !exists) {
        if (h->nfall == 0 || (h->nfall > 0 && in_zones(lname, h->fall, (size_t)h->nfall)))
            return plugin_next(h0, r);
        return RC_SERVFAIL;
    }
    return req_write(r, h0);
}

const plugin_def plugin_hosts = {
    .name = "hosts",
    .flags = PLUGIN_ONCE,
    .setup = hosts_setup,
    .start = hosts_start,
    .stop = hosts_stop,
    .destroy = hosts_destroy,
    .serve = hosts_serve,
};
