/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonsel.h — a selective JSON parser: builds cJSON nodes only for the
 * members a rule keeps and skips the rest with a scanner (internal to
 * src/k8s).
 *
 * A list page of 500 realistic pods is megabytes of JSON of which the
 * cluster store reads a few fields per pod (name, namespace, node, phase,
 * IPs); the containers, volumes, conditions and managedFields are most of
 * the bytes. jsel_parse() walks the text along a rule tree: in an object
 * rule, each member is kept (parsed by cJSON itself, so a kept value is
 * exactly what cJSON_Parse would give), descended into (an object or array
 * rule of its own), or skipped. A skipped value is still checked: the
 * scanner accepts what cJSON accepts and nothing else (strings with their
 * escapes, numbers, literals, nesting up to CJSON_NESTING_LIMIT counted from
 * the document's root; for the rare forms it cannot decide itself — \u
 * escapes, numbers that are not plain JSON numbers — it asks cJSON), so a
 * text is rejected by jsel_parse() exactly when cJSON_ParseWithLength()
 * rejects it.
 *
 * The result is an ordinary cJSON tree: the same as cJSON_ParseWithLength()
 * would give with the skipped members removed (member order, duplicate
 * members and keys with escapes preserved; a member whose rule is an
 * object or array but whose value is not one is kept as it is). Text after
 * the first value is ignored, as cJSON_ParseWithLength ignores it.
 *
 * Memory: every node and string comes from cJSON's allocation hooks (the
 * arena when called through jarena_parse_sel(), jsonarena.h); the caller
 * owns the tree. Rules are static const tables, shared by every thread.
 */
#ifndef TOPODNS_K8S_JSONSEL_H
#define TOPODNS_K8S_JSONSEL_H

#include <stddef.h>

struct cJSON;

typedef enum {
    JSEL_KEEP,          /* the whole value, as cJSON parses it */
    JSEL_SKIP,          /* checked and dropped (only as a member's rule) */
    JSEL_OBJECT,        /* an object: its members by `sub`, the rest by `others` */
    JSEL_ARRAY,         /* an array: every element by `sub[0]` */
    JSEL_LOOSE,         /* dropped unchecked: only its quotes and brackets must
                           balance (only as a member's rule; jsel_salvage_rule) */
} jsel_kind;

typedef struct jsel {
    const char *name;               /* member name (in a `sub` list); NULL ends it */
    jsel_kind kind;
    jsel_kind others;               /* JSEL_OBJECT: JSEL_KEEP or JSEL_SKIP for the
                                       members `sub` does not name */
    const struct jsel *sub;         /* JSEL_OBJECT: the named members' rules, ended
                                       by a NULL name; JSEL_ARRAY: the element rule */
} jsel;

/* Parse the first JSON value of text[0..len) by rule (NULL: keep all).
 * NULL when the text is not JSON as cJSON sees it, or out of memory. */
struct cJSON *jsel_parse(const char *text, size_t len, const jsel *rule);

/* jsel_parse, except that an element of an array the rule descends into
 * (a list page's items) that cJSON would reject — a lone UTF-16 surrogate
 * escape, nesting deeper than CJSON_NESTING_LIMIT counted from the root, a
 * bad literal — but whose quotes and brackets balance is left out of the
 * array and counted in *skipped (the caller zeroes it): one bad object does
 * not cost the whole page. skipped NULL: the same as jsel_parse. */
struct cJSON *jsel_parse_lenient(const char *text, size_t len, const jsel *rule,
                                 unsigned *skipped);

/* The rules the reflector uses for a collection: `page` for a list
 * response, `line` for a watch event; the resource is the last element of
 * the collection's path ("pods", "nodes", ...). Every resource loses
 * metadata.managedFields; pods and nodes keep only what the cluster store
 * decodes (src/cluster/decode.c, listed in fields.c). */
const jsel *jsel_page_rule(const char *resource);
const jsel *jsel_line_rule(const char *resource);
/* For a watch line jsel_parse refused: only `type` and the object's
 * metadata name, namespace and resourceVersion, everything else JSEL_LOOSE,
 * so the reflector can skip the event and still advance. */
const jsel *jsel_salvage_rule(void);

#endif
