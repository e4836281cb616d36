/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim — an in-memory Kubernetes API server for tests (shared declarations).
 *
 * kubesim speaks the kube-apiserver wire protocol for what a cluster DNS
 * server and kubectl use: core/v1 namespaces, nodes, services, pods, events
 * and discovery.k8s.io/v1 endpointslices, plus the kinds of the cluster-DNS
 * manifests stored as opaque objects (configmaps, serviceaccounts, apps/v1
 * deployments and daemonsets, policy/v1 poddisruptionbudgets, RBAC roles
 * and bindings, events.k8s.io/v1 events); get, list (limit/continue,
 * resourceVersion, selectors), watch (chunked JSON lines, bookmarks, 410),
 * create, update, merge and JSON patch, status subresources, delete, dryRun;
 * discovery; fault injection.
 *
 * Layout:
 *   kinds.c    resource table, object versions (immutable, refcounted JSON)
 *   store.c    objects per kind in key order, global resourceVersion, history,
 *              saved states (saveState/restoreState)
 *   objects.c  create/update/patch/delete semantics and validation, --load
 *   crd.c      CustomResourceDefinitions: validation, status, the kinds they add
 *   openapi.c  the minimal OpenAPI v3 document kubectl's validation asks for
 *   mergepatch.c, jsonpatch.c  RFC 7386 and RFC 6902 patches (cJSON only)
 *   watch.c    chunked watch streams
 *   http.c     routing, verbs, lists, discovery, Status errors, requests
 *              waiting for a too large resourceVersion
 *   faults.c   /sim/v1/faults, /sim/v1/state and /sim/v1/requests
 *   generate.c --generate clusters and --churn
 *   main.c     flags
 * Everything runs on one libevent loop; nothing is locked.
 */
#ifndef KUBESIM_H
#define KUBESIM_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include <event2/event.h>
#include <event2/http.h>

#include "selector.h"

/* ---------- kinds (kinds.c) ---------- */

enum { K_NAMESPACE, K_NODE, K_SERVICE, K_POD, K_EVENT, K_ENDPOINTSLICE,
       /* opaque kinds (kinds.c): stored as sent */
       K_CONFIGMAP, K_SERVICEACCOUNT, K_DEPLOYMENT, K_DAEMONSET, K_PDB,
       K_CLUSTERROLE, K_CLUSTERROLEBINDING, K_ROLE, K_ROLEBINDING,
       K_EVENT_V1, /* events.k8s.io/v1 Events, opaque, stored apart from core/v1 */
       K_SERVICEIMPORT,
       K_HPA, /* autoscaling/v2 HorizontalPodAutoscalers, opaque */
       K_CRD, /* apiextensions.k8s.io/v1 CustomResourceDefinitions (crd.c) */
       K_COUNT };

/* Slots K_COUNT.. KS_KIND_MAX-1 are the kinds CRDs add at run time (crd.c).
 * A slot is never reused: an old event of a deleted CRD's objects keeps its
 * kind number, and a restored state can bring the slot back. */
#define KS_MAX_CRDS 64
#define KS_KIND_MAX (K_COUNT + KS_MAX_CRDS)

typedef struct ks_kind {
    const char *resource;    /* "pods" */
    const char *singular;    /* "pod" */
    const char *kind;        /* "Pod" */
    const char *list_kind;   /* "PodList" */
    const char *group;       /* "" or "discovery.k8s.io" */
    const char *api_version; /* "v1" or "discovery.k8s.io/v1" */
    const char *short_name;  /* "po" or NULL */
    int namespaced;
    int path_name;           /* names are path segments (RBAC: "system:coredns"),
                              * not DNS-1123 subdomains */
    /* CRD kinds only (slots >= K_COUNT, written by crd.c, strings owned by
     * the slot and freed by crd_free()): */
    int active;              /* served now (its CRD exists) */
    char **served;           /* served versions, NULL-terminated; api_version
                              * is GROUP/storage version */
    char *crd_uid;           /* the uid of the CRD that made the slot */
    char **short_names, **categories; /* NULL-terminated, for discovery */
} ks_kind;

/* Built-in kinds are constant after start; CRD slots change with CRDs. */
extern ks_kind ks_kinds[KS_KIND_MAX];
/* k is a kind served now (built in, or an active CRD slot) */
int ks_kind_live(int k);

