/* SPDX-License-Identifier: Apache-2.0 */
/*
 * external.h — external names of cluster Services: how a plugin that knows
 * the cluster's Services (the kubernetes plugin) offers their external
 * addresses (spec.externalIPs, load-balancer ingress) and, on request,
 * headless Services' endpoints to the k8s_external plugin (CoreDNS's
 * Externaler), without either plugin including the other.
 *
 * The source plugin publishes its functions from its setup() as a named
 * value of its server block (external_source_publish, key
 * "external/<plugin>", owned and freed by the block); k8s_external finds
 * the one of its block from its start() (external_source_find).
 *
 * Threads: publish and find run on the loading thread; the functions run
 * on the worker serving the query and must not block (the kubernetes
 * plugin reads its store). Every item handed to the sink, and the strings
 * and names it points to, is valid only during that call: the sink copies
 * what it keeps.
 */
#ifndef TOPODNS_EXTERNAL_H
#define TOPODNS_EXTERNAL_H

#include <stdint.h>

struct server_block;

enum { EXT_ADDR = 0, EXT_HOST = 1 };

/* One thing a lookup found (CoreDNS's msg.Service of External()). */
typedef struct ext_item {
    int kind;                        /* EXT_ADDR or EXT_HOST */
    uint8_t family;                  /* EXT_ADDR: 4 or 6 */
    uint8_t addr[16];                /* EXT_ADDR: IPv4 in the first 4 octets */
    const char *host;                /* EXT_HOST: a hostname (load-balancer
                                      * ingress, a CNAME target); for a
                                      * PTR lookup "<service>.<namespace>" */
    int32_t port;                    /* -1: the Service has no ports */
    const char *port_name;           /* the port's name ("" unnamed) */
    const char *proto;               /* "tcp", "udp", "sctp" ("" with port -1) */
    uint32_t ttl;                    /* the source's own TTL */
    const uint8_t *name;             /* wire form, lower case: the item's
                                      * own name, <svc>.<ns>.<zone> or
                                      * <endpoint>.<svc>.<ns>.<zone> (SRV
                                      * targets); NULL for PTR items */
} ext_item;

/* The sink: 0, or -1 to stop (out of memory). */
typedef int (*ext_emit_fn)(void *sink, const ext_item *it);
/* A Service's name, for a zone transfer: 0, or -1 to stop. */
typedef int (*ext_name_fn)(void *sink, const char *ns, const char *name);

typedef struct external_source {
    /* The items for name (wire, lower case) under zone (the matched zone
     * of k8s_external, wire, lower case) for qtype, with headless
     * Services' endpoints when headless is set (CoreDNS's External()).
     * Returns the rcode for an empty answer: RC_NOERROR (the name exists),
     * RC_NXDOMAIN, or RC_SERVFAIL; -1 when the sink stopped. */
    int (*lookup)(void *data, const uint8_t *name, const uint8_t *zone, uint16_t qtype,
                  int headless, ext_emit_fn emit, void *sink);
    /* The addresses of the Services fronting this server (CoreDNS's
     * ExternalAddress): EXT_ADDR items (name NULL). 0, or -1. */
    int (*ns_addrs)(void *data, const uint8_t *zone, int headless, ext_emit_fn emit,
                    void *sink);
    /* The SOA serial. */
    uint32_t (*serial)(void *data, const uint8_t *zone);
    /* Every Service a lookup would answer (CoreDNS's ExternalServices): the
     * ones with external addresses, and with headless the headless ones
     * without; for zone transfers. 0, or -1 when the sink stopped. */
    int (*names)(void *data, int headless, ext_name_fn fn, void *sink);
    void *data;                      /* the publishing plugin's instance */
} external_source;

/* Publish src (copied) as plugin's source in block b. 0, or -1. */
int external_source_publish(struct server_block *b, const char *plugin,
                            const external_source *src);
/* plugin's source in block b, or NULL. */
const external_source *external_source_find(const struct server_block *b, const char *plugin);

#endif
