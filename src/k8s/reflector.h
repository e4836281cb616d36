/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reflector.h — the list/watch state machine of one reflector, without any
 * I/O (internal to src/k8s; the public API is k8s.h).
 *
 * The reflector decides which URL to request next, frames and applies what
 * comes back, and how long to wait after a failure. Everything else is asked
 * of its environment (refl_ops): start a GET, arm a timer, read a clock, draw
 * a random number, re-read credentials. client.c implements the environment
 * over libcurl + libevent; tests/unit/test_reflector.c scripts it.
 *
 * A request's life, as the transport reports it:
 *   ops->start(ctx, url)          the reflector asks for a GET of url
 *   refl_on_headers(status, RA)   final status line and Retry-After (or NULL)
 *   refl_on_body(bytes) ...       body bytes as they arrive; -1 = abort it
 *   refl_on_done(ok)              ok = 0 when the transport failed (refused,
 *                                 reset, TLS error, or aborted by us)
 * After ops->schedule(ctx, delay) the environment calls refl_on_timer().
 * The transport never calls back from inside ops->start; all calls happen on
 * one thread.
 */
#ifndef TOPODNS_K8S_REFLECTOR_H
#define TOPODNS_K8S_REFLECTOR_H

#include <stddef.h>
#include "k8s/k8s.h"

#define REFL_PAGE_SIZE 500             /* most objects a list page asks for */
#define REFL_PAGE_FIRST 100            /* objects of a list's first page */
#define REFL_PAGE_MIN 20               /* fewest objects a later page asks for */
#define REFL_PAGE_BYTES (3u << 20)     /* a later page asks for about this many
                                          bytes of text + parsed tree, from
                                          those per object of the page before:
                                          they are the peak of a first sync
                                          (an EndpointSlice's tree is about 5
                                          times its text; a pod's, of which
                                          little is kept, a fraction) */
#define REFL_MAX_PAGES 10000          /* a list of more pages (5 million
                                          objects) is a server looping: restart */
#define REFL_MAX_PAGES_TEXT "10000"
#define REFL_MAX_LINE (1u << 20)       /* watch lines over 1 MiB are skipped */
#define REFL_MAX_STATUS (64u << 10)    /* non-200 bodies kept up to 64 KiB */
#define REFL_BACKOFF_MIN 0.8
#define REFL_BACKOFF_MAX 30.0
#define REFL_HEALTHY_RESET 120.0       /* the backoff resets when the last wait
                                          began 2 minutes ago or more, and on
                                          a watch event (not on a list) */
#define REFL_RETRY_AFTER_MAX 600.0
#define REFL_TIMEOUT_MIN 300           /* watch timeoutSeconds in [300, 600] */
#define REFL_TIMEOUT_MAX 600

typedef struct refl refl;

typedef struct refl_ops {
    /* Start a GET of url (absolute). 0, or -1 if it could not even start
     * (the reflector then waits as after a failure). */
    int (*start)(void *ctx, const char *url);
    /* Call refl_on_timer() after delay seconds. */
    void (*schedule)(void *ctx, double delay);
    double (*now)(void *ctx);            /* monotonic seconds */
    double (*random)(void *ctx);         /* uniform in [0, 1) */
    /* Optional (may be NULL): */
    void (*reauth)(void *ctx);           /* a 401: re-read the token */
    void (*restarted)(void *ctx, const char *reason); /* timeout, expired,
                                            error, malformed, unauthorized,
                                            too_large, rolled_back, paging */
    void (*applied)(void *ctx);          /* a watch event was applied */
    /* Send the request just started now, not when the caller returns to
     * the event loop (the reflector asks for the next list page before
     * applying the current one, so the server works meanwhile). May run
     * other reflectors' header/body callbacks, never refl_on_done. */
    void (*flush)(void *ctx);
} refl_ops;

/* base is the server URL ("https://10.96.0.1:443"), path the collection
 * ("/api/v1/pods"), selector a label selector or NULL. */
refl *refl_new(const char *base, const char *path, const char *selector,
               const k8s_handler *h, const refl_ops *ops, void *ctx);
void refl_free(refl *r);
/* Also send fieldSelector (e.g. "metadata.name=node-a") on every list and
 * watch; NULL or "" for none. Before refl_start. 0, or -1 (no memory). */
int refl_set_fields(refl *r, const char *field_selector);
/* Begin with the first list. */
void refl_start(refl *r);

void refl_on_headers(refl *r, long status, const char *retry_after);
int refl_on_body(refl *r, const char *b, size_t len);
void refl_on_done(refl *r, int ok);
void refl_on_timer(refl *r);

/* Introspection (synced may be read from any thread). */
int refl_synced(const refl *r);
const char *refl_resource(const refl *r);
const char *refl_version(const refl *r);  /* last resourceVersion, "" = none */
int refl_is_watching(const refl *r);        /* the current request is a watch */
double refl_backoff(const refl *r);         /* the next backoff base, seconds */

/* a < b as Kubernetes compares resourceVersions (1.35+): both positive
 * decimal integers without leading zeros, the longer string the larger,
 * equal lengths compared lexically. 0 when either is not such an integer
 * (never "lower"). */
int refl_rv_less(const char *a, const char *b);

#endif
