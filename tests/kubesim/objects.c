/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim objects — write semantics of the API: create, update, merge
 * and JSON patch, delete (DeleteOptions validated), and loading manifests.
 *
 * What the apiserver does and kubesim copies: names are validated (DNS-1123
 * label/subdomain, DNS-1035 for Services) and an invalid object is a 422
 * Status with a cause; kind/apiVersion/namespace mismatches are 400; a
 * namespaced create into a missing namespace is 404; an existing name is 409
 * AlreadyExists; an update or patch carrying a stale resourceVersion (or
 * another uid) is 409 Conflict; an update that changes nothing is a no-op
 * (no new resourceVersion, no watch event). uid, creationTimestamp,
 * generation (bumped when anything but metadata/status changes) and
 * resourceVersion are server-owned. Writes through the status subresource
 * change only .status (and take resourceVersion/uid as preconditions).
 * Services get ClusterIP defaults,
 * Namespaces their finalizer, phase and kubernetes.io/metadata.name label.
 * A deleted namespace turns Terminating (new content refused with 403) and
 * its objects and then itself are deleted about a second later.
 * Deviations: pod status is kept as sent (there is no kubelet); deletes of
 * other objects are immediate (no graceful termination, no finalizers).
 */
#include "kubesim.h"
#include "jsonpatch.h"
#include "mergepatch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

void ks_seterr(ks_err *e, int code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    memset(e, 0, sizeof(*e));
    e->code = code;
    e->reason = reason;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

char *ks_status_json(const ks_err *e)
{
    cJSON *s = cJSON_CreateObject(), *d;
    char *out;
    cJSON_AddStringToObject(s, "kind", "Status");
    cJSON_AddStringToObject(s, "apiVersion", "v1");
    cJSON_AddObjectToObject(s, "metadata");
    cJSON_AddStringToObject(s, "status", "Failure");
    cJSON_AddStringToObject(s, "message", e->msg);
    cJSON_AddStringToObject(s, "reason", e->reason ? e->reason : "");
    if (e->name[0] || e->dkind || e->cause || e->retry_after > 0 || e->details) {
        d = cJSON_AddObjectToObject(s, "details");
        if (e->name[0])
            cJSON_AddStringToObject(d, "name", e->name);
        if (e->group)
            cJSON_AddStringToObject(d, "group", e->group);
        if (e->dkind)
            cJSON_AddStringToObject(d, "kind", e->dkind);
        if (e->field[0] || e->cause) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "reason", e->cause ? e->cause : "FieldValueInvalid");
            cJSON_AddStringToObject(c, "message", e->cause_msg ? e->cause_msg : e->msg);
            if (e->field[0])
                cJSON_AddStringToObject(c, "field", e->field);
            cJSON_AddItemToArray(cJSON_AddArrayToObject(d, "causes"), c);
        }
        if (e->retry_after > 0)
            cJSON_AddNumberToObject(d, "retryAfterSeconds", e->retry_after);
    }
    cJSON_AddNumberToObject(s, "code", e->code);
    out = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return out;
}

static void not_found(ks_err *e, int kind, const char *name)
{
    char gr[300];
    ks_seterr(e, 404, "NotFound", "%s \"%s\" not found", ks_kind_gr(kind, gr, sizeof gr), name);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->dkind = ks_kinds[kind].resource;
    if (*ks_kinds[kind].group)
        e->group = ks_kinds[kind].group;
}

static void invalid(ks_err *e, int kind, const char *name, const char *field, const char *what)
{
    ks_seterr(e, 422, "Invalid", "%s \"%s\" is invalid: %s: %s", ks_kinds[kind].kind, name,
              field, what);
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->field, sizeof e->field, "%s", field);
    e->dkind = ks_kinds[kind].kind;
}

/* ---------- small cJSON helpers ---------- */

static cJSON *obj_child(cJSON *o, const char *k)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!c) {
        c = cJSON_AddObjectToObject(o, k);
    } else if (!cJSON_IsObject(c)) {
        c = cJSON_CreateObject();
        cJSON_ReplaceItemInObjectCaseSensitive(o, k, c);
    }
    return c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

static void set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddStringToObject(o, k, v);
}

static void default_str(cJSON *o, const char *k, const char *v)
{
    const char *cur = get_str(o, k);
    if (!cur || !*cur)
        set_str(o, k, v);
}

/* ---------- name validation ---------- */

