/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonsel_diff.h — the differential check of the selective parser
 * (src/k8s/jsonsel.h) against cJSON, shared by tests/unit/test_jsonsel.c
 * and tests/fuzz/fuzz_jsonsel.c (static functions, header-only).
 *
 * jsel_diff(text, len, rule) parses text with cJSON_ParseWithLength and with
 * jsel_parse(rule); both must fail or both succeed, and then the selective
 * tree must equal the full tree with the members the rule skips removed
 * (prune(), written here from the rule's definition in jsonsel.h, not from
 * the parser): the same types, numbers, strings, member names, children in
 * the same order, and cJSON's list links (head->prev is the tail). Returns
 * NULL, or what differs. Memory: both trees are freed before it returns.
 */
#ifndef TOPODNS_TESTS_JSONSEL_DIFF_H
#define TOPODNS_TESTS_JSONSEL_DIFF_H

#include <string.h>
#include <cjson/cJSON.h>
#include "k8s/jsonsel.h"

static const jsel *jdiff_member(const jsel *rule, const char *name)
{
    for (const jsel *m = rule->sub; m && m->name; m++)
        if (name && !strcmp(m->name, name))
            return m;
    return NULL;
}

/* The full tree as the selective parser must build it. */
static void jdiff_prune(cJSON *v, const jsel *rule)
{
    if (!rule)
        return;
    if (rule->kind == JSEL_OBJECT && cJSON_IsObject(v)) {
        cJSON *c = v->child;
        while (c) {
            cJSON *next = c->next;
            const jsel *m = jdiff_member(rule, c->string);
            if ((m ? m->kind : rule->others) == JSEL_SKIP)
                cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
            else
                jdiff_prune(c, m);
            c = next;
        }
    } else if (rule->kind == JSEL_ARRAY && cJSON_IsArray(v)) {
        for (cJSON *c = v->child; c; c = c->next)
            jdiff_prune(c, rule->sub);
    }
}

static int jdiff_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *jdiff_equal(const cJSON *a, const cJSON *b)
{
    if ((a->type & 0xFF) != (b->type & 0xFF))
        return "type";
    if (!jdiff_str_eq(a->string, b->string))
        return "member name";
    if (!jdiff_str_eq(a->valuestring, b->valuestring))
        return "string value";
    if (cJSON_IsNumber(a) &&
        (memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) || a->valueint != b->valueint))
        return "number";
    if (cJSON_IsBool(a) && a->valueint != b->valueint)
        return "boolean";
    const cJSON *x = a->child, *y = b->child;
    if ((x == NULL) != (y == NULL))
        return "children";
    if (y && y->prev == NULL)
        return "head->prev unset";
    const cJSON *ylast = NULL;
    for (; x && y; x = x->next, y = y->next) {
        const char *why = jdiff_equal(x, y);
        if (why)
            return why;
        if (ylast && y->prev != ylast)
            return "prev link";
        ylast = y;
    }
    if (x || y)
        return "number of children";
    if (b->child && b->child->prev != ylast)
        return "head->prev is not the tail";
    return NULL;
}

static const char *jsel_diff(const char *text, size_t len, const jsel *rule)
{
    cJSON *full = cJSON_ParseWithLength(text, len);
    cJSON *sel = jsel_parse(text, len, rule);
    const char *why = NULL;
    if (!full != !sel)
        why = full ? "cJSON accepts, jsel_parse rejects" : "jsel_parse accepts, cJSON rejects";
    else if (full) {
        jdiff_prune(full, rule);
        why = jdiff_equal(full, sel);
    }
    cJSON_Delete(full);
    cJSON_Delete(sel);
    return why;
}

#endif
