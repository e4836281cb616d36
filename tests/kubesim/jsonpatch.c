/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim JSON patch — RFC 6902 over cJSON trees (see jsonpatch.h for the
 * apiserver's deviations from the RFC, which this follows).
 *
 * A JSON pointer is resolved to its parent container and last key: the text
 * before the first "/" is ignored, every segment but the last must lead to
 * an object or an array (an array segment is a decimal index, negative ones
 * counting from the end), the last one is the key the operation acts on.
 * Operations change the document in place, one after another; the first one
 * that fails stops the patch (the caller drops the half-patched copy).
 */
#include "jsonpatch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    char *err;
    size_t errlen;
} jp;

static int fail(jp *j, const char *fmt, const char *a, const char *b)
{
    snprintf(j->err, j->errlen, fmt, a, b ? b : "");
    return -1;
}

/* RFC 6901 unescaping: "~1" is "/", "~0" is "~", left to right. */
static char *decode_seg(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    size_t i, o = 0;
    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '~' && i + 1 < n && (s[i + 1] == '0' || s[i + 1] == '1')) {
            out[o++] = s[i + 1] == '0' ? '~' : '/';
            i++;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

/* A decimal integer with an optional sign, nothing else (as the apiserver
 * reads array indexes). 0 ok, -1 not a number. */
static int parse_index(const char *s, long *out)
{
    const char *p = s;
    char *end;
    long v;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

/* Index key into an array of n items (n + extra positions are valid: 1 for
 * an insert). Negative indexes count from the end. -1 when out of range. */
static int array_index(const char *key, int n, int extra, int *idx)
{
    long v;
    int size = n + extra;
    if (parse_index(key, &v) < 0 || v >= size || v < -(long)size)
        return -1;
    *idx = (int)(v < 0 ? v + size : v);
    return 0;
}

/* The child of con at key (NULL for a missing object member). 0 ok, -1
 * for a bad or out of range array index. */
static int get_child(cJSON *con, const char *key, cJSON **out)
{
    int idx;
    if (cJSON_IsObject(con)) {
        *out = cJSON_GetObjectItemCaseSensitive(con, key);
        return 0;
    }
    if (array_index(key, cJSON_GetArraySize(con), 0, &idx) < 0)
        return -1;
    *out = cJSON_GetArrayItem(con, idx);
    return 0;
}

/* The container holding path's last segment, and that segment decoded
 * (malloc'ed) in *key; NULL when the path does not lead anywhere. */
static cJSON *find_parent(cJSON *doc, const char *path, char **key)
{
    const char *p = strchr(path, '/'), *q;
    cJSON *cur = doc;
    if (!p)
        return NULL;
    p++;
    while ((q = strchr(p, '/'))) {
        char *seg = decode_seg(p, (size_t)(q - p));
        cJSON *next = NULL;
        int rc = seg ? get_child(cur, seg, &next) : -1;
        free(seg);
        if (rc < 0 || !(cJSON_IsObject(next) || cJSON_IsArray(next)))
            return NULL;
        cur = next;
        p = q + 1;
    }
    *key = decode_seg(p, strlen(p));
    return *key ? cur : NULL;
}

/* Put val (owned; freed on failure) at key of con. */
static int con_add(cJSON *con, const char *key, cJSON *val)
{
    int idx, n;
    cJSON *tail;
    if (cJSON_IsObject(con)) {
        if (cJSON_GetObjectItemCaseSensitive(con, key))
            return cJSON_ReplaceItemInObjectCaseSensitive(con, key, val) ? 0 : -1;
        return cJSON_AddItemToObject(con, key, val) ? 0 : -1;
    }
    if (!strcmp(key, "-"))
        return cJSON_AddItemToArray(con, val) ? 0 : -1;
    if (array_index(key, cJSON_GetArraySize(con), 1, &idx) < 0) {
        cJSON_Delete(val);
        return -1;
    }
    /* insert by moving the tail behind val (cJSON_InsertItemInArray
     * refuses inserts in some patched cJSON releases) */
    tail = cJSON_CreateArray();
    n = cJSON_GetArraySize(con);
    while (tail && n-- > idx)
        cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(con, idx));
    cJSON_AddItemToArray(con, val);
    while (tail && tail->child)
        cJSON_AddItemToArray(con, cJSON_DetachItemFromArray(tail, 0));
    if (!tail)
        return -1;
    cJSON_Delete(tail);
    return 0;
}

/* Take the item at key out of con (NULL when missing or a bad index). */
static cJSON *con_detach(cJSON *con, const char *key)
{
    int idx;
    if (cJSON_IsObject(con))
        return cJSON_DetachItemFromObjectCaseSensitive(con, key);
    if (array_index(key, cJSON_GetArraySize(con), 0, &idx) < 0)
        return NULL;
    return cJSON_DetachItemFromArray(con, idx);
}

static const char *op_str(const cJSON *op, const char *field)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(op, field);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

/* the op's "value" (a copy), null when absent */
static cJSON *op_value(const cJSON *op)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, "value");
    return v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
}

