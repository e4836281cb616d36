/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c — a Prometheus registry (the process owns one and hands it to
 * every instance it loads; tests make their own).
 *
 * A family (name, help, type, label names, histogram bounds) holds its
 * series in a fixed-size hash table of singly linked chains. The hot path,
 * metrics_add/set/observe, hashes the label values, walks the chain with
 * acquire loads and updates the series with C11 atomics: doubles live as
 * their IEEE-754 bit patterns in _Atomic uint64_t and are added with a
 * compare-and-swap loop; histogram buckets are plain atomic counters. Only
 * the first sighting of a label combination takes the family's mutex, to
 * create the series and publish it at the head of its chain with a release
 * store, so readers never see a half-built series.
 *
 * Series are never freed while the registry lives: metrics_remove() unlinks
 * them into the family's graveyard (a reader may still hold a pointer), so
 * lock-free readers can never touch freed memory. Removal is rare (a gauge
 * of a plugin instance that went away), so the cost is a few bytes.
 *
 * metrics_render() writes the text exposition format 0.0.4 the way Go's
 * client_golang does: families sorted by name, "# HELP" then "# TYPE",
 * label pairs sorted by label name, series sorted by their label values in
 * that order, histograms as cumulative _bucket{le=...} lines ending with
 * le="+Inf", then _sum and _count, and every number printed like Go's
 * strconv.FormatFloat(v, 'g', -1, 64) (1, 0.00025, 1e+06, 1.5e-05, +Inf).
 *
 * metrics_remove() values may contain NULL entries, which match any value;
 * values == NULL removes every series of the family.
 */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sbuf.h"
#include "runtime/metrics.h"

#define NSLOTS 64

typedef struct metric_series {
    _Atomic(struct metric_series *) next;   /* hash chain */
    struct metric_series *all;              /* every live series, under the lock */
    struct metric_family *fam;
    uint64_t hash;
    char **values;                   /* in label-name order as registered */
    _Atomic uint64_t value;          /* counter/gauge value, histogram sum (bits) */
    _Atomic uint64_t *counts;        /* histogram: nbounds + 1 (last is +Inf) */
} series;

struct metric_family {
    char *name;
    char *help;
    metric_type type;
    char **labels;
    size_t nlabels;
    size_t *order;                   /* label indices sorted by label name */
    double *bounds;
    size_t nbounds;
    pthread_mutex_t mu;
    _Atomic(series *) slots[NSLOTS];
    series *all;
    size_t nseries;
    series *graveyard;
    struct metric_family *next;
};

struct metrics_registry {
    pthread_mutex_t mu;              /* the family list */
    metric_family *families;
};