/* The API groups served, each with its one version. */
typedef struct ks_group {
    const char *name;        /* "" for the core group */
    const char *group_version; /* "v1", "apps/v1" */
    const char *version;     /* "v1", "v1alpha1" */
} ks_group;
#define KS_NGROUPS 9
extern const ks_group ks_groups[KS_NGROUPS];
int ks_group_by_name(const char *group);

/* Live kinds only. by_resource ignores the version (first match);
 * by_route needs a version the kind serves (built in: its group's). */
int ks_kind_by_resource(const char *group, const char *resource);
int ks_kind_by_route(const char *group, const char *version, const char *resource);
int ks_kind_by_kind(const char *api_version, const char *kind);
int ks_kind_serves(int k, const char *version);
/* Kubernetes' version priority (v2 < v1 < v1beta2 < v1beta1 < v1alpha1 < "foo"
 * in sort order: GA, beta, alpha, higher numbers first, others by name). */
int ks_version_cmp(const char *a, const char *b);
/* "pods", "deployments.apps", "ciliumnodes.cilium.io": how the apiserver's
 * errors name a resource (in buf when it has a group) */
const char *ks_kind_gr(int k, char *buf, size_t len);

/* Field-selector fields stored per version (metadata.* are always there). */
enum { F_NODENAME, F_PHASE, F_PODIP, F_RESTART, F_SCHED, F_SA, F_HOSTNET,
       F_NOMINATED, F_UNSCHED, F_COUNT };
extern const char *const ks_field_paths[F_COUNT];
int ks_field_supported(int kind, const char *path);

/* An immutable object version. json is the full object with kind and
 * apiVersion first; json + body_off is the rest after them (list items are
 * "{" + that). ns/name/key/labels/fields live in the same allocation. */
typedef struct ks_ver {
    int refs;
    int kind;
    uint64_t rv;
    const char *ns;   /* "" for cluster-scoped */
    const char *name;
    const char *key;  /* "ns/name" or "name": the list order */
    char *json;
    size_t len, body_off;
    int json_arena; /* json lives in the generator's arena: not freed alone */
    int nlabels;
    const char **labels; /* k0, v0, k1, v1, ... */
    const char *fields[F_COUNT];
} ks_ver;

/* takes ownership of json (malloc'ed) on success; labels are k,v pairs; fields may be NULL */
ks_ver *ver_new(int kind, uint64_t rv, const char *ns, const char *name, char *json,
                size_t len, const char *const *labels, int nlabels,
                const char *const *fields);
/* Build from a normalized object (kind, apiVersion, metadata present). */
ks_ver *ver_from_json(int kind, const cJSON *obj);
void ver_ref(ks_ver *v);
void ver_unref(ks_ver *v);
const char *ver_label(const void *v, const char *key);   /* sel_lookup */
const char *ver_field(const void *v, const char *path);  /* sel_lookup */
cJSON *ver_parse(const ks_ver *v);
/* Copy of v with another resourceVersion (for DELETED events). */
ks_ver *ver_with_rv(const ks_ver *v, uint64_t rv);
/* Serialize obj with kind/apiVersion first (reorders obj in place). */
char *ks_print_object(int kind, cJSON *obj, size_t *len);

/* ---------- store (store.c) ---------- */

typedef enum { EV_ADDED, EV_MODIFIED, EV_DELETED } ks_evtype;
extern const char *const ks_evtype_names[3];

typedef struct ks_event {
    uint64_t rv;
    int type;
    ks_ver *obj;  /* new state; for DELETED the last state with the delete rv */
    ks_ver *prev; /* NULL for ADDED */
} ks_event;

void store_init(size_t history);
void store_free(void);
uint64_t store_rv(void);
uint64_t store_compact_rv(void);
uint64_t store_next_rv(void);
size_t store_count(int kind);
ks_ver *store_get(int kind, const char *ns, const char *name); /* borrowed */
ks_ver *store_at(int kind, size_t i);                          /* i-th in key order */
/* Record a change whose version already carries rv = store_next_rv().
 * Takes a reference to obj; prev is the replaced/deleted current version. */
