/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode.h — Kubernetes JSON objects → the store's compact structs.
 *
 * Decoding happens on the API thread. Each decoder reads only the fields the
 * store keeps, applies the API's defaulting rules (a missing `ready` is true,
 * `endpoints`/`ports` may be null, a missing protocol is TCP), interns
 * repeated strings in the store's string table (strtab.h), and returns one
 * heap object the store publishes as is.
 * A decoder returns NULL (and a reason) for an object it cannot use; the
 * store logs that once per object and keeps going.
 */
#ifndef TOPODNS_DECODE_H
#define TOPODNS_DECODE_H

#include <stdatomic.h>
#include "cluster/store.h"
#include "cluster/strtab.h"

struct cJSON;

/* metadata.namespace and metadata.name (either may be ""), NULL-safe. */
const char *decode_obj_ns(const struct cJSON *obj);
const char *decode_obj_name(const struct cJSON *obj);
const char *decode_obj_label(const struct cJSON *obj, const char *key);

/* A Service in one block (its name, ports, IPs, extra parts and strings
 * inside it, decode.c's service_pack): malloc'd by decode_service (free
 * with decode_service_free), or by alloc(arg, size) with
 * decode_service_into (the caller frees it the way alloc allocated it;
 * alloc returns NULL when memory runs out). With DECODE_SVC_NO_NAME in
 * flags the block holds no copy of metadata.name: name is NULL and the
 * caller points it at text that lives as long as the block (the store: its
 * map entry's key). NULL with *why set when the object is refused or
 * memory runs out. */
enum { DECODE_SVC_NO_NAME = 1 };
st_service *decode_service(strtab *strs, const struct cJSON *obj, const char **why);
st_service *decode_service_into(strtab *strs, const struct cJSON *obj, const char **why,
                                int flags, void *(*alloc)(void *arg, size_t size), void *arg);
void decode_service_free(void *svc);

/* One EndpointSlice: its endpoints (one per address), reference counted
 * because merged views of a service share it. One allocation, sized
 * exactly: the blob, then eps[] (24 bytes each, store.h), ports[], names[],
 * hints[], hnames[], the pool (strings, and the 16 octets of each address
 * of an IPv6 slice) and the name (decode_slice); every endpoint's sl is
 * &pub, pub.family the slice's addressType (4, 6; 0 for FQDN); the last
 * decode_slice_unref() frees it whole. An EndpointSlice with more than
 * DECODE_SLICE_MAX endpoints is refused (the API allows 1,000, each with up
 * to 100 addresses), so every index of st_endpoint (at most two names and
 * one hint set per endpoint) fits in 16 bits. */
enum { DECODE_SLICE_MAX = 30000 };
typedef struct slice_blob {
    st_slice pub;                   /* what the endpoints point to */
    const char *ns;                 /* interned */
    const char *service;            /* interned; NULL without the label */
    const char *cluster;            /* interned: a multicluster slice's
                                     * multicluster.kubernetes.io/source-cluster
                                     * (service is then its
                                     * multicluster.kubernetes.io/service-name) */
    size_t n;
    st_endpoint *eps;
    atomic_int refs;
    uint8_t mcs;                    /* a multicluster slice (store.c sets it) */
} slice_blob;

/* pod_names: keep targetRef names (st_ep_pod); 0: st_ep_pod() is NULL. */
slice_blob *decode_slice(strtab *strs, const struct cJSON *obj, int pod_names, const char **why);
void decode_slice_ref(slice_blob *b);
void decode_slice_unref(slice_blob *b);

st_svcimport *decode_svcimport(strtab *strs, const struct cJSON *obj, const char **why);
void decode_svcimport_free(void *si);

/* The pod's name points into obj until the caller points it elsewhere. */
st_pod *decode_pod(strtab *strs, const struct cJSON *obj, const char **why);
void decode_pod_free(void *pod);

/* A Node in one malloc'd block (its labels, addresses and ranges inside
 * it); free with decode_node_free. */
st_node *decode_node(strtab *strs, const struct cJSON *obj, const store_opts *o,
                     const char **why);
void decode_node_free(void *node);

/* A CiliumNode's spec.ipam.podCIDRs into out[0..cap): how many (0 when
 * none), -1 with why when the object has no valid name. */
int decode_ciliumnode(const struct cJSON *obj, cidr *out, size_t cap, const char **why);
/* A Calico BlockAffinity: 1 with *out = spec.cidr and *node = spec.node
 * (pointing into obj) while spec.state is "confirmed" and spec.deleted is
 * not "true" (string or boolean); 0 otherwise (pending, pending deletion:
 * it locates nothing); -1 with why when malformed (no name, no node, a
 * bad cidr on a confirmed one). */
int decode_blockaffinity(const struct cJSON *obj, cidr *out, const char **node,
                         const char **why);

st_namespace *decode_namespace(strtab *strs, const struct cJSON *obj, const char **why);
void decode_namespace_free(void *ns);

#endif
