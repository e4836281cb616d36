/*
 * decode.h — Kubernetes JSON objects → the store's compact structs.
 *
 * Decoding happens on the API thread. Each decoder reads only the fields the
 * store keeps, applies the API's defaulting rules (a missing `ready` is true,
 * `endpoints`/`ports` may be null, a missing protocol is TCP), interns
 * repeated strings, and returns one heap object the store publishes as is.
 * A decoder returns NULL (and a reason) for an object it cannot use; the
 * store logs that once per object and keeps going.
 */
#ifndef TOPODNS_DECODE_H
#define TOPODNS_DECODE_H

#include <stdatomic.h>
#include "store.h"

struct cJSON;

/* Interned strings live as long as the process; intern() is writer-only. */
const char *intern(const char *s);
const char *intern_lower(const char *s);

/* metadata.namespace and metadata.name (either may be ""), NULL-safe. */
const char *obj_ns(const struct cJSON *obj);
const char *obj_name(const struct cJSON *obj);
const char *obj_label(const struct cJSON *obj, const char *key);

st_service *decode_service(const struct cJSON *obj, const char **why);
void service_free(void *svc);

/* One EndpointSlice: its endpoints (one per address), reference counted
 * because merged views of a service share it. */
typedef struct slice_blob {
    atomic_int refs;
    const char *ns;                 /* interned */
    char *name;
    const char *service;            /* interned; NULL without the label */
    size_t n;
    st_endpoint *eps;
    st_port *ports;
    uint16_t nports;
    char *pool;                     /* the endpoints' strings and hint arrays */
    size_t pool_used, pool_cap;
} slice_blob;

slice_blob *decode_slice(const struct cJSON *obj, const char **why);
void slice_ref(slice_blob *b);
void slice_unref(slice_blob *b);

/* The pod's name points into obj until the caller points it elsewhere. */
st_pod *decode_pod(const struct cJSON *obj, const char **why);
void pod_free(void *pod);

st_node *decode_node(const struct cJSON *obj, const store_opts *o, const char **why);
void node_free(void *node);

st_namespace *decode_namespace(const struct cJSON *obj, const char **why);
void namespace_free(void *ns);

#endif
