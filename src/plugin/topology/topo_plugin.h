/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo_plugin.h — the topology plugin instance, shared by its files
 * (topology.c: directive and lifecycle; explain.c: the explain endpoint).
 * The decisions, the observer and their state are the engine's
 * (src/topology/); the plugin owns the engine.
 */
#ifndef TOPODNS_TOPO_PLUGIN_H
#define TOPODNS_TOPO_PLUGIN_H

#include "topology/topology.h"

struct instance;
struct server_block;

typedef struct topo_inst {
    topo_engine *engine;            /* created at setup, freed in destroy */
    struct server_block *blk;
    struct instance *ins;
} topo_inst;

extern const plugin_def plugin_topology;

int topo_explain_start(topo_inst *t, char *err, size_t errlen);

#endif
