/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim crd — CustomResourceDefinitions (apiextensions.k8s.io/v1).
 *
 * A CRD is stored like any object (kind K_CRD); writing one also makes its
 * kind served, the way kube-apiserver's apiextensions server does:
 *   crd_check        the validation and defaults of the CRD's strategy (422
 *                    with the apiserver's messages; singular, listKind and
 *                    conversion defaulted; the status of a create is the
 *                    initial one, status.storedVersions = [storage version])
 *   crd_established  what the naming and establishing controllers do after
 *                    a write: the kind gets a slot in ks_kinds (>= K_COUNT),
 *                    then the status gets acceptedNames and the conditions
 *                    NamesAccepted (NoConflicts) and Established
 *                    (InitialNamesAccepted), written as one more change
 *                    (a MODIFIED event) when it differs.
 * A slot is served at every spec.versions[] entry with served: true; its
 * objects are stored once, with the storage version's apiVersion. Slots are
 * never reused (old events and saved states keep their kind numbers); a
 * deleted CRD's slot stays inactive, and crd_sync() after restoreState
 * reactivates the slots of the CRDs restored (matched by uid).
 * objects.c deletes a CRD's objects before the CRD itself (crd_unserve).
 * The slot strings are owned here and freed by crd_free() at exit.
 */
#include "kubesim.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) && *x->valuestring ? x->valuestring : NULL;
}

static void put_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddStringToObject(o, k, v);
}

static cJSON *child(cJSON *o, const char *k)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsObject(c)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        c = cJSON_AddObjectToObject(o, k);
    }
    return c;
}

/* the apiserver's Invalid error for a CRD */
static int crd_invalid(ks_err *e, const char *name, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int crd_invalid(ks_err *e, const char *name, const char *field, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ks_seterr(e, 422, "Invalid", "CustomResourceDefinition.apiextensions.k8s.io \"%s\" is "
              "invalid: %s: %s", name, field, what);
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->field, sizeof e->field, "%s", field);
    e->dkind = "CustomResourceDefinition";
    e->group = "apiextensions.k8s.io";
    e->cause_msg = strstr(e->msg, what);
    if (!strncmp(what, "Required value", 14))
        e->cause = "FieldValueRequired";
    else if (!strncmp(what, "Unsupported value", 17))
        e->cause = "FieldValueNotSupported";
    return -1;
}

