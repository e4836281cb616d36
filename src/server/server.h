/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.h — a running configuration: server blocks, listeners, workers.
 *
 * An `instance` is everything one Corefile produces: its server blocks (each
 * with zones and a plugin chain), the sockets the blocks listen on, and the
 * worker threads serving them. Startup builds one instance; a reload (SIGUSR1
 * or the reload plugin) builds a new one from the new Corefile, starts it
 * beside the old one (listeners use SO_REUSEPORT) and then stops the old one.
 * A Corefile that fails to load leaves the running instance untouched.
 *
 * Workers: each owns a libevent loop with its own UDP and TCP sockets for
 * every listen address, so the kernel spreads queries across them and no
 * lock is taken on the serving path.
 *
 * Ownership: an instance owns everything it builds — blocks, plugin
 * instances, sockets, threads, its HTTP listeners and the named values its
 * plugins share (the cluster store and topology engine among them). Nothing
 * is shared between two instances but the server_env the process gives
 * both (read-only) and the metrics registry in it (thread-safe). The
 * loading thread builds, starts, stops and frees an instance; workers, the
 * HTTP thread and plugin threads only read its configuration.
 */
#ifndef TOPODNS_SERVER_H
#define TOPODNS_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include "wire/dname.h"
#include "server/request.h"
#include "server/plugin.h"
#include "corefile/corefile.h"

typedef struct zone_key {
    char zone[DNAME_STR_MAX];        /* lower-case FQDN, "." for the root */
    uint8_t wire[DNAME_MAX];
    char scheme[8];                  /* "dns" or "tls" (DNS over TLS, port 853) */
    int port;
    const cf_token *tok;             /* the key as written, for errors */
} zone_key;

/* The TCP deadlines of a block's listeners, in CoreDNS's `timeouts` terms.
 * The timeouts plugin's setup() writes its block's copy (a field it does
 * not set stays 0); server.c merges the copies of the blocks listening on
 * one address and port (a later block's field wins, as in CoreDNS) and
 * fills the defaults below; tcp.c applies the result. Read-only once the
 * instance is loaded.
 *   read    a new connection's first message must be complete this long
 *           after accept, however many octets trickle in;
 *   idle    each next message must be complete this long after the
 *           connection became idle again (nothing in flight, every reply
 *           handed to the kernel);
 *   write   queued replies must all be handed to the kernel this long after
 *           the queue stopped being empty;
 *   max_queries  messages read from one connection before it is closed
 *           (once they are answered); -1 unlimited. */
typedef struct tcp_timeouts {
    int64_t read_ns, write_ns, idle_ns;
    int max_queries;
} tcp_timeouts;

#define TCP_READ_DEFAULT_NS (3 * 1000000000LL)
#define TCP_WRITE_DEFAULT_NS (5 * 1000000000LL)
#define TCP_IDLE_DEFAULT_NS (10 * 1000000000LL)
#define TCP_MAX_QUERIES_DEFAULT (-1)

/* Connection limits of every worker (server_env; no Corefile syntax):
 * open TCP connections, and open TCP connections from one client address.
 * At a limit the connection idle the longest in its scope (no query in
 * flight, no reply waiting) is closed to make room; when none is idle the
 * new connection is closed. */
#define TCP_MAX_CONNS_DEFAULT 1024u
#define TCP_MAX_PER_SOURCE_DEFAULT 256u

/* DNS over TLS on a block's tls:// listeners, in CoreDNS's `tls` plugin
 * terms. The tls plugin's setup() fills its block's copy (set = 1, the
 * paths as written, strdup'd: the block owns and frees them); server.c
 * loads the certificate, key and CA when it builds the listen groups (a
 * file that cannot be loaded stops the load with the directive's file:line,
 * tok) and tls.c serves with the result. Blocks without tls:// keys ignore
 * it, as CoreDNS does; a tls:// listener whose blocks set none serves plain
 * DNS over TCP. Read-only once the instance is loaded.
 *   client_auth  what a client must show (Go's tls.ClientAuthType):
 *     nocert             nothing is asked;
 *     request            a certificate is asked for, not required nor checked;
 *     require            a certificate is required, not checked;
 *     verify_if_given    one that is given must verify against ca;
 *     require_and_verify one is required and must verify against ca. */