/* ---- doubles as atomic bit patterns ----------------------------------- */

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double u2d(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void atomic_add_double(_Atomic uint64_t *p, double delta)
{
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(p, &old, d2u(u2d(old) + delta),
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* ---- families --------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s ? s : "", n);
    return p;
}

static metric_family *find_family(metrics_registry *reg, const char *name)
{
    for (metric_family *f = reg->families; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static void free_family(metric_family *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->labels && i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->labels);
    free(f->order);
    free(f->bounds);
    free(f->name);
    free(f->help);
    free(f);
}

/* Insertion sort of label indices by label name (a handful of labels). */
static void sort_order(metric_family *f)
{
    for (size_t i = 0; i < f->nlabels; i++)
        f->order[i] = i;
    for (size_t i = 1; i < f->nlabels; i++)
        for (size_t j = i; j > 0 && strcmp(f->labels[f->order[j - 1]],
                                           f->labels[f->order[j]]) > 0; j--) {
            size_t t = f->order[j];
            f->order[j] = f->order[j - 1];
            f->order[j - 1] = t;
        }
}

static int copy_labels(metric_family *f, const char *const *labels)
{
    while (labels && labels[f->nlabels])
        f->nlabels++;
    f->labels = calloc(f->nlabels + 1, sizeof *f->labels);
    f->order = calloc(f->nlabels + 1, sizeof *f->order);
    if (!f->labels || !f->order)
        return -1;
    for (size_t i = 0; i < f->nlabels; i++)
        if (!(f->labels[i] = xstrdup(labels[i])))
            return -1;
    sort_order(f);
    return 0;
}

static int copy_bounds(metric_family *f, const double *buckets, size_t n)
{
    if (f->type != METRIC_HISTOGRAM)
        return 0;
    f->bounds = calloc(n + 1, sizeof *f->bounds);
    if (!f->bounds)
        return -1;
    assert(buckets || n == 0);
    for (size_t i = 0; i < n; i++)
        assert(i == 0 || buckets[i - 1] < buckets[i]);   /* ascending: bucket_of() searches */
    for (size_t i = 0; i < n; i++)
        if (!isinf(buckets[i]))       /* +Inf is always added at the end */
            f->bounds[f->nbounds++] = buckets[i];
    return 0;
}

static series *get_series(metric_family *f, const char *const *values);

static metric_family *new_family(const char *name, const char *help, metric_type type,
                                 const char *const *labels, const double *buckets,
                                 size_t nbuckets)
{
    metric_family *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->type = type;
    pthread_mutex_init(&f->mu, NULL);
    if (!(f->name = xstrdup(name)) || !(f->help = xstrdup(help)) ||
        copy_labels(f, labels) < 0 || copy_bounds(f, buckets, nbuckets) < 0) {
        free_family(f);
        return NULL;
    }
    return f;
}

metric_family *metrics_family(metrics_registry *reg, const char *name, const char *help,
                              metric_type type, const char *const *labels,
                              const double *buckets, size_t nbuckets)
{
    assert(name && help);
    assert(type == METRIC_COUNTER || type == METRIC_GAUGE || type == METRIC_HISTOGRAM);
    if (!reg)
        return NULL;
    pthread_mutex_lock(&reg->mu);
    metric_family *f = find_family(reg, name);
    if (!f && (f = new_family(name, help, type, labels, buckets, nbuckets))) {
        f->next = reg->families;
        reg->families = f;
    }
    pthread_mutex_unlock(&reg->mu);
    /* A family without labels has its one series from the start, as in
     * client_golang: it is exported (as 0) before the first update. */
    if (f && f->nlabels == 0)
        get_series(f, NULL);
    return f;
}

/* ---- series ----------------------------------------------------------- */

static const char *val_at(const metric_family *f, const char *const *values, size_t i)
{
    (void)f;
    return values && values[i] ? values[i] : "";
}

/* The chain a series lives in: a word-at-a-time multiplicative hash of each
 * value and its length (values are short strings; this runs for every
 * series touched by every query, so not byte by byte). Only ever compared
 * within this process. */
static uint64_t hash_values(const metric_family *f, const char *const *values)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < f->nlabels; i++) {
        const char *p = val_at(f, values, i);
        size_t n = strlen(p);
        h = (h ^ n) * 0x9e3779b97f4a7c15ull;
        for (; n >= 8; n -= 8, p += 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
        }
        if (n) {
            uint64_t w = 0;
            for (size_t j = 0; j < n; j++)   /* not memcpy: a call for < 8 octets */
                w |= (uint64_t)(unsigned char)p[j] << (8 * j);
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
        }
    }
    return h ^ (h >> 32);
}

static int same_values(const series *s, const char *const *values)
{
    for (size_t i = 0; i < s->fam->nlabels; i++)
        if (strcmp(s->values[i], val_at(s->fam, values, i)) != 0)
            return 0;
    return 1;
}

static series *lookup(metric_family *f, uint64_t h, const char *const *values)
{
    series *s = atomic_load_explicit(&f->slots[h % NSLOTS], memory_order_acquire);
    for (; s; s = atomic_load_explicit(&s->next, memory_order_acquire))
        if (s->hash == h && same_values(s, values))
            return s;
    return NULL;
}

static void free_series(series *s)
{
    for (size_t i = 0; s->values && i < s->fam->nlabels; i++)
        free(s->values[i]);
    free(s->values);
    free((void *)s->counts);
    free(s);
}

void metrics_exponential_buckets(double *out, size_t n, double start, double factor)
{
    assert(out || n == 0);
    assert(start > 0 && factor > 1);    /* ascending bounds */
    for (size_t i = 0; i < n; i++, start *= factor)
        out[i] = start;
}