/* a DNS-1035 label ("plural", "singular", "shortNames") */
static int dns1035(const char *s)
{
    size_t n = strlen(s), i;
    if (!n || n > 63 || !islower((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int not_dns1035(ks_err *e, const char *name, const char *field, const char *value)
{
    return crd_invalid(e, name, field, "Invalid value: \"%s\": a DNS-1035 label must consist "
                       "of lower case alphanumeric characters or '-', start with an alphabetic "
                       "character, and end with an alphanumeric character", value);
}

static int bad_kind(ks_err *e, const char *name, const char *field, const char *value)
{
    return crd_invalid(e, name, field, "Invalid value: \"%s\": may have mixed case, but "
                       "should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?", value);
}

/* kind and listKind: a DNS-1035 label once lower-cased */
static int lower_dns1035(const char *s)
{
    char buf[64];
    size_t i, n = strlen(s);
    if (n >= sizeof buf)
        return 0;
    for (i = 0; i <= n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    return dns1035(buf);
}

static int subdomain(const char *s)
{
    size_t n = strlen(s), i;
    if (!n || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
            s[i] != '.')
            return 0;
    return 1;
}

static const char *storage_version(const cJSON *spec)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions"))
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
            return str_at(v, "name", NULL);
    return NULL;
}

static int check_versions(const char *name, const cJSON *spec, ks_err *e)
{
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(spec, "versions"), *v;
    int i = 0, storage = 0, served = 0;
    char f[96];
    if (!cJSON_IsArray(vs) || !cJSON_GetArraySize(vs))
        return crd_invalid(e, name, "spec.versions", "Invalid value: null: must have exactly "
                           "one version marked as storage version");
    cJSON_ArrayForEach(v, vs) {
        const char *vn = str_at(v, "name", NULL);
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "schema"), "openAPIV3Schema");
        if (!vn) {
            snprintf(f, sizeof f, "spec.versions[%d].name", i);
            return crd_invalid(e, name, f, "Required value");
        }
        if (!dns1035(vn)) {
            snprintf(f, sizeof f, "spec.versions[%d].name", i);
            return not_dns1035(e, name, f, vn);
        }
        if (!cJSON_IsObject(schema)) {
            snprintf(f, sizeof f, "spec.versions[%d].schema.openAPIV3Schema", i);
            return crd_invalid(e, name, f, "Required value: schemas are required");
        }
        storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        served += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served"));
        i++;
    }
    if (storage != 1)
        return crd_invalid(e, name, "spec.versions", "Invalid value: []apiextensions."
                           "CustomResourceDefinitionVersion{...}: must have exactly one version "
                           "marked as storage version");
    if (!served)
        return crd_invalid(e, name, "spec.versions", "Invalid value: []apiextensions."
                           "CustomResourceDefinitionVersion{...}: must have at least one "
                           "version marked as served");
    return 0;
}

int crd_check(cJSON *o, const cJSON *old, ks_err *e)
{
    cJSON *md = child(o, "metadata"), *spec = child(o, "spec"), *names = child(spec, "names");
    const cJSON *ospec = cJSON_GetObjectItemCaseSensitive(old, "spec");
    const char *name = str_at(md, "name", NULL), *group = str_at(spec, "group", NULL);
    const char *plural = str_at(names, "plural", NULL), *kind = str_at(names, "kind", NULL);
    const char *scope = str_at(spec, "scope", NULL), *sv;
    char want[600], buf[300];
    cJSON *status, *stored;
    const cJSON *s;
    int have = 0;

    if (!name)
        name = "";
    if (!group)
        return crd_invalid(e, name, "spec.group", "Required value");
    if (!subdomain(group))
        return crd_invalid(e, name, "spec.group", "Invalid value: \"%s\": a lowercase RFC "
                           "1123 subdomain must consist of lower case alphanumeric characters, "
                           "'-' or '.', and must start and end with an alphanumeric character",
                           group);
    if (!strchr(group, '.'))
        return crd_invalid(e, name, "spec.group", "Invalid value: \"%s\": should be a domain "
                           "with at least one dot", group);
    if (!plural)
        return crd_invalid(e, name, "spec.names.plural", "Required value");
    if (!dns1035(plural))
        return not_dns1035(e, name, "spec.names.plural", plural);
    snprintf(want, sizeof want, "%s.%s", plural, group);
    if (strcmp(name, want))
        return crd_invalid(e, name, "metadata.name", "Invalid value: \"%s\": must be "
                           "spec.names.plural+\".\"+spec.group", name);
    if (!kind)
        return crd_invalid(e, name, "spec.names.kind", "Required value");
    if (!lower_dns1035(kind))
        return bad_kind(e, name, "spec.names.kind", kind);
    if (str_at(names, "listKind", NULL) && !lower_dns1035(str_at(names, "listKind", NULL)))
        return bad_kind(e, name, "spec.names.listKind", str_at(names, "listKind", NULL));
    if (str_at(names, "singular", NULL) && !dns1035(str_at(names, "singular", NULL)))
        return not_dns1035(e, name, "spec.names.singular", str_at(names, "singular", NULL));
    if (!scope)
        return crd_invalid(e, name, "spec.scope", "Required value");
    if (strcmp(scope, "Cluster") && strcmp(scope, "Namespaced"))
        return crd_invalid(e, name, "spec.scope", "Unsupported value: \"%s\": supported "
                           "values: \"Cluster\", \"Namespaced\"", scope);
    if (check_versions(name, spec, e) < 0)
        return -1;
    if (ospec) { /* established: these cannot change */
        static const char *const imm[][2] = {{"scope", NULL}, {"names", "kind"},
                                             {"names", "listKind"}};
        size_t i;
        for (i = 0; i < sizeof imm / sizeof imm[0]; i++) {
            const char *a = str_at(imm[i][1] ? cJSON_GetObjectItemCaseSensitive(spec, imm[i][0])
                                             : spec, imm[i][1] ? imm[i][1] : imm[i][0], NULL);
            const char *b = str_at(imm[i][1] ? cJSON_GetObjectItemCaseSensitive(ospec, imm[i][0])
                                             : ospec, imm[i][1] ? imm[i][1] : imm[i][0], NULL);
            if (a && b && strcmp(a, b)) {
                snprintf(buf, sizeof buf, "spec.%s%s%s", imm[i][0], imm[i][1] ? "." : "",
                         imm[i][1] ? imm[i][1] : "");
                return crd_invalid(e, name, buf, "Invalid value: \"%s\": field is immutable", a);
            }
        }
    }
    /* the v1 defaults */
    if (!str_at(names, "singular", NULL)) {
        size_t i;
        snprintf(buf, sizeof buf, "%s", kind);
        for (i = 0; buf[i]; i++)
            buf[i] = (char)tolower((unsigned char)buf[i]);
        put_str(names, "singular", buf);
    }
    if (!str_at(names, "listKind", NULL)) {
        snprintf(buf, sizeof buf, "%sList", kind);
        put_str(names, "listKind", buf);
    }
    if (!str_at(child(spec, "conversion"), "strategy", NULL))
        put_str(child(spec, "conversion"), "strategy", "None");
    /* status: the initial one on create; kept (when the body has none) on
     * replace; storedVersions gains the storage version */
    sv = storage_version(spec);
    if (!old) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
        status = cJSON_AddObjectToObject(o, "status");
        names = cJSON_AddObjectToObject(status, "acceptedNames");
        cJSON_AddStringToObject(names, "plural", "");
        cJSON_AddStringToObject(names, "kind", "");
    } else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "status"))) {
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(old, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
        cJSON_AddItemToObject(o, "status", os ? cJSON_Duplicate(os, 1) : cJSON_CreateObject());
    }
    status = child(o, "status");
    stored = cJSON_GetObjectItemCaseSensitive(status, "storedVersions");
    if (!cJSON_IsArray(stored)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "storedVersions");
        stored = cJSON_AddArrayToObject(status, "storedVersions");
    }
    cJSON_ArrayForEach(s, stored)
        have |= cJSON_IsString(s) && !strcmp(s->valuestring, sv);
    if (!have)
        cJSON_AddItemToArray(stored, cJSON_CreateString(sv));
    return 0;
}