enum {
    TLS_AUTH_NOCERT, TLS_AUTH_REQUEST, TLS_AUTH_REQUIRE, TLS_AUTH_VERIFY_IF_GIVEN,
    TLS_AUTH_REQUIRE_AND_VERIFY
};

typedef struct server_tls {
    int set;
    char *cert, *key;
    char *ca;                        /* NULL: the system's trust store */
    int client_auth;
    const cf_token *tok;             /* the directive, for errors */
} server_tls;

typedef struct server_block {
    zone_key *keys;
    size_t nkeys;
    handler *handlers;               /* every instance, chain order */
    size_t nhandlers;
    const handler *chain;            /* first handler with serve(), or NULL */
    char **bind;                     /* addresses from the bind plugin; none = all */
    size_t nbind;
    tcp_timeouts timeouts;           /* from the timeouts plugin; 0: unset */
    server_tls tls;                  /* from the tls plugin; set 0: unset */
    const cf_block *cf;
    struct named_value *values;      /* block_set_value() */
    /* A routing filter (block_set_filter(), the view plugin), or NULL. */
    int (*filter)(void *data, const dns_req *r);
    void *filter_data;
    const char *view;                /* the filter's name (metrics' view
                                      * label), or NULL */
} server_block;

struct metrics_registry;

/* What the process gives every instance it loads: immutable while any
 * instance uses it. main() fills one; unit tests fill their own. */
typedef struct server_env {
    const plugin_def *const *plugins;   /* NULL-terminated table (src/plugins.c) */
    struct metrics_registry *metrics;   /* every instance reports here; it
                                         * outlives instances, so counters
                                         * survive reloads as CoreDNS's do */
    int dns_port;                       /* -dns.port (0: 53) */
    int workers;                        /* -workers (0: one per CPU) */
    /* TCP connection limits per worker (0: the defaults above); main()
     * reads them from TOPODNS_TCP_MAX_CONNS and
     * TOPODNS_TCP_MAX_CONNS_PER_SOURCE at startup. */
    unsigned tcp_max_conns;
    unsigned tcp_max_per_source;
    /* How far a cluster store's string table may grow past its size after
     * the first sync before the kubernetes plugin replaces the store
     * (octets; 0: its default). main() reads TOPODNS_STRING_TABLE_SLACK. */
    unsigned long strings_slack;
    /* Ask the process to load the Corefile again (the reload plugin);
     * safe from any thread; NULL: nothing happens (unit tests). */
    void (*request_reload)(void *arg);
    void *reload_arg;
} server_env;

typedef struct instance instance;

/* Load a Corefile into a new instance (parse + setup, nothing bound yet).
 * path NULL: the built-in default Corefile. NULL on error with the message
 * in err. env must outlive the instance. */
instance *instance_load(const server_env *env, const char *path, char *err, size_t errlen);
/* Start plugins, bind listeners, start workers: instance_prepare(ins,
 * NULL) then instance_serve(). 0, or -1 with err. */
int instance_start(instance *ins, char *err, size_t errlen);
/* A reload in steps, on the loading thread, while prev (the running
 * instance) keeps serving:
 *   instance_prepare()  starts the plugins; a plugin may take state over
 *                       from prev (instance_previous(): the kubernetes
 *                       plugin adopts an identical cluster context), and
 *                       must not wait for the network here;
 *   instance_ready()    1 when every plugin that reports readiness is
 *                       ready (the kubernetes plugin: its watches synced);
 *   instance_serve()    takes over prev's DNS sockets for the addresses
 *                       both serve (others are bound anew), starts the
 *                       workers and the HTTP endpoints; then prev is
 *                       stopped (its workers stop accepting and finish
 *                       their open connections, 200 ms at most) and freed,
 *                       so no query is lost in the swap.
 * A prepared instance that is dropped is stopped and freed as any other. */
