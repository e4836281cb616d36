/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c — from a Corefile to a running instance.
 *
 * instance_load():
 *   1. parse the Corefile (src/corefile/);
 *   2. for every server block, turn its keys into zones and ports
 *      ([dns://|tls://]ZONE[:PORT], CIDR keys become reverse zones),
 *      refusing a zone/port that another block already serves;
 *   3. for every directive of the block, in plugin.cfg order (order.h), run
 *      the plugin's setup() once with a dispenser over all its occurrences;
 *      unknown directives, unsupported plugins and a second occurrence of a
 *      once-only plugin stop the load with "file:line: message near 'tok'";
 *   4. link the handlers that serve DNS into the block's chain;
 *   5. group the zones by listen address and port (listen_group), with the
 *      TCP timeouts of the blocks listening there merged; a group lets every
 *      query class through when one of its blocks has a plugin flagged
 *      PLUGIN_ANY_CLASS, else only IN; a tls:// group gets the TLS context
 *      of its blocks' tls settings (tls.c).
 * instance_start() starts plugins, binds the sockets, starts the workers and
 * the HTTP thread. A reload does it in two steps: instance_prepare() starts
 * the plugins beside the running instance (which they may take state over
 * from), and once instance_ready(), instance_serve() binds and starts
 * serving. instance_stop()/instance_free() undo it in reverse.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <openssl/evp.h>
#include "server/core.h"
#include "server/http.h"
#include "server/loophook.h"
#include "common/addr.h"
#include "common/file.h"
#include "common/log.h"
#include "server/zone.h"
#include "common/vec.h"

/* ---- plugins by name -------------------------------------------------- */

static const char *const chain_order[] = {
#define PLUGIN(n) #n,
#include "server/order.h"
#undef PLUGIN
};

int plugin_order(const char *name)
{
    for (size_t i = 0; i < sizeof chain_order / sizeof chain_order[0]; i++)
        if (strcmp(chain_order[i], name) == 0)
            return (int)i;
    return -1;
}

const plugin_def *plugin_find(const plugin_def *const *table, const char *name)
{
    for (size_t i = 0; table && table[i]; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

/* ---- named values ----------------------------------------------------- */

typedef struct named_value {
    char *key;
    void *val;
    void (*free_fn)(void *);
    struct named_value *next;
} named_value;

static named_value **value_find(named_value **list, const char *key)
{
    for (; *list; list = &(*list)->next)
        if (strcmp((*list)->key, key) == 0)
            return list;
    return list;
}

static int value_set(named_value **list, const char *key, void *val, void (*free_fn)(void *))
{
    named_value **at = value_find(list, key), *v = *at;
    if (v) {
        if (v->free_fn && v->val != val)
            v->free_fn(v->val);
    } else if (!(v = calloc(1, sizeof *v)) || !(v->key = strdup(key))) {
        free(v);
        return -1;
    } else {
        *at = v;
    }
    v->val = val;
    v->free_fn = free_fn;
    return 0;
}

static void values_free(named_value *v)
{
    while (v) {
        named_value *next = v->next;
        if (v->free_fn)
            v->free_fn(v->val);
        free(v->key);
        free(v);
        v = next;
    }
}

int instance_set_value(instance *ins, const char *key, void *val, void (*free_fn)(void *))
{
    return value_set(&ins->values, key, val, free_fn);
}

void *instance_value(const instance *ins, const char *key)
{
    named_value *const *v = value_find((named_value **)&ins->values, key);
    return *v ? (*v)->val : NULL;
}

int block_set_value(server_block *b, const char *key, void *val, void (*free_fn)(void *))
{
    return value_set(&b->values, key, val, free_fn);
}

void *block_value(const server_block *b, const char *key)
{
    if (!b)
        return NULL;
    named_value *const *v = value_find((named_value **)&b->values, key);
    return *v ? (*v)->val : NULL;
}

/* ---- the process ------------------------------------------------------ */

const server_env *instance_env(const instance *ins)
{
    return ins->env;
}

struct metrics_registry *instance_metrics(const instance *ins)
{
    return ins->env->metrics;
}

void instance_request_reload(const instance *ins)
{
    if (ins->env->request_reload)
        ins->env->request_reload(ins->env->reload_arg);
}

int instance_on_unrouted(instance *ins, req_done_hook fn, void *data)
{
    if (ins->nunrouted >= REQ_MAX_HOOKS)
        return -1;
    ins->unrouted[ins->nunrouted].fn.d = fn;
    ins->unrouted[ins->nunrouted++].data = data;
    return 0;
}

/* ---- Corefile text and its hash --------------------------------------- */

int sha512_hex(const void *data, size_t len, char out[129])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha512(), NULL))
        return -1;
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* ---- keys ------------------------------------------------------------- */

static int add_key(server_block *b, const char *zone, const char *scheme, int port,
                   const cf_token *tok)
{
    /* capacity doubles (a CIDR key adds up to 128 keys): it is full when
     * nkeys is 0 or a power of two */
    if ((b->nkeys & (b->nkeys - 1)) == 0) {
        if (VEC_RESIZE(b->keys, b->nkeys ? 2 * b->nkeys : 1) != 0)
            return -1;
    }
    zone_key *k = &b->keys[b->nkeys];
    memset(k, 0, sizeof *k);
    snprintf(k->zone, sizeof k->zone, "%.*s", (int)sizeof k->zone - 1, zone);
    snprintf(k->scheme, sizeof k->scheme, "%s", scheme);
    k->port = port;
    k->tok = tok;
    if (dname_from_str(k->wire, zone) < 0)
        return -1;
    b->nkeys++;
    return 0;
}

static int keyerr(char *err, size_t errlen, const cf_token *t, const char *msg)
{
    snprintf(err, errlen, "%s:%d: %s near '%s'", t->file, t->line, msg, t->text);
    return -1;
}

/* [SCHEME://]ZONE[:PORT] → one or more zone keys (CIDRs expand). SCHEME
 * is dns (the default; port -dns.port, else 53) or tls (port 853). */
static int parse_key(server_block *b, const cf_token *t, int dns_port, char *err, size_t errlen)
{
    char buf[DNAME_STR_MAX];
    const char *s = t->text;
    char scheme[8] = "dns";
    const char *sep = strstr(s, "://");
    if (sep) {
        size_t sl = (size_t)(sep - s);
        if (sl == 0 || sl >= sizeof scheme)
            return keyerr(err, errlen, t, "invalid server key");
        memcpy(scheme, s, sl);
        scheme[sl] = '\0';
        for (char *p = scheme; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (strcmp(scheme, "dns") != 0 && strcmp(scheme, "tls") != 0)
            return keyerr(err, errlen, t, "only dns:// and tls:// servers are supported");
        s = sep + 3;
    }
    snprintf(buf, sizeof buf, "%s", s);
    int port = strcmp(scheme, "tls") == 0 ? 853 : dns_port;
    char *colon = strrchr(buf, ':');
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end || p < 1 || p > 65535)
            return keyerr(err, errlen, t, "invalid port in server key");
        port = (int)p;
        *colon = '\0';
    }
    if (buf[0] == '\0')
        snprintf(buf, sizeof buf, ".");
    char (*zones)[DNAME_STR_MAX];
    int nz = zone_from_key(buf, &zones);
    if (nz < 0)
        return keyerr(err, errlen, t, strchr(buf, '/') ? "invalid CIDR in server key"
                                                       : "invalid zone in server key");
    for (int i = 0; i < nz; i++)
        if (add_key(b, zones[i], scheme, port, t) < 0) {
            free(zones);
            return keyerr(err, errlen, t, "invalid zone in server key");
        }
    free(zones);
    return 0;
}

/* ---- plugins of a block ----------------------------------------------- */

static int cmp_dir(const void *a, const void *b)
{
    const cf_directive *x = *(const cf_directive *const *)a, *y = *(const cf_directive *const *)b;
    return plugin_order(x->name) - plugin_order(y->name);
}

/* The line of the second occurrence of a directive, for the once rule. */
static const cf_token *second_occurrence(const cf_directive *dir)
{
    cf_disp d;
    cf_disp_init(&d, dir);
    int n = 0;
    while (cf_next(&d)) {
        if (++n == 2)
            return &dir->tokens[d.cur];
        while (cf_next_arg(&d))
            ;
        while (cf_next_block(&d))
            while (cf_next_arg(&d))
                ;
    }
    return &dir->tokens[0];
}

static int setup_block(instance *ins, server_block *b, char *err, size_t errlen)
{
    const cf_block *cb = b->cf;
    const cf_directive **dirs = calloc(cb->ndirs ? cb->ndirs : 1, sizeof *dirs);
    b->handlers = calloc(cb->ndirs ? cb->ndirs : 1, sizeof *b->handlers);
    if (!dirs || !b->handlers) {
        free(dirs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < cb->ndirs; i++) {
        const cf_directive *dir = &cb->dirs[i];
        const cf_token *t = &dir->tokens[0];
        if (plugin_order(dir->name) < 0) {
            snprintf(err, errlen, "%s:%d: Unknown directive '%s' near '%s'", t->file, t->line,
                     dir->name, t->text);
            free(dirs);
            return -1;
        }
        if (!plugin_find(ins->env->plugins, dir->name)) {
            snprintf(err, errlen, "%s:%d: plugin '%s' is not supported by topodns near '%s'",
                     t->file, t->line, dir->name, t->text);
            free(dirs);
            return -1;
        }
        dirs[i] = dir;
    }
    qsort(dirs, cb->ndirs, sizeof *dirs, cmp_dir);
    for (size_t i = 0; i < cb->ndirs; i++) {
        const plugin_def *def = plugin_find(ins->env->plugins, dirs[i]->name);
        if ((def->flags & PLUGIN_ONCE) && dirs[i]->noccur > 1) {
            const cf_token *t = second_occurrence(dirs[i]);
            snprintf(err, errlen, "%s:%d: plugin/%s: this plugin can only be used once per "
                     "Server Block near '%s'", t->file, t->line, def->name, t->text);
            free(dirs);
            return -1;
        }
        cf_disp d;
        cf_disp_init(&d, dirs[i]);
        setup_ctx ctx = { .ins = ins, .blk = b, .corefile = ins->path };
        void *inst = NULL;
        if (def->setup(&d, &ctx, &inst) < 0) {
            if (d.err[0])
                snprintf(err, errlen, "%s", d.err);
            else
                snprintf(err, errlen, "%s:%d: plugin/%s: setup failed near '%s'",
                         dirs[i]->tokens[0].file, dirs[i]->tokens[0].line, def->name,
                         dirs[i]->tokens[0].text);
            free(dirs);
            return -1;
        }
        b->handlers[b->nhandlers].def = def;
        b->handlers[b->nhandlers++].inst = inst;
    }
    free(dirs);
    handler *prev = NULL;
    for (size_t i = 0; i < b->nhandlers; i++) {
        handler *h = &b->handlers[i];
        if (!h->def->serve)
            continue;
        if (prev)
            prev->next = h;
        else
            b->chain = h;
        prev = h;
    }
    return 0;
}

/* ---- listen groups ---------------------------------------------------- */

static listen_group *group_for(instance *ins, const char *addr, int port, const char *label,
                               int tls)
{
    for (size_t i = 0; i < ins->ngroups; i++)
        if (ins->groups[i].port == port && strcmp(ins->groups[i].addr, addr) == 0)
            return &ins->groups[i];
    if (VEC_RESIZE(ins->groups, ins->ngroups + 1) != 0)
        return NULL;
    listen_group *g = &ins->groups[ins->ngroups++];
    memset(g, 0, sizeof *g);
    snprintf(g->addr, sizeof g->addr, "%s", addr);
    g->port = port;
    g->tls = tls;
    snprintf(g->label, sizeof g->label, "%s", label);
    return g;
}

int block_set_filter(server_block *b, int (*fn)(void *data, const dns_req *r), void *data,
                     const char *view)
{
    assert(b && fn);
    if (b->filter)
        return -1;
    b->filter = fn;
    b->filter_data = data;
    b->view = view;
    return 0;
}

/* A zone/port may be served by several blocks when all but at most one
 * have a filter (CoreDNS: blocks with a filter do not claim the zone). */
static int group_add(listen_group *g, zone_key *k, server_block *b)
{
    for (size_t i = 0; i < g->nzones; i++)
        if (dname_equal(g->zones[i].wire, k->wire) &&
            (g->zones[i].blk == b || (!b->filter && !g->zones[i].blk->filter)))
            return 1;
    for (size_t i = 0; i < b->nhandlers; i++)
        if (b->handlers[i].def->flags & PLUGIN_ANY_CLASS)
            g->any_class = 1;
    if (VEC_RESIZE(g->zones, g->nzones + 1) != 0)
        return -1;
    g->zones[g->nzones].wire = k->wire;
    g->zones[g->nzones].nlabels = dname_labels(k->wire);
    g->zones[g->nzones].zone = k->zone;
    g->zones[g->nzones++].blk = b;
    return 0;
}

/* A block's timeouts over the group's: the fields it sets win (blocks are
 * merged in file order, so the last one to set a field wins, as in
 * CoreDNS's servers). */
static void timeouts_merge(tcp_timeouts *g, const tcp_timeouts *b)
{
    if (b->read_ns)
        g->read_ns = b->read_ns;
    if (b->write_ns)
        g->write_ns = b->write_ns;
    if (b->idle_ns)
        g->idle_ns = b->idle_ns;
    if (b->max_queries)
        g->max_queries = b->max_queries;
}

static void timeouts_defaults(tcp_timeouts *t)
{
    if (!t->read_ns)
        t->read_ns = TCP_READ_DEFAULT_NS;
    if (!t->write_ns)
        t->write_ns = TCP_WRITE_DEFAULT_NS;
    if (!t->idle_ns)
        t->idle_ns = TCP_IDLE_DEFAULT_NS;
    if (!t->max_queries)
        t->max_queries = TCP_MAX_QUERIES_DEFAULT;
}

/* Blocks with a filter before those without, each kind in Corefile order:
 * core_match() takes the first block of a zone whose filter passes. */
static void filtered_first(listen_group *g)
{
    for (size_t i = 1; i < g->nzones; i++) {
        listen_zone z = g->zones[i];
        if (!z.blk->filter)
            continue;
        size_t j = i;
        for (; j > 0 && !g->zones[j - 1].blk->filter; j--)
            g->zones[j] = g->zones[j - 1];
        g->zones[j] = z;
    }
}

static int build_groups(instance *ins, char *err, size_t errlen)
{
    for (size_t bi = 0; bi < ins->nblocks; bi++) {
        server_block *b = &ins->blocks[bi];
        for (size_t ki = 0; ki < b->nkeys; ki++) {
            zone_key *k = &b->keys[ki];
            const char *wild = addr_default_bind();
            size_t na = b->nbind ? b->nbind : 1;
            for (size_t ai = 0; ai < na; ai++) {
                const char *addr = b->nbind ? b->bind[ai] : (wild ? wild : "::");
                char label[96];
                if (b->nbind)
                    snprintf(label, sizeof label, "%s://%s%s%s:%d", k->scheme,
                             strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "",
                             k->port);
                else
                    snprintf(label, sizeof label, "%s://:%d", k->scheme, k->port);
                int tls = strcmp(k->scheme, "tls") == 0;
                listen_group *g = group_for(ins, addr, k->port, label, tls);
                if (g && g->tls != tls) {
                    snprintf(err, errlen, "%s:%d: cannot serve %s://%s:%d - port %d is served "
                             "by %s:// already near '%s'", k->tok->file, k->tok->line,
                             k->scheme, k->zone, k->port, k->port, g->tls ? "tls" : "dns",
                             k->tok->text);
                    return -1;
                }
                int rc = g ? group_add(g, k, b) : -1;
                if (rc < 0) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                if (rc == 1) {
                    snprintf(err, errlen, "%s:%d: cannot serve %s://%s:%d - it is already "
                             "defined near '%s'", k->tok->file, k->tok->line, k->scheme,
                             k->zone, k->port, k->tok->text);
                    return -1;
                }
                timeouts_merge(&g->tcp, &b->timeouts);
            }
        }
    }
    for (size_t i = 0; i < ins->ngroups; i++) {
        listen_group *g = &ins->groups[i];
        filtered_first(g);
        timeouts_defaults(&g->tcp);
        /* as CoreDNS: the TLS settings of the last block (file order) that
         * has some; none: plain TCP */
        const server_tls *t = NULL;
        for (size_t z = 0; g->tls && z < g->nzones; z++)
            if (g->zones[z].blk->tls.set && (!t || &g->zones[z].blk->tls > t))
                t = &g->zones[z].blk->tls;
        if (t && tls_group_init(g, t, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* ---- instance --------------------------------------------------------- */

static const char default_corefile[] = ". {\n    whoami\n    log\n}\n";

instance *instance_load(const server_env *env, const char *path, char *err, size_t errlen)
{
    instance *ins = calloc(1, sizeof *ins);
    if (!ins) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ins->env = env;
    size_t len = 0;
    char *text = NULL;
    if (path) {
        const char *why = NULL;
        text = file_read(path, &len, FILE_PIPE_OK, &why);   /* a pipe: -conf /dev/stdin */
        if (!text) {
            snprintf(err, errlen, "%s: %s", path, why);
            free(ins);
            return NULL;
        }
        ins->path = strdup(path);
        ins->cf = cf_parse_string(path, text, err, errlen);
    } else {
        ins->path = strdup("Corefile");
        text = strdup(default_corefile);
        len = strlen(default_corefile);
        ins->cf = cf_parse_string("Corefile", default_corefile, err, errlen);
    }
    sha512_hex(text ? text : "", len, ins->sha512);
    free(text);
    if (!ins->cf)
        goto fail;
    ins->nworkers = env->workers > 0 ? env->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ins->nworkers < 1)
        ins->nworkers = 1;
    ins->blocks = calloc(ins->cf->nblocks ? ins->cf->nblocks : 1, sizeof *ins->blocks);
    if (!ins->blocks)
        goto fail;
    for (size_t i = 0; i < ins->cf->nblocks; i++) {
        server_block *b = &ins->blocks[ins->nblocks++];
        b->cf = &ins->cf->blocks[i];
        for (size_t k = 0; k < b->cf->nkeys; k++)
            if (parse_key(b, &b->cf->keys[k], env->dns_port > 0 ? env->dns_port : 53, err,
                          errlen) < 0)
                goto fail;
        if (setup_block(ins, b, err, errlen) < 0)
            goto fail;
    }
    if (build_groups(ins, err, errlen) < 0)
        goto fail;
    return ins;
fail:
    instance_free(ins);
    return NULL;
}

void instance_set_debug(instance *ins)
{
    assert(ins);
    ins->debug = 1;
}

int instance_prepare(instance *ins, instance *prev, char *err, size_t errlen)
{
    ins->prev = prev;
    for (size_t bi = 0; bi < ins->nblocks; bi++) {
        server_block *b = &ins->blocks[bi];
        for (size_t i = 0; i < b->nhandlers; i++) {
            handler *h = &b->handlers[i];
            if (h->def->start && h->def->start(h->inst, ins, err, errlen) < 0) {
                ins->prev = NULL;
                instance_stop(ins);
                return -1;
            }
        }
    }
    ins->started = 1;
    return 0;
}

int instance_ready(const instance *ins)
{
    for (size_t bi = 0; bi < ins->nblocks; bi++)
        for (size_t i = 0; i < ins->blocks[bi].nhandlers; i++) {
            const handler *h = &ins->blocks[bi].handlers[i];
            if (h->def->ready && !h->def->ready(h->inst))
                return 0;
        }
    return 1;
}

int instance_serve(instance *ins, char *err, size_t errlen)
{
    int rc = listeners_start(ins, err, errlen);     /* inherits prev's sockets */
    ins->prev = NULL;
    if (rc < 0 || http_start(ins, err, errlen) < 0) {
        instance_stop(ins);
        return -1;
    }
    return 0;
}

int instance_start(instance *ins, char *err, size_t errlen)
{
    if (instance_prepare(ins, NULL, err, errlen) < 0)
        return -1;
    return instance_serve(ins, err, errlen);
}

instance *instance_previous(const instance *ins)
{
    return ins->prev;
}

void instance_stop(instance *ins)
{
    if (!ins)
        return;
    http_stop(ins);
    listeners_stop(ins);
    if (!ins->started)
        return;
    for (size_t bi = ins->nblocks; bi-- > 0;) {
        server_block *b = &ins->blocks[bi];
        for (size_t i = b->nhandlers; i-- > 0;)
            if (b->handlers[i].def->stop)
                b->handlers[i].def->stop(b->handlers[i].inst);
    }
    ins->started = 0;
}

void instance_free(instance *ins)
{
    if (!ins)
        return;
    for (size_t bi = 0; bi < ins->nblocks; bi++) {
        server_block *b = &ins->blocks[bi];
        for (size_t i = 0; i < b->nhandlers; i++)
            if (b->handlers[i].def->destroy)
                b->handlers[i].def->destroy(b->handlers[i].inst);
        free(b->handlers);
        values_free(b->values);
        free(b->keys);
        for (size_t i = 0; i < b->nbind; i++)
            free(b->bind[i]);
        free(b->bind);
        free(b->tls.cert);
        free(b->tls.key);
        free(b->tls.ca);
    }
    for (size_t i = 0; i < ins->ngroups; i++) {
        free(ins->groups[i].zones);
        tls_group_free(&ins->groups[i]);
    }
    free(ins->groups);
    values_free(ins->values);
    free(ins->blocks);
    cf_free(ins->cf);
    free(ins->path);
    loop_free_hooks_clear(ins);
    free(ins);
}

size_t instance_nblocks(const instance *ins) { return ins->nblocks; }
server_block *instance_block(instance *ins, size_t i) { return i < ins->nblocks ? &ins->blocks[i] : NULL; }
const char *instance_conf_path(const instance *ins) { return ins->path; }
const char *instance_conf_sha512(const instance *ins) { return ins->sha512; }
double instance_lameduck(const instance *ins) { return ins->lameduck; }

void instance_set_lameduck(instance *ins, double seconds)
{
    if (seconds > ins->lameduck)
        ins->lameduck = seconds;
}

size_t instance_handlers(instance *ins, const handler **out, size_t max)
{
    size_t n = 0;
    for (size_t bi = 0; bi < ins->nblocks; bi++)
        for (size_t i = 0; i < ins->blocks[bi].nhandlers; i++) {
            if (n < max)
                out[n] = &ins->blocks[bi].handlers[i];
            n++;
        }
    return n;
}
