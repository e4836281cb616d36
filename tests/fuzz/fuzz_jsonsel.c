/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_jsonsel.c — fuzz harness for the selective JSON parser
 * (src/k8s/jsonsel.c) and the reflector's rules (src/k8s/fields.c): every
 * list page and watch line the reflector parses goes through it.
 *
 * Input: one octet choosing the rule (the page or line rule of pods, nodes
 * or any other resource, or no rule), then the JSON text. Checks
 * (tests/fuzz/jsonsel_diff.h): jsel_parse accepts exactly what
 * cJSON_ParseWithLength accepts, and its tree is cJSON's with the skipped
 * members removed; the same text through the parse arena
 * (jarena_parse_sel) gives a tree exactly when the plain parse does; the
 * lenient parse (jsel_parse_lenient) gives the same tree and skips nothing
 * where the strict one succeeds; the salvage rule parses anything safely.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "k8s/jsonarena.h"
#include "k8s/jsonsel.h"
#include "jsonsel_diff.h"

/* The two trees print the same: members in order, duplicate keys included
 * (cJSON_Compare looks each key up by name, so an object with a repeated key
 * never compares equal, even to itself). */
static int same_tree(const cJSON *a, const cJSON *b)
{
    char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
    int same = x && y && strcmp(x, y) == 0;
    cJSON_free(x);
    cJSON_free(y);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const res[] = { "pods", "nodes", "services" };
    if (size < 1)
        return 0;
    unsigned pick = data[0] % 7;
    const jsel *rule = pick == 6 ? NULL
                       : pick % 2 ? jsel_line_rule(res[pick / 2]) : jsel_page_rule(res[pick / 2]);
    const char *text = (const char *)data + 1;
    size--;
    const char *why = jsel_diff(text, size, rule);
    if (why) {
        fprintf(stderr, "fuzz_jsonsel: rule %u: %s\n", pick, why);
        abort();
    }
    cJSON *plain = jsel_parse(text, size, rule);
    cJSON *arena = jarena_parse_sel(text, size, rule);
    if (!plain != !arena) {
        fprintf(stderr, "fuzz_jsonsel: the arena parse differs\n");
        abort();
    }
    jarena_delete(arena);
    jarena_release();
    /* the lenient parse (list pages) gives the same tree and skips nothing
     * where the strict one succeeds; elsewhere it may only leave items out */
    unsigned skipped = 0;
    cJSON *lenient = jsel_parse_lenient(text, size, rule, &skipped);
    if (plain && (!lenient || skipped || !same_tree(plain, lenient))) {
        fprintf(stderr, "fuzz_jsonsel: the lenient parse differs on a valid text\n");
        abort();
    }
    cJSON_Delete(lenient);
    /* and the salvage rule for refused watch lines never crashes */
    cJSON_Delete(jsel_parse(text, size, jsel_salvage_rule()));
    cJSON_Delete(plain);
    return 0;
}
