/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s.h — the Kubernetes API client: configuration, one API thread, and a
 * reflector per watched resource.
 *
 * The client runs its own thread with a libevent loop driving a libcurl multi
 * handle (HTTP/2 when the server offers it, else HTTP/1.1). Nothing on that
 * thread can block a DNS worker: DNS workers only ever read the cluster store
 * (src/cluster/), which the reflectors' handlers update on this thread.
 *
 * A reflector keeps one resource in sync, as client-go's does:
 *   list (limit 500, paginated with continue) → watch from the list's
 *   resourceVersion with allowWatchBookmarks=true and a random
 *   timeoutSeconds in [300, 600]; bookmarks advance the version; the end of a
 *   watch re-watches from the last version; 410 Gone (as an HTTP status or as
 *   an ERROR event with code 410) relists; errors back off 0.8 s doubling to
 *   30 s with jitter, reset after 2 minutes of health; Retry-After honoured.
 *   A 404 on a list (the resource is not served: a CustomResourceDefinition
 *   not installed) counts as an empty list, so the client still becomes
 *   synced; it is logged once and listed again with the backoff.
 * A relist reconciles by difference: the handler is told relist_begin(), gets
 * upsert() for every listed object, then relist_end() — and only then removes
 * what was not listed, so names that still exist never disappear.
 */
#ifndef TOPODNS_K8S_H
#define TOPODNS_K8S_H

#include <stddef.h>

struct cJSON;

typedef struct k8s_config {
    char *server;            /* "https://10.96.0.1:443", "http://127.0.0.1:8001" */
    char *ca_file;           /* PEM file to verify the server, NULL = system CAs */
    char *ca_data;           /* PEM text (kubeconfig certificate-authority-data) */
    char *cert_file, *key_file;       /* client certificate */
    char *cert_data, *key_data;       /* PEM text */
    char *token;             /* bearer token */
    char *token_file;        /* re-read every 60 s and after a 401 */
    int insecure;            /* insecure-skip-tls-verify */
} k8s_config;

/* Build a configuration, in CoreDNS's order of precedence:
 *   kubeconfig PATH [CONTEXT]   when path is given;
 *   endpoint URL (+ tls CERT KEY CACERT) when endpoint is given;
 *   in-cluster (KUBERNETES_SERVICE_HOST/PORT, service account token and CA)
 *   otherwise. 0, or -1 with err. */
int k8s_config_kubeconfig(k8s_config *c, const char *path, const char *context,
                          char *err, size_t errlen);
int k8s_config_endpoint(k8s_config *c, const char *url, const char *cert,
                        const char *key, const char *ca, char *err, size_t errlen);
int k8s_config_incluster(k8s_config *c, char *err, size_t errlen);
void k8s_config_free(k8s_config *c);
/* Why url cannot be an API server's URL, or NULL (a static string:
 * libcurl's reason when its URL parser, curl_url(), refuses it, or the
 * rule its parts break). It must be http:// or https://, then a host (a
 * name, an IPv4 address, or an IPv6 address in brackets), an optional port
 * in 1..65535 and an optional path; no user info, query or fragment. Every
 * configuration above is checked with it and keeps libcurl's rendering of
 * the URL (k8s_config.server, without trailing '/'); the kubernetes plugin
 * checks `endpoint` at load so a bad one stops startup at its token. */
const char *k8s_url_check(const char *url);

/* What a reflector tells its owner. All calls happen on the API thread. */
typedef struct k8s_handler {
    void *ctx;
    /* ADDED / MODIFIED from a watch, or one item of a (re)list. A malformed
     * object is the handler's to log and skip. */
    void (*upsert)(void *ctx, const struct cJSON *obj);
    /* DELETED from a watch: the object in its last state. */
    void (*remove)(void *ctx, const struct cJSON *obj);
    /* A relist starts / ended: after end, the handler drops every object it
     * did not receive between begin and end. */
    void (*relist_begin)(void *ctx);
    void (*relist_end)(void *ctx);
} k8s_handler;

typedef struct k8s_client k8s_client;
typedef struct k8s_reflector k8s_reflector;

/* A client for one configuration, reporting its metrics to reg (may be
 * NULL). The process must have called curl_global_init(). */
struct metrics_registry;
k8s_client *k8s_client_new(const k8s_config *cfg, struct metrics_registry *reg, char *err,
                           size_t errlen);
/* Watch a resource: path is the collection, e.g. "/api/v1/services" or
 * "/apis/discovery.k8s.io/v1/endpointslices"; label_selector may be NULL. */
k8s_reflector *k8s_reflect(k8s_client *c, const char *path, const char *label_selector,
                           const k8s_handler *h);
/* The same with a field selector too (NULL: none), e.g. one Node by
 * "metadata.name=NAME": the server then lists, and sends watch events
 * for, only the objects it matches. */
k8s_reflector *k8s_reflect_fields(k8s_client *c, const char *path, const char *label_selector,
                                  const char *field_selector, const k8s_handler *h);
/* Start the API thread (after every k8s_reflect). 0, or -1 with err. */
int k8s_client_start(k8s_client *c, char *err, size_t errlen);
/* 1 once every reflector has completed its first list (any thread). */
int k8s_client_synced(const k8s_client *c);
/* Post an object (e.g. a core/v1 Event) from any thread; fire and forget. */
void k8s_client_post(k8s_client *c, const char *path, const char *json);
/* Stop the thread, cancel transfers, free everything. */
void k8s_client_free(k8s_client *c);

#endif
