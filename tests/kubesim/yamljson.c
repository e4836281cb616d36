/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim YAML/JSON loader — libyaml document trees converted to cJSON.
 *
 * yaml_parser_load() yields one document at a time with aliases already
 * resolved to node indexes; node_to_json() walks that tree recursively
 * (depth-limited, so alias loops cannot recurse forever). Plain scalars are
 * typed the way Go's yaml.v2 (used by kubectl through sigs.k8s.io/yaml) types
 * them; anything quoted stays a string (tags are not interpreted).
 */
#include "yamljson.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YJ_MAX_DEPTH 100

static int is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static int looks_number(const char *s)
{
    const char *p = s;
    int digits = 0;
    if (*p == '-' || *p == '+')
        p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o'))
        return 0; /* hex/octal handled separately */
    while (isdigit((unsigned char)*p)) { p++; digits++; }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) { p++; digits++; }
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

static cJSON *plain_scalar(const char *s)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                        "on", "On", "ON", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "no", "No", "NO",
                                         "off", "Off", "OFF", NULL};
    if (is_one_of(s, nulls))
        return cJSON_CreateNull();
    if (is_one_of(s, trues))
        return cJSON_CreateTrue();
    if (is_one_of(s, falses))
        return cJSON_CreateFalse();
    if (looks_number(s))
        return cJSON_CreateNumber(strtod(s, NULL));
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o') && s[2]) {
        char *end;
        long long v = strtoll(s + 2, &end, s[1] == 'x' ? 16 : 8);
        if (*end == '\0')
            return cJSON_CreateNumber((double)v);
    }
    return cJSON_CreateString(s);
}

static cJSON *scalar_to_json(yaml_node_t *n)
{
    /* libyaml's loader gives every untagged scalar the default !!str tag,
     * so explicit tags cannot be told apart: only the style decides. */
    const char *v = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(v);
    return plain_scalar(v);
}

static cJSON *node_to_json(yaml_document_t *doc, yaml_node_t *n, int depth);

static cJSON *seq_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    cJSON *arr = cJSON_CreateArray();
    yaml_node_item_t *it;
    for (it = n->data.sequence.items.start; arr && it < n->data.sequence.items.top; it++) {
        cJSON *c = node_to_json(doc, yaml_document_get_node(doc, *it), depth + 1);
        if (!c) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, c);
    }
    return arr;
}

static cJSON *map_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    cJSON *obj = cJSON_CreateObject();
    yaml_node_pair_t *p;
    for (p = n->data.mapping.pairs.start; obj && p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        cJSON *v;
        if (!k || k->type != YAML_SCALAR_NODE) {
            cJSON_Delete(obj);
            return NULL;
        }
        v = node_to_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
        if (!v) {
            cJSON_Delete(obj);
            return NULL;
        }
        /* later duplicate keys win, as in most YAML loaders */
        cJSON_DeleteItemFromObjectCaseSensitive(obj, (const char *)k->data.scalar.value);
        cJSON_AddItemToObject(obj, (const char *)k->data.scalar.value, v);
    }
    return obj;
}

static cJSON *node_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > YJ_MAX_DEPTH)
        return NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE: return scalar_to_json(n);
    case YAML_SEQUENCE_NODE: return seq_to_json(doc, n, depth);
    case YAML_MAPPING_NODE: return map_to_json(doc, n, depth);
    default: return NULL;
    }
}

/* Load one document; 1 = got one (added to out unless empty), 0 = end, -1 = error */
static int load_one(yaml_parser_t *ps, cJSON *out, char *err, size_t errlen)
{
    yaml_document_t doc;
    yaml_node_t *root;
    cJSON *j;

    if (!yaml_parser_load(ps, &doc)) {
        snprintf(err, errlen, "line %lu: %s", (unsigned long)ps->problem_mark.line + 1,
                 ps->problem ? ps->problem : "YAML error");
        return -1;
    }
    root = yaml_document_get_root_node(&doc);
    if (!root) {
        yaml_document_delete(&doc);
        return 0;
    }
    j = node_to_json(&doc, root, 0);
    yaml_document_delete(&doc);
    if (!j) {
        snprintf(err, errlen, "unsupported YAML structure (non-scalar key or nesting too deep)");
        return -1;
    }
    if (cJSON_IsNull(j))
        cJSON_Delete(j); /* an empty document ("---" alone) */
    else
        cJSON_AddItemToArray(out, j);
    return 1;
}

cJSON *yj_parse_yaml(const char *buf, size_t len, char *err, size_t errlen)
{
    yaml_parser_t ps;
    cJSON *out = cJSON_CreateArray();
    int r;

    if (!out || !yaml_parser_initialize(&ps)) {
        cJSON_Delete(out);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    while ((r = load_one(&ps, out, err, errlen)) > 0)
        ;
    yaml_parser_delete(&ps);
    if (r < 0) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n + 4096 + 1 > cap) {
            char *nb;
            cap = cap ? cap * 2 : 65536;
            nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "out of memory");
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static cJSON *parse_json_doc(const char *buf, size_t len, char *err, size_t errlen)
{
    cJSON *j = cJSON_ParseWithLength(buf, len), *out;
    if (!j) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, errlen, "invalid JSON near offset %ld",
                 at ? (long)(at - buf) : -1L);
        return NULL;
    }
    if (cJSON_IsArray(j))
        return j;
    out = cJSON_CreateArray();
    cJSON_AddItemToArray(out, j);
    return out;
}

cJSON *yj_load_file(const char *path, char *err, size_t errlen)
{
    size_t len = 0, i = 0;
    char *buf = read_file(path, &len, err, errlen);
    cJSON *out;
    if (!buf)
        return NULL;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    if (i < len && (buf[i] == '{' || buf[i] == '['))
        out = parse_json_doc(buf, len, err, errlen);
    else
        out = yj_parse_yaml(buf, len, err, errlen);
    free(buf);
    return out;
}
