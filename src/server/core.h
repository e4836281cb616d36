/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core.h — private structures shared by the files of the server. Plugins
 * never include this file.
 *
 *   instance ─┬─ server_block[]      zones + plugin chain, from the Corefile
 *             ├─ listen_group[]      one per (address, port): the zones served there
 *             └─ worker[]            threads, each with its own sockets per group
 *
 * A query arrives on a worker's socket for a group, becomes a req_full
 * (a dns_req plus transport state), is matched to a block by longest zone
 * suffix and runs through that block's chain.
 *
 * The files call one way, top to bottom, never back:
 *   server.c     instances: the Corefile's blocks, groups, start and stop
 *   http.c       the HTTP endpoints (their own thread)
 *   listener.c   sockets, workers, the UDP path (udp transport_ops)
 *   tcp.c        TCP connections: framing, deadlines, limits (tcp transport_ops)
 *   tls.c        TLS over the connections of tls:// groups
 *   internal.c   requests without a socket (internal transport_ops): from
 *                inside topodns, tests, and a handler's sub-requests
 *   dispatch.c   a packet to a chain: parse, server-level checks, zone match
 *   request.c    the request itself: allocation, writing, finishing
 * request.c reaches its transport only through f->ops, which the file that
 * made the request set (a transport_ops table): it never calls the files
 * above it.
 */
#ifndef TOPODNS_CORE_H
#define TOPODNS_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <event2/util.h>
#include "server/server.h"

struct event;
struct evconnlistener;
struct sockaddr;
struct tcp_conn;
struct tcp_source;

typedef struct listen_zone {
    const uint8_t *wire;
    const char *zone;
    server_block *blk;
    int nlabels;                    /* dname_labels(wire), for core_match */
} listen_zone;

typedef struct listen_group {
    char addr[64];                  /* numeric address to bind */
    int port;
    char label[96];                 /* metrics "server" label: dns://:53 */
    listen_zone *zones;
    size_t nzones;
    tcp_timeouts tcp;               /* the blocks' timeouts merged, defaults
                                     * filled in (server.c); read by tcp.c */
    int any_class;                  /* a block has a PLUGIN_ANY_CLASS plugin */
    int tls;                        /* a tls:// listener: TCP only, ... */
    struct ssl_ctx_st *tls_ctx;     /* ... with TLS when a block set it
                                     * (tls.c; freed with the instance) */
} listen_group;

typedef struct worker {
    int id;
    pthread_t thread;
    struct event_base *base;
    struct instance *ins;
    int *udp_fds;                   /* one per group */
    struct event **udp_evs;
    struct evconnlistener **tcp_ls;
    struct accept_guard *tcp_guards;    /* one per group: accept errors pause
                                         * tcp_ls[i] (accept.h); freed before it */
    struct sock_ctx *ctx;           /* per-group callback contexts */
    /* TCP connections (tcp.c; only this worker's thread touches them):
     * every connection not yet freed, the one idle the longest first; how
     * many are open; the open ones per client address; the limits. */
    struct tcp_conn *conns, *conns_tail;
    unsigned nconns;
    struct tcp_source *sources;
    unsigned max_conns, max_per_source;
    struct req_full *pool;          /* free requests for reuse */
    unsigned npool;
    int started;
    struct event *drain_ev;         /* listener.c: activated by listeners_stop */
    struct event *drain_timer;
    int drain_ticks;
    /* listener.c: while a recvmmsg batch is being answered, UDP replies to
     * its socket are queued here and leave in one sendmmsg at its end;
     * replies written later (asynchronous requests) are sent at once.
     * Allocated with the worker, freed by worker_close. */
    struct udp_outq *outq;
} worker;

struct req_full;

/* How request.c hands a request back to the transport that made it. The
 * transport (listener.c: UDP, tcp.c: TCP and TLS, internal.c: no socket)
 * sets f->ops when it fills a request in, before it dispatches it; the
 * tables are constant and live as long as the program. On the request's
 * thread (its worker's, or the one driving an internal request's base).
 *   send  an encoded reply of f (wire, len; read during the call only):
 *         0 when it was sent or queued (or kept, for an internal request),
 *         -1 when it was dropped (the TCP client has gone). A request may
 *         send several (zone transfers over TCP). wire is always a reply:
 *         at least a header, QR set (request.c asserts it before every
 *         send; a transport never sends the query's octets back).
 *   done  f is finished or was dropped unanswered: the transport's
 *         bookkeeping, then f goes back to the pool (or, internal, waits for
 *         req_free unless req_start detached it). f is not used after.
 *   when_writable  req_when_writable() (request.h) for f: 0 with fn kept
 *         in f->wait_fn/wait_arg until the transport calls it, or -1; NULL
 *         for a transport that cannot wait for its client (UDP, internal). */