static int do_add(jp *j, cJSON *doc, const char *path, cJSON *val)
{
    char *key = NULL;
    cJSON *con = find_parent(doc, path, &key);
    int rc;
    if (!con) {
        cJSON_Delete(val);
        return fail(j, "add operation does not apply: doc is missing path: \"%s\"", path, NULL);
    }
    rc = con_add(con, key, val);
    free(key);
    return rc < 0 ? fail(j, "error in add for path: '%s'", path, NULL) : 0;
}

static int do_remove(jp *j, cJSON *doc, const char *path)
{
    char *key = NULL;
    cJSON *con = find_parent(doc, path, &key), *old;
    if (!con)
        return fail(j, "remove operation does not apply: doc is missing path: \"%s\"", path, NULL);
    old = con_detach(con, key);
    free(key);
    if (!old)
        return fail(j, "error in remove for path: '%s'", path, NULL);
    cJSON_Delete(old);
    return 0;
}

static int do_replace(jp *j, cJSON **doc, const char *path, cJSON *val)
{
    char *key = NULL;
    cJSON *con, *cur = NULL;
    int idx;
    if (!*path) {
        if (!cJSON_IsObject(val) && !cJSON_IsArray(val)) {
            cJSON_Delete(val);
            return fail(j, "replace operation value must be object or array", NULL, NULL);
        }
        cJSON_Delete(*doc);
        *doc = val;
        return 0;
    }
    con = find_parent(*doc, path, &key);
    if (!con) {
        cJSON_Delete(val);
        return fail(j, "replace operation does not apply: doc is missing path: %s", path, NULL);
    }
    if (get_child(con, key, &cur) < 0) {
        free(key);
        cJSON_Delete(val);
        return fail(j, "replace operation does not apply: doc is missing key: %s", path, NULL);
    }
    if (cJSON_IsObject(con)) {
        /* a missing member is added, as by the apiserver */
        int ok = con_add(con, key, val);
        free(key);
        return ok;
    }
    array_index(key, cJSON_GetArraySize(con), 0, &idx);
    free(key);
    return cJSON_ReplaceItemInArray(con, idx, val) ? 0 : -1;
}

static int do_move(jp *j, cJSON *doc, const char *from, const char *path)
{
    char *key = NULL;
    cJSON *con = find_parent(doc, from, &key), *val;
    if (!con)
        return fail(j, "move operation does not apply: doc is missing from path: %s", from, NULL);
    val = con_detach(con, key);
    free(key);
    if (!val)
        return fail(j, "error in move for path: '%s'", from, NULL);
    key = NULL;
    con = find_parent(doc, path, &key);
    if (!con) {
        cJSON_Delete(val);
        return fail(j, "move operation does not apply: doc is missing destination path: %s",
                    path, NULL);
    }
    if (con_add(con, key, val) < 0) {
        free(key);
        return fail(j, "error in move for path: '%s'", path, NULL);
    }
    free(key);
    return 0;
}

static int do_copy(jp *j, cJSON *doc, const char *from, const char *path)
{
    char *key = NULL;
    cJSON *con = find_parent(doc, from, &key), *val = NULL;
    if (!con)
        return fail(j, "copy operation does not apply: doc is missing from path: %s", from, NULL);
    if (get_child(con, key, &val) < 0) {
        free(key);
        return fail(j, "error in copy for from: '%s'", from, NULL);
    }
    free(key);
    /* a missing object member copies as null, as in the apiserver */
    val = val ? cJSON_Duplicate(val, 1) : cJSON_CreateNull();
    key = NULL;
    con = find_parent(doc, path, &key);
    if (!con) {
        cJSON_Delete(val);
        return fail(j, "copy operation does not apply: doc is missing destination path: %s",
                    path, NULL);
    }
    if (con_add(con, key, val) < 0) {
        free(key);
        return fail(j, "error while adding value during copy: '%s'", path, NULL);
    }
    free(key);
    return 0;
}

