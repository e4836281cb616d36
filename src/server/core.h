/*
 * core.h — private structures shared by server.c (instances), listener.c
 * (sockets and workers) and request.c (request lifecycle). Plugins never
 * include this file.
 *
 *   instance ─┬─ server_block[]      zones + plugin chain, from the Corefile
 *             ├─ listen_group[]      one per (address, port): the zones served there
 *             └─ worker[]            threads, each with its own sockets per group
 *
 * A query arrives on a worker's socket for a group, becomes a req_full
 * (a dns_req plus transport state), is matched to a block by longest zone
 * suffix and runs through that block's chain.
 */
#ifndef TOPODNS_CORE_H
#define TOPODNS_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include "server/server.h"

struct event;
struct evconnlistener;
struct tcp_conn;

typedef struct listen_zone {
    const uint8_t *wire;
    const char *zone;
    server_block *blk;
} listen_zone;

typedef struct listen_group {
    char addr[64];                  /* numeric address to bind */
    int port;
    char label[96];                 /* metrics "server" label: dns://:53 */
    listen_zone *zones;
    size_t nzones;
} listen_group;

enum { TRANSPORT_UDP, TRANSPORT_TCP, TRANSPORT_INTERNAL };

typedef struct worker {
    int id;
    pthread_t thread;
    struct event_base *base;
    struct instance *ins;
    int *udp_fds;                   /* one per group */
    struct event **udp_evs;
    struct evconnlistener **tcp_ls;
    void *ctx;                      /* per-group callback contexts */
    struct tcp_conn *conns;         /* open TCP connections */
    unsigned nconns;
    struct req_full *pool;          /* free requests for reuse */
    unsigned npool;
    int started;
} worker;

/* A request with its transport state; dns_req first so a dns_req* is a
 * req_full*. */
typedef struct req_full {
    dns_req r;
    int transport;
    int fd;                         /* UDP socket */
    struct tcp_conn *conn;          /* TCP connection */
    const listen_group *grp;
    struct instance *ins;
    struct event_base *base;
    uint8_t *raw;                   /* copy of the query */
    size_t rawcap;
    uint8_t *out;                   /* encoded reply (internal requests keep it) */
    size_t outlen, outcap;
    int finished;
    int result;
    int detached;                   /* internal, req_start: freed when finished */
    req_hook finish_hooks[REQ_MAX_HOOKS];   /* req_on_finish() */
    unsigned nfinish;
    int finish_ran;                 /* the finish hooks ran */
    int held;                       /* a write hook holds the reply */
    unsigned hold_at;               /* write hooks below this index still to run */
    int finish_pending;             /* req_finish() came while held ... */
    int pending_rc;                 /* ... with this rcode */
    struct req_full *next_free;
} req_full;

struct http_state;

struct instance {
    const server_env *env;          /* the process's, read-only */
    cf_file *cf;
    char *path;
    char sha512[129];
    server_block *blocks;
    size_t nblocks;
    listen_group *groups;
    size_t ngroups;
    worker *workers;
    int nworkers;
    double lameduck;
    int started;
    struct named_value *values;     /* instance_set_value() */
    req_hook unrouted[REQ_MAX_HOOKS];   /* instance_on_unrouted() */
    unsigned nunrouted;
    struct http_state *http;        /* http.c: listeners and thread, or NULL */
    struct instance *prev;          /* the instance this one replaces, while
                                     * it is prepared (instance_prepare) */
};

/* server.c */
const listen_zone *core_match(const listen_group *g, const uint8_t *qname, uint16_t qtype);

/* request.c */
req_full *req_alloc(worker *w);
void req_release(req_full *f);
/* Run a parsed request: all server-level checks, zone match, chain. */
void core_dispatch(req_full *f);
/* Parse f->raw and dispatch, or answer FORMERR/drop on a malformed packet. */
void core_handle_packet(req_full *f);

/* listener.c */
int listeners_start(struct instance *ins, char *err, size_t errlen);
void listeners_stop(struct instance *ins);
/* Send an encoded reply for f over its transport. */
void transport_send(req_full *f, const uint8_t *wire, size_t len);
/* The transport is done with f (TCP bookkeeping, then back to the pool). */
void transport_done(req_full *f);

uint64_t now_ns(void);

#endif