static int dns_label(const char *s, int need_alpha_start)
{
    size_t n = strlen(s), i;
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    if (need_alpha_start && !isalpha((unsigned char)s[0]))
        return 0;
    for (i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

static int dns_subdomain(const char *s)
{
    size_t n = strlen(s), i;
    if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
              s[i] == '.'))
            return 0;
    return 1;
}

static int check_name(int kind, const char *name, ks_err *e)
{
    char what[400];
    if (kind == K_SERVICE && !dns_label(name, 1)) {
        snprintf(what, sizeof what, "Invalid value: \"%s\": a DNS-1035 label must consist of "
                 "lower case alphanumeric characters or '-', start with an alphabetic character, "
                 "and end with an alphanumeric character", name);
    } else if (kind == K_NAMESPACE && !dns_label(name, 0)) {
        snprintf(what, sizeof what, "Invalid value: \"%s\": a lowercase RFC 1123 label must "
                 "consist of lower case alphanumeric characters or '-', and must start and end "
                 "with an alphanumeric character", name);
    } else if (ks_kinds[kind].path_name) {
        /* RBAC objects: any path segment name (ValidatePathSegmentName) */
        if (strcmp(name, ".") && strcmp(name, "..") && !strpbrk(name, "/%"))
            return 0;
        snprintf(what, sizeof what, "Invalid value: \"%s\": may not be '.' or '..' and may "
                 "not contain '/' or '%%'", name);
    } else if (kind != K_SERVICE && kind != K_NAMESPACE && !dns_subdomain(name)) {
        snprintf(what, sizeof what, "Invalid value: \"%s\": a lowercase RFC 1123 subdomain "
                 "must consist of lower case alphanumeric characters, '-' or '.', and must "
                 "start and end with an alphanumeric character", name);
    } else {
        return 0;
    }
    invalid(e, kind, name, "metadata.name", what);
    return -1;
}

/* ---------- kind-specific validation and defaults ---------- */

static int validate_slice(const cJSON *o, const char *name, ks_err *e)
{
    const char *at = get_str(o, "addressType");
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(o, "endpoints"), *ep;
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(o, "ports");
    char field[64];
    int i = 0;

    if (!at || (strcmp(at, "IPv4") && strcmp(at, "IPv6") && strcmp(at, "FQDN"))) {
        invalid(e, K_ENDPOINTSLICE, name, "addressType",
                at ? "Unsupported value: supported values: \"FQDN\", \"IPv4\", \"IPv6\""
                   : "Required value");
        return -1;
    }
    if (eps && !cJSON_IsNull(eps) && (!cJSON_IsArray(eps) || cJSON_GetArraySize(eps) > 1000)) {
        invalid(e, K_ENDPOINTSLICE, name, "endpoints", "Too many: must have at most 1000 items");
        return -1;
    }
    if (ports && !cJSON_IsNull(ports) && (!cJSON_IsArray(ports) || cJSON_GetArraySize(ports) > 100)) {
        invalid(e, K_ENDPOINTSLICE, name, "ports", "Too many: must have at most 100 items");
        return -1;
    }
    cJSON_ArrayForEach(ep, (cJSON_IsArray(eps) ? eps : NULL)) {
        const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(ep, "addresses");
        int n = cJSON_IsArray(addrs) ? cJSON_GetArraySize(addrs) : 0;
        if (!cJSON_IsObject(ep) || n < 1 || n > 100) {
            snprintf(field, sizeof field, "endpoints[%d].addresses", i);
            invalid(e, K_ENDPOINTSLICE, name, field, "Required value: must contain at least 1 address");
            return -1;
        }
        i++;
    }
    return 0;
}

static void next_cluster_ip(char out[20])
{
    static unsigned n = 256 + 10;
    n++;
    snprintf(out, 20, "10.96.%u.%u", (n >> 8) & 255, n & 255);
}

