/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.c — the engine's life (topology.h) and who is asking: the address
 * to locate (source or trusted ECS), the located client, what an answer
 * depended on (topo_mark) and the client's cache variant.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/metrics.h"
#include "topology/internal.h"

/* ---- life ----------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void topo_cfg_clear(topo_cfg *c)
{
    free(c->zone_label);
    free(c->region_label);
    free(c->explain);
    free(c->node);
    c->zone_label = c->region_label = c->explain = c->node = NULL;
}

topo_engine *topo_engine_new(const topo_cfg *cfg, metrics_registry *reg)
{
    topo_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->cfg = *cfg;
    e->cfg.zone_label = dup_or_null(cfg->zone_label);
    e->cfg.region_label = dup_or_null(cfg->region_label);
    e->cfg.explain = dup_or_null(cfg->explain);
    e->cfg.node = dup_or_null(cfg->node);
    atomic_init(&e->zones, NULL);
    if ((cfg->zone_label && !e->cfg.zone_label) || (cfg->region_label && !e->cfg.region_label) ||
        (cfg->explain && !e->cfg.explain) || (cfg->node && !e->cfg.node) ||
        !(e->prefer = pmap_new())) {
        topo_engine_free(e);
        return NULL;
    }
    static const char *const answers[] = { "policy", "outcome", NULL };
    static const char *const services[] = { "policy", "state", NULL };
    e->answers = metrics_family(reg, "topodns_topology_answers_total",
                                "Answers for headless Services by topology policy and outcome.",
                                METRIC_COUNTER, answers, NULL, 0);
    e->services = metrics_family(reg, "topodns_topology_services",
                                 "Headless Services with a topology policy, by whether it is "
                                 "honoured.", METRIC_GAUGE, services, NULL, 0);
    static const char *const source[] = { "source", NULL };
    metric_family *lk = metrics_family(reg, "topodns_locator_lookups_total",
                                       "Client addresses looked up, by the locate source that "
                                       "located them (node: a node address; unknown: none).",
                                       METRIC_COUNTER, source, NULL, 0);
    for (int via = 0; via < LOC_VIA_COUNT; via++) {
        int src = locator_via_source(via);
        int used = src >= 0 ? locator_uses(&cfg->locate, src)
                            : via != LOC_NODE_LOCAL || cfg->node != NULL;
        const char *v[] = { locator_via_name(via) };
        e->lookups[via] = used ? metrics_series(lk, v) : NULL;
    }
    return e;
}

void topo_engine_free(topo_engine *e)
{
    if (!e)
        return;
    topo_observer_stop(e);
    pmap_free(e->prefer, free);
    free(atomic_load(&e->zones));   /* no reader is left */
    topo_cfg_clear(&e->cfg);
    free(e);
}

const topo_cfg *topo_engine_cfg(const topo_engine *e)
{
    return &e->cfg;
}

void topo_engine_bind(topo_engine *e, store *st, topo_post_fn post, void *post_ctx)
{
    assert(e);
    assert(!e->obs);                        /* before the observer reads e->st */
    e->st = st;
    e->post = post;
    e->post_ctx = post_ctx;
}

store *topo_engine_store(const topo_engine *e)
{
    return e ? e->st : NULL;
}

/* ---- the client ----------------------------------------------------------- */

static int peer_ip(const struct sockaddr_storage *peer, st_ip *out)
{
    memset(out, 0, sizeof *out);
    if (peer->ss_family == AF_INET) {
        out->family = 4;
        memcpy(out->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
        return 0;
    }
    if (peer->ss_family != AF_INET6)
        return -1;
    const uint8_t *a = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
    static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    if (!memcmp(a, mapped, 12)) {       /* ::ffff:a.b.c.d is an IPv4 client */
        out->family = 4;
        memcpy(out->addr, a + 12, 4);
    } else {
        out->family = 6;
        memcpy(out->addr, a, 16);
    }
    return 0;
}

int topo_client_addr(const topo_cfg *c, const topo_client *cl, st_ip *out, int *via_ecs)
{
    assert(cl && out && via_ecs);
    assert(!c || (c->nsubnets >= 0 && c->nsubnets <= TOPO_MAX_SUBNETS));
    *via_ecs = 0;
    if (peer_ip(&cl->peer, out) < 0)
        return -1;
    /* ECS with a zero source prefix asks us not to use it (RFC 7871 7.1.2) */
    if (!c || !cl->has_ecs || cl->ecs_source_prefix == 0)
        return 0;
    int trusted = 0;
    for (int i = 0; i < c->nsubnets && !trusted; i++)
        trusted = cidr_contains(&c->subnets[i], out->family == 4 ? AF_INET : AF_INET6, out->addr);
    if (!trusted || (cl->ecs_family != 1 && cl->ecs_family != 2))
        return 0;
    memset(out, 0, sizeof *out);
    out->family = cl->ecs_family == 1 ? 4 : 6;
    memcpy(out->addr, cl->ecs_addr, out->family == 4 ? 4 : 16);
    *via_ecs = 1;
    return 0;
}

void topo_locate(const topo_engine *e, const topo_client *cl, topo_loc *loc)
{
    assert(e && cl && loc);
    st_ip ip;
    int ecs;
    memset(loc, 0, sizeof *loc);
    if (topo_client_addr(&e->cfg, cl, &ip, &ecs) < 0 || !e->st)
        return;
    topo_locate_ip(e, &ip, loc);
    loc->ecs = ecs;
}

int topo_locate_ip(const topo_engine *e, const st_ip *ip, topo_loc *loc)
{
    assert(e && ip && loc);
    if (!e->st) {
        memset(loc, 0, sizeof *loc);
        loc->ip = *ip;
        return loc->via;
    }
    int via = locator_find_in(e->st, ip, &e->cfg.locate, e->cfg.node, loc);
    metrics_series_add(e->lookups[via], 1);     /* NULL: no-op */
    return via;
}

void topo_mark(uint8_t *dep_io, uint8_t *ecs_io, int dep, int via_ecs)
{
    assert(dep_io && ecs_io);
    assert(dep >= TOPO_DEP_NONE && dep <= TOPO_DEP_NODE);
    assert(*dep_io <= TOPO_DEP_NODE && *ecs_io <= 1);
    if (dep > *dep_io)
        *dep_io = (uint8_t)dep;
    if (dep && via_ecs)
        *ecs_io = 1;
}

size_t topo_client_variant(const topo_engine *e, const topo_client *cl, int dep, char *out,
                           size_t cap, int *via_ecs)
{
    assert(out && cap >= 2 && cl);
    assert(dep >= TOPO_DEP_NONE && dep <= TOPO_DEP_NODE);
    out[0] = '\0';
    if (via_ecs)
        *via_ecs = 0;
    if (!dep || !e || !e->st)
        return 0;
    store_read_begin();
    topo_loc loc;
    topo_locate(e, cl, &loc);
    if (via_ecs)
        *via_ecs = loc.ecs;
    int n;
    if (loc.via == LOC_UNKNOWN)
        n = snprintf(out, cap, "?");
    else if (dep == TOPO_DEP_NODE)
        n = snprintf(out, cap, "n:%s", loc.node_name ? loc.node_name : "");
    else
        n = snprintf(out, cap, "z:%s", loc.zone ? loc.zone : "");
    store_read_end();
    return n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap - 1);
}
