/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward.h — private interface of the forward plugin (setup, serving,
 * health checks), shared by its three source files and its unit test.
 *
 * One plugin instance per server block holds every `forward` stanza of the
 * block in Corefile order; CoreDNS chains one handler per stanza, we walk
 * the stanzas inside the one handler (a stanza that does not match the name
 * passes to the next stanza, the last one to the next plugin).
 *
 * Each stanza owns up to 15 upstreams. Per worker event loop it keeps a set
 * of c-ares channels (one upstream per channel, UDP with and without EDNS,
 * TCP) whose sockets and timer are libevent events on that loop; see
 * forward.c. Health is tracked per upstream with an atomic failure counter
 * updated by a background probe thread (health.c). tls:// upstreams do not
 * use c-ares: per event loop they have a pool of TLS connections (tls.c).
 */
#ifndef TOPODNS_FORWARD_H
#define TOPODNS_FORWARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include "server/plugin.h"
#include "wire/dname.h"

#define FWD_MAX_UP 15
#define FWD_MAX_RCODES 16

enum { FWD_POL_RANDOM, FWD_POL_ROUND_ROBIN, FWD_POL_SEQUENTIAL };
enum { FWD_CH_UDP, FWD_CH_UDP_EDNS, FWD_CH_TCP, FWD_NCH };

struct fwd_stanza;
struct periodic;
struct fwd_loop;
struct metric_family;
struct ssl_ctx_st;
struct event_base;
struct instance;

/* The families of the instance's registry (looked up at setup). */
typedef struct fwd_metrics {
    struct metric_family *duration, *broken, *rejects, *hc_fail;
    struct metric_family *conn_hits, *conn_misses;   /* tls:// connection reuse */
    struct metric_family *mismatched;                /* tls:// replies dropped */
} fwd_metrics;

typedef struct fwd_upstream {
    char to[80];                     /* "ip:port" ("[v6]:port"), metrics label */
    struct sockaddr_storage sa;
    socklen_t salen;
    atomic_uint fails;               /* failed health checks in a row */
    atomic_int probing;              /* a probe loop is running */
    struct periodic *hc;             /* probe thread */
    int tls;                         /* tls:// (DNS over TLS, c-ares not used) */
    char servername[256];            /* tls://IP%NAME: its own tls_servername */
    struct fwd_stanza *st;
} fwd_upstream;

typedef struct fwd_stanza {
    uint8_t from[DNAME_MAX];
    uint8_t (*except)[DNAME_MAX];
    size_t nexcept;
    fwd_upstream ups[FWD_MAX_UP];
    size_t nups;
    int force_tcp, prefer_udp;
    double expire, read_timeout, hc_interval;
    unsigned long max_idle_conns;    /* idle TLS connections kept per loop; 0 = any */
    struct ssl_ctx_st *tls_ctx;      /* client context of the tls:// upstreams */
    char tls_servername[256];        /* tls_servername: SNI and the name to verify */
    int tls_set;                     /* a `tls` line was read */
    unsigned max_fails;
    unsigned long max_attempts;      /* max_connect_attempts; 0 = unlimited */
    int attempts_set;
    int policy;
    atomic_uint robin;
    int hc_rd;                       /* health check with RD (not no_rec) */
    uint8_t hc_domain[DNAME_MAX];
    long max_concurrent;             /* 0 = no limit */
    atomic_long concurrent;
    uint16_t next_rc[FWD_MAX_RCODES];
    int nnext;
    uint16_t failover_rc[FWD_MAX_RCODES];
    int nfailover;
    int next_on_nodata;
    int failfast;
    struct sockaddr_storage src;     /* source_address */
    int has_src;
    int add_ecs;                     /* add_client_subnet: ECS from the client's address */
    uint8_t ecs_bits4, ecs_bits6;    /* its source prefixes */
    const fwd_metrics *m;            /* the plugin instance's */
    struct instance *ins;            /* the server instance (setup), for loop_on_free */
    pthread_mutex_t mu;              /* serialises additions to loops */
    struct fwd_loop *_Atomic loops;  /* per event loop state, grows only */
} fwd_stanza;

typedef struct forward {
    fwd_stanza **st;
    size_t nst;
    fwd_metrics m;
    const struct msg_tap *tap;       /* the block's dnstap (server/tap.h), or NULL */
} forward;

extern const plugin_def plugin_forward;

/* setup.c */
/* Parse every `forward` occurrence of the dispenser into f. 0 or -1 (d->err). */
int fwd_parse(cf_disp *d, forward *f);
/* Free f and its stanzas (health checks stopped). Each stanza's per-loop
 * state must be gone already (fwd_loops_free, forward.c: the plugin's
 * destroy runs it first, so setup.c never calls back into forward.c). */
