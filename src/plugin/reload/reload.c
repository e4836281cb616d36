/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reload.c — the reload plugin, as CoreDNS's plugin/reload.
 *
 *   reload [INTERVAL] [JITTER]          defaults 30s / 15s
 *
 * INTERVAL must be at least 2s; JITTER 0 or at least 1s, and is cut to
 * INTERVAL/2. The polling period is INTERVAL plus a random offset in
 * [-JITTER/2, JITTER/2), drawn once at setup. Only the first occurrence in a
 * block is read (CoreDNS ignores the rest).
 *
 * The plugin is process-wide: whatever number of blocks carry it, one poller
 * runs per instance (started by the first reload handler, with the period of
 * the last one, as CoreDNS's last setup wins). On start it logs
 *   [INFO] plugin/reload: Running configuration SHA512 = <hex>
 * and a background thread wakes every period (a condition variable, so stop()
 * ends it at once), re-reads and re-parses the Corefile and compares the
 * fingerprint (reload.h). On a change it drops the old
 * coredns_reload_version_info series, takes the new fingerprint as its
 * baseline — a broken file is therefore tried once, not every period — asks
 * the main loop to reload (instance_request_reload) and sets the series of the
 * new fingerprint. A file that does not parse logs
 * "plugin/reload: Corefile parse failed: <err>" at WARNING every period and
 * is not tried. The main loop logs "Reloading", then "Reloading complete" or
 * the error (counting coredns_reload_failed_total) and keeps the old config.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include "common/log.h"
#include "runtime/metrics.h"
#include "runtime/periodic.h"
#include "server/server.h"
#include "common/file.h"
#include "common/gofmt.h"
#include "server/plugin.h"
#include "plugin/reload/reload.h"
#include "common/sbuf.h"

#define SEC 1000000000ll
#define DEFAULT_INTERVAL (30 * SEC)
#define DEFAULT_JITTER (15 * SEC)
#define MIN_INTERVAL (2 * SEC)
#define MIN_JITTER (1 * SEC)

typedef struct reload_inst {
    int64_t period_ns;           /* interval with its jitter applied */
    /* the poller, on the first reload handler of an instance */
    periodic *poller;
    char *path;
    char hash[129];              /* baseline fingerprint */
    const struct instance *ins;  /* the poller's instance */
    metric_family *version;      /* coredns_reload_version_info */
} reload_inst;

extern const plugin_def plugin_reload;


/* ---- fingerprint ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    if (c >= 0xf5 || n == 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0;                              /* overlong, surrogate */
    if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

/* A string as Go's encoding/json writes it (HTML-safe escaping). */
static void jstr(sbuf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    char t[8];
    sbuf_str(b, "\"");
    while (*s) {
        unsigned c = *s;
        if (c >= 0x80) {
            size_t n = utf8_len(s);
            if (n == 0) {
                sbuf_str(b, "\\ufffd");
                s++;
            } else if (n == 3 && c == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
                sbuf_str(b, s[2] == 0xa8 ? "\\u2028" : "\\u2029");
                s += 3;
            } else {
                sbuf_add(b, (const char *)s, n);
                s += n;
            }
            continue;
        }
        switch (c) {
        case '"': sbuf_str(b, "\\\""); break;
        case '\\': sbuf_str(b, "\\\\"); break;
        case '\b': sbuf_str(b, "\\b"); break;
        case '\f': sbuf_str(b, "\\f"); break;
        case '\n': sbuf_str(b, "\\n"); break;
        case '\r': sbuf_str(b, "\\r"); break;
        case '\t': sbuf_str(b, "\\t"); break;
        case '<': case '>': case '&':
            snprintf(t, sizeof t, "\\u%04x", c);
            sbuf_str(b, t);
            break;
        default:
            if (c < 0x20) {
                snprintf(t, sizeof t, "\\u%04x", c);
                sbuf_str(b, t);
            } else {
                sbuf_add(b, (const char *)s, 1);
            }
        }
        s++;
    }
    sbuf_str(b, "\"");
}

static int cmp_dir(const void *a, const void *b)
{
    const cf_directive *x = *(const cf_directive *const *)a, *y = *(const cf_directive *const *)b;
    return strcmp(x->name, y->name);
}

static void json_tokens(sbuf *b, const cf_directive *dir)
{
    char t[32];
    sbuf_str(b, "[");
    for (size_t i = 0; i < dir->ntokens; i++) {
        const cf_token *tk = &dir->tokens[i];
        sbuf_str(b, i ? ",{\"File\":" : "{\"File\":");
        jstr(b, tk->file ? tk->file : "");
        snprintf(t, sizeof t, ",\"Line\":%d,\"Text\":", tk->line);
        sbuf_str(b, t);
        jstr(b, tk->text);
        sbuf_str(b, "}");
    }
    sbuf_str(b, "]");
}

static void json_block(sbuf *b, const cf_block *blk)
{
    sbuf_str(b, "{\"Keys\":[");
    for (size_t k = 0; k < blk->nkeys; k++) {
        if (k)
            sbuf_str(b, ",");
        jstr(b, blk->keys[k].text);
    }
    sbuf_str(b, "],\"Tokens\":{");
    /* Go sorts map keys */
    const cf_directive **dirs = calloc(blk->ndirs ? blk->ndirs : 1, sizeof *dirs);
    if (!dirs) {
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < blk->ndirs; i++)
        dirs[i] = &blk->dirs[i];
    qsort(dirs, blk->ndirs, sizeof *dirs, cmp_dir);
    for (size_t i = 0; i < blk->ndirs; i++) {
        if (i)
            sbuf_str(b, ",");
        jstr(b, dirs[i]->name);
        sbuf_str(b, ":");
        json_tokens(b, dirs[i]);
    }
    free(dirs);
    sbuf_str(b, "}}");
}

char *reload_corefile_json(const cf_file *f)
{
    sbuf b = { 0 };
    if (f->nblocks == 0) {
        sbuf_str(&b, "null");
    } else {
        sbuf_str(&b, "[");
        for (size_t i = 0; i < f->nblocks; i++) {
            if (i)
                sbuf_str(&b, ",");
            json_block(&b, &f->blocks[i]);
        }
        sbuf_str(&b, "]");
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}


int reload_corefile_hash(const char *path, char out[129], char raw[129], char *err,
                         size_t errlen)
{
    size_t len = 0;
    char *text = file_read(path, &len, FILE_PIPE_OK, NULL);
    if (!text)
        return -1;
    if (raw)
        sha512_hex(text, len, raw);
    cf_file *f = cf_parse_string(path, text, err, errlen);
    free(text);
    if (!f)
        return -2;
    char *json = reload_corefile_json(f);
    cf_free(f);
    if (!json)
        return -1;
    int rc = sha512_hex(json, strlen(json), out);
    free(json);
    return rc < 0 ? -1 : 0;
}

/* ---- metrics ------------------------------------------------------------------ */

static void register_metrics(reload_inst *ri, metrics_registry *reg)
{
    static const char *const labels[] = { "hash", "value", NULL };
    ri->version = metrics_family(reg, "coredns_reload_version_info",
                                 "A metric with a constant '1' value labeled by hash, and value "
                                 "which type of hash generated.", METRIC_GAUGE, labels, NULL, 0);
    /* CoreDNS always exposes the counter, at 0 until a reload fails */
    metric_family *f = metrics_family(reg, "coredns_reload_failed_total",
                                      "Counter of the number of failed reload attempts.",
                                      METRIC_COUNTER, NULL, NULL, 0);
    metrics_add(f, NULL, 0);
}

/* ---- the poller ---------------------------------------------------------------- */

static void check_once(reload_inst *ri)
{
    char h[129], err[CF_ERR_MAX];
    int rc = reload_corefile_hash(ri->path, h, NULL, err, sizeof err);
    if (rc == -1)
        return;                              /* unreadable: try again next time */
    if (rc == -2) {
        log_warning("plugin/reload: Corefile parse failed: %s", err);
        return;
    }
    if (strcmp(h, ri->hash) == 0)
        return;
    metric_family *vf = ri->version;
    const char *old[] = { "sha512", ri->hash };
    if (ri->hash[0])
        metrics_remove(vf, old);
    /* the new text is the baseline even if it fails to load: no retry storm */
    memcpy(ri->hash, h, sizeof h);
    instance_request_reload(ri->ins);
    const char *now[] = { "sha512", ri->hash };
    metrics_set(vf, now, 1);
}

static double poll_task(void *arg)
{
    reload_inst *ri = arg;
    check_once(ri);
    return (double)ri->period_ns / SEC;
}

/* The reload handlers of an instance: the first runs the poller, the last
 * one's period is used. */
static void reload_handlers(struct instance *ins, reload_inst **first, reload_inst **last)
{
    const handler *hs[256];
    size_t n = instance_handlers(ins, hs, 256);
    *first = *last = NULL;
    for (size_t i = 0; i < n && i < 256; i++) {
        if (hs[i]->def != &plugin_reload)
            continue;
        if (!*first)
            *first = hs[i]->inst;
        *last = hs[i]->inst;
    }
}

static int reload_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    reload_inst *ri = inst, *first, *last;
    reload_handlers(ins, &first, &last);
    if (first && first != ri)
        return 0;
    if (last)
        ri->period_ns = last->period_ns;
    free(ri->path);
    ri->path = strdup(instance_conf_path(ins));
    if (!ri->path) {
        snprintf(err, errlen, "plugin/reload: out of memory");
        return -1;
    }
    char raw[129] = "", perr[CF_ERR_MAX];
    ri->hash[0] = '\0';
    if (reload_corefile_hash(ri->path, ri->hash, raw, perr, sizeof perr) == 0) {
        log_info("plugin/reload: Running configuration SHA512 = %s", ri->hash);
        if (strcmp(raw, instance_conf_sha512(ins)) != 0)
            ri->hash[0] = '\0';          /* edited since it was loaded: reload it */
    }
    ri->ins = ins;
    register_metrics(ri, instance_metrics(ins));
    if (!(ri->poller = periodic_start(poll_task, ri, (double)ri->period_ns / SEC, 0))) {
        snprintf(err, errlen, "plugin/reload: cannot start the poller");
        return -1;
    }
    return 0;
}

static void reload_stop(void *inst)
{
    reload_inst *ri = inst;
    periodic_stop(ri->poller);
    ri->poller = NULL;
}

static void reload_destroy(void *inst)
{
    reload_inst *ri = inst;
    if (!ri)
        return;
    reload_stop(ri);
    free(ri->path);
    free(ri);
}

/* ---- setup ------------------------------------------------------------------------ */

static int64_t jitter_of(int64_t j)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != sizeof r)
        r = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    return (int64_t)(r % (uint64_t)j) - j / 2;
}