void store_commit(int type, ks_ver *obj, ks_ver *prev);
/* Bulk loading (the generator): inserts append, the end sorts once. Only
 * creates of new keys may happen in between, with no scans. */
void store_bulk_begin(void);
void store_bulk_end(void);
/* Drop all history: bumps the resourceVersion, so every older one expires. */
void store_expire_history(void);
/* Named saved states, like etcd snapshots: save keeps every current version
 * and the resourceVersion (replacing a state of the same name); restore
 * makes that the current state again, at that resourceVersion, with an
 * empty history (earlier versions get 410, later ones are too large).
 * restore returns -1 for an unknown name. Freed by store_free(). */
void store_save(const char *name);
int store_saved(const char *name); /* a state of that name exists */
int store_restore(const char *name);
/* Call fn for each event with rv > after (oldest first); -1 if expired. */
int store_history_each(uint64_t after, void (*fn)(const ks_event *, void *), void *arg);

/* Visit objects of kind (in ns when ns != NULL) as they were at at_rv
 * (0 = now), keys > after (NULL = from the start), in key order. fn returns
 * nonzero to stop. Returns -1 when at_rv is older than the history, else 1
 * when stopped with more keys left, 0 when exhausted. */
typedef int (*ks_visit)(ks_ver *v, void *arg);
int store_scan(int kind, const char *ns, uint64_t at_rv, const char *after,
               ks_visit fn, void *arg);
/* Number of keys (current state) in kind/ns after `after` (for remainingItemCount). */
size_t store_count_after(int kind, const char *ns, const char *after);

/* ---------- objects (objects.c) ---------- */

typedef struct ks_err {
    int code;            /* HTTP status */
    const char *reason;  /* "NotFound", "Conflict", ... */
    char msg[600];
    char name[256];      /* details.name */
    const char *dkind;   /* details.kind (resource or Kind) */
    const char *group;   /* details.group, or NULL */
    int details;         /* details even when empty ("details":{}) */
    char field[96];      /* first cause field for Invalid */
    const char *cause;   /* details.causes[0].reason (default FieldValueInvalid
                          * with a field), with cause_msg (default msg) */
    const char *cause_msg;
    int retry_after;     /* > 0: details.retryAfterSeconds and Retry-After */
} ks_err;

