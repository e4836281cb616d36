/* SPDX-License-Identifier: Apache-2.0 */
/*
 * observer.c — the engine's background pass over the Services.
 *
 * Every half second (off the serving path, on its own thread, an RCU reader
 * of the store) it looks at every headless Service with a topology policy
 * and decides, per address family, whether the policy can be honoured right
 * now (the computed ones — Auto, trafficDistribution, same-zone Prefer —
 * may be declined by their producer: one zone, too few endpoints, nodes
 * without CPU or zone, endpoints without zone). It then
 *   - sets topodns_topology_services{policy,state} (state enabled|disabled),
 *   - publishes the same-zone Prefer on/off state the workers use for the
 *     Local algorithm's hysteresis (so every worker agrees),
 *   - with `events`, posts one core/v1 Event per state change through the
 *     API client bound to the engine (reasons TopologyAwareDNSEnabled /
 *     TopologyAwareDNSDisabled, messages as the upstream controller's).
 *
 * Its per-Service table is the observer thread's alone; the engine's Prefer
 * map and gauges are written only here.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include <uthash.h>
#include "common/log.h"
#include "runtime/metrics.h"
#include "runtime/periodic.h"
#include "topology/internal.h"

/* One per Service (and family) with a topology policy: hundreds in a large
 * cluster, so the key is sized to what it holds. */
typedef struct svc_state {
    int enabled;
    int seen;                       /* pass number it was last seen in */
    UT_hash_handle hh;
    char key[];                     /* ns/name/family */
} svc_state;

struct observer {
    periodic *task;
    topo_engine *e;
    svc_state *states;
    int pass;
    int counts[TP_COUNT][2];
};

static void post_event(topo_engine *e, const st_service *svc, int enabled, topo_policy p,
                       int family, const char *why)
{
    if (!e->post)
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char name[400], ts[32], msg[400], path[400];
    snprintf(name, sizeof name, "%s.%016llx", svc->name,
             (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now.tv_sec));
    const char *fam = family == 4 ? "IPv4" : "IPv6";
    if (enabled)
        snprintf(msg, sizeof msg, "Topology aware DNS answers enabled (%s), addressType: %s",
                 topo_policy_name(p), fam);
    else if (why && strstr(why, "addressType"))
        snprintf(msg, sizeof msg, "%s", why);
    else
        snprintf(msg, sizeof msg, "%s, addressType: %s", why && *why ? why : "disabled", fam);
    cJSON *ev = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(ev, "apiVersion", "v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", svc->ns);
    cJSON *io = cJSON_AddObjectToObject(ev, "involvedObject");
    cJSON_AddStringToObject(io, "apiVersion", "v1");
    cJSON_AddStringToObject(io, "kind", "Service");
    cJSON_AddStringToObject(io, "namespace", svc->ns);
    cJSON_AddStringToObject(io, "name", svc->name);
    cJSON_AddStringToObject(ev, "reason", enabled ? "TopologyAwareDNSEnabled" : "TopologyAwareDNSDisabled");
    cJSON_AddStringToObject(ev, "message", msg);
    cJSON_AddStringToObject(ev, "type", enabled ? "Normal" : "Warning");
    cJSON_AddNumberToObject(ev, "count", 1);
    cJSON_AddStringToObject(ev, "firstTimestamp", ts);
    cJSON_AddStringToObject(ev, "lastTimestamp", ts);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "source"), "component", "topodns");
    cJSON_AddStringToObject(ev, "reportingComponent", "topodns");
    char *json = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", svc->ns);
    if (json)
        e->post(e->post_ctx, path, json);
    free(json);
    log_info("plugin/topology: %s/%s: %s", svc->ns, svc->name, msg);
}

static int is_computed(topo_policy p)
{
    return p == TP_AUTO || p == TP_PREFER_SAME_NODE || p == TP_PREFER_SAME_ZONE ||
           p == TP_SAME_ZONE_PREFER;
}