static int service_defaults(cJSON *o, const char *name, const cJSON *old, ks_err *e)
{
    cJSON *spec = obj_child(o, "spec"), *ports, *p;
    const char *type, *cip;
    const cJSON *ospec = cJSON_GetObjectItemCaseSensitive(old, "spec");
    default_str(spec, "type", "ClusterIP");
    type = get_str(spec, "type");
    if (strcmp(type, "ClusterIP") && strcmp(type, "NodePort") && strcmp(type, "LoadBalancer") &&
        strcmp(type, "ExternalName")) {
        invalid(e, K_SERVICE, name, "spec.type", "Unsupported value");
        return -1;
    }
    if (!strcmp(type, "ExternalName")) {
        if (!get_str(spec, "externalName") || !*get_str(spec, "externalName")) {
            invalid(e, K_SERVICE, name, "spec.externalName", "Required value");
            return -1;
        }
        return 0;
    }
    cip = get_str(spec, "clusterIP");
    if ((!cip || !*cip) && get_str(ospec, "clusterIP"))
        set_str(spec, "clusterIP", get_str(ospec, "clusterIP"));
    if (!get_str(spec, "clusterIP") || !*get_str(spec, "clusterIP")) {
        char ip[20];
        next_cluster_ip(ip);
        set_str(spec, "clusterIP", ip);
    }
    if (!cJSON_GetObjectItemCaseSensitive(spec, "clusterIPs")) {
        cJSON *a = cJSON_AddArrayToObject(spec, "clusterIPs");
        cJSON_AddItemToArray(a, cJSON_CreateString(get_str(spec, "clusterIP")));
    }
    if (!cJSON_GetObjectItemCaseSensitive(spec, "ipFamilies")) {
        cJSON *a = cJSON_AddArrayToObject(spec, "ipFamilies");
        cJSON_AddItemToArray(a, cJSON_CreateString(strchr(get_str(spec, "clusterIP"), ':') ? "IPv6" : "IPv4"));
    }
    default_str(spec, "ipFamilyPolicy", "SingleStack");
    default_str(spec, "sessionAffinity", "None");
    default_str(spec, "internalTrafficPolicy", "Cluster");
    ports = cJSON_GetObjectItemCaseSensitive(spec, "ports");
    cJSON_ArrayForEach(p, (cJSON_IsArray(ports) ? ports : NULL)) {
        cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
        if (!cJSON_IsObject(p))
            continue;
        if (!cJSON_IsNumber(port) || port->valuedouble < 1 || port->valuedouble > 65535) {
            invalid(e, K_SERVICE, name, "spec.ports.port", "Invalid value: must be between 1 and 65535, inclusive");
            return -1;
        }
        default_str(p, "protocol", "TCP");
        if (!cJSON_GetObjectItemCaseSensitive(p, "targetPort"))
            cJSON_AddNumberToObject(p, "targetPort", port->valuedouble);
    }
    return 0;
}

static void namespace_defaults(cJSON *o, const char *name)
{
    cJSON *spec = obj_child(o, "spec"), *status = obj_child(o, "status");
    cJSON *labels = obj_child(obj_child(o, "metadata"), "labels");
    if (!cJSON_GetObjectItemCaseSensitive(spec, "finalizers")) {
        cJSON *f = cJSON_AddArrayToObject(spec, "finalizers");
        cJSON_AddItemToArray(f, cJSON_CreateString("kubernetes"));
    }
    default_str(status, "phase", "Active");
    set_str(labels, "kubernetes.io/metadata.name", name);
}

static int kind_rules(int kind, cJSON *o, const char *name, const cJSON *old, ks_err *e)
{
    switch (kind) {
    case K_ENDPOINTSLICE: return validate_slice(o, name, e);
    case K_SERVICE: return service_defaults(o, name, old, e);
    case K_NAMESPACE: namespace_defaults(o, name); return 0;
    case K_POD: default_str(obj_child(o, "status"), "phase", "Pending"); return 0;
    case K_CRD: return crd_check(o, old, e);
    default: return 0;
    }
}

/* ---------- common checks ---------- */

/* body must be an object of the right kind; returns a normalized copy */
static cJSON *check_body(int kind, const cJSON *body, ks_err *e)
{
    const char *k = get_str(body, "kind"), *av = get_str(body, "apiVersion");
    cJSON *copy;
    if (!cJSON_IsObject(body)) {
        ks_seterr(e, 400, "BadRequest", "the body of the request was not a JSON object");
        return NULL;
    }
    if (av && *av && strcmp(av, ks_kinds[kind].api_version) &&
        (kind < K_COUNT || ks_kind_by_kind(av, ks_kinds[kind].kind) != kind)) {
        ks_seterr(e, 400, "BadRequest", "the API version in the data (%s) does not match the "
                  "expected API version (%s)", av, ks_kinds[kind].api_version);
        return NULL;
    }
    if (k && *k && strcmp(k, ks_kinds[kind].kind)) {
        ks_seterr(e, 400, "BadRequest", "the kind in the data (%s) does not match the "
                  "expected kind (%s)", k, ks_kinds[kind].kind);
        return NULL;
    }
    if (cJSON_GetObjectItemCaseSensitive(body, "metadata") &&
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "metadata"))) {
        ks_seterr(e, 400, "BadRequest", "metadata must be an object");
        return NULL;
    }
    copy = cJSON_Duplicate(body, 1);
    obj_child(copy, "metadata");
    return copy;
}

