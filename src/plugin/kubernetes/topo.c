/*
 * topo.c — the kubernetes plugin's side of topology: for a query on a
 * headless Service, locate the client once and ask the engine
 * (src/topology/) which ready endpoints it gets. Without a `topology`
 * directive in the block nothing here runs and answers are CoreDNS's.
 */
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "server/server.h"
#include "topology/topology.h"

void kube_topo_attach(kube *k)
{
    k->topo = block_value(k->blk, TOPO_ENGINE_KEY);
}

static int query_families(uint16_t qtype)
{
    return qtype == T_A ? 1 : qtype == T_AAAA ? 2 : 3;
}

const uint8_t *kube_topo_keep(kq *q, const st_service *svc, const st_endpoints *eps)
{
    topo_engine *e = q->k->topo;
    if (!e || svc->kind != SVC_HEADLESS || !eps || eps->n == 0)
        return NULL;
    uint8_t *keep = karena_alloc(&q->arena, eps->n);
    if (!keep)
        return NULL;
    if (!q->located) {
        topo_locate(e, q->r, &q->loc);
        q->located = 1;
    }
    int fams = query_families(q->r->q.qtype);
    topo_result res;
    topo_select(e, svc, eps, &q->loc, fams, keep, &res, NULL);
    /* the other family is left to the qtype filter, untouched */
    for (size_t i = 0; i < eps->n; i++)
        if (eps->eps[i].ready && !((eps->eps[i].ip.family == 4 ? 1 : 2) & fams))
            keep[i] = 1;
    if (res.dep > q->topo_dep)
        q->topo_dep = res.dep;
    if (q->topo_quiet)
        return keep;                /* counted by the first build already */
    topo_count(e, &res);
    q->topo_counts++;               /* a pre-rendered answer counts the same */
    q->topo_policy = (int)res.policy;
    q->topo_outcome = (int)res.outcome;
    return keep;
}
