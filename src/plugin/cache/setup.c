/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup.c — the cache directive and its options, with CoreDNS's defaults.
 *
 *   cache [TTL] [ZONES...] {
 *       success CAPACITY [TTL] [MINTTL]      # 10000, 3600, 5
 *       denial CAPACITY [TTL] [MINTTL]       # 10000, 1800, 5
 *       prefetch AMOUNT [[DURATION] [PERCENTAGE%]]   # off; 1m, 10%
 *       serve_stale [DURATION] [immediate [RESPONSE_TTL] | verify]  # 1h
 *       servfail DURATION                    # 5s, at most 5m, 0 = off
 *       disable success|denial [ZONES...]
 *       keepttl
 *   }
 *
 * A leading integer is the TTL cap of both caches (it must be > 0); the
 * remaining arguments are zones (default: the server block's zones).
 * serve_stale's VERIFY_TIMEOUT and FAILURE_RECHECK and serve_stale_policy
 * (recent CoreDNS additions) are refused with a clear error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "plugin/cache/cache.h"
#include "server/zone.h"
#include "common/vec.h"

#define MAX_ARGS 64

unsigned long cache_usable_cap(unsigned long cap)
{
    unsigned long per = cap / CACHE_SHARDS;
    if (per < 4)
        per = 4;
    return per * CACHE_SHARDS;
}

static int add_zone(cf_disp *d, uint8_t (**zones)[DNAME_MAX], size_t *n, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k <= 0)
        return cf_err(d, "plugin/cache: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(*zones, *n + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/cache: out of memory");
    }
    for (int i = 0; i < k; i++) {
        if (dname_from_str((*zones)[*n], z[i]) < 0) {
            free(z);
            return cf_err(d, "plugin/cache: invalid zone '%s'", text);
        }
        dname_lower((*zones)[*n]);
        (*n)++;
    }
    free(z);
    return 0;
}

/* strconv.Atoi: an optional sign and decimal digits, in range (a value
 * that does not fit is an error, as Atoi's "value out of range", never
 * strtol's clamped LONG_MAX). 0, -1 (syntax) or -2 (range). */
static int atoi_strict(const char *s, long *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return -1;
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return *end ? -1 : errno == ERANGE ? -2 : 0;
}

static int parse_int(cf_disp *d, const char *s, long *out)
{
    int rc = atoi_strict(s, out);
    if (rc == -2)
        return cf_err(d, "plugin/cache: value out of range: '%s'", s);
    if (rc < 0)
        return cf_err(d, "plugin/cache: not a number: '%s'", s);
    return 0;
}

static int parse_dur_ns(cf_disp *d, const char *s, uint64_t *ns, const char *what)
{
    double sec;
    if (cf_parse_duration(d, s, &sec) < 0)
        return -1;
    if (sec < 0)
        return cf_err(d, "plugin/cache: invalid negative %s", what);
    *ns = (uint64_t)(sec * 1e9 + 0.5);
    return 0;
}