/* settle metadata.namespace against the request namespace */
static int settle_namespace(int kind, cJSON *md, const char *ns, ks_err *e)
{
    const char *bns = get_str(md, "namespace");
    if (!ks_kinds[kind].namespaced) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "namespace");
        return 0;
    }
    if (ns && bns && *bns && strcmp(bns, ns)) {
        ks_seterr(e, 400, "BadRequest", "the namespace of the provided object does not match "
                  "the namespace sent on the request");
        return -1;
    }
    set_str(md, "namespace", ns ? ns : (bns && *bns) ? bns : "default");
    return 0;
}

static void set_rv(cJSON *md, uint64_t rv)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)rv);
    set_str(md, "resourceVersion", buf);
}

/* The request being served is a dry run (dryRun=All): writes build the
 * version they would store and stop there. Set by http.c around one call. */
static int dry;

void obj_set_dry_run(int on)
{
    dry = on;
}

static ks_ver *commit(int type, int kind, cJSON *o, ks_ver *prev)
{
    ks_ver *v;
    if (dry) { /* as the apiserver's dry-run storage: no new resourceVersion */
        if (prev)
            set_rv(obj_child(o, "metadata"), prev->rv);
        else
            cJSON_DeleteItemFromObjectCaseSensitive(obj_child(o, "metadata"), "resourceVersion");
        return ver_from_json(kind, o);
    }
    set_rv(obj_child(o, "metadata"), store_next_rv());
    v = ver_from_json(kind, o);
    if (!v)
        return NULL;
    store_commit(type, v, prev);
    return v; /* the caller gets the creation reference */
}

static int namespace_terminating(const ks_ver *ns)
{
    cJSON *o = ver_parse(ns);
    const char *ph = get_str(cJSON_GetObjectItemCaseSensitive(o, "status"), "phase");
    int t = ph && !strcmp(ph, "Terminating");
    cJSON_Delete(o);
    return t;
}

/* ---------- create ---------- */

static int pick_name(int kind, cJSON *md, ks_err *e)
{
    const char *name = get_str(md, "name"), *gen = get_str(md, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char buf[300];
        static const char al[] = "bcdfghjklmnpqrstvwxz2456789";
        size_t n = (size_t)snprintf(buf, 290, "%s", gen), i;
        for (i = 0; i < 5; i++)
            buf[n + i] = al[ks_rand() % (sizeof al - 1)];
        buf[n + 5] = '\0';
        set_str(md, "name", buf);
        name = get_str(md, "name");
    }
    if (!name || !*name) {
        invalid(e, kind, "", "metadata.name", "Required value: name or generateName is required");
        return -1;
    }
    return check_name(kind, name, e);
}

ks_ver *obj_create(int kind, const char *ns, const cJSON *body, int need_ns, ks_err *e)
{
    cJSON *o = check_body(kind, body, e), *md;
    const char *name;
    char buf[40];
    ks_ver *v = NULL;

    if (!o)
        return NULL;
    md = obj_child(o, "metadata");
    if (pick_name(kind, md, e) < 0 || settle_namespace(kind, md, ns, e) < 0)
        goto out;
    name = get_str(md, "name");
    ns = ks_kinds[kind].namespaced ? get_str(md, "namespace") : "";
    if (need_ns && ks_kinds[kind].namespaced && !store_get(K_NAMESPACE, "", ns)) {
        not_found(e, K_NAMESPACE, ns);
        goto out;
    }
    if (ks_kinds[kind].namespaced && store_get(K_NAMESPACE, "", ns) &&
        namespace_terminating(store_get(K_NAMESPACE, "", ns))) {
        ks_seterr(e, 403, "Forbidden", "%s \"%s\" is forbidden: unable to create new content in "
                  "namespace %s because it is being terminated", ks_kinds[kind].resource, name, ns);
        snprintf(e->name, sizeof e->name, "%s", name);
        e->dkind = ks_kinds[kind].resource;
        goto out;
    }
    if (store_get(kind, ns, name)) {
        char gr[300];
        ks_seterr(e, 409, "AlreadyExists", "%s \"%s\" already exists",
                  ks_kind_gr(kind, gr, sizeof gr), name);
        snprintf(e->name, sizeof e->name, "%s", name);
        e->dkind = ks_kinds[kind].resource;
        if (*ks_kinds[kind].group)
            e->group = ks_kinds[kind].group;
        goto out;
    }
    if (kind_rules(kind, o, name, NULL, e) < 0)
        goto out;
    if (need_ns || !get_str(md, "uid") || !*get_str(md, "uid")) {
        ks_uuid(buf);
        set_str(md, "uid", buf);
    }
    ks_now(buf);
    set_str(md, "creationTimestamp", buf);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "generation");
    cJSON_AddNumberToObject(md, "generation", 1);
    v = commit(EV_ADDED, kind, o, NULL);
    if (!v)
        ks_seterr(e, 500, "InternalError", "out of memory");
    else if (kind == K_CRD && !dry)
        crd_established(v);