/* ---- the registry ----------------------------------------------------- */

metrics_registry *metrics_registry_new(void)
{
    metrics_registry *reg = calloc(1, sizeof *reg);
    if (reg)
        pthread_mutex_init(&reg->mu, NULL);
    return reg;
}

static void free_chain(series *s)
{
    while (s) {
        series *next = s->all;
        free_series(s);
        s = next;
    }
}

void metrics_registry_free(metrics_registry *reg)
{
    if (!reg)
        return;
    while (reg->families) {
        metric_family *f = reg->families;
        reg->families = f->next;
        free_chain(f->all);
        free_chain(f->graveyard);
        pthread_mutex_destroy(&f->mu);
        free_family(f);
    }
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

static series *new_series(metric_family *f, uint64_t h, const char *const *values)
{
    series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fam = f;
    s->hash = h;
    s->values = calloc(f->nlabels + 1, sizeof *s->values);
    if (!s->values) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < f->nlabels; i++)
        if (!(s->values[i] = xstrdup(val_at(f, values, i)))) {
            free_series(s);
            return NULL;
        }
    if (f->type == METRIC_HISTOGRAM &&
        !(s->counts = calloc(f->nbounds + 1, sizeof *s->counts))) {
        free_series(s);
        return NULL;
    }
    atomic_init(&s->value, d2u(0.0));
    return s;
}

static series *get_series(metric_family *f, const char *const *values)
{
    uint64_t h = hash_values(f, values);
    series *s = lookup(f, h, values);
    if (s)
        return s;
    pthread_mutex_lock(&f->mu);
    s = lookup(f, h, values);                 /* another thread may have won */
    if (!s && (s = new_series(f, h, values))) {
        _Atomic(series *) *slot = &f->slots[h % NSLOTS];
        atomic_store_explicit(&s->next, atomic_load_explicit(slot, memory_order_relaxed),
                              memory_order_relaxed);
        s->all = f->all;
        f->all = s;
        f->nseries++;
        atomic_store_explicit(slot, s, memory_order_release);
    }
    pthread_mutex_unlock(&f->mu);
    return s;
}

void metrics_add(metric_family *f, const char *const *values, double delta)
{
    if (!f || f->type == METRIC_HISTOGRAM || (f->type == METRIC_COUNTER && !(delta >= 0)))
        return;                               /* counters never go down */
    series *s = get_series(f, values);
    if (s)
        atomic_add_double(&s->value, delta);
}

metric_series *metrics_series(metric_family *f, const char *const *values)
{
    return f ? get_series(f, values) : NULL;
}

void metrics_series_add(metric_series *s, double delta)
{
    if (!s || s->fam->type == METRIC_HISTOGRAM || (s->fam->type == METRIC_COUNTER && !(delta >= 0)))
        return;
    atomic_add_double(&s->value, delta);
}

void metrics_set(metric_family *f, const char *const *values, double value)
{
    if (!f || f->type == METRIC_HISTOGRAM)
        return;
    series *s = get_series(f, values);
    if (s)
        atomic_store_explicit(&s->value, d2u(value), memory_order_relaxed);
}

