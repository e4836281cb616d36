/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reqtopo.h — a request as the topology engine sees it.
 *
 * The engine (src/topology) sits below the server and knows nothing of
 * dns_req: it takes who asks as a topo_client of plain values and gives
 * back what an answer depended on through topo_mark() into two bytes.
 * These two helpers do that copying for the plugins that ask it (the
 * kubernetes plugin, the cache):
 *
 *     topo_client cl;
 *     req_topo_client(r, &cl);             // peer address and ECS values
 *     topo_locate(engine, &cl, &loc);
 *     ...
 *     req_topo_mark(r, dep, loc.ecs);      // r->topo_dep, r->topo_ecs
 *
 * Threads and memory: on the worker serving r, like every other use of r.
 * The topo_client is the caller's (usually on its stack); it copies values
 * and keeps no pointer into r, so it may outlive r.
 */
#ifndef TOPODNS_REQTOPO_H
#define TOPODNS_REQTOPO_H

#include <assert.h>
#include <string.h>
#include "server/request.h"
#include "topology/topology.h"

_Static_assert(sizeof ((dns_ecs *)0)->addr == sizeof ((topo_client *)0)->ecs_addr,
               "an ECS address fits a topo_client's");

/* Fill cl from r: its source address and, when the query carried an ECS
 * option, that option's family, source prefix and address. */
static inline void req_topo_client(const dns_req *r, topo_client *cl)
{
    assert(r && cl);
    memset(cl, 0, sizeof *cl);
    cl->peer = r->peer;
    const dns_edns *e = &r->q.edns;
    if (e->present && e->has_ecs) {
        cl->has_ecs = 1;
        cl->ecs_family = e->ecs.family;
        cl->ecs_source_prefix = e->ecs.source_prefix;
        memcpy(cl->ecs_addr, e->ecs.addr, sizeof cl->ecs_addr);
    }
}

/* topo_mark() on r's topo_dep and topo_ecs. */
static inline void req_topo_mark(dns_req *r, int dep, int via_ecs)
{
    assert(r);
    topo_mark(&r->topo_dep, &r->topo_ecs, dep, via_ecs);
}

#endif
