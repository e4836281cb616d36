/*
 * topo_plugin.h — the topology plugin instance, shared by its files
 * (topology.c: directive and lifecycle; explain.c: the explain endpoint;
 * observer.c: Events and the per-Service state gauges).
 */
#ifndef TOPODNS_TOPO_PLUGIN_H
#define TOPODNS_TOPO_PLUGIN_H

#include <pthread.h>
#include "topology/topology.h"

struct instance;
struct server_block;
struct observer;

typedef struct topo_inst {
    topo_cfg cfg;
    struct server_block *blk;
    struct instance *ins;
    store *st;                      /* the block's kubernetes store */
    struct observer *obs;
} topo_inst;

extern const plugin_def plugin_topology;

/* kubernetes plugin: the store of its instance (created on first use). */
store *kubernetes_store(void *inst);
struct k8s_client *kubernetes_client(void *inst);

int topo_explain_start(topo_inst *t, char *err, size_t errlen);
int topo_observer_start(topo_inst *t, char *err, size_t errlen);
void topo_observer_stop(topo_inst *t);

#endif