static int do_test(jp *j, cJSON *doc, const char *path, const cJSON *op)
{
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(op, "value");
    char *key = NULL;
    cJSON *con, *val = NULL;
    if (!*path) {
        if (want && cJSON_Compare(doc, want, 1))
            return 0;
        return fail(j, "testing value %s failed: test failed", path, NULL);
    }
    con = find_parent(doc, path, &key);
    if (!con)
        return fail(j, "test operation does not apply: is missing path: %s", path, NULL);
    if (get_child(con, key, &val) < 0) {
        free(key);
        return fail(j, "error in test for path: '%s'", path, NULL);
    }
    free(key);
    if (!val || cJSON_IsNull(val)) { /* missing or null: null or no value passes */
        if (!want || cJSON_IsNull(want))
            return 0;
    } else if (want && cJSON_Compare(val, want, 1)) {
        return 0;
    }
    return fail(j, "testing value %s failed: test failed", path, NULL);
}

static const char *json_type(const cJSON *c)
{
    if (cJSON_IsObject(c))
        return "object";
    if (cJSON_IsString(c))
        return "string";
    if (cJSON_IsNumber(c))
        return "number";
    if (cJSON_IsBool(c))
        return "bool";
    return "array";
}

cJSON *json_patch_apply(cJSON *doc, const cJSON *patch, int *code, char *err, size_t errlen)
{
    jp j = {err, errlen};
    const cJSON *op;
    int n = 0, rc = 0;

    /* decoding first: the whole patch must be an array of objects (null
     * elements decode, then fail as an unknown operation) */
    if (cJSON_IsNull(patch))
        return doc;
    if (!cJSON_IsArray(patch)) {
        snprintf(err, errlen, "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                 json_type(patch));
        *code = 400;
        goto fail;
    }
    cJSON_ArrayForEach(op, patch) {
        if (!cJSON_IsObject(op) && !cJSON_IsNull(op)) {
            snprintf(err, errlen, "json: cannot unmarshal %s into Go value of type "
                     "jsonpatch.Operation", json_type(op));
            *code = 400;
            goto fail;
        }
        n++;
    }
    if (n > JSON_PATCH_MAX_OPS) {
        snprintf(err, errlen, "Request entity too large: The allowed maximum operations in a "
                 "JSON patch is %d, got %d", JSON_PATCH_MAX_OPS, n);
        *code = 413;
        goto fail;
    }
    *code = 422;
    cJSON_ArrayForEach(op, patch) {
        const char *kind = op_str(op, "op"), *path = op_str(op, "path");
        const char *from = op_str(op, "from");
        if (!kind) {
            rc = fail(&j, "Unexpected kind: unknown", NULL, NULL);
        } else if (strcmp(kind, "add") && strcmp(kind, "remove") && strcmp(kind, "replace") &&
                   strcmp(kind, "move") && strcmp(kind, "copy") && strcmp(kind, "test")) {
            rc = fail(&j, "Unexpected kind: %s", kind, NULL);
        } else if (!path) {
            rc = fail(&j, "%s operation failed to decode path: missing value", kind, NULL);
        } else if (!from && (!strcmp(kind, "move") || !strcmp(kind, "copy"))) {
            rc = fail(&j, "%s operation failed to decode from: missing value", kind, NULL);
        } else if (!strcmp(kind, "add")) {
            rc = do_add(&j, doc, path, op_value(op));
        } else if (!strcmp(kind, "remove")) {
            rc = do_remove(&j, doc, path);
        } else if (!strcmp(kind, "replace")) {
            rc = do_replace(&j, &doc, path, op_value(op));
        } else if (!strcmp(kind, "move")) {
            rc = do_move(&j, doc, from, path);
        } else if (!strcmp(kind, "copy")) {
            rc = do_copy(&j, doc, from, path);
        } else {
            rc = do_test(&j, doc, path, op);
        }
        if (rc < 0)
            goto fail;
    }
    return doc;
fail:
    cJSON_Delete(doc);
    return NULL;
}