void fwd_free(forward *f);
/* Text of an rcode name (case-insensitive, "NXDOMAIN", "servfail"...), -1 if unknown. */
int fwd_rcode_from_str(const char *s);
/* Upstreams from one TO argument: IP, IP:port, [IP6]:port, dns://..., or a
 * resolv.conf path. Appends to st->ups; 0, or -1 with d->err set. */
int fwd_add_to(cf_disp *d, fwd_stanza *st, const char *to);

/* forward.c — policy: fill out[] with the upstream indexes in the order to
 * try them. rnd is a random number (random policy), robin the round-robin
 * counter value after increment. Returns n. */
size_t fwd_policy_list(int policy, size_t n, unsigned rnd, unsigned robin, unsigned *out);
/* Whether upstream u counts as down (fails > max_fails, never with 0). */
int fwd_down(const fwd_stanza *st, const fwd_upstream *u);
/* An upstream's answer abuf[0..alen) to the query q (tcp: it came over
 * TCP) into resp: 0 when it is taken — it parses, or it is a UDP answer of
 * 512 octets or more that does not (resp is then an empty reply to q with
 * TC set and the answer's AA, RA and rcode, so the client retries over TCP,
 * as CoreDNS does) — or -1, a bad response. c-ares has already matched
 * its ID and question. */
struct dns_msg;
int fwd_take_answer(struct dns_msg *resp, const struct dns_msg *q, const unsigned char *abuf,
                    int alen, int tcp);
/* 1 when the taken answer resp answers q (QR set, q's question); otherwise
 * the client gets FORMERR, as from CoreDNS. */
int fwd_answers(const struct dns_msg *resp, const struct dns_msg *q);
/* Release the per-loop state of a stanza (channels closed, events dropped;
 * st->loops is NULL after). Before fwd_free, once the loops stopped. */
void fwd_loops_free(fwd_stanza *st);

/* tls.c — DNS over TLS to tls:// upstreams. */
enum { FWD_TLS_OK, FWD_TLS_ERROR, FWD_TLS_GONE };
/* A query's end: FWD_TLS_OK with the reply (msg, len: valid during the
 * call), FWD_TLS_ERROR with why, or FWD_TLS_GONE when the pool is freed
 * under it (shutdown). Called from the loop, never inside fwd_tpool_send. */
typedef void (*fwd_tls_cb)(void *arg, int status, const char *why, const uint8_t *msg, size_t len);
typedef struct fwd_tpool fwd_tpool;
/* The client context for `tls [CERT KEY [CA]]` / `tls CA` (cert NULL: no
 * client certificate; ca NULL: the system's trust store). NULL with err. */
struct ssl_ctx_st *fwd_tls_ctx(const char *cert, const char *key, const char *ca, char *err,
                               size_t errlen);
void fwd_tls_ctx_free(struct ssl_ctx_st *ctx);
/* The connections to upstream u on one event loop. They are closed by the
 * loop's loop_on_free hook (st->ins's workers and HTTP thread) before the
 * base is freed; the pool itself is freed with the stanza. On any other
 * base none is kept idle, and the base must outlive the pool's busy ones. */
fwd_tpool *fwd_tpool_new(fwd_stanza *st, fwd_upstream *u, struct event_base *base);
void fwd_tpool_free(fwd_tpool *p);
/* Send the query wire over an idle or new connection; 0, or -1 with why. */
int fwd_tpool_send(fwd_tpool *p, const uint8_t *wire, size_t len, fwd_tls_cb cb, void *arg,
                   char *why, size_t wlen);
/* One health probe over TLS until end, on the calling (probe) thread with
 * an event loop of its own: 0 when the reply to q (whose ID is id) came. */
int fwd_tls_probe(const fwd_stanza *st, const fwd_upstream *u, const uint8_t *q, size_t qlen,
                  uint16_t id, const struct timespec *end);

/* health.c */
int fwd_health_start(fwd_stanza *st, char *err, size_t errlen);
void fwd_health_stop(fwd_stanza *st);
/* A query to u failed: start the probe loop unless it runs already. */
void fwd_health_kick(fwd_upstream *u);
/* One probe, 1 s at most, waiting on the calling thread (never a worker):
 * c-ares (common/exchange.h), or TLS for tls:// upstreams. 0 healthy, -1 not. */
int fwd_probe(const fwd_stanza *st, const fwd_upstream *u);
struct metrics_registry;
void fwd_metrics_init(fwd_metrics *m, struct metrics_registry *reg);
void fwd_metric_hc_failure(const fwd_upstream *u);

#endif
