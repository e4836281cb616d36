/* SPDX-License-Identifier: Apache-2.0 */
/*
 * autopath.h — search path sources: how a plugin that knows a client's DNS
 * search path (the kubernetes plugin: from the client's pod) offers it to
 * the autopath plugin (`autopath @kubernetes`, CoreDNS's AutoPather)
 * without either plugin including the other.
 *
 * The source plugin publishes its function from its setup() as a named
 * value of its server block (autopath_source_publish, key
 * "autopath/<plugin>", owned and freed by the block); autopath finds the
 * one its `@NAME` names in its block from its start().
 *
 * Threads: publish and find run on the loading thread; search() runs on
 * the worker serving the query and must not block (the kubernetes plugin
 * reads its store).
 */
#ifndef TOPODNS_AUTOPATH_H
#define TOPODNS_AUTOPATH_H

#include <stdint.h>
#include "server/request.h"
#include "wire/dname.h"

struct server_block;

/* A search list: fully qualified names, lower case, wire form, in the
 * order a client's resolver would try them; the last is the root name,
 * standing for the bare name (CoreDNS's "" sentinel). */
#define AUTOPATH_MAX 24

typedef struct autopath_list {
    int n;
    uint8_t name[AUTOPATH_MAX][DNAME_MAX];
} autopath_list;

typedef struct autopath_source {
    /* Fill out with the search list of r's client; out->n = 0 (the return
     * value) when there is none for this query: autopath then passes the
     * query on untouched. */
    int (*search)(void *data, const dns_req *r, autopath_list *out);
    void *data;                      /* the publishing plugin's instance */
    /* Non-NULL: why this source never gives a list with its configuration
     * (the kubernetes plugin without `pods verified`); autopath logs it as
     * a warning at start. */
    const char *off;
} autopath_source;

/* Publish src (copied) as plugin's source in block b. 0, or -1. */
int autopath_source_publish(struct server_block *b, const char *plugin,
                            const autopath_source *src);
/* plugin's source in block b, or NULL. */
const autopath_source *autopath_source_find(const struct server_block *b, const char *plugin);

#endif