/* Can the policy be honoured for this family? why gets the reason when not. */
static int honoured(topo_engine *e, topo_policy p, const st_service *svc,
                    const st_endpoints *eps, int family, char *why, size_t wlen)
{
    if (!is_computed(p))
        return 1;
    size_t n = eps ? eps->n : 0, m = 0;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    vhint *v = calloc(n ? n : 1, sizeof *v);
    int ok = 0;
    if (idx && v) {
        for (size_t i = 0; i < n; i++)
            if (eps->eps[i].ready && st_ep_family(&eps->eps[i]) == family)
                idx[m++] = i;
        ok = topo_compute_hints(e, p, svc, eps, idx, m, family, v, why, wlen);
    }
    free(idx);
    free(v);
    return ok;
}

static void observe_family(struct observer *o, const st_service *svc, const st_endpoints *eps,
                           int family)
{
    topo_engine *e = o->e;
    topo_policy p = topo_policy_for(&e->cfg, svc, eps, family);
    if (p == TP_NONE)
        return;
    char why[256] = "";
    int ok = honoured(e, p, svc, eps, family, why, sizeof why);
    o->counts[p][ok]++;
    if (p == TP_SAME_ZONE_PREFER)
        topo_prefer_state_set(e, svc->ns, svc->name, family, ok);
    char key[600];
    snprintf(key, sizeof key, "%s/%s/%d", svc->ns, svc->name, family);
    svc_state *s;
    HASH_FIND_STR(o->states, key, s);
    int changed = !s || s->enabled != ok;
    size_t kl = strlen(key);
    if (!s && (s = calloc(1, sizeof *s + kl + 1))) {
        memcpy(s->key, key, kl + 1);
        HASH_ADD_KEYPTR(hh, o->states, s->key, kl, s);
    }
    if (!s)
        return;
    s->enabled = ok;
    s->seen = o->pass;
    if (changed && e->cfg.events && is_computed(p))
        post_event(e, svc, ok, p, family, why);
}

static int has_family(const st_endpoints *eps, int family)
{
    for (size_t i = 0; eps && i < eps->n; i++)
        if (st_ep_family(&eps->eps[i]) == family)
            return 1;
    return 0;
}

static int visit(const st_service *svc, void *arg)
{
    struct observer *o = arg;
    if (svc->kind != SVC_HEADLESS)
        return 0;
    const st_endpoints *eps = store_endpoints(o->e->st, svc->ns, svc->name);
    int v6 = has_family(eps, 6);
    if (has_family(eps, 4) || !v6)
        observe_family(o, svc, eps, 4);
    if (v6)
        observe_family(o, svc, eps, 6);
    return 0;
}

static void publish_gauges(struct observer *o)
{
    metric_family *g = o->e->services;
    static const char *const states[] = { "disabled", "enabled" };
    for (int p = 1; p < TP_COUNT; p++)
        for (int s = 0; s < 2; s++) {
            const char *v[] = { topo_policy_name((topo_policy)p), states[s] };
            metrics_set(g, v, o->counts[p][s]);
        }
}

static void pass(struct observer *o)
{
    o->pass++;
    memset(o->counts, 0, sizeof o->counts);
    store_read_begin();
    store_foreach_service(o->e->st, visit, o);
    store_read_end();
    svc_state *s, *tmp;
    HASH_ITER(hh, o->states, s, tmp)
        if (s->seen != o->pass) {   /* the Service is gone */
            HASH_DEL(o->states, s);
            free(s);
        }
    publish_gauges(o);
}

static double observe(void *arg)
{
    pass(arg);
    return 0.5;
}

int topo_observer_start(topo_engine *e, char *err, size_t errlen)
{
    assert(e && !e->obs && err && errlen > 0);   /* started once, after topo_engine_bind */
    if (!e->st) {
        snprintf(err, errlen, "plugin/topology: no cluster store bound to the engine");
        return -1;
    }
    struct observer *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "plugin/topology: out of memory");
        return -1;
    }
    o->e = e;
    if (!(o->task = periodic_start(observe, o, 0, PERIODIC_RCU))) {
        snprintf(err, errlen, "plugin/topology: cannot start the observer thread");
        free(o);
        return -1;
    }
    e->obs = o;
    return 0;
}

void topo_observer_stop(topo_engine *e)
{
    assert(e);
    struct observer *o = e->obs;
    if (!o)
        return;
    periodic_stop(o->task);
    svc_state *s, *tmp;
    HASH_ITER(hh, o->states, s, tmp) {
        HASH_DEL(o->states, s);
        free(s);
    }
    free(o);
    e->obs = NULL;
}