/* success|denial CAPACITY [TTL] [MINTTL] */
static int parse_kind(cf_disp *d, unsigned long *cap, uint32_t *ttl, uint32_t *minttl)
{
    const char *a[MAX_ARGS];
    int n = cf_remaining_args(d, a, MAX_ARGS);
    long v;
    if (n < 1 || n > 3)
        return cf_arg_err(d);
    if (parse_int(d, a[0], &v) < 0)
        return -1;
    if (v < 0)
        return cf_err(d, "plugin/cache: capacity can not be negative: %ld", v);
    *cap = (unsigned long)v;
    if (n > 1) {
        if (parse_int(d, a[1], &v) < 0)
            return -1;
        if (v <= 0)
            return cf_err(d, "plugin/cache: cache TTL can not be zero or negative: %ld", v);
        *ttl = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    if (n > 2) {
        if (parse_int(d, a[2], &v) < 0)
            return -1;
        if (v < 0)
            return cf_err(d, "plugin/cache: cache min TTL can not be negative: %ld", v);
        *minttl = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    return 0;
}

static int parse_prefetch(cf_disp *d, cache_cfg *c)
{
    const char *a[MAX_ARGS];
    int n = cf_remaining_args(d, a, MAX_ARGS);
    long v;
    if (n < 1 || n > 3)
        return cf_arg_err(d);
    if (parse_int(d, a[0], &v) < 0)
        return -1;
    if (v < 0)
        return cf_err(d, "plugin/cache: prefetch amount should be positive: %ld", v);
    c->prefetch = (unsigned long)v;
    if (n > 1 && parse_dur_ns(d, a[1], &c->prefetch_dur_ns, "prefetch duration") < 0)
        return -1;
    if (n > 2) {
        size_t l = strlen(a[2]);
        char num[32];
        if (l < 2 || a[2][l - 1] != '%' || l > sizeof num)
            return cf_err(d, "plugin/cache: last character of percentage should be `%%`");
        memcpy(num, a[2], l - 1);
        num[l - 1] = '\0';
        if (parse_int(d, num, &v) < 0)
            return -1;
        if (v < 10 || v > 90)
            return cf_err(d, "plugin/cache: percentage should fall in range [10, 90]: %ld", v);
        c->prefetch_pct = (unsigned)v;
    }
    return 0;
}

static int parse_stale(cf_disp *d, cache_cfg *c)
{
    const char *a[MAX_ARGS];
    int n = cf_remaining_args(d, a, MAX_ARGS);
    if (n > 5)
        return cf_arg_err(d);
    c->stale_ns = 3600ull * 1000000000ull;
    c->verify_stale = 0;
    c->stale_ttl = 0;
    if (n > 0 && parse_dur_ns(d, a[0], &c->stale_ns, "duration for serve_stale") < 0)
        return -1;
    if (n > 1) {
        if (strcasecmp(a[1], "immediate") != 0 && strcasecmp(a[1], "verify") != 0)
            return cf_err(d, "plugin/cache: invalid value for serve_stale refresh mode: %s", a[1]);
        c->verify_stale = strcasecmp(a[1], "verify") == 0;
    }
    if (n > 2 && c->verify_stale)
        return cf_err(d, "plugin/cache: serve_stale verify VERIFY_TIMEOUT is not supported by topodns");
    if (n > 3)
        return cf_err(d, "plugin/cache: serve_stale FAILURE_RECHECK is not supported by topodns");
    if (n > 2) {
        uint64_t ns = 0;
        if (parse_dur_ns(d, a[2], &ns, "response TTL for serve_stale") < 0)
            return -1;
        if (ns % 1000000000ull)
            return cf_err(d, "plugin/cache: serve_stale response TTL must be a whole number of seconds");
        if (ns / 1000000000ull > UINT32_MAX)
            return cf_err(d, "plugin/cache: serve_stale response TTL exceeds the DNS TTL range");
        c->stale_ttl = (uint32_t)(ns / 1000000000ull);
    }
    return 0;
}

static int parse_servfail(cf_disp *d, cache_cfg *c)
{
    const char *a[MAX_ARGS];
    if (cf_remaining_args(d, a, MAX_ARGS) != 1)
        return cf_arg_err(d);
    if (parse_dur_ns(d, a[0], &c->failttl_ns, "ttl for servfail") < 0)
        return -1;
    if (c->failttl_ns > 300ull * 1000000000ull)
        return cf_err(d, "plugin/cache: caching SERVFAIL responses over 5 minutes is not permitted");
    return 0;
}

static int parse_disable(cf_disp *d, cache_cfg *c)
{
    const char *a[MAX_ARGS];
    int n = cf_remaining_args(d, a, MAX_ARGS);
    if (n < 1 || n > MAX_ARGS)
        return cf_arg_err(d);
    uint8_t (**zones)[DNAME_MAX];
    size_t *nz;
    if (strcmp(a[0], "success") == 0) {
        zones = &c->pexcept;
        nz = &c->npexcept;
    } else if (strcmp(a[0], "denial") == 0) {
        zones = &c->nexcept;
        nz = &c->nnexcept;
    } else {
        return cf_err(d, "plugin/cache: cache type for disable must be \"success\" or \"denial\"");
    }
    /* a later disable line of the same type replaces the earlier one */
    free(*zones);
    *zones = NULL;
    *nz = 0;
    if (n == 1)
        return add_zone(d, zones, nz, ".");
    for (int i = 1; i < n; i++)
        if (add_zone(d, zones, nz, a[i]) < 0)
            return -1;
    return 0;
}

static int parse_prop(cf_disp *d, cache_cfg *c)
{
    const char *p = cf_val(d);
    if (strcmp(p, "success") == 0)
        return parse_kind(d, &c->pcap, &c->pttl, &c->minpttl);
    if (strcmp(p, "denial") == 0)
        return parse_kind(d, &c->ncap, &c->nttl, &c->minnttl);
    if (strcmp(p, "prefetch") == 0)
        return parse_prefetch(d, c);
    if (strcmp(p, "serve_stale") == 0)
        return parse_stale(d, c);
    if (strcmp(p, "serve_stale_policy") == 0)
        return cf_err(d, "plugin/cache: serve_stale_policy is not supported by topodns");
    if (strcmp(p, "servfail") == 0)
        return parse_servfail(d, c);
    if (strcmp(p, "disable") == 0)
        return parse_disable(d, c);
    if (strcmp(p, "keepttl") == 0) {
        const char *a[1];
        if (cf_remaining_args(d, a, 1) != 0)
            return cf_arg_err(d);
        c->keepttl = 1;
        return 0;
    }
    return cf_prop_err(d);
}

static void defaults(cache_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->pcap = c->ncap = CACHE_DEFAULT_CAP;
    c->pttl = CACHE_MAX_TTL;
    c->nttl = CACHE_MAX_NTTL;
    c->minpttl = c->minnttl = CACHE_MIN_TTL;
    c->failttl_ns = (uint64_t)CACHE_MIN_TTL * 1000000000ull;
    c->prefetch_dur_ns = 60ull * 1000000000ull;
    c->prefetch_pct = 10;
}

static int zones_label(cf_disp *d, cache_cfg *c)
{
    size_t len = 1;
    char buf[DNAME_STR_MAX];
    for (size_t i = 0; i < c->nzones; i++)
        len += dname_to_str(buf, sizeof buf, c->zones[i]) + 1;
    c->zones_label = calloc(1, len);
    if (!c->zones_label)
        return cf_err(d, "plugin/cache: out of memory");
    for (size_t i = 0; i < c->nzones; i++) {
        dname_to_str(buf, sizeof buf, c->zones[i]);
        if (i)
            strcat(c->zones_label, ",");
        strcat(c->zones_label, buf);
    }
    return 0;
}

static int parse_line(cf_disp *d, const char *const *block_zones, size_t nblock, cache_cfg *c)
{
    const char *a[MAX_ARGS];
    int n = cf_remaining_args(d, a, MAX_ARGS), i = 0;
    long ttl;
    if (n > MAX_ARGS)
        return cf_err(d, "plugin/cache: too many zones");
    if (n > 0 && atoi_strict(a[0], &ttl) == 0) {
        if (ttl <= 0)
            return cf_err(d, "plugin/cache: cache TTL can not be zero or negative: %ld", ttl);
        c->pttl = c->nttl = ttl > UINT32_MAX ? UINT32_MAX : (uint32_t)ttl;
        i = 1;
    }
    int given = n > i;
    for (; i < n; i++)
        if (add_zone(d, &c->zones, &c->nzones, a[i]) < 0)
            return -1;
    for (size_t j = 0; !given && j < nblock; j++)
        if (add_zone(d, &c->zones, &c->nzones, block_zones[j]) < 0)
            return -1;
    while (cf_next_block(d))
        if (parse_prop(d, c) < 0)
            return -1;
    return 0;
}

int cache_parse(cf_disp *d, const char *const *block_zones, size_t nblock, cache_cfg *c)
{
    defaults(c);
    int seen = 0;
    while (cf_next(d)) {
        if (seen++) {
            cache_cfg_free(c);
            return cf_err(d, "plugin/cache: this plugin can only be used once per Server Block");
        }
        if (parse_line(d, block_zones, nblock, c) < 0) {
            cache_cfg_free(c);
            return -1;
        }
    }
    if (zones_label(d, c) < 0) {
        cache_cfg_free(c);
        return -1;
    }
    return 0;
}

void cache_cfg_free(cache_cfg *c)
{
    free(c->zones);
    free(c->zones_label);
    free(c->pexcept);
    free(c->nexcept);
    c->zones = c->pexcept = c->nexcept = NULL;
    c->zones_label = NULL;
    c->nzones = c->npexcept = c->nnexcept = 0;
}
