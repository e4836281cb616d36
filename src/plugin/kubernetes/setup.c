/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup.c — the `kubernetes` Corefile stanza.
 *
 *   kubernetes [ZONES...] {
 *       endpoint URL                 tls CERT KEY CACERT
 *       kubeconfig PATH [CONTEXT]    namespaces NS...
 *       namespace_labels SELECTOR    labels SELECTOR
 *       pods disabled|insecure|verified
 *       endpoint_pod_names           ttl 0..3600
 *       noendpoints                  fallthrough [ZONES...]
 *       ignore empty_service         zonal
 *       startup_timeout DURATION     multicluster [ZONES...]
 *       apiserver_qps N  apiserver_burst N  apiserver_max_inflight N
 *   }
 *
 * Zones come from the arguments or else the server block's keys; CIDRs
 * become reverse zones; the first forward zone is the primary one (PTR
 * targets). `multicluster` names the plugin zones answered from
 * ServiceImports (the Multi-Cluster Services API) instead of Services;
 * without arguments it names none, as in CoreDNS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "k8s/k8s.h"
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "common/log.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

static int add_zone(kube *k, const char *text, cf_disp *d)
{
    char (*out)[DNAME_STR_MAX];
    int n = zone_from_key(text, &out);
    if (n < 0)
        return cf_err(d, "%s '%s'", zone_key_error(text), text);
    for (int i = 0; i < n; i++) {
        if (k->nzones == KUBE_MAX_ZONES) {
            free(out);
            return cf_err(d, "too many zones");
        }
        memcpy(k->zones[k->nzones], out[i], DNAME_STR_MAX);
        if (dname_from_str(k->zwire[k->nzones], out[i]) < 0) {
            free(out);
            return cf_err(d, "invalid zone '%s'", text);
        }
        k->zlabels[k->nzones] = dname_labels(k->zwire[k->nzones]);
        k->nzones++;
    }
    free(out);
    return 0;
}

static int finish_zones(kube *k, cf_disp *d)
{
    k->primary = -1;
    for (int i = 0; i < k->nzones && k->primary < 0; i++)
        if (!kube_is_reverse(k->zwire[i]))
            k->primary = i;
    if (k->primary < 0)
        return cf_err(d, "non-reverse zone name must be used");
    for (int i = k->nzones - 1; i >= 0; i--) {
        const uint8_t *z = k->zwire[i], *n = i + 1 < k->nzones ? k->zwire[i + 1] : NULL;
        k->zrun[i] = 1;
        if (n && z[0] && n[0] && k->zlabels[i + 1] == k->zlabels[i] &&
            dname_equal(z + 1 + z[0], n + 1 + n[0]))
            k->zrun[i] += k->zrun[i + 1];
    }
    for (int i = 0; i < k->nzones; i++)
        for (int j = 0; j < k->nmc && !k->zone_mc[i]; j++)
            k->zone_mc[i] = dname_is_sub(k->zwire[i], k->mc_zones[j]);
    return 0;
}

static int one_arg(cf_disp *d, const char **out)
{
    const char *a[2] = { NULL, NULL };
    *out = "";
    if (cf_remaining_args(d, a, 2) != 1)
        return cf_arg_err(d);
    *out = a[0];
    return 0;
}

static int no_args(cf_disp *d)
{
    const char *a[1];
    return cf_remaining_args(d, a, 1) != 0 ? cf_arg_err(d) : 0;
}

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The rest of the line joined with spaces, parsed as a label selector. */
static int selector_opt(cf_disp *d, kselector *sel, char **rendered)
{
    const char *a[64];
    int n = cf_remaining_args(d, a, 64);
    if (n < 1 || n > 64)
        return cf_arg_err(d);
    char text[4096];
    size_t o = 0;
    text[0] = '\0';
    for (int i = 0; i < n && o < sizeof text; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", i ? " " : "", a[i]);
    char err[512];
    ksel_free(sel);
    free(*rendered);
    *rendered = NULL;
    if (ksel_parse(text, sel, err, sizeof err) < 0)
        return cf_err(d, "%s", err);
    *rendered = ksel_render(sel);
    return 0;
}

static int opt_pods(kube *k, cf_disp *d)
{
    const char *m;
    if (one_arg(d, &m) < 0)
        return -1;
    if (!strcmp(m, "disabled"))
        k->pod_mode = POD_DISABLED;
    else if (!strcmp(m, "insecure"))
        k->pod_mode = POD_INSECURE;
    else if (!strcmp(m, "verified"))
        k->pod_mode = POD_VERIFIED;
    else
        return cf_err(d, "invalid value for pods: '%s', must be one of: disabled, verified, insecure", m);
    return 0;
}

static int opt_ttl(kube *k, cf_disp *d)
{
    const char *v;
    if (one_arg(d, &v) < 0)
        return -1;
    char *end;
    long t = strtol(v, &end, 10);
    if (!*v || *end)
        return cf_err(d, "invalid ttl '%s'", v);
    if (t < 0 || t > 3600)
        return cf_err(d, "ttl must be in range [0, 3600]: %ld", t);
    k->ttl = (uint32_t)t;
    return 0;
}

static int opt_fallthrough(kube *k, cf_disp *d)
{
    const char *a[KUBE_MAX_ZONES];
    int n = cf_remaining_args(d, a, KUBE_MAX_ZONES);
    if (n > KUBE_MAX_ZONES)
        return cf_err(d, "too many fallthrough zones");
    k->fall = 1;
    free(k->fall_zones);
    k->fall_zones = NULL;
    k->nfall = 0;
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++) {
        char (*z)[DNAME_STR_MAX];
        int nz = zone_from_key(a[i], &z);
        if (nz < 0)
            return cf_err(d, "invalid fallthrough zone '%s' (%s)", a[i], zone_key_error(a[i]));
        if (VEC_RESIZE(k->fall_zones, k->nfall + nz) != 0) {
            free(z);
            return cf_err(d, "out of memory");
        }
        for (int j = 0; j < nz; j++)
            if (dname_from_str(k->fall_zones[k->nfall++], z[j]) < 0) {
                free(z);
                return cf_err(d, "invalid fallthrough zone '%s'", a[i]);
            }
        free(z);
    }
    return 0;
}