static int parse_dur(cf_disp *d, const char *s, int64_t *ns)
{
    char err[256];
    if (cf_go_duration(s, ns, err, sizeof err) < 0)
        return cf_err(d, "plugin/reload: %s", err);
    return 0;
}

static int reload_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    cf_next(d);                              /* 'reload'; later ones are ignored */
    const char *a[3];
    int n = cf_remaining_args(d, a, 3);
    if (n > 2)
        return cf_arg_err(d);
    int64_t i = DEFAULT_INTERVAL, j = DEFAULT_JITTER;
    if (n > 0 && parse_dur(d, a[0], &i) < 0)
        return -1;
    if (i < MIN_INTERVAL)
        return cf_err(d, "plugin/reload: interval value must be greater or equal to 2s");
    if (n > 1 && parse_dur(d, a[1], &j) < 0)
        return -1;
    if (j != 0 && j < MIN_JITTER)
        return cf_err(d, "plugin/reload: jitter value must be 0 or greater or equal to 1s");
    if (j > 0 && j > i / 2)
        j = i / 2;
    if (j > 0)
        i += jitter_of(j);
    reload_inst *ri = calloc(1, sizeof *ri);
    if (!ri)
        return cf_err(d, "plugin/reload: out of memory");
    ri->period_ns = i;
    *inst = ri;
    return 0;
}

const plugin_def plugin_reload = {
    .name = "reload",
    .setup = reload_setup,
    .start = reload_start,
    .stop = reload_stop,
    .destroy = reload_destroy,
};