out:
    cJSON_Delete(o);
    return v;
}

/* ---------- update ---------- */

static int spec_changed(const cJSON *a, const cJSON *b)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, a) {
        if (!strcmp(c->string, "metadata") || !strcmp(c->string, "status"))
            continue;
        if (!cJSON_Compare(c, cJSON_GetObjectItemCaseSensitive(b, c->string), 1))
            return 1;
    }
    cJSON_ArrayForEach(c, b) {
        if (strcmp(c->string, "metadata") && strcmp(c->string, "status") &&
            !cJSON_GetObjectItemCaseSensitive(a, c->string))
            return 1;
    }
    return 0;
}

static int preconditions(int kind, const ks_ver *cur, const char *rv, const char *uid, ks_err *e)
{
    char curuid[64] = "", gr[300];
    if (rv && *rv && strtoull(rv, NULL, 10) != cur->rv) {
        ks_seterr(e, 409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": the object "
                  "has been modified; please apply your changes to the latest version and try "
                  "again", ks_kind_gr(kind, gr, sizeof gr), cur->name);
    } else if (uid && *uid) {
        cJSON *o = ver_parse(cur);
        const char *u = get_str(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "uid");
        snprintf(curuid, sizeof curuid, "%s", u ? u : "");
        cJSON_Delete(o);
        if (!strcmp(uid, curuid))
            return 0;
        ks_seterr(e, 409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": Precondition "
                  "failed: UID in precondition: %s, UID in object meta: %s",
                  ks_kind_gr(kind, gr, sizeof gr), cur->name, uid, curuid);
    } else {
        return 0;
    }
    snprintf(e->name, sizeof e->name, "%s", cur->name);
    e->dkind = ks_kinds[kind].resource;
    if (*ks_kinds[kind].group)
        e->group = ks_kinds[kind].group;
    return -1;
}

/* o: the full new object (consumed); cur: the current version */
static ks_ver *replace(int kind, ks_ver *cur, cJSON *o, ks_err *e)
{
    cJSON *old = ver_parse(cur), *md = obj_child(o, "metadata"), *omd;
    const cJSON *gen;
    ks_ver *v = NULL;

    omd = obj_child(old, "metadata");
    if (preconditions(kind, cur, get_str(md, "resourceVersion"), get_str(md, "uid"), e) < 0 ||
        kind_rules(kind, o, cur->name, old, e) < 0)
        goto out;
    set_str(md, "uid", get_str(omd, "uid") ? get_str(omd, "uid") : "");
    set_str(md, "creationTimestamp",
            get_str(omd, "creationTimestamp") ? get_str(omd, "creationTimestamp") : "");
    gen = cJSON_GetObjectItemCaseSensitive(omd, "generation");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "generation");
    cJSON_AddNumberToObject(md, "generation", (cJSON_IsNumber(gen) ? gen->valuedouble : 1) +
                                              (spec_changed(o, old) ? 1 : 0));
    set_str(md, "resourceVersion", get_str(omd, "resourceVersion") ? get_str(omd, "resourceVersion") : "");
    if (cJSON_Compare(o, old, 1)) { /* no-op update: nothing is written */
        ver_ref(cur);
        v = cur;
        goto out;
    }
    v = commit(EV_MODIFIED, kind, o, cur);
    if (!v)
        ks_seterr(e, 500, "InternalError", "out of memory");
    else if (kind == K_CRD && !dry)
        crd_established(v);