static int opt_ignore(kube *k, cf_disp *d)
{
    const char *a[8];
    int n = cf_remaining_args(d, a, 8);
    for (int i = 0; i < n && i < 8; i++) {
        if (strcmp(a[i], "empty_service") != 0)
            return cf_err(d, "unable to parse ignore value: '%s'", a[i]);
        k->ignore_empty = 1;
    }
    return 0;
}

static int opt_number(cf_disp *d, unsigned long *out)
{
    const char *v;
    if (one_arg(d, &v) < 0)
        return -1;
    return cf_parse_uint(d, v, 0, 1000000000UL, out);
}

/* `endpoint URL...`: the first URL, checked at its own token (a bad one
 * would fail every request, forever); the others are ignored. */
static int opt_endpoint(kube *k, cf_disp *d)
{
    const char *a[8], *why;
    if (!cf_next_arg(d))
        return cf_arg_err(d);
    if ((why = k8s_url_check(cf_val(d))))
        return cf_err(d, "invalid endpoint '%s': %s", cf_val(d), why);
    free(k->endpoint);
    k->endpoint = strdup(cf_val(d));
    if (cf_remaining_args(d, a, 8) > 0)
        log_warning("plugin/kubernetes: multiple endpoints have been deprecated, "
                    "please specify a single endpoint; using %s", k->endpoint);
    return 0;
}

static int opt_api(kube *k, cf_disp *d, const char *p)
{
    const char *a[8];
    int n;
    if (!strcmp(p, "endpoint"))
        return opt_endpoint(k, d);
    if (!strcmp(p, "tls")) {
        if (cf_remaining_args(d, a, 8) != 3)
            return cf_arg_err(d);
        free(k->tls_cert), free(k->tls_key), free(k->tls_ca);
        k->tls_cert = strdup(a[0]), k->tls_key = strdup(a[1]), k->tls_ca = strdup(a[2]);
        return 0;
    }
    /* kubeconfig */
    if ((n = cf_remaining_args(d, a, 8)) < 1 || n > 2)
        return cf_arg_err(d);
    free(k->kubeconfig), free(k->kcontext);
    k->kubeconfig = strdup(a[0]);
    k->kcontext = n == 2 ? strdup(a[1]) : NULL;
    return 0;
}

static int opt_namespaces(kube *k, cf_disp *d)
{
    const char *a[256];
    int n = cf_remaining_args(d, a, 256);
    if (n < 1 || n > 256)
        return cf_arg_err(d);
    if (VEC_RESIZE(k->namespaces, k->nnamespaces + n) != 0)
        return cf_err(d, "out of memory");
    for (int i = 0; i < n; i++)
        k->namespaces[k->nnamespaces++] = xstrdup(a[i]);
    return 0;
}