/* Index of the first bound >= v (v falls in that bucket); nbounds for +Inf. */
static size_t bucket_of(const metric_family *f, double v)
{
    size_t lo = 0, hi = f->nbounds;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->bounds[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void metrics_series_observe(metric_series *s, double value)
{
    if (!s || s->fam->type != METRIC_HISTOGRAM)
        return;
    atomic_fetch_add_explicit(&s->counts[bucket_of(s->fam, value)], 1, memory_order_relaxed);
    atomic_add_double(&s->value, value);
}

void metrics_observe(metric_family *f, const char *const *values, double value)
{
    if (!f || f->type != METRIC_HISTOGRAM)
        return;
    metrics_series_observe(get_series(f, values), value);
}

static int matches(const series *s, const char *const *values)
{
    for (size_t i = 0; values && i < s->fam->nlabels; i++)
        if (values[i] && strcmp(s->values[i], values[i]) != 0)
            return 0;
    return 1;
}

/* Unlink s from its hash chain (caller holds the lock). */
static void unlink_chain(metric_family *f, series *s)
{
    _Atomic(series *) *pp = &f->slots[s->hash % NSLOTS];
    series *cur;
    while ((cur = atomic_load_explicit(pp, memory_order_relaxed)) != NULL) {
        if (cur == s) {
            atomic_store_explicit(pp, atomic_load_explicit(&s->next, memory_order_relaxed),
                                  memory_order_release);
            return;
        }
        pp = &cur->next;
    }
}

void metrics_remove(metric_family *f, const char *const *values)
{
    if (!f || f->nlabels == 0)
        return;
    pthread_mutex_lock(&f->mu);
    series **pp = &f->all;
    while (*pp) {
        series *s = *pp;
        if (!matches(s, values)) {
            pp = &s->all;
            continue;
        }
        *pp = s->all;
        unlink_chain(f, s);
        s->all = f->graveyard;
        f->graveyard = s;
        f->nseries--;
    }
    pthread_mutex_unlock(&f->mu);
}

static double series_count(const series *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i <= s->fam->nbounds; i++)
        n += atomic_load_explicit(&s->counts[i], memory_order_relaxed);
    return (double)n;
}

double metrics_value(metrics_registry *reg, const char *name, const char *const *values)
{
    pthread_mutex_lock(&reg->mu);
    metric_family *f = find_family(reg, name);
    pthread_mutex_unlock(&reg->mu);
    if (!f)
        return 0;
    series *s = lookup(f, hash_values(f, values), values);
    if (!s)
        return 0;
    if (f->type == METRIC_HISTOGRAM)
        return series_count(s);
    return u2d(atomic_load_explicit(&s->value, memory_order_relaxed));
}

/* ---- rendering -------------------------------------------------------- */


/* Shortest digits that read back as v, and the decimal exponent. */
static void shortest_digits(double v, char *digs, int *nd, int *exp)
{
    char buf[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    const char *s = buf + (buf[0] == '-');
    *nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            digs[(*nd)++] = *s;
    while (*nd > 1 && digs[*nd - 1] == '0')
        (*nd)--;
    digs[*nd] = '\0';
    *exp = atoi(s + 1);
}

/* Go's strconv.FormatFloat(v, 'g', -1, 64) with client_golang's special
 * cases. out must hold 32 octets. */
static void fmt_float(double v, char *out)
{
    char digs[24];
    int nd, exp, n = 0;
    if (isnan(v) || isinf(v) || v == 0 || v == 1 || v == -1) {
        strcpy(out, isnan(v) ? "NaN" : isinf(v) ? (v > 0 ? "+Inf" : "-Inf")
                    : v == 0 ? "0" : v == 1 ? "1" : "-1");
        return;
    }
    shortest_digits(v, digs, &nd, &exp);
    if (v < 0)
        out[n++] = '-';
    if (exp < -4 || exp >= 6) {               /* %e, at least two exponent digits */
        out[n++] = digs[0];
        if (nd > 1)
            n += sprintf(out + n, ".%s", digs + 1);
        sprintf(out + n, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    int dp = exp + 1;                         /* digits before the point */
    if (dp <= 0) {
        n += sprintf(out + n, "0.");
        for (int i = 0; i < -dp; i++)
            out[n++] = '0';
        strcpy(out + n, digs);
    } else if (dp >= nd) {
        n += sprintf(out + n, "%s", digs);
        for (int i = nd; i < dp; i++)
            out[n++] = '0';
        out[n] = '\0';
    } else {
        sprintf(out + n, "%.*s.%s", dp, digs, digs + dp);
    }
}

static void sb_float(sbuf *b, double v)
{
    char tmp[32];
    fmt_float(v, tmp);
    sbuf_str(b, tmp);
}

/* Label value: \ → \\, " → \", newline → \n. Help: only \ and newline. */
static void sb_escaped(sbuf *b, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            sbuf_str(b, "\\\\");
        else if (*s == '\n')
            sbuf_str(b, "\\n");
        else if (quote && *s == '"')
            sbuf_str(b, "\\\"");
        else
            sbuf_add(b, s, 1);
    }
}

/* name{l1="v1",...[,le="x"]} */
static void sb_labels(sbuf *b, const series *s, const char *suffix, const double *le)
{
    const metric_family *f = s->fam;
    sbuf_str(b, f->name);
    sbuf_str(b, suffix);
    if (f->nlabels == 0 && !le)
        return;
    sbuf_str(b, "{");
    for (size_t i = 0; i < f->nlabels; i++) {
        size_t k = f->order[i];
        if (i)
            sbuf_str(b, ",");
        sbuf_str(b, f->labels[k]);
        sbuf_str(b, "=\"");
        sb_escaped(b, s->values[k], 1);
        sbuf_str(b, "\"");
    }
    if (le) {
        sbuf_str(b, f->nlabels ? ",le=\"" : "le=\"");
        sb_float(b, *le);
        sbuf_str(b, "\"");
    }
    sbuf_str(b, "}");
}

static void sb_sample(sbuf *b, const series *s, const char *suffix, const double *le, double v)
{
    sb_labels(b, s, suffix, le);
    sbuf_str(b, " ");
    sb_float(b, v);
    sbuf_str(b, "\n");
}

static void render_histogram(sbuf *b, const series *s)
{
    const metric_family *f = s->fam;
    uint64_t cum = 0;
    for (size_t i = 0; i <= f->nbounds; i++) {
        double le = i < f->nbounds ? f->bounds[i] : INFINITY;
        cum += atomic_load_explicit(&s->counts[i], memory_order_relaxed);
        sb_sample(b, s, "_bucket", &le, (double)cum);
    }
    sb_sample(b, s, "_sum", NULL, u2d(atomic_load_explicit(&s->value, memory_order_relaxed)));
    sb_sample(b, s, "_count", NULL, (double)cum);
}

static int cmp_series(const void *pa, const void *pb)
{
    const series *a = *(series *const *)pa, *b = *(series *const *)pb;
    const metric_family *f = a->fam;
    for (size_t i = 0; i < f->nlabels; i++) {
        int c = strcmp(a->values[f->order[i]], b->values[f->order[i]]);
        if (c)
            return c;
    }
    return 0;
}

static void render_family(sbuf *b, metric_family *f)
{
    static const char *const types[] = { "counter", "gauge", "histogram" };
    pthread_mutex_lock(&f->mu);
    size_t n = f->nseries;
    series **v = n ? malloc(n * sizeof *v) : NULL;
    size_t k = 0;
    for (series *s = f->all; v && s; s = s->all)
        v[k++] = s;
    pthread_mutex_unlock(&f->mu);
    if (!v) {
        b->oom |= n != 0;
        return;                               /* no series: not exported */
    }
    qsort(v, k, sizeof *v, cmp_series);
    sbuf_str(b, "# HELP ");
    sbuf_str(b, f->name);
    sbuf_str(b, " ");
    sb_escaped(b, f->help, 0);
    sbuf_str(b, "\n# TYPE ");
    sbuf_str(b, f->name);
    sbuf_str(b, " ");
    sbuf_str(b, types[f->type]);
    sbuf_str(b, "\n");
    for (size_t i = 0; i < k; i++) {
        if (f->type == METRIC_HISTOGRAM)
            render_histogram(b, v[i]);
        else
            sb_sample(b, v[i], "", NULL,
                      u2d(atomic_load_explicit(&v[i]->value, memory_order_relaxed)));
    }
    free(v);
}

static int cmp_family(const void *pa, const void *pb)
{
    return strcmp((*(metric_family *const *)pa)->name, (*(metric_family *const *)pb)->name);
}

char *metrics_render(metrics_registry *reg, size_t *len)
{
    assert(reg);
    sbuf b = { 0 };
    size_t n = 0, k = 0;
    pthread_mutex_lock(&reg->mu);
    for (metric_family *f = reg->families; f; f = f->next)
        n++;
    metric_family **v = malloc((n + 1) * sizeof *v);
    for (metric_family *f = reg->families; v && f; f = f->next)
        v[k++] = f;
    pthread_mutex_unlock(&reg->mu);
    if (!v)
        return NULL;
    qsort(v, k, sizeof *v, cmp_family);
    sbuf_add(&b, "", 0);
    for (size_t i = 0; i < k; i++)
        render_family(&b, v[i]);
    free(v);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.p;
}