void ks_seterr(ks_err *e, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Status object JSON for an error (malloc'ed). */
char *ks_status_json(const ks_err *e);

/* All return a new reference or NULL with *e filled. */
ks_ver *obj_create(int kind, const char *ns, const cJSON *body, int need_ns, ks_err *e);
/* status_only: the status subresource (only .status changes) */
ks_ver *obj_update(int kind, const char *ns, const char *name, const cJSON *body,
                   int status_only, ks_err *e);
enum { KS_PATCH_MERGE, KS_PATCH_JSON }; /* merge (RFC 7386), JSON patch (RFC 6902) */
ks_ver *obj_patch(int kind, const char *ns, const char *name, const cJSON *patch, int type,
                  int status_only, ks_err *e);
/* DeleteOptions as the apiserver validates them: 0, or -1 with a 422 in *e
 * (NULL opts are valid). */
int obj_check_delete_options(const cJSON *opts, ks_err *e);
/* opts: DeleteOptions (preconditions.resourceVersion/uid honoured) or NULL */
ks_ver *obj_delete(int kind, const char *ns, const char *name, const cJSON *opts,
                   ks_err *e);
/* The next calls are a dry run (dryRun=All) until reset: nothing is stored
 * or sent to watches, no resourceVersion is taken; results are the objects
 * as they would be (a create's without resourceVersion). */
void obj_set_dry_run(int on);
/* Cancel pending namespace finalizations (at exit). */
void objects_free(void);
/* Load one manifest document (kind: List included); 0 or -1 with *e. */
int obj_load(const cJSON *doc, ks_err *e);

/* ---------- CustomResourceDefinitions (crd.c) ---------- */

/* Validate a CRD being created (old NULL) or replaced, 422 as the
 * apiserver; on create its status becomes the initial one (storedVersions),
 * on replace the old status is kept. 0 or -1 with *e. */
int crd_check(cJSON *o, const cJSON *old, ks_err *e);
/* After a CRD was written: serve its kind (a new or updated slot), then
 * write the status the apiextensions controllers would (acceptedNames,
 * NamesAccepted, Established) as one more change when it differs. */
void crd_established(const ks_ver *crd);
/* The slot a stored CRD serves (-1 none: a built-in kind serves it). */
int crd_slot(const ks_ver *crd);
/* The CRD's kind is no longer served (its objects are already deleted). */
void crd_unserve(int slot);
/* After restoreState: serve exactly the kinds of the CRDs restored. */
void crd_sync(void);
void crd_free(void); /* at exit */

/* ---------- OpenAPI v3 (openapi.c) ---------- */

/* The document at path (/openapi/v3, the index, or /openapi/v3/api/v1,
 * /openapi/v3/apis/GROUP/VERSION), malloc'ed (the caller frees it); NULL
 * when there is none (404). */
char *openapi_v3(const char *path);

/* ---------- helpers (kinds.c) ---------- */

uint64_t ks_rand(void);
void ks_seed(uint64_t seed);
void ks_uuid(char out[37]);
void ks_now(char out[32]); /* RFC 3339 UTC */

/* ---------- watch (watch.c) ---------- */

typedef struct ks_watch_opts {
    int kind;
    char *ns;            /* NULL = all namespaces (ownership moves) */
    selector lsel, fsel; /* ownership moves */
    int bookmarks;
    int initial;         /* send synthetic ADDED for the current state */
    int initial_end;     /* sendInitialEvents: end with the annotated bookmark */
    uint64_t from_rv;    /* replay history after this rv when !initial */
    int timeout_s;
} ks_watch_opts;

extern int ks_bookmark_interval;
void watch_start(struct evhttp_request *req, ks_watch_opts *o);
/* HTTP 200 with one ERROR event carrying e's Status, then the end. */
void watch_send_error(struct evhttp_request *req, const ks_err *e);
void watch_dispatch(const ks_event *ev);
void watch_close_all(void);
/* end the watches of one kind (its CRD is gone) */
void watch_close_kind(int kind);
void watch_malformed_all(void);
int watch_count(void);

/* ---------- http (http.c) ---------- */

extern struct event_base *ks_base;
/* Listen on addr ("127.0.0.1:0", "[::1]:8080"); prints nothing. Fills the
 * bound "host:port". TLS when cert/key are given. 0 or -1. */
int http_start(const char *addr, const char *cert, const char *key, char *bound,
               size_t boundlen);
/* With TLS: PEM CA file that client certificates must chain to (set before
 * http_start; NULL = no client certificate asked for). */
extern const char *http_client_ca;
void http_stop(void);
void http_reply_json(struct evhttp_request *req, int code, const char *json, size_t len);
void http_reply_err(struct evhttp_request *req, const ks_err *e);
/* The resourceVersion moved on (store_commit): requests waiting for it go on. */
void http_rv_advanced(void);
char *http_body(struct evhttp_request *req, size_t *len);

/* ---------- faults (faults.c) ---------- */

typedef struct ks_faults {
    int fail_count, fail_code, retry_after;
    int delay_ms;
    int split_chunks;
    char *token; /* NULL = no authentication */
} ks_faults;

extern ks_faults ks_fault;
void faults_handle(struct evhttp_request *req, const char *path);
/* The request log (faults.c): every API request (not /sim/), its method
 * and URI as received, the last KS_REQLOG_MAX kept; GET /sim/v1/requests
 * shows it, DELETE /sim/v1/requests empties it. */
#define KS_REQLOG_MAX 4096
void reqlog_add(const char *method, const char *uri);
void reqlog_free(void);

/* ---------- generator (generate.c) ---------- */

typedef struct ks_gen {
    int nodes, pods, services, zones, eps;
    int pod_cidrs;  /* podCIDRs=1: every pod's IP inside its node's podCIDR */
    int host_bits;  /* with pod_cidrs: each node's podCIDR is a /(32 - host_bits) */
} ks_gen;

int gen_parse(const char *spec, ks_gen *g, char *err, size_t errlen);
void gen_run(const ks_gen *g);
void gen_free(void); /* release the generator's JSON arena (at exit) */
void churn_start(int per_sec); /* (re)start at per_sec changes/s; <= 0 stops */
void churn_stop(void);
int churn_rate_now(void);      /* changes per second now, 0 when stopped */

#endif