static int property(kube *k, cf_disp *d)
{
    const char *p = cf_val(d);
    if (!strcmp(p, "endpoint") || !strcmp(p, "tls") || !strcmp(p, "kubeconfig"))
        return opt_api(k, d, p);
    if (!strcmp(p, "namespaces"))
        return opt_namespaces(k, d);
    if (!strcmp(p, "namespace_labels"))
        return selector_opt(d, &k->ns_sel, &k->ns_selector);
    if (!strcmp(p, "labels"))
        return selector_opt(d, &k->label_sel, &k->label_selector);
    if (!strcmp(p, "pods"))
        return opt_pods(k, d);
    if (!strcmp(p, "endpoint_pod_names"))
        return no_args(d) < 0 ? -1 : (k->endpoint_pod_names = 1, 0);
    if (!strcmp(p, "ttl"))
        return opt_ttl(k, d);
    if (!strcmp(p, "noendpoints"))
        return no_args(d) < 0 ? -1 : (k->noendpoints = 1, 0);
    if (!strcmp(p, "fallthrough"))
        return opt_fallthrough(k, d);
    if (!strcmp(p, "ignore"))
        return opt_ignore(k, d);
    if (!strcmp(p, "zonal"))
        return no_args(d) < 0 ? -1 : (k->zonal = 1, 0);
    if (!strcmp(p, "startup_timeout")) {
        const char *v;
        return one_arg(d, &v) < 0 ? -1 : cf_parse_duration(d, v, &k->startup_timeout);
    }
    if (!strcmp(p, "apiserver_qps"))
        return opt_number(d, &k->qps);
    if (!strcmp(p, "apiserver_burst"))
        return opt_number(d, &k->burst);
    if (!strcmp(p, "apiserver_max_inflight"))
        return opt_number(d, &k->max_inflight);
    if (!strcmp(p, "multicluster")) {
        const char *args[KUBE_MAX_ZONES];
        int n = cf_remaining_args(d, args, KUBE_MAX_ZONES);
        free(k->mc_zones);
        k->mc_zones = NULL;
        k->nmc = 0;
        for (int i = 0; i < n && i < KUBE_MAX_ZONES; i++) {
            char (*out)[DNAME_STR_MAX];
            int m = zone_from_key(args[i], &out);
            if (m < 0)
                return cf_err(d, "%s '%s'", zone_key_error(args[i]), args[i]);
            if (VEC_RESIZE(k->mc_zones, k->nmc + m) != 0) {
                free(out);
                return cf_err(d, "out of memory");
            }
            for (int j = 0; j < m; j++)
                if (dname_from_str(k->mc_zones[k->nmc++], out[j]) < 0) {
                    free(out);
                    return cf_err(d, "invalid zone '%s'", args[i]);
                }
            free(out);
        }
        return 0;
    }
    return cf_prop_err(d);
}

static int parse(kube *k, cf_disp *d, setup_ctx *ctx)
{
    while (cf_next(d)) {
        const char *args[KUBE_MAX_ZONES];
        int n = cf_remaining_args(d, args, KUBE_MAX_ZONES);
        for (int i = 0; i < n && i < KUBE_MAX_ZONES; i++)
            if (add_zone(k, args[i], d) < 0)
                return -1;
        if (n == 0 && ctx && ctx->blk)
            for (size_t i = 0; i < ctx->blk->nkeys; i++)
                if (add_zone(k, ctx->blk->keys[i].zone, d) < 0)
                    return -1;
        while (cf_next_block(d))
            if (property(k, d) < 0)
                return -1;
    }
    if (k->nnamespaces > 0 && k->ns_sel.n > 0)
        return cf_err(d, "namespaces and namespace_labels cannot both be set");
    if (k->zonal && k->noendpoints)
        return cf_err(d, "zonal requires the endpoint cache; remove noendpoints");
    return finish_zones(k, d);
}

/* The directive's tokens, a space between tokens of one line and a newline
 * between lines (malloc'd). */
static char *stanza_text(const cf_disp *d)
{
    size_t len = 1;
    for (size_t i = 0; i < d->n; i++)
        len += strlen(d->toks[i].text) + 1;
    char *s = malloc(len), *o = s;
    for (size_t i = 0; s && i < d->n; i++) {
        if (i)
            *o++ = d->toks[i].line != d->toks[i - 1].line ? '\n' : ' ';
        size_t n = strlen(d->toks[i].text);
        memcpy(o, d->toks[i].text, n);
        o += n;
    }
    if (s)
        *o = '\0';
    return s;
}

int kube_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    kube *k = calloc(1, sizeof *k);
    if (!k)
        return cf_err(d, "out of memory");
    k->ttl = 5;
    k->startup_timeout = 5.0;
    k->pod_mode = POD_DISABLED;
    if (ctx) {
        k->ins = ctx->ins;
        k->blk = ctx->blk;
    }
    if (parse(k, d, ctx) < 0 || !(k->stanza = stanza_text(d))) {
        if (!d->err[0])
            cf_err(d, "out of memory");
        kube_free_config(k);
        return -1;
    }
    *inst = k;
    return 0;
}

void kube_free_config(kube *k)
{
    if (!k)
        return;
    free(k->endpoint);
    free(k->tls_cert), free(k->tls_key), free(k->tls_ca);
    free(k->kubeconfig), free(k->kcontext);
    for (int i = 0; i < k->nnamespaces; i++)
        free(k->namespaces[i]);
    free(k->namespaces);
    ksel_free(&k->ns_sel);
    ksel_free(&k->label_sel);
    free(k->ns_selector);
    free(k->label_selector);
    free(k->fall_zones);
    free(k->mc_zones);
    free(k->stanza);
    free(k);
}
