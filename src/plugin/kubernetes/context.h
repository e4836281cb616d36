/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context.h — the kubernetes plugin's cluster context (context.c): the
 * store and the API client an instance serves from, and whether its
 * watches synced (the one place of the "SERVFAIL until the watches sync"
 * rule). Used by kubernetes.c (lifecycle) and answer.c (the rcode of a
 * name error). Who writes, reads and frees: below, per field and function.
 */
#ifndef TOPODNS_KUBERNETES_CONTEXT_H
#define TOPODNS_KUBERNETES_CONTEXT_H

#include <stdatomic.h>
#include <stddef.h>
#include "plugin/kubernetes/kubernetes.h"

/* ---- the cluster context (context.c) --------------------------------------
 * What a kubernetes plugin instance serves from: the store and the API
 * client that writes it (one API thread, one reflector per watched
 * resource). Made at start — or, on a reload whose kubernetes stanza,
 * zones and topology labels are the same as the running instance's,
 * adopted from it, so the new instance is synced at once, relists nothing
 * and holds no second copy of the cluster. Reference counted by the plugin
 * instances that hold it (changed on the loading thread only); the last
 * one stops the API thread and then frees the store. */
typedef struct kube_ctx {
    int refs;                       /* plugin instances holding it (> 0
                                     * while any does: asserted on detach) */
    char *fingerprint;              /* what it was built from (kube_fingerprint) */
    store *st;
    struct k8s_client *client;      /* NULL until started (never, in unit tests) */
    struct kref *handlers;          /* the reflectors' handler contexts */
    atomic_int synced;              /* every watch listed once */
    struct metric_family *m_programming;
    /* renewal (context.c): the API thread writes these; renew is read
     * by the loading thread too (find_same skips a context being renewed) */
    const struct server_env *env;   /* outlives every instance; NULL in unit tests */
    size_t strings_base;            /* string table after the first sync; 0 before */
    size_t renew_at;                /* ask for a renewal at this size */
    atomic_int renew;
} kube_ctx;

/* What a context depends on: the stanza's tokens, the zones, whether
 * topology is on, its labels and its node (node-local mode). malloc'd. */
char *kube_fingerprint(const kube *k);
/* The context of k: adopted from prev (the instance being replaced, may be
 * NULL) when one there has the same fingerprint, else a new one (store
 * only; kube_ctx_start() starts its API client). 0, or -1. */
int kube_ctx_attach(kube *k, struct instance *prev);
/* Start the API client and its watches. 0, or -1 with err. */
int kube_ctx_start(kube *k, char *err, size_t errlen);
/* Drop k's reference (the last one frees the context). */
void kube_ctx_detach(kube *k);

/* context.c: 1 once every watch of k's context listed (sticky), else 0.
 * Any thread. */
int kube_synced(kube *k);
/* context.c: the rcode of a name error (no fallthrough): NXDOMAIN once
 * synced, SERVFAIL before: the rule lives here only. */
int kube_name_error_rcode(kube *k);

#endif