typedef struct transport_ops {
    int (*send)(struct req_full *f, const uint8_t *wire, size_t len);
    void (*done)(struct req_full *f);
    int (*when_writable)(struct req_full *f, req_writable_fn fn, void *arg);
} transport_ops;

/* A request with its transport state; dns_req first so a dns_req* is a
 * req_full*. */
typedef struct req_full {
    dns_req r;
    const transport_ops *ops;       /* set by the transport; never NULL once
                                     * the request is dispatched */
    int fd;                         /* UDP socket */
    int ifindex;                    /* UDP: interface the query came in on */
    int has_local;                  /* UDP: r.local is the query's destination
                                     * (IP_PKTINFO), the reply's source */
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
    req_writable_fn wait_fn;        /* req_when_writable(): the callback the
                                     * transport holds (NULL: none), its arg, */
    void *wait_arg;
    struct req_full *wait_next;     /* ... and the transport's list of them */
    int pooled;                     /* in its worker's pool: req_release put
                                     * it there, req_alloc takes it out; no
                                     * other function sees a pooled request
                                     * (request.c asserts it) */
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
    int debug;                      /* instance_set_debug() */
    struct http_state *http;        /* http.c: listeners and thread, or NULL */
    struct event_base *_Atomic http_base;   /* http.c: its loop while it lives */
    struct loop_hook *_Atomic loop_hooks;   /* loophook.c: loop_on_free() */
    struct instance *prev;          /* the instance this one replaces, while
                                     * it is prepared (instance_prepare) */
};

/* dispatch.c */
/* The block serving qname/qtype in g: the longest zone, and among the
 * blocks of that zone the first whose filter takes r (blocks with a filter
 * come first in g->zones); r NULL: filters are not asked. */
const listen_zone *core_match(const listen_group *g, const uint8_t *qname, uint16_t qtype,
                              const dns_req *r);

/* Run a parsed request: all server-level checks, zone match, chain.
 * f->ops must be set. */
void core_dispatch(req_full *f);
/* Parse f->raw and dispatch, or answer FORMERR/drop on a malformed packet
 * (a dropped one goes straight to f->ops->done). f->ops must be set. */
void core_handle_packet(req_full *f);

/* request.c */
/* A request from w's pool (w NULL: a new one), or NULL when out of memory;
 * back with req_release (to w's pool, or freed), exactly once: releasing a
 * request twice (a double ops->done) would hand it to two queries, so
 * req_release asserts it is not pooled yet. */
req_full *req_alloc(worker *w);
void req_release(req_full *f);
/* Reset f's per-query fields (a pooled or new request about to be filled). */
void req_clear(req_full *f);
/* Free f and everything it holds (not to any pool). */
void req_destroy(req_full *f);
/* Encode r->resp (EDNS echo, size limit) and hand it to f->ops->send:
 * what send returns. */
int req_send_reply(req_full *f);

/* What a socket's callbacks get: the (worker, group) pair it belongs to.
 * Owned by the worker (w->ctx), one per group. */
typedef struct sock_ctx {
    worker *w;
    const listen_group *grp;
    int fd;                         /* UDP socket */
    struct accept_guard *guard;     /* the TCP listener's (w->tcp_guards) */
} sock_ctx;

/* listener.c */
int listeners_start(struct instance *ins, char *err, size_t errlen);
void listeners_stop(struct instance *ins);

/* tcp.c, on the worker's thread */
/* evconnlistener callback; arg is the group's sock_ctx. */
void tcp_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                void *arg);
/* RFC 7766 framing of a connection's input (what tcp.c reads queries
 * with; tests/fuzz/fuzz_tcp.c feeds it arbitrary streams): 1 when a
 * complete message follows its 2-octet length at the front of in (*len set
 * to the message's length; the caller drains 2 + *len octets), 0 when more
 * octets are needed, -1 when the length is under 12 (no room for a header:
 * the connection is closed). Reads in, never changes it. */
struct evbuffer;
int tcp_frame(struct evbuffer *in, size_t *len);
/* Close and free every connection of the worker (it is stopping). */
void tcp_close_all(worker *w);

/* tls.c */
/* The TLS context of a tls:// group from a block's tls settings: 0, or -1
 * with "file:line: plugin/tls: ..." in err. Loading thread. */
int tls_group_init(listen_group *g, const server_tls *t, char *err, size_t errlen);
void tls_group_free(listen_group *g);
/* A server-side TLS bufferevent over the accepted socket fd (closed with
 * it), for tcp.c; NULL on failure (fd left open). Worker thread. */
struct bufferevent *tls_bev_new(struct event_base *base, const listen_group *g, evutil_socket_t fd);

uint64_t now_ns(void);

#endif
