/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim openapi — a minimal OpenAPI v3 document (/openapi/v3).
 *
 * What kubectl reads of it: `kubectl create/apply/replace` with validation
 * on (the default, --validate=strict) first ask whether the server validates
 * fields itself — the PATCH operation of the object's group/version/kind
 * (x-kubernetes-group-version-kind) lists the query parameter
 * fieldValidation — and then send fieldValidation=Strict instead of
 * validating against the schemas on the client. So each group/version
 * document here holds, for every kind served there (built in or from a CRD),
 * its collection path (post) and object path (put, patch, delete), each
 * operation with the GVK extension and the dryRun and fieldValidation query
 * parameters; and nothing else (no schemas: kubectl explain has nothing to
 * show, and kubectl apply builds its patches as without a document).
 * The PATCH operations name no request body types, so kubectl does not build
 * strategic merge patches from schemas (it falls back as before).
 *
 * /openapi/v3 is the index: {"paths":{"api/v1":{"serverRelativeURL":
 * "/openapi/v3/api/v1?hash=H"},...}} with H a hash of that document (FNV-1a,
 * hex), so a client's cache keyed by URL sees changed CRDs; the hash query
 * of a document request is not checked. Built on each request; the caller
 * owns (frees) the string returned.
 */
#include "kubesim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_param(cJSON *params, const char *name)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddStringToObject(p, "in", "query");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "schema"), "type", "string");
    cJSON_AddBoolToObject(cJSON_GetObjectItemCaseSensitive(p, "schema"), "uniqueItems", 1);
    cJSON_AddItemToArray(params, p);
}

static void add_op(cJSON *path, const char *verb, int k, const char *version, const char *id)
{
    cJSON *op = cJSON_AddObjectToObject(path, verb), *gvk, *params;
    char opid[200];
    snprintf(opid, sizeof opid, "%s%s", id, ks_kinds[k].kind);
    cJSON_AddStringToObject(op, "operationId", opid);
    gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
    cJSON_AddStringToObject(gvk, "group", ks_kinds[k].group);
    cJSON_AddStringToObject(gvk, "version", version);
    cJSON_AddStringToObject(gvk, "kind", ks_kinds[k].kind);
    params = cJSON_AddArrayToObject(op, "parameters");
    add_param(params, "dryRun");
    if (strcmp(verb, "delete"))
        add_param(params, "fieldValidation");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(op, "responses"),
                                                    "200"), "description", "OK");
}

/* The document of one group version ("" group = core), NULL when nothing is
 * served there. */
static cJSON *gv_doc(const char *group, const char *version)
{
    cJSON *doc = cJSON_CreateObject(), *info, *paths;
    char prefix[300], p[700];
    int k, n = 0;
    snprintf(prefix, sizeof prefix, *group ? "/apis/%s/%s" : "/api/%s%s", *group ? group : version,
             *group ? version : "");
    cJSON_AddStringToObject(doc, "openapi", "3.0.0");
    info = cJSON_AddObjectToObject(doc, "info");
    cJSON_AddStringToObject(info, "title", "Kubernetes");
    cJSON_AddStringToObject(info, "version", "v1.32.0-kubesim");
    paths = cJSON_AddObjectToObject(doc, "paths");
    for (k = 0; k < KS_KIND_MAX; k++) {
        cJSON *coll, *item;
        if (!ks_kind_live(k) || strcmp(ks_kinds[k].group, group) || !ks_kind_serves(k, version))
            continue;
        snprintf(p, sizeof p, "%s%s/%s", prefix,
                 ks_kinds[k].namespaced ? "/namespaces/{namespace}" : "", ks_kinds[k].resource);
        coll = cJSON_AddObjectToObject(paths, p);
        add_op(coll, "post", k, version, "create");
        snprintf(p + strlen(p), sizeof p - strlen(p), "/{name}");
        item = cJSON_AddObjectToObject(paths, p);
        add_op(item, "put", k, version, "replace");
        add_op(item, "patch", k, version, "patch");
        add_op(item, "delete", k, version, "delete");
        n++;
    }
    cJSON_AddObjectToObject(doc, "components");
    if (!n) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static void index_add(cJSON *paths, const char *group, const char *version)
{
    char key[300], url[400];
    cJSON *doc, *e;
    char *s;
    if (*group)
        snprintf(key, sizeof key, "apis/%s/%s", group, version);
    else
        snprintf(key, sizeof key, "api/%s", version);
    if (cJSON_GetObjectItemCaseSensitive(paths, key) || !(doc = gv_doc(group, version)))
        return;
    s = cJSON_PrintUnformatted(doc);
    snprintf(url, sizeof url, "/openapi/v3/%s?hash=%016llX", key,
             (unsigned long long)(s ? fnv1a(s) : 0));
    free(s);
    cJSON_Delete(doc);
    e = cJSON_AddObjectToObject(paths, key);
    cJSON_AddStringToObject(e, "serverRelativeURL", url);
}

static char *index_doc(void)
{
    cJSON *idx = cJSON_CreateObject(), *paths = cJSON_AddObjectToObject(idx, "paths");
    char *s;
    int g, k;
    for (g = 0; g < KS_NGROUPS; g++)
        index_add(paths, ks_groups[g].name, ks_groups[g].version);
    for (k = K_COUNT; k < KS_KIND_MAX; k++) {
        char **v;
        if (!ks_kind_live(k))
            continue;
        for (v = ks_kinds[k].served; v && *v; v++)
            index_add(paths, ks_kinds[k].group, *v);
    }
    s = cJSON_PrintUnformatted(idx);
    cJSON_Delete(idx);
    return s;
}

char *openapi_v3(const char *path)
{
    char group[256], version[64];
    const char *rest;
    cJSON *doc;
    char *s;
    size_t n;

    if (!strcmp(path, "/openapi/v3") || !strcmp(path, "/openapi/v3/"))
        return index_doc();
    if (!strncmp(path, "/openapi/v3/api/", 16)) {
        group[0] = '\0';
        rest = path + 16;
    } else if (!strncmp(path, "/openapi/v3/apis/", 17)) {
        const char *slash = strchr(path + 17, '/');
        n = slash ? (size_t)(slash - path - 17) : 0;
        if (!n || n >= sizeof group)
            return NULL;
        memcpy(group, path + 17, n);
        group[n] = '\0';
        rest = slash + 1;
    } else {
        return NULL;
    }
    n = strlen(rest);
    if (!n || n >= sizeof version || strchr(rest, '/'))
        return NULL;
    memcpy(version, rest, n + 1);
    if (!(doc = gv_doc(group, version)))
        return NULL;
    s = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return s;
}