out:
    cJSON_Delete(old);
    cJSON_Delete(o);
    return v;
}

/* The status subresource: the current object with o's status (consumed),
 * o's resourceVersion and uid kept as preconditions. */
static cJSON *status_only_object(const ks_ver *cur, cJSON *o)
{
    cJSON *n = ver_parse(cur), *md = obj_child(n, "metadata");
    cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(o, "status");
    const cJSON *omd = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    const char *rv = get_str(omd, "resourceVersion"), *uid = get_str(omd, "uid");
    cJSON_DeleteItemFromObjectCaseSensitive(n, "status");
    if (st)
        cJSON_AddItemToObject(n, "status", st);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
    if (rv)
        set_str(md, "resourceVersion", rv);
    if (uid)
        set_str(md, "uid", uid);
    cJSON_Delete(o);
    return n;
}

ks_ver *obj_update(int kind, const char *ns, const char *name, const cJSON *body,
                   int status_only, ks_err *e)
{
    cJSON *o = check_body(kind, body, e), *md;
    const char *bname;
    ks_ver *cur;

    if (!o)
        return NULL;
    md = obj_child(o, "metadata");
    bname = get_str(md, "name");
    if (bname && *bname && strcmp(bname, name)) {
        ks_seterr(e, 400, "BadRequest", "the name of the object (%s) does not match the name "
                  "on the URL (%s)", bname, name);
        cJSON_Delete(o);
        return NULL;
    }
    set_str(md, "name", name);
    if (settle_namespace(kind, md, ns, e) < 0) {
        cJSON_Delete(o);
        return NULL;
    }
    cur = store_get(kind, ns, name);
    if (!cur) {
        not_found(e, kind, name);
        cJSON_Delete(o);
        return NULL;
    }
    if (status_only)
        o = status_only_object(cur, o);
    return replace(kind, cur, o, e);
}

ks_ver *obj_patch(int kind, const char *ns, const char *name, const cJSON *patch, int type,
                  int status_only, ks_err *e)
{
    ks_ver *cur = store_get(kind, ns, name);
    cJSON *o, *md;
    const char *pname, *pns;

    if (!cur) {
        not_found(e, kind, name);
        return NULL;
    }
    if (type == KS_PATCH_JSON) {
        char err[400];
        int code = 0;
        o = json_patch_apply(ver_parse(cur), patch, &code, err, sizeof err);
        if (!o && code == 422) {
            /* the apiserver answers every failed operation so (a generic
             * 422 without the reason) */
            ks_seterr(e, 422, "Invalid", "the server rejected our request due to an error in "
                      "our request");
            e->details = 1;
            return NULL;
        }
        if (!o) {
            ks_seterr(e, code, code == 413 ? "RequestEntityTooLarge" : "BadRequest", "%s", err);
            return NULL;
        }
    } else {
        if (!cJSON_IsObject(patch)) {
            ks_seterr(e, 400, "BadRequest", "the patch must be a JSON object");
            return NULL;
        }
        o = merge_patch_apply(ver_parse(cur), patch);
        if (!o) {
            ks_seterr(e, 500, "InternalError", "patch failed");
            return NULL;
        }
    }
    if (!cJSON_IsObject(o)) {
        ks_seterr(e, 400, "BadRequest", "the patched object is not a JSON object");
        cJSON_Delete(o);
        return NULL;
    }
    md = obj_child(o, "metadata");
    pname = get_str(md, "name");
    pns = get_str(md, "namespace");
    if (!pname || strcmp(pname, cur->name) || (*cur->ns && (!pns || strcmp(pns, cur->ns))) ||
        !cJSON_IsObject(o)) {
        invalid(e, kind, cur->name, "metadata.name", "Invalid value: field is immutable");
        cJSON_Delete(o);
        return NULL;
    }
    set_str(o, "kind", ks_kinds[kind].kind);
    set_str(o, "apiVersion", ks_kinds[kind].api_version);
    if (status_only)
        o = status_only_object(cur, o);
    return replace(kind, cur, o, e);
}

/* ---------- delete ---------- */

static ks_ver *remove_obj(ks_ver *cur)
{
    ks_ver *dv;
    if (dry) { /* the object as it is, nothing removed */
        ver_ref(cur);
        return cur;
    }
    dv = ver_with_rv(cur, store_next_rv());
    if (!dv)
        return NULL;
    store_commit(EV_DELETED, dv, cur);
    return dv;
}

