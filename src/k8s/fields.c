/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fields.c — which members of each resource's objects the reflector builds
 * (jsonsel.h), so that list pages and watch events of large objects cost
 * only the fields somebody reads.
 *
 * Who reads the objects: the cluster store's decoders (src/cluster/decode.c
 * and store.c) and the kubernetes plugin's handlers; the reflector itself
 * reads metadata.resourceVersion, and the Status fields (code, reason,
 * message, details) of an ERROR event's object. A rule keeps every member
 * it does not name at an object's top level, so a Status (or any other
 * object kind) passes whole.
 *
 * Pods, Nodes and EndpointSlices are pruned to what decode_pod(),
 * decode_node() and decode_slice() (with store_upsert_slice() and the
 * kubernetes plugin's programming.c) read: when
 * those decoders read a new field, add it here (tests/unit/test_jsonsel.c
 * decodes real objects both ways and fails on a difference). Every other
 * resource keeps everything but metadata.managedFields (server-side apply
 * bookkeeping, ~40 % of an object, read by nobody).
 */
#include <stddef.h>
#include <string.h>
#include "k8s/jsonsel.h"

#define KEEP(n) { n, JSEL_KEEP, JSEL_KEEP, NULL }
#define SKIP(n) { n, JSEL_SKIP, JSEL_KEEP, NULL }
#define END { NULL, JSEL_KEEP, JSEL_KEEP, NULL }

/* ---- any object: everything but metadata.managedFields -------------------------------- */

static const jsel meta_any[] = { SKIP("managedFields"), END };
static const jsel any_members[] = { { "metadata", JSEL_OBJECT, JSEL_KEEP, meta_any }, END };
static const jsel any_obj = { NULL, JSEL_OBJECT, JSEL_KEEP, any_members };

/* ---- pods: decode_pod(), store_upsert_pod(), store_remove() --------------------------- */

static const jsel pod_meta[] = {
    KEEP("name"), KEEP("namespace"), KEEP("resourceVersion"), KEEP("deletionTimestamp"), END,
};
static const jsel pod_spec[] = { KEEP("nodeName"), KEEP("hostNetwork"), END };
static const jsel pod_status[] = { KEEP("phase"), KEEP("podIP"), KEEP("podIPs"), END };
static const jsel pod_members[] = {
    { "metadata", JSEL_OBJECT, JSEL_SKIP, pod_meta },
    { "spec", JSEL_OBJECT, JSEL_SKIP, pod_spec },
    { "status", JSEL_OBJECT, JSEL_SKIP, pod_status },
    END,
};
static const jsel pod_obj = { NULL, JSEL_OBJECT, JSEL_KEEP, pod_members };

/* ---- nodes: decode_node(), store_upsert_node(), store_remove() ------------------------ */

static const jsel node_meta[] = {
    KEEP("name"), KEEP("namespace"), KEEP("resourceVersion"), KEEP("labels"), END,
};
static const jsel node_spec[] = { KEEP("podCIDR"), KEEP("podCIDRs"), END };
static const jsel node_status[] = { KEEP("allocatable"), KEEP("conditions"), KEEP("addresses"), END };
static const jsel node_members[] = {
    { "metadata", JSEL_OBJECT, JSEL_SKIP, node_meta },
    { "spec", JSEL_OBJECT, JSEL_SKIP, node_spec },
    { "status", JSEL_OBJECT, JSEL_SKIP, node_status },
    END,
};
static const jsel node_obj = { NULL, JSEL_OBJECT, JSEL_KEEP, node_members };

/* ---- endpointslices: decode_slice(), store_upsert_slice(), store_remove() ----------- */

/* An EndpointSlice of a large cluster is mostly its endpoints (150,000 of
 * them at 5,000 nodes): of each, the decoder reads the addresses, the
 * conditions, hostname, nodeName, zone, hints and the targetRef's kind
 * and name; the targetRef's uid, namespace and resourceVersion, and
 * deprecatedTopology, are skipped. Of the metadata it reads the name,
 * namespace, resourceVersion, labels (kubernetes.io/service-name, the
 * multicluster ones) and annotations (the kubernetes plugin's programming
 * duration reads endpoints.kubernetes.io/last-change-trigger-time,
 * programming.c), not the uid, timestamps or owners. */
static const jsel slice_meta[] = {
    KEEP("name"), KEEP("namespace"), KEEP("resourceVersion"), KEEP("labels"),
    KEEP("annotations"), END,
};
static const jsel slice_ref[] = { KEEP("kind"), KEEP("name"), END };
static const jsel slice_ep_m[] = {
    KEEP("addresses"), KEEP("conditions"), KEEP("hostname"), KEEP("nodeName"), KEEP("zone"),
    KEEP("hints"), { "targetRef", JSEL_OBJECT, JSEL_SKIP, slice_ref }, END,
};
static const jsel slice_ep = { NULL, JSEL_OBJECT, JSEL_SKIP, slice_ep_m };
static const jsel slice_members[] = {
    { "metadata", JSEL_OBJECT, JSEL_SKIP, slice_meta },
    { "endpoints", JSEL_ARRAY, JSEL_KEEP, &slice_ep },
    END,
};
static const jsel slice_obj = { NULL, JSEL_OBJECT, JSEL_KEEP, slice_members };

/* ---- list pages and watch events ----------------------------------------------------- */

/* A list: kind, apiVersion and metadata (continue, resourceVersion) kept,
 * every item by its object rule. A watch event: type kept, object by it. */
#define WRAP(k)                                                                             \
    static const jsel k##_page_m[] = { { "items", JSEL_ARRAY, JSEL_KEEP, &k##_obj }, END };  \
    static const jsel k##_page = { NULL, JSEL_OBJECT, JSEL_KEEP, k##_page_m };              \
    static const jsel k##_line_m[] = { { "object", JSEL_OBJECT, JSEL_KEEP, k##_members }, END }; \
    static const jsel k##_line = { NULL, JSEL_OBJECT, JSEL_KEEP, k##_line_m };

WRAP(any)
WRAP(pod)
WRAP(node)
WRAP(slice)

/* A watch line the parser refuses: what the reflector needs to skip it. */
static const jsel salvage_meta[] = {
    KEEP("name"), KEEP("namespace"), KEEP("resourceVersion"), END,
};
static const jsel salvage_obj[] = { { "metadata", JSEL_OBJECT, JSEL_LOOSE, salvage_meta }, END };
static const jsel salvage_line_m[] = {
    KEEP("type"), { "object", JSEL_OBJECT, JSEL_LOOSE, salvage_obj }, END,
};
static const jsel salvage_line = { NULL, JSEL_OBJECT, JSEL_LOOSE, salvage_line_m };

const jsel *jsel_salvage_rule(void) { return &salvage_line; }

typedef struct rules {
    const char *resource;
    const jsel *page, *line;
} rules;

static const rules table[] = {
    { "pods", &pod_page, &pod_line },
    { "nodes", &node_page, &node_line },
    { "endpointslices", &slice_page, &slice_line },
};

static const rules *find(const char *resource)
{
    for (size_t i = 0; resource && i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].resource, resource))
            return &table[i];
    return NULL;
}

const jsel *jsel_page_rule(const char *resource)
{
    const rules *r = find(resource);
    return r ? r->page : &any_page;
}

const jsel *jsel_line_rule(const char *resource)
{
    const rules *r = find(resource);
    return r ? r->line : &any_line;
}
