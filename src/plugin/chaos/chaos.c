/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chaos — answers CH-class TXT queries about the server (RFC 4892).
 *
 *   chaos [VERSION] [AUTHORS...]
 *
 * A TXT query of class CH for one of these names (any case) is answered
 * with class CH TXT records, TTL 0, owner the name as queried, not
 * authoritative, as CoreDNS's chaos answers them:
 *   version.bind., version.server.   VERSION (default "topodns-<version>")
 *   authors.bind.                    one record per author, in a random
 *                                    order per query
 *   hostname.bind., id.server.       the host name ("localhost" when it
 *                                    cannot be read)
 * Everything else goes to the next plugin. The directive also opens the
 * server to every query class (PLUGIN_ANY_CLASS): without it, or forward,
 * the server core refuses classes other than IN before any plugin runs.
 *
 * With two or more arguments the authors are the others, deduplicated and
 * sorted (then shuffled per query); strings are cut at 255 octets.
 *
 * The instance (strings) is written by setup on the loading thread, read
 * by workers, freed by destroy. The shuffle's random state is per query.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "server/plugin.h"

#ifndef TOPODNS_VERSION
#define TOPODNS_VERSION "unknown"
#endif

#define CHAOS_MAX_AUTHORS 256
#define TXT_MAX 255

typedef struct chaos {
    char *version;
    char **authors;
    size_t nauthors;
    char hostname[TXT_MAX + 1];
} chaos;

static const char *const default_authors[] = { "The topodns authors" };

static void chaos_destroy(void *p)
{
    chaos *c = p;
    if (!c)
        return;
    for (size_t i = 0; i < c->nauthors; i++)
        free(c->authors[i]);
    free(c->authors);
    free(c->version);
    free(c);
}

static char *dup_trim(const char *s)
{
    size_t n = strnlen(s, TXT_MAX);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The authors: given ones deduplicated and sorted, else the default. */
static int set_authors(chaos *c, const char *const *list, size_t n)
{
    c->authors = calloc(n ? n : 1, sizeof *c->authors);
    if (!c->authors)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char *a = dup_trim(list[i]);
        if (!a)
            return -1;
        int seen = 0;
        for (size_t j = 0; j < c->nauthors && !seen; j++)
            seen = !strcmp(c->authors[j], a);
        if (seen)
            free(a);
        else
            c->authors[c->nauthors++] = a;
    }
    qsort(c->authors, c->nauthors, sizeof *c->authors, cmp_str);
    return 0;
}

static int chaos_parse(cf_disp *d, chaos *c)
{
    const char *args[CHAOS_MAX_AUTHORS + 1];
    int n = 0;
    if (cf_next(d))
        n = cf_remaining_args(d, args, CHAOS_MAX_AUTHORS + 1);
    if (n > CHAOS_MAX_AUTHORS + 1)
        return cf_err(d, "plugin/chaos: more than %d authors", CHAOS_MAX_AUTHORS);
    c->version = dup_trim(n > 0 ? args[0] : "topodns-" TOPODNS_VERSION);
    int rc = n > 1 ? set_authors(c, args + 1, (size_t)n - 1)
                   : set_authors(c, default_authors, sizeof default_authors / sizeof *default_authors);
    if (!c->version || rc < 0)
        return cf_err(d, "plugin/chaos: out of memory");
    if (cf_next_block(d))
        return cf_prop_err(d);
    return 0;
}

static int chaos_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    chaos *c = calloc(1, sizeof *c);
    if (!c)
        return cf_err(d, "plugin/chaos: out of memory");
    if (chaos_parse(d, c) < 0) {
        chaos_destroy(c);
        return -1;
    }
    if (gethostname(c->hostname, sizeof c->hostname - 1) < 0 || !c->hostname[0])
        strcpy(c->hostname, "localhost");
    *inst = c;
    return 0;
}

/* ---- serving ------------------------------------------------------------ */

enum { Q_NONE, Q_VERSION, Q_AUTHORS, Q_HOSTNAME };

static int which(const uint8_t *qname)
{
    static const struct { const char *name; int kind; } names[] = {
        { "version.bind.", Q_VERSION }, { "version.server.", Q_VERSION },
        { "authors.bind.", Q_AUTHORS }, { "hostname.bind.", Q_HOSTNAME },
        { "id.server.", Q_HOSTNAME },
    };
    uint8_t want[DNAME_MAX];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (dname_from_str(want, names[i].name) > 0 && dname_equal(qname, want))
            return names[i].kind;
    return Q_NONE;
}

static int add_txt(dns_msg *m, const uint8_t *owner, const char *s)
{
    uint8_t rd[1 + TXT_MAX];
    size_t n = strnlen(s, TXT_MAX);
    rd[0] = (uint8_t)n;
    memcpy(rd + 1, s, n);
    return msg_add_rr(m, SEC_ANSWER, owner, T_TXT, C_CH, 0, rd, (uint16_t)(n + 1));
}

/* Authors in a fresh random order (Fisher-Yates, a per-query xorshift). */
static void add_authors(const chaos *c, dns_msg *m, const uint8_t *owner)
{
    size_t idx[CHAOS_MAX_AUTHORS];
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ (uintptr_t)m;
    for (size_t i = 0; i < c->nauthors; i++)
        idx[i] = i;
    for (size_t i = c->nauthors; i > 1; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i), t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    for (size_t i = 0; i < c->nauthors; i++)
        add_txt(m, owner, c->authors[idx[i]]);
}

static int chaos_serve(const handler *h, dns_req *r)
{
    const chaos *c = h->inst;
    int kind = r->q.qclass == C_CH && r->q.qtype == T_TXT ? which(r->q.qname) : Q_NONE;
    if (kind == Q_NONE)
        return plugin_next(h, r);
    msg_reply_to(&r->resp, &r->q);
    if (kind == Q_VERSION)
        add_txt(&r->resp, r->q.qname, c->version);
    else if (kind == Q_HOSTNAME)
        add_txt(&r->resp, r->q.qname, c->hostname);
    else
        add_authors(c, &r->resp, r->q.qname);
    return req_write(r, h);
}

const plugin_def plugin_chaos = {
    .name = "chaos",
    .flags = PLUGIN_ONCE | PLUGIN_ANY_CLASS,
    .setup = chaos_setup,
    .destroy = chaos_destroy,
    .serve = chaos_serve,
};