typedef struct vec {
    ks_ver **v;
    size_t n, cap;
} vec;

static int collect(ks_ver *v, void *arg)
{
    vec *a = arg;
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        ks_ver **nv = realloc(a->v, nc * sizeof(*nv));
        if (!nv)
            return 1;
        a->v = nv;
        a->cap = nc;
    }
    ver_ref(v);
    a->v[a->n++] = v;
    return 0;
}

/* Delete every object of kind (in ns, or all when ns is NULL). */
static void delete_contents(int kind, const char *ns)
{
    vec a = {0};
    size_t i;
    store_scan(kind, ns, 0, NULL, collect, &a);
    for (i = 0; i < a.n; i++) {
        if (store_get(kind, a.v[i]->ns, a.v[i]->name) == a.v[i])
            ver_unref(remove_obj(a.v[i]));
        ver_unref(a.v[i]);
    }
    free(a.v);
}

static void delete_namespace_contents(const char *ns)
{
    int k;
    for (k = 0; k < KS_KIND_MAX; k++)
        if (ks_kind_live(k) && ks_kinds[k].namespaced)
            delete_contents(k, ns);
}

/* Namespaces terminate like the real namespace controller: the DELETE
 * marks them Terminating (deletionTimestamp, status.phase), new content is
 * refused, and about a second later their objects and then the namespace
 * itself are deleted. */
#define NS_FINALIZE_MS 1000

typedef struct ns_pending {
    struct event *ev;
    struct ns_pending *next;
    char name[];
} ns_pending;

static ns_pending *pending; /* namespaces waiting for finalization */

