/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file — authoritative answers from RFC 1035 master files (CoreDNS's file
 * plugin).
 *
 *   file DBFILE [ZONES...] {
 *       reload DURATION        # default 1m, 0 disables
 *       reload_by_mtime        # reload when the file's mtime moves on
 *       fallthrough [ZONES...]
 *       upstream ...           # accepted and ignored, as CoreDNS does
 *   }
 *
 * Setup parses DBFILE once per zone (ZONES, else the server block's zones),
 * so a bad file stops startup with the file and line. A file that cannot be
 * opened is fatal only with `reload 0`; otherwise it is logged and retried,
 * and queries for its zones get SERVFAIL until it loads (as CoreDNS). A
 * DBFILE that exists but is no regular file (a directory, FIFO, device) is
 * always fatal, at its token; a reload never reads one either.
 * Relative paths are opened from the working directory (CoreDNS prepends the
 * `root` plugin's directory, which topodns does not implement).
 *
 * Serving: the longest zone that contains the question picks a slot; names
 * outside every zone go to the next plugin (REFUSED when there is none).
 * The slot's current zone is taken with a reference under a read lock held
 * only for the pointer copy, then looked up (lookup.c) without any lock.
 * AXFR/IXFR are REFUSED here: the transfer plugin, ahead in the chain,
 * serves them through the zone source this plugin publishes in its block
 * at setup (file_xfr_open/next/close, xfr.c: resumable, a message at a
 * time, on the zone version current when the transfer started). NXDOMAIN (and CoreDNS's empty non-terminal
 * NOERROR) with no answer go to the next plugin when `fallthrough` covers
 * the name.
 *
 * Reload: start() runs one periodic task (src/runtime/periodic.h) per plugin
 * instance that wakes when a slot's interval has passed, re-parses its file and, when the SOA serial
 * differs (or, with reload_by_mtime, the file is newer), publishes the new
 * zone under the write lock and drops its reference to the old one; queries
 * still using the old version keep it alive until they finish. The DNS
 * workers never parse or wait for disk.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "server/plugin.h"
#include "plugin/file/file.h"
#include "common/file.h"
#include "common/log.h"
#include "runtime/periodic.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

#define DEFAULT_RELOAD 60.0
#define MAX_ARGS 64

typedef struct fslot {
    char origin[DNAME_STR_MAX];
    uint8_t owire[DNAME_MAX];
    char *path;
    double reload;                 /* seconds, 0 = never */
    int by_mtime;
    struct timespec mtime;         /* of the file at the last load */
    double due;                    /* monotonic seconds of the next check */
    pthread_rwlock_t lock;
    fzone *cur;                    /* NULL until the file loads */
} fslot;

typedef struct file_inst {
    fslot **slots;
    size_t nslots;
    int fall;                      /* fallthrough given */
    uint8_t (*fall_zones)[DNAME_MAX];
    size_t nfall;                  /* 0 with fall: every name */
    fzone_set others;
    periodic *reloader;            /* NULL when no slot reloads */
} file_inst;

/* ---- zones and slots ---------------------------------------------------- */

static fzone *slot_acquire(fslot *s)
{
    pthread_rwlock_rdlock(&s->lock);
    fzone *z = s->cur;
    if (z)
        fzone_ref(z);
    pthread_rwlock_unlock(&s->lock);
    return z;
}

static void slot_publish(fslot *s, fzone *z)
{
    pthread_rwlock_wrlock(&s->lock);
    fzone *old = s->cur;
    s->cur = z;
    pthread_rwlock_unlock(&s->lock);
    fzone_unref(old);
}

/* The slot of the longest zone containing name (the last one given wins a
 * tie, like CoreDNS's map), or NULL. */
static fslot *match_slot(file_inst *f, const uint8_t *name)
{
    fslot *best = NULL;
    int bestl = -1;
    for (size_t i = 0; i < f->nslots; i++) {
        int l = dname_labels(f->slots[i]->owire);
        if (l >= bestl && dname_is_sub(name, f->slots[i]->owire)) {
            best = f->slots[i];
            bestl = l;
        }
    }
    return best;
}

static fzone *acquire_for(void *ctx, const uint8_t *name)
{
    fslot *s = match_slot(ctx, name);
    return s ? slot_acquire(s) : NULL;
}

static int falls_through(const file_inst *f, const uint8_t *name)
{
    if (!f->fall)
        return 0;
    if (f->nfall == 0)
        return 1;
    for (size_t i = 0; i < f->nfall; i++)
        if (dname_is_sub(name, f->fall_zones[i]))
            return 1;
    return 0;
}

/* ---- serving ------------------------------------------------------------ */

static int reply(const handler *h, dns_req *r, fres *res)
{
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    switch (res->kind) {
    case FR_NXDOMAIN: r->resp.rcode = RC_NXDOMAIN; break;
    case FR_SERVFAIL: r->resp.rcode = RC_SERVFAIL; break;
    case FR_DELEGATION:
        if (res->s.n[SEC_ANSWER] == 0)
            r->resp.flags &= (uint16_t)~F_AA;
        break;
    default: break;
    }
    if (fres_to_msg(res, &r->resp) < 0) {
        req_error(r, "file", "reply too large");
        return RC_SERVFAIL;
    }
    return req_write(r, h);
}

static int file_serve(const handler *h, dns_req *r)
{
    file_inst *f = h->inst;
    fslot *s = match_slot(f, r->q.qname);
    if (!s)
        return h->next ? plugin_next(h, r) : RC_REFUSED;
    fzone *z = slot_acquire(s);
    if (!z)
        return RC_SERVFAIL;
    if (r->q.qtype == T_AXFR || r->q.qtype == T_IXFR) {
        fzone_unref(z);
        return RC_REFUSED;
    }
    fres res;
    fzone_lookup(z, &f->others, r->q.qname, r->q.qtype, &res);
    int rc;
    enum fres_kind k = res.kind;
    int empty = res.s.n[SEC_ANSWER] == 0;
    if (empty && (k == FR_NXDOMAIN || k == FR_SUCCESS || k == FR_ENT) &&
        falls_through(f, r->q.qname))
        rc = -2;
    else if (empty && k == FR_SERVFAIL)
        rc = RC_SERVFAIL;
    else
        rc = reply(h, r, &res);
    fres_done(&res);
    fzone_unref(z);
    return rc == -2 ? plugin_next(h, r) : rc;
}

/* The transfer source (src/server/transfer.h): a zone of this instance by
 * its exact origin, on the version being served when the transfer starts
 * (the cursor keeps a reference to it). */
static int file_xfr_open(void *data, const uint8_t *zone, uint32_t serial, void **cur)
{
    fslot *s = match_slot(data, zone);
    fzone *z = s && dname_equal(s->owire, zone) ? slot_acquire(s) : NULL;
    if (!z)
        return XFR_NOTAUTH;
    *cur = fzone_xfr_open(z, serial);
    fzone_unref(z);
    return *cur ? XFR_OK : XFR_FAIL;
}

static int file_xfr_next(void *cur, xfr_emit_fn emit, void *sink)
{
    return fzone_xfr_next(cur, emit, sink);
}

static void file_xfr_close(void *cur)
{
    fzone_xfr_close(cur);
}

static int file_xfr_walk(void *data, const uint8_t *zone, uint32_t serial, xfr_emit_fn emit,
                         void *sink)
{
    fslot *s = match_slot(data, zone);
    fzone *z = s && dname_equal(s->owire, zone) ? slot_acquire(s) : NULL;
    if (!z)
        return XFR_NOTAUTH;
    int rc = fzone_walk(z, serial, emit, sink);
    fzone_unref(z);
    return rc;
}

/* ---- reloading ---------------------------------------------------------- */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int newer(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

static void reload_slot(fslot *s)
{
    struct stat st;
    int force = 0;
    if (stat(s->path, &st) < 0) {
        log_error("plugin/file: Failed to open zone \"%s\" in \"%s\": %s",
                  s->origin, s->path, strerror(errno));
        return;
    }
    if (s->by_mtime) {
        if (!newer(&st.st_mtim, &s->mtime))
            return;
        force = 1;
    }
    fzone *old = slot_acquire(s), *z = NULL;
    char err[600];
    if (fzone_load(s->path, s->origin, &z, err, sizeof err) < 0) {
        log_error("plugin/file: Parsing zone \"%s\": %s", s->origin, err);
    } else if (!force && old && fzone_serial(old) == fzone_serial(z)) {
        fzone_unref(z);             /* no change in SOA serial */
    } else {
        s->mtime = st.st_mtim;
        uint32_t serial = fzone_serial(z);
        slot_publish(s, z);
        log_info("plugin/file: Successfully reloaded zone \"%s\" in \"%s\" with %u SOA serial",
                 s->origin, s->path, serial);
    }
    fzone_unref(old);
}

/* Seconds until the earliest due slot (-1: none reloads). */
static double next_wait(file_inst *f, double now)
{
    double w = -1;
    for (size_t i = 0; i < f->nslots; i++) {
        if (f->slots[i]->reload <= 0)
            continue;
        double d = f->slots[i]->due - now;
        if (w < 0 || d < w)
            w = d < 0 ? 0 : d;
    }
    return w;
}

/* The reload task: reload every slot that is due; sleep until the next. */
static double reload_due(void *arg)
{
    file_inst *f = arg;
    double now = mono_now();
    for (size_t i = 0; i < f->nslots; i++) {
        fslot *s = f->slots[i];
        if (s->reload > 0 && s->due <= now) {
            reload_slot(s);
            s->due = mono_now() + s->reload;
        }
    }
    return next_wait(f, mono_now());
}

static int file_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    file_inst *f = inst;
    int any = 0;
    double now = mono_now();
    for (size_t i = 0; i < f->nslots; i++) {
        f->slots[i]->due = now + f->slots[i]->reload;
        any |= f->slots[i]->reload > 0;
    }
    if (!any || f->reloader)
        return 0;
    if (!(f->reloader = periodic_start(reload_due, f, next_wait(f, now), 0))) {
        snprintf(err, errlen, "plugin/file: cannot start the reload thread");
        return -1;
    }
    return 0;
}

static void file_stop(void *inst)
{
    file_inst *f = inst;
    periodic_stop(f->reloader);
    f->reloader = NULL;
}

static void file_destroy(void *inst)
{
    file_inst *f = inst;
    if (!f)
        return;
    file_stop(f);
    for (size_t i = 0; i < f->nslots; i++) {
        fzone_unref(f->slots[i]->cur);
        free(f->slots[i]->path);
        pthread_rwlock_destroy(&f->slots[i]->lock);
        free(f->slots[i]);
    }
    free(f->slots);
    free(f->fall_zones);
    free(f);
}

/* ---- setup -------------------------------------------------------------- */

static file_inst *inst_new(void)
{
    file_inst *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->others.acquire = acquire_for;
    f->others.ctx = f;
    return f;
}

static fslot *slot_add(file_inst *f, const char *origin, const char *path)
{
    if (VEC_RESIZE(f->slots, f->nslots + 1) < 0)
        return NULL;
    fslot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->path = strdup(path);
    if (!s->path || dname_from_str(s->owire, origin) < 0) {
        free(s->path);
        free(s);
        return NULL;
    }
    snprintf(s->origin, sizeof s->origin, "%s", origin);
    dname_lower(s->owire);
    pthread_rwlock_init(&s->lock, NULL);
    s->reload = DEFAULT_RELOAD;
    f->slots[f->nslots++] = s;
    return s;
}

/* Normalized zones from arguments into *out (malloc'd, the caller frees
 * it, NULL when none); returns how many, or -1 (error set, *out NULL). */
static int zones_from_args(cf_disp *d, const char **args, int n, char (**out)[DNAME_STR_MAX])
{
    int k = 0;
    *out = NULL;
    for (int i = 0; i < n; i++) {
        char (*z)[DNAME_STR_MAX];
        int m = zone_from_key(args[i], &z);
        if (m < 0) {
            free(*out);
            *out = NULL;
            return cf_err(d, "plugin/file: %s '%s'", zone_key_error(args[i]), args[i]);
        }
        if (VEC_RESIZE(*out, (size_t)(k + m)) < 0) {
            free(z);
            free(*out);
            *out = NULL;
            return cf_err(d, "plugin/file: out of memory");
        }
        memcpy((*out)[k], z[0], (size_t)m * sizeof *z);
        k += m;
        free(z);
    }
    return k;
}

static int set_fallthrough(cf_disp *d, file_inst *f)
{
    const char *args[MAX_ARGS];
    int n = cf_remaining_args(d, args, MAX_ARGS);
    if (n > MAX_ARGS)
        return cf_arg_err(d);
    char (*z)[DNAME_STR_MAX];
    int k = zones_from_args(d, args, n, &z);
    if (k < 0)
        return -1;
    free(f->fall_zones);
    f->fall_zones = k ? calloc((size_t)k, sizeof *f->fall_zones) : NULL;
    f->nfall = 0;
    for (int i = 0; i < k && f->fall_zones; i++)
        if (dname_from_str(f->fall_zones[f->nfall], z[i]) > 0)
            f->nfall++;
    f->fall = 1;
    free(z);
    return 0;
}

typedef struct occ_opts {
    double reload;
    int by_mtime;
} occ_opts;

static int parse_options(cf_disp *d, file_inst *f, occ_opts *o)
{
    while (cf_next_block(d)) {
        const char *p = cf_val(d), *args[MAX_ARGS];
        if (strcmp(p, "fallthrough") == 0) {
            if (set_fallthrough(d, f) < 0)
                return -1;
        } else if (strcmp(p, "reload") == 0) {
            int n = cf_remaining_args(d, args, MAX_ARGS);
            if (n < 1)
                return cf_err(d, "plugin/file: reload duration value is expected");
            if (cf_parse_duration(d, args[0], &o->reload) < 0)
                return -1;
            if (o->reload < 0)
                return cf_err(d, "plugin/file: reload duration must not be negative");
        } else if (strcmp(p, "reload_by_mtime") == 0) {
            o->by_mtime = 1;
            cf_remaining_args(d, args, MAX_ARGS);
        } else if (strcmp(p, "upstream") == 0) {
            cf_remaining_args(d, args, MAX_ARGS);
        } else {
            return cf_prop_err(d);
        }
    }
    return 0;
}

/* The origins of one occurrence, its arguments else the block's zones,
 * into *out (malloc'd, the caller frees it); how many, or -1. */
static int origins(cf_disp *d, setup_ctx *ctx, char (**out)[DNAME_STR_MAX])
{
    const char *args[MAX_ARGS];
    *out = NULL;
    int n = cf_remaining_args(d, args, MAX_ARGS);
    if (n > MAX_ARGS)
        return cf_arg_err(d);
    if (n > 0)
        return zones_from_args(d, args, n, out);
    size_t nk = ctx->blk ? ctx->blk->nkeys : 0;
    if (nk == 0)
        return 0;
    *out = malloc(nk * sizeof **out);
    if (!*out)
        return cf_err(d, "plugin/file: out of memory");
    for (size_t i = 0; i < nk; i++)
        snprintf((*out)[i], DNAME_STR_MAX, "%s", ctx->blk->keys[i].zone);
    return (int)nk;
}

/* Load the file for each origin; *open_failed when it could not be opened. */
static int load_slots(cf_disp *d, file_inst *f, size_t first, int *open_failed, char *why, size_t wlen)
{
    for (size_t i = first; i < f->nslots; i++) {
        fslot *s = f->slots[i];
        char err[600];
        struct stat st;
        if (stat(s->path, &st) < 0 || fzone_load(s->path, s->origin, &s->cur, err, sizeof err) < 0) {
            if (access(s->path, R_OK) < 0) {
                *open_failed = 1;
                snprintf(why, wlen, "open %s: %s", s->path, strerror(errno));
                continue;
            }
            return cf_err(d, "plugin/file: %s", err);
        }
        s->mtime = st.st_mtim;
    }
    return 0;
}

static int one_occurrence(cf_disp *d, setup_ctx *ctx, file_inst *f)
{
    if (!cf_next_arg(d))
        return cf_arg_err(d);
    char path[4096];
    snprintf(path, sizeof path, "%s", cf_val(d));
    const char *what;
    if (file_check_regular(path, &what) == 0)  /* a device or FIFO would hang the load */
        return cf_err(d, "plugin/file: %s %s", path, what);
    char (*orig)[DNAME_STR_MAX];
    int n = origins(d, ctx, &orig);
    size_t first = f->nslots;
    for (int i = 0; i < n; i++)
        if (!slot_add(f, orig[i], path)) {
            free(orig);
            return cf_err(d, "plugin/file: out of memory");
        }
    free(orig);
    if (n < 0)
        return -1;
    int open_failed = 0;
    char why[4200] = "";
    if (load_slots(d, f, first, &open_failed, why, sizeof why) < 0)
        return -1;
    occ_opts o = { DEFAULT_RELOAD, 0 };
    if (parse_options(d, f, &o) < 0)
        return -1;
    for (size_t i = first; i < f->nslots; i++) {
        f->slots[i]->reload = o.reload;
        f->slots[i]->by_mtime = o.by_mtime;
    }
    if (open_failed && o.reload == 0)
        return cf_err(d, "plugin/file: %s", why);
    if (open_failed)
        log_warning("plugin/file: Failed to open \"%s\": trying again in %gs", why, o.reload);
    return 0;
}

static int file_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    file_inst *f = inst_new();
    if (!f)
        return cf_err(d, "plugin/file: out of memory");
    while (cf_next(d)) {
        if (one_occurrence(d, ctx, f) < 0) {
            file_destroy(f);
            return -1;
        }
    }
    xfr_source src = { .walk = file_xfr_walk, .data = f, .open = file_xfr_open,
                       .next = file_xfr_next, .close = file_xfr_close };
    if (xfr_source_publish(ctx->blk, "file", &src) < 0) {
        file_destroy(f);
        return cf_err(d, "plugin/file: out of memory");
    }
    *inst = f;
    return 0;
}

const plugin_def plugin_file = {
    .name = "file",
    .flags = 0,
    .setup = file_setup,
    .start = file_start,
    .stop = file_stop,
    .destroy = file_destroy,
    .serve = file_serve,
    .ready = NULL,
};