/* ---------- slots ---------- */

static void free_strings(char **v)
{
    char **p;
    for (p = v; p && *p; p++)
        free(*p);
    free(v);
}

static void free_slot_strings(ks_kind *k)
{
    free((char *)k->resource);
    free((char *)k->singular);
    free((char *)k->kind);
    free((char *)k->list_kind);
    free((char *)k->group);
    free((char *)k->api_version);
    free((char *)k->short_name);
    free_strings(k->served);
    free_strings(k->short_names);
    free_strings(k->categories);
    free(k->crd_uid);
}

/* a NULL-terminated copy of the strings of a JSON array */
static char **strings_of(const cJSON *a)
{
    char **out = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
    const cJSON *x;
    int n = 0;
    cJSON_ArrayForEach(x, (cJSON_IsArray(a) ? a : NULL))
        if (out && cJSON_IsString(x))
            out[n++] = strdup(x->valuestring);
    return out;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The slot of the CRD with uid (active or not), or -1. */
static int slot_of_uid(const char *uid)
{
    int k;
    for (k = K_COUNT; k < KS_KIND_MAX && uid; k++)
        if (ks_kinds[k].crd_uid && !strcmp(ks_kinds[k].crd_uid, uid))
            return k;
    return -1;
}

/* Serve the CRD (parsed): fill its slot. -1 when a built-in kind serves the
 * same group and resource, or no slot is left. */
static int serve(const cJSON *crd)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names"), *v;
    const char *uid = str_at(crd, "metadata", "uid"), *group = str_at(spec, "group", NULL);
    const char *plural = str_at(names, "plural", NULL), *sv = storage_version(spec);
    const cJSON *sn = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(names, "shortNames"), 0);
    int k = slot_of_uid(uid), b, n = 0;
    char av[300];
    ks_kind nk;

    if (!uid || !group || !plural || !sv)
        return -1;
    b = ks_kind_by_resource(group, plural);
    if (b >= 0 && b < K_COUNT)
        return -1; /* built in (serviceimports): that one serves it */
    for (k = k >= 0 ? k : K_COUNT; k < KS_KIND_MAX && ks_kinds[k].crd_uid &&
         strcmp(ks_kinds[k].crd_uid, uid); k++)
        ;
    if (k >= KS_KIND_MAX) {
        fprintf(stderr, "kubesim: more than %d CRDs; %s is not served\n", KS_MAX_CRDS, plural);
        return -1;
    }
    memset(&nk, 0, sizeof nk);
    snprintf(av, sizeof av, "%s/%s", group, sv);
    nk.resource = strdup(plural);
    nk.singular = strdup(str_at(names, "singular", NULL) ? str_at(names, "singular", NULL) : plural);
    nk.kind = dup_or_null(str_at(names, "kind", NULL));
    nk.list_kind = dup_or_null(str_at(names, "listKind", NULL));
    nk.group = strdup(group);
    nk.api_version = strdup(av);
    nk.short_name = cJSON_IsString(sn) ? strdup(sn->valuestring) : NULL;
    nk.namespaced = str_at(spec, "scope", NULL) && !strcmp(str_at(spec, "scope", NULL), "Namespaced");
    nk.active = 1;
    nk.crd_uid = strdup(uid);
    nk.short_names = strings_of(cJSON_GetObjectItemCaseSensitive(names, "shortNames"));
    nk.categories = strings_of(cJSON_GetObjectItemCaseSensitive(names, "categories"));
    nk.served = calloc((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(spec, "versions")) + 1,
                       sizeof(char *));
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions"))
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")) && str_at(v, "name", NULL))
            nk.served[n++] = strdup(str_at(v, "name", NULL));
    if (!nk.kind || !nk.list_kind) {
        free_slot_strings(&nk);
        return -1;
    }
    free_slot_strings(&ks_kinds[k]);
    ks_kinds[k] = nk;
    return k;
}