static void drop_pending(ns_pending *p)
{
    ns_pending **pp;
    for (pp = &pending; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    event_free(p->ev);
    free(p);
}

static void finalize_namespace(evutil_socket_t fd, short what, void *arg)
{
    ns_pending *p = arg;
    ks_ver *cur = store_get(K_NAMESPACE, "", p->name);
    (void)fd;
    (void)what;
    if (cur && namespace_terminating(cur)) {
        delete_namespace_contents(p->name);
        ver_unref(remove_obj(cur));
    }
    drop_pending(p);
}

static void schedule_finalize(const char *name, const struct timeval *tv)
{
    ns_pending *p = calloc(1, sizeof(*p) + strlen(name) + 1);
    if (!p)
        return;
    strcpy(p->name, name);
    p->ev = evtimer_new(ks_base, finalize_namespace, p);
    p->next = pending;
    pending = p;
    evtimer_add(p->ev, tv);
}

void objects_free(void)
{
    while (pending)
        drop_pending(pending);
}

static ks_ver *terminate_namespace(ks_ver *cur, ks_err *e)
{
    struct timeval tv = {NS_FINALIZE_MS / 1000, (NS_FINALIZE_MS % 1000) * 1000};
    cJSON *o;
    char now[32];
    ks_ver *v;
    if (!strcmp(cur->name, "default") || !strcmp(cur->name, "kube-system") ||
        !strcmp(cur->name, "kube-public")) {
        ks_seterr(e, 403, "Forbidden", "namespaces \"%s\" is forbidden: this namespace may not "
                  "be deleted", cur->name);
        snprintf(e->name, sizeof e->name, "%s", cur->name);
        e->dkind = "namespaces";
        return NULL;
    }
    if (namespace_terminating(cur)) {
        ver_ref(cur);
        return cur;
    }
    o = ver_parse(cur);
    ks_now(now);
    set_str(obj_child(o, "metadata"), "deletionTimestamp", now);
    set_str(obj_child(o, "status"), "phase", "Terminating");
    v = commit(EV_MODIFIED, K_NAMESPACE, o, cur);
    cJSON_Delete(o);
    if (!v) {
        ks_seterr(e, 500, "InternalError", "out of memory");
        return NULL;
    }
    if (!dry)
        schedule_finalize(v->name, &tv);
    return v;
}

int obj_check_delete_options(const cJSON *opts, ks_err *e)
{
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(opts, "propagationPolicy");
    const cJSON *orphan = cJSON_GetObjectItemCaseSensitive(opts, "orphanDependents");
    const char *p = cJSON_IsString(pp) ? pp->valuestring : NULL;
    static const char supported[] = "supported values: \"Foreground\", \"Background\", "
                                    "\"Orphan\", \"nil\"";
    if (!opts || !pp || cJSON_IsNull(pp))
        return 0;
    if (orphan && !cJSON_IsNull(orphan)) {
        ks_seterr(e, 422, "Invalid", "DeleteOptions.meta.k8s.io \"\" is invalid: "
                  "propagationPolicy: Invalid value: \"%s\": orphanDependents and "
                  "deletionPropagation cannot be both set", p ? p : "");
        snprintf(e->field, sizeof e->field, "propagationPolicy");
        e->cause_msg = strstr(e->msg, "Invalid value:");
    } else if (p && (!strcmp(p, "Foreground") || !strcmp(p, "Background") ||
                     !strcmp(p, "Orphan"))) {
        return 0;
    } else {
        ks_seterr(e, 422, "Invalid", "DeleteOptions.meta.k8s.io \"\" is invalid: "
                  "propagationPolicy: Unsupported value: \"%s\": %s", p ? p : "", supported);
        snprintf(e->field, sizeof e->field, "propagationPolicy");
        e->cause = "FieldValueNotSupported";
        e->cause_msg = strstr(e->msg, "Unsupported value:");
    }
    e->group = "meta.k8s.io";
    e->dkind = "DeleteOptions";
    return -1;
}

ks_ver *obj_delete(int kind, const char *ns, const char *name, const cJSON *opts, ks_err *e)
{
    ks_ver *cur = store_get(kind, ns, name), *dv;
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(opts, "preconditions");

    if (!cur) {
        not_found(e, kind, name);
        return NULL;
    }
    if (preconditions(kind, cur, get_str(pre, "resourceVersion"), get_str(pre, "uid"), e) < 0)
        return NULL;
    if (kind == K_NAMESPACE)
        return terminate_namespace(cur, e);
    if (kind == K_CRD && !dry) {
        /* as the CRD finalizer: its objects go first, then its kind; the
         * watches of the kind end */
        int slot = crd_slot(cur);
        if (slot >= 0) {
            delete_contents(slot, NULL);
            watch_close_kind(slot);
            crd_unserve(slot);
        }
    }
    dv = remove_obj(cur);
    if (!dv)
        ks_seterr(e, 500, "InternalError", "out of memory");
    return dv;
}

/* ---------- loading manifests ---------- */

static int ensure_namespace(const char *ns, ks_err *e)
{
    cJSON *n;
    ks_ver *v;
    if (store_get(K_NAMESPACE, "", ns))
        return 0;
    n = cJSON_CreateObject();
    cJSON_AddStringToObject(obj_child(n, "metadata"), "name", ns);
    v = obj_create(K_NAMESPACE, NULL, n, 0, e);
    cJSON_Delete(n);
    ver_unref(v);
    return v ? 0 : -1;
}

int obj_load(const cJSON *doc, ks_err *e)
{
    const char *k = get_str(doc, "kind"), *av = get_str(doc, "apiVersion");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata"), *it;
    const char *ns, *name;
    ks_ver *v;
    int kind;

    if (!cJSON_IsObject(doc) || !k || !av) {
        ks_seterr(e, 400, "BadRequest", "document without kind/apiVersion");
        return -1;
    }
    if (!strcmp(k, "List")) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "items"))
            if (obj_load(it, e) < 0)
                return -1;
        return 0;
    }
    kind = ks_kind_by_kind(av, k);
    if (kind < 0) {
        ks_seterr(e, 400, "BadRequest", "unsupported kind %s (apiVersion %s)", k, av);
        return -1;
    }
    ns = get_str(md, "namespace");
    ns = ks_kinds[kind].namespaced ? (ns && *ns ? ns : "default") : NULL;
    if (ns && ensure_namespace(ns, e) < 0)
        return -1;
    name = get_str(md, "name");
    if (name && store_get(kind, ns ? ns : "", name)) {
        cJSON *c = cJSON_Duplicate(doc, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(obj_child(c, "metadata"), "resourceVersion");
        v = obj_update(kind, ns ? ns : "", name, c, 0, e);
        cJSON_Delete(c);
    } else {
        cJSON *c = cJSON_Duplicate(doc, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(obj_child(c, "metadata"), "resourceVersion");
        v = obj_create(kind, ns, c, 0, e);
        cJSON_Delete(c);
    }
    ver_unref(v);
    return v ? 0 : -1;
}
