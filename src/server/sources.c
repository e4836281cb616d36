/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sources.c — what plugins offer each other through their server block
 * (transfer.h: zones to transfer; autopath.h: client search paths;
 * external.h: Services' external addresses): each
 * offer is a small struct copied into a named value of
 * the block under "<kind>/<plugin>", so the block owns it and frees it with
 * its other values, after every plugin's destroy(). Written from setup() on
 * the loading thread; read from then on by any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/autopath.h"
#include "server/external.h"
#include "server/server.h"
#include "server/transfer.h"

static int publish(server_block *b, const char *kind, const char *plugin, const void *v,
                   size_t size)
{
    char key[128];
    if (!b)
        return 0;                   /* no block (a plugin set up by a test) */
    if ((size_t)snprintf(key, sizeof key, "%s/%s", kind, plugin) >= sizeof key)
        return -1;
    void *copy = malloc(size);
    if (!copy)
        return -1;
    memcpy(copy, v, size);
    if (block_set_value(b, key, copy, free) < 0) {
        free(copy);
        return -1;
    }
    return 0;
}

static const void *find(const server_block *b, const char *kind, const char *plugin)
{
    char key[128];
    if ((size_t)snprintf(key, sizeof key, "%s/%s", kind, plugin) >= sizeof key)
        return NULL;
    return block_value(b, key);
}

int xfr_source_publish(server_block *b, const char *plugin, const xfr_source *src)
{
    return publish(b, "transfer", plugin, src, sizeof *src);
}

const xfr_source *xfr_source_find(const server_block *b, const char *plugin)
{
    return find(b, "transfer", plugin);
}

int autopath_source_publish(server_block *b, const char *plugin, const autopath_source *src)
{
    return publish(b, "autopath", plugin, src, sizeof *src);
}

const autopath_source *autopath_source_find(const server_block *b, const char *plugin)
{
    return find(b, "autopath", plugin);
}

int external_source_publish(server_block *b, const char *plugin, const external_source *src)
{
    return publish(b, "external", plugin, src, sizeof *src);
}

const external_source *external_source_find(const server_block *b, const char *plugin)
{
    return find(b, "external", plugin);
}