static void set_condition(cJSON *conds, const char *type, const char *reason, const char *msg)
{
    cJSON *c;
    char now[32];
    cJSON_ArrayForEach(c, conds) {
        const char *t = str_at(c, "type", NULL), *s = str_at(c, "status", NULL);
        if (t && !strcmp(t, type)) {
            if (s && !strcmp(s, "True"))
                return;
            break;
        }
    }
    if (!c) {
        c = cJSON_CreateObject();
        cJSON_AddItemToArray(conds, c);
    }
    ks_now(now);
    put_str(c, "type", type);
    put_str(c, "status", "True");
    put_str(c, "lastTransitionTime", now);
    put_str(c, "reason", reason);
    put_str(c, "message", msg);
}

void crd_established(const ks_ver *crd)
{
    cJSON *o = ver_parse(crd), *st, *an, *conds;
    const cJSON *names, *x;
    ks_ver *cur, *nv;
    char rv[24];
    static const char *const keep[] = {"plural", "singular", "shortNames", "kind", "listKind",
                                       "categories"};
    size_t i;

    if (!o)
        return;
    serve(o);
    names = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "names");
    st = cJSON_Duplicate(child(o, "status"), 1);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "acceptedNames");
    an = cJSON_AddObjectToObject(st, "acceptedNames");
    for (i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if ((x = cJSON_GetObjectItemCaseSensitive(names, keep[i])))
            cJSON_AddItemToObject(an, keep[i], cJSON_Duplicate(x, 1));
    conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
        conds = cJSON_AddArrayToObject(st, "conditions");
    }
    set_condition(conds, "NamesAccepted", "NoConflicts", "no conflicts found");
    set_condition(conds, "Established", "InitialNamesAccepted",
                  "the initial names have been accepted");
    cur = store_get(K_CRD, "", crd->name);
    if (cur != crd || cJSON_Compare(st, cJSON_GetObjectItemCaseSensitive(o, "status"), 1)) {
        cJSON_Delete(st);
        cJSON_Delete(o);
        return;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(o, "status", st);
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)store_next_rv());
    put_str(child(o, "metadata"), "resourceVersion", rv);
    nv = ver_from_json(K_CRD, o);
    if (nv) {
        store_commit(EV_MODIFIED, nv, cur);
        ver_unref(nv);
    }
    cJSON_Delete(o);
}

int crd_slot(const ks_ver *crd)
{
    cJSON *o = ver_parse(crd);
    int k = slot_of_uid(str_at(o, "metadata", "uid"));
    cJSON_Delete(o);
    return k >= 0 && ks_kinds[k].active ? k : -1;
}

void crd_unserve(int slot)
{
    assert(slot >= K_COUNT && slot < KS_KIND_MAX);
    ks_kinds[slot].active = 0;
}

void crd_sync(void)
{
    size_t i, n = store_count(K_CRD);
    int k;
    for (k = K_COUNT; k < KS_KIND_MAX; k++)
        ks_kinds[k].active = 0;
    for (i = 0; i < n; i++) {
        cJSON *o = ver_parse(store_at(K_CRD, i));
        if (o)
            serve(o);
        cJSON_Delete(o);
    }
}

void crd_free(void)
{
    int k;
    for (k = K_COUNT; k < KS_KIND_MAX; k++) {
        free_slot_strings(&ks_kinds[k]);
        memset(&ks_kinds[k], 0, sizeof ks_kinds[k]);
    }
}