int instance_prepare(instance *ins, instance *prev, char *err, size_t errlen);
int instance_ready(const instance *ins);
int instance_serve(instance *ins, char *err, size_t errlen);
/* During instance_prepare(): the instance being replaced, else NULL. Its
 * plugins are started and serving; only the loading thread touches it. */
instance *instance_previous(const instance *ins);
/* Stop workers and plugins, close listeners. */
void instance_stop(instance *ins);
/* Free everything (after instance_stop, or for an instance never started). */
void instance_free(instance *ins);

/* The process's environment this instance was loaded with: it outlives
 * every instance, so a plugin may keep the pointer in state that another
 * instance adopts (env->request_reload asks for a reload from any thread). */
const server_env *instance_env(const instance *ins);
/* The registry this instance reports metrics to. */
struct metrics_registry *instance_metrics(const instance *ins);
/* Ask the process to reload (see server_env.request_reload). */
void instance_request_reload(const instance *ins);

/* Named values shared between the plugins of one instance or of one server
 * block, owned by that instance or block (the core's way for plugins to
 * reach each other without including each other: the topology plugin
 * publishes its engine in the block, the kubernetes plugin finds it there).
 * Set from setup() or start() on the loading thread; read from then on by
 * any thread; never changed while the instance serves. A value set with a
 * free function is freed with its owner, after every plugin's destroy().
 * Setting a key again replaces the value (the old one is freed). */
int instance_set_value(instance *ins, const char *key, void *val, void (*free_fn)(void *));
void *instance_value(const instance *ins, const char *key);
int block_set_value(server_block *b, const char *key, void *val, void (*free_fn)(void *));
void *block_value(const server_block *b, const char *key);

/* A block's routing filter, CoreDNS's FilterFunc (the view plugin installs
 * one from setup()): a query reaches the block's chain only when fn(data, r)
 * returns non-zero. Blocks with a filter may share a zone and port with each
 * other and with one block without a filter; for such a zone the blocks
 * with a filter are tried first, in Corefile order, then the one without.
 * When none takes the query, the next shorter zone of the listener is tried
 * (as CoreDNS does). fn runs on the worker that received the query, before
 * any plugin of the block, with r parsed (question, client and server
 * addresses, transport); it must be quick and never block. data is owned by
 * the plugin instance that installed it and outlives the block's serving.
 * view names the filter (the view plugin's NAME): requests the block serves
 * carry it in r->view, the `view` label of CoreDNS's metrics; it is owned
 * like data. One filter a block: 0, or -1 when one is set already. */
int block_set_filter(server_block *b, int (*fn)(void *data, const dns_req *r), void *data,
                     const char *view);

/* Debug logging for the whole instance (the debug plugin sets it from
 * setup; read by workers once serving, through req_debug() of
 * server/request.h, the one reader): the server logs, at DEBUG, a hex dump
 * of every packet it cannot parse (answered FORMERR or dropped), and
 * plugins log their DEBUG lines. Off by default, as CoreDNS's debug log
 * switch. */
void instance_set_debug(instance *ins);

/* Requests that never reach a chain (no zone matches, refused class,
 * FORMERR): observers see each of them once it is answered, on the worker
 * thread that answered it (the prometheus plugin counts them under zone
 * "dropped"). Register from start(). */
int instance_on_unrouted(instance *ins, req_done_hook fn, void *data);

size_t instance_nblocks(const instance *ins);
server_block *instance_block(instance *ins, size_t i);
/* Path and SHA-512 (hex) of the Corefile text this instance came from. */
const char *instance_conf_path(const instance *ins);
const char *instance_conf_sha512(const instance *ins);
/* Every handler of every block, for readiness and shutdown walks. */
size_t instance_handlers(instance *ins, const handler **out, size_t max);
/* Largest lameduck any health instance asked for (seconds). */
double instance_lameduck(const instance *ins);
void instance_set_lameduck(instance *ins, double seconds);

/* SHA-512 of data as 128 lower-case hex digits. 0, or -1. */
int sha512_hex(const void *data, size_t len, char out[129]);

#endif
