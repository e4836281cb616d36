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
 */
#ifndef TOPODNS_SERVER_H
#define TOPODNS_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include "dname.h"
#include "request.h"
#include "../plugin/plugin.h"
#include "../corefile/corefile.h"

typedef struct zone_key {
    char zone[DNAME_STR_MAX];        /* lower-case FQDN, "." for the root */
    uint8_t wire[DNAME_MAX];
    char scheme[8];                  /* "dns" */
    int port;
    const cf_token *tok;             /* the key as written, for errors */
} zone_key;

typedef struct server_block {
    zone_key *keys;
    size_t nkeys;
    handler *handlers;               /* every instance, chain order */
    size_t nhandlers;
    const handler *chain;            /* first handler with serve(), or NULL */
    char **bind;                     /* addresses from the bind plugin; none = all */
    size_t nbind;
    const cf_block *cf;
} server_block;

/* Global knobs from the command line. */
typedef struct server_opts {
    const char *conf;                /* -conf */
    int dns_port;                    /* -dns.port (default 53) */
    int workers;                     /* -workers (default: number of CPUs) */
    int quiet;
} server_opts;

extern server_opts g_opts;

typedef struct instance instance;

/* Load a Corefile into a new instance (parse + setup, nothing bound yet).
 * NULL on error with the message in err. */
instance *instance_load(const char *path, char *err, size_t errlen);
/* Bind listeners, start plugins and workers. 0, or -1 with err. */
int instance_start(instance *ins, char *err, size_t errlen);
/* Stop workers and plugins, close listeners, free everything. lameduck:
 * seconds the health plugin asked to wait before closing (0 on reload). */
void instance_stop(instance *ins);
void instance_free(instance *ins);

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

/* Address used where a Corefile asks for "every interface" (a block with no
 * bind, an HTTP address ":PORT"): the environment variable
 * TOPODNS_DEFAULT_BIND when set (the test suite sets 127.0.0.1), else NULL
 * meaning the wildcard address. */
const char *server_default_bind(void);

/* SHA-512 of data as 128 lower-case hex digits. 0, or -1. */
int sha512_hex(const void *data, size_t len, char out[129]);

/* The process: ask the main loop to reload the Corefile (any thread). The
 * main loop installs server_reload_hook; without one (unit tests) nothing
 * happens. */
void server_request_reload(void);
extern void (*_Atomic server_reload_hook)(void);

#endif
