/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fixture.c — see fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <yaml.h>
#include "fixture.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, 2 * cap + 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* A YAML node as JSON: mappings, sequences, and plain scalars typed as
 * YAML 1.1 core would (true/false, null, numbers); quoted scalars stay
 * strings. */
static cJSON *yaml_to_json(yaml_document_t *d, yaml_node_t *n)
{
    if (!n)
        return cJSON_CreateNull();
    if (n->type == YAML_MAPPING_NODE) {
        cJSON *o = cJSON_CreateObject();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(d, p->key);
            if (k && k->type == YAML_SCALAR_NODE)
                cJSON_AddItemToObject(o, (const char *)k->data.scalar.value,
                                      yaml_to_json(d, yaml_document_get_node(d, p->value)));
        }
        return o;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        cJSON *a = cJSON_CreateArray();
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
            cJSON_AddItemToArray(a, yaml_to_json(d, yaml_document_get_node(d, *i)));
        return a;
    }
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(s);
    if (!strcmp(s, "true") || !strcmp(s, "false"))
        return cJSON_CreateBool(s[0] == 't');
    if (!strcmp(s, "null") || !strcmp(s, "~") || !*s)
        return cJSON_CreateNull();
    char *end;
    double v = strtod(s, &end);
    if (end != s && !*end)
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(s);
}

static void add_object(store *st, const cJSON *o, const char *file)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    const char *k = cJSON_IsString(kind) ? kind->valuestring : "";
    int rc = !strcmp(k, "Namespace") ? store_upsert_namespace(st, o) :
             !strcmp(k, "Service") ? store_upsert_service(st, o) :
             !strcmp(k, "EndpointSlice") ? store_upsert_slice(st, o) :
             !strcmp(k, "Pod") ? store_upsert_pod(st, o) :
             !strcmp(k, "Node") ? store_upsert_node(st, o) : -1;
    if (rc != 0) {
        fprintf(stderr, "fixture: %s: a %s the store refused\n", file, k);
        abort();
    }
}

static void load_json(store *st, const char *file)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/tests/data/kubernetes/%s", SRCDIR, file);
    char *text = slurp(path, &len);
    cJSON *list = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!list) {
        fprintf(stderr, "fixture: cannot read %s\n", path);
        abort();
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
        add_object(st, it, file);
    cJSON_Delete(list);
}

static void load_yaml(store *st, const char *file)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/tests/data/%s", SRCDIR, file);
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "fixture: cannot read %s\n", path);
        abort();
    }
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        yaml_document_t d;
        if (!yaml_parser_load(&p, &d))
            abort();
        yaml_node_t *root = yaml_document_get_root_node(&d);
        if (!root) {
            yaml_document_delete(&d);
            break;
        }
        cJSON *o = yaml_to_json(&d, root);
        add_object(st, o, file);
        cJSON_Delete(o);
        yaml_document_delete(&d);
    }
    yaml_parser_delete(&p);
    free(text);
}

void fuzz_fixture_load(store *st)
{
    if (!st)
        abort();
    load_json(st, "cluster.json");
    load_json(st, "zonal.json");
    load_yaml(st, "topology/cluster.yaml");
}
