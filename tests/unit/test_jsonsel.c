/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_jsonsel.c — the selective parser (src/k8s/jsonsel.c) and the rules
 * the reflector uses (src/k8s/fields.c).
 *
 * - Real objects (tests/data/kubernetes/objects.jsonl: pods and nodes as
 *   the API sends them, with managedFields, containers, volumes, conditions,
 *   images; compact and with whitespace everywhere), wrapped as a list page
 *   and as a watch event, under every resource's rules: the selective tree
 *   is the full cJSON tree with the skipped members removed
 *   (tests/fuzz/jsonsel_diff.h), and what the cluster store decodes from
 *   them (decode_pod, decode_node) is the same either way; the same for
 *   EndpointSlices (IPv4 with hints, ownerReferences and
 *   deprecatedTopology, IPv6 without ports, a multicluster one) and
 *   decode_slice.
 * - The rules really prune: a pod keeps metadata name/namespace/
 *   resourceVersion/deletionTimestamp, spec nodeName/hostNetwork, status
 *   phase/podIP/podIPs and nothing else; an EndpointSlice keeps its
 *   endpoints' addresses, conditions, hostname, nodeName, zone, hints and
 *   targetRef kind/name, and of its metadata name/namespace/
 *   resourceVersion/labels/annotations; every resource loses managedFields;
 *   an ERROR event's Status keeps its code, reason and details.
 * - Texts cJSON rejects are rejected too, texts it accepts accepted: every
 *   prefix of a pod event, bytes of it overwritten by structural octets,
 *   and hand-written edge cases (escaped member names, duplicate members,
 *   values of the wrong kind, numbers, literals, \u escapes, NUL octets,
 *   BOM, nesting at the limit in skipped, kept and built positions).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "cluster/decode.h"
#include "cluster/strtab.h"
#include "k8s/jsonarena.h"
#include "k8s/jsonsel.h"
#include "../fuzz/jsonsel_diff.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static const char *const resources[] = { "pods", "nodes", "services", "endpointslices",
                                         "namespaces", "unknown" };
#define NRES (sizeof resources / sizeof resources[0])

/* ---- fixtures ---------------------------------------------------------------------- */

typedef struct fixtures {
    char *lines[32];
    int n;
} fixtures;

static fixtures *load(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/kubernetes/objects.jsonl", SRCDIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fixtures *fx = calloc(1, sizeof *fx);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0 && fx->n < 32) {
        while (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len > 0)
            fx->lines[fx->n++] = strdup(line);
    }
    free(line);
    fclose(f);
    assert_true(fx->n >= 6);
    return fx;
}

static void unload(fixtures *fx)
{
    for (int i = 0; i < fx->n; i++)
        free(fx->lines[i]);
    free(fx);
}

static char *wrap_page(const char *obj)
{
    static const char head[] = "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":"
                               "{\"resourceVersion\":\"42\",\"continue\":\"abc\"},\"items\":[";
    size_t n = strlen(head) + 2 * strlen(obj) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s%s,%s]}", head, obj, obj);
    return s;
}

static char *wrap_line(const char *obj)
{
    size_t n = strlen(obj) + 40;
    char *s = malloc(n);
    snprintf(s, n, "{\"type\":\"MODIFIED\",\"object\":%s}", obj);
    return s;
}

static const char *kind_of(const char *obj)
{
    cJSON *o = cJSON_Parse(obj);
    if (cJSON_GetObjectItemCaseSensitive(o, "addressType")) {
        cJSON_Delete(o);
        return "endpointslices";
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "status");
    const char *r = cJSON_GetObjectItemCaseSensitive(k, "podIP") ||
                    cJSON_GetObjectItemCaseSensitive(k, "phase") ? "pods" : "nodes";
    cJSON_Delete(o);
    return r;
}

/* ---- equivalence on real objects ------------------------------------------------ */

static void test_fixtures_prune_exactly(void **state)
{
    (void)state;
    fixtures *fx = load();
    for (int i = 0; i < fx->n; i++) {
        char *page = wrap_page(fx->lines[i]), *line = wrap_line(fx->lines[i]);
        for (size_t r = 0; r < NRES; r++) {
            const char *why = jsel_diff(page, strlen(page), jsel_page_rule(resources[r]));
            if (why)
                fail_msg("fixture %d as a %s page: %s", i + 1, resources[r], why);
            why = jsel_diff(line, strlen(line), jsel_line_rule(resources[r]));
            if (why)
                fail_msg("fixture %d as a %s event: %s", i + 1, resources[r], why);
        }
        free(page);
        free(line);
    }
    unload(fx);
}

static void same_pod(const st_pod *a, const st_pod *b)
{
    assert_ptr_equal(a->ns, b->ns);             /* interned in the same table */
    assert_string_equal(a->name, b->name);
    assert_ptr_equal(a->node_name, b->node_name);
    assert_int_equal(a->nips, b->nips);
    assert_memory_equal(a->ips, b->ips, a->nips * sizeof a->ips[0]);
    assert_int_equal(a->host_network, b->host_network);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->terminating, b->terminating);
}

static void same_node(const st_node *a, const st_node *b)
{
    assert_ptr_equal(a->name, b->name);
    assert_int_equal(a->nlabels, b->nlabels);
    for (uint16_t i = 0; i < a->nlabels; i++) {
        assert_ptr_equal(a->labels[i].key, b->labels[i].key);
        assert_ptr_equal(a->labels[i].value, b->labels[i].value);
    }
    assert_ptr_equal(a->zone, b->zone);
    assert_ptr_equal(a->region, b->region);
    assert_int_equal(a->cpu_milli, b->cpu_milli);
    assert_int_equal(a->ready, b->ready);
    assert_int_equal(a->control_plane, b->control_plane);
    assert_int_equal(a->naddrs, b->naddrs);
    assert_memory_equal(a->addrs, b->addrs, a->naddrs * sizeof *a->addrs);
    assert_int_equal(a->ncidrs, b->ncidrs);
    if (a->ncidrs)
        assert_memory_equal(a->cidrs, b->cidrs, a->ncidrs * sizeof *a->cidrs);
}

static void same_names(const char *const *a, const char *const *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(a[i], b[i]);
}

static void same_slice(const slice_blob *a, const slice_blob *b)
{
    assert_ptr_equal(a->ns, b->ns);
    assert_ptr_equal(a->service, b->service);
    assert_string_equal(a->pub.name, b->pub.name);
    assert_int_equal(a->pub.nports, b->pub.nports);
    for (uint16_t i = 0; i < a->pub.nports; i++) {
        assert_ptr_equal(a->pub.ports[i].name, b->pub.ports[i].name);
        assert_int_equal(a->pub.ports[i].port, b->pub.ports[i].port);
        assert_int_equal(a->pub.ports[i].proto, b->pub.ports[i].proto);
    }
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const st_endpoint *x = &a->eps[i], *y = &b->eps[i];
        char bx[ST_ADDR_STRLEN], by[ST_ADDR_STRLEN];
        assert_string_equal(st_ep_addr(x, bx), st_ep_addr(y, by));
        assert_ptr_equal(st_ep_node(x), st_ep_node(y));
        assert_ptr_equal(st_ep_zone(x), st_ep_zone(y));
        if (st_ep_hostname(x, (char[ST_HOST_STRLEN]){ 0 }) || st_ep_hostname(y, (char[ST_HOST_STRLEN]){ 0 }))
            assert_string_equal(st_ep_hostname(x, (char[ST_HOST_STRLEN]){ 0 }), st_ep_hostname(y, (char[ST_HOST_STRLEN]){ 0 }));
        if (st_ep_pod(x, (char[ST_HOST_STRLEN]){ 0 }) || st_ep_pod(y, (char[ST_HOST_STRLEN]){ 0 }))
            assert_string_equal(st_ep_pod(x, (char[ST_HOST_STRLEN]){ 0 }), st_ep_pod(y, (char[ST_HOST_STRLEN]){ 0 }));
        assert_int_equal(x->ready, y->ready);
        assert_int_equal(x->serving, y->serving);
        assert_int_equal(x->terminating, y->terminating);
        assert_int_equal(x->ready_unset, y->ready_unset);
        assert_int_equal(x->has_hints, y->has_hints);
        assert_int_equal(st_ep_n_hint_zones(x), st_ep_n_hint_zones(y));
        same_names(st_ep_hint_zones(x), st_ep_hint_zones(y), st_ep_n_hint_zones(x));
        assert_int_equal(st_ep_n_hint_nodes(x), st_ep_n_hint_nodes(y));
        same_names(st_ep_hint_nodes(x), st_ep_hint_nodes(y), st_ep_n_hint_nodes(x));
    }
}

/* What the store decodes from each fixture is the same from the full tree
 * and from the tree the resource's rules build, as a page item and as an
 * event. */
static void test_fixtures_decode_the_same(void **state)
{
    (void)state;
    fixtures *fx = load();
    strtab *strs = strtab_new();
    store_opts o = { .zone_label = "topology.kubernetes.io/zone",
                     .region_label = "topology.kubernetes.io/region" };
    int pods = 0, nodes = 0, slices = 0;
    for (int i = 0; i < fx->n; i++) {
        const char *res = kind_of(fx->lines[i]);
        char *page = wrap_page(fx->lines[i]), *line = wrap_line(fx->lines[i]);
        cJSON *full = cJSON_Parse(fx->lines[i]);
        cJSON *sp = jsel_parse(page, strlen(page), jsel_page_rule(res));
        cJSON *sl = jsel_parse(line, strlen(line), jsel_line_rule(res));
        assert_non_null(full);
        assert_non_null(sp);
        assert_non_null(sl);
        const cJSON *from[] = { cJSON_GetArrayItem(cJSON_GetObjectItem(sp, "items"), 1),
                                cJSON_GetObjectItem(sl, "object") };
        const char *why = NULL;
        for (int k = 0; k < 2; k++) {
            assert_non_null(from[k]);
            if (!strcmp(res, "pods")) {
                st_pod *a = decode_pod(strs, full, &why), *b = decode_pod(strs, from[k], &why);
                assert_non_null(a);
                assert_non_null(b);
                same_pod(a, b);
                decode_pod_free(a);
                decode_pod_free(b);
                pods++;
            } else if (!strcmp(res, "endpointslices")) {
                slice_blob *a = decode_slice(strs, full, 1, &why);
                assert_non_null(a);
                slice_blob *b = decode_slice(strs, from[k], 1, &why);
                assert_non_null(b);
                assert_true(a->n > 0);
                same_slice(a, b);
                /* store_upsert_slice reads the multicluster labels */
                static const char *const mc[] = { "multicluster.kubernetes.io/service-name",
                                                  "multicluster.kubernetes.io/source-cluster" };
                for (int l = 0; l < 2; l++) {
                    const char *x = decode_obj_label(full, mc[l]), *y = decode_obj_label(from[k], mc[l]);
                    assert_true((x == NULL) == (y == NULL));
                    if (x)
                        assert_string_equal(x, y);
                }
                decode_slice_unref(a);
                decode_slice_unref(b);
                slices++;
            } else {
                st_node *a = decode_node(strs, full, &o, &why), *b = decode_node(strs, from[k], &o, &why);
                assert_non_null(a);
                assert_non_null(b);
                same_node(a, b);
                decode_node_free(a);
                decode_node_free(b);
                nodes++;
            }
        }
        cJSON_Delete(full);
        cJSON_Delete(sp);
        cJSON_Delete(sl);
        free(page);
        free(line);
    }
    assert_true(pods >= 8 && nodes >= 4 && slices >= 6);
    strtab_free(strs);
    unload(fx);
}

/* ---- the rules prune ------------------------------------------------------------ */

static int members(const cJSON *o)
{
    return cJSON_IsObject(o) ? cJSON_GetArraySize(o) : -1;
}

static void test_pod_rule_keeps_only_what_is_decoded(void **state)
{
    (void)state;
    fixtures *fx = load();
    char *line = wrap_line(fx->lines[1]);       /* the terminating dual-stack pod */
    cJSON *ev = jsel_parse(line, strlen(line), jsel_line_rule("pods"));
    assert_non_null(ev);
    const cJSON *obj = cJSON_GetObjectItem(ev, "object");
    const cJSON *md = cJSON_GetObjectItem(obj, "metadata");
    const cJSON *spec = cJSON_GetObjectItem(obj, "spec");
    const cJSON *st = cJSON_GetObjectItem(obj, "status");
    assert_string_equal(cJSON_GetObjectItem(ev, "type")->valuestring, "MODIFIED");
    assert_int_equal(members(md), 4);           /* name namespace resourceVersion deletionTimestamp */
    assert_non_null(cJSON_GetObjectItem(md, "deletionTimestamp"));
    assert_null(cJSON_GetObjectItem(md, "managedFields"));
    assert_null(cJSON_GetObjectItem(md, "labels"));
    assert_int_equal(members(spec), 1);         /* nodeName */
    assert_true(cJSON_IsString(cJSON_GetObjectItem(spec, "nodeName")));
    assert_int_equal(members(st), 3);           /* phase podIP podIPs */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(st, "podIPs")), 2);
    cJSON_Delete(ev);
    free(line);

    /* a node keeps its labels, allocatable, conditions and addresses, and
     * of its spec the pod ranges (podCIDR, podCIDRs) only */
    line = wrap_line(fx->lines[4]);
    ev = jsel_parse(line, strlen(line), jsel_line_rule("nodes"));
    obj = cJSON_GetObjectItem(ev, "object");
    spec = cJSON_GetObjectItem(obj, "spec");
    assert_int_equal(members(spec), 2);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(spec, "podCIDRs")));
    assert_null(cJSON_GetObjectItem(spec, "providerID"));
    assert_int_equal(members(cJSON_GetObjectItem(obj, "status")), 3);
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "images"));
    assert_true(members(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels")) > 5);
    cJSON_Delete(ev);
    free(line);
    unload(fx);
}

/* An EndpointSlice keeps what decode_slice and the store read, and only that. */
static void test_slice_rule_keeps_only_what_is_decoded(void **state)
{
    (void)state;
    fixtures *fx = load();
    int seen = 0;
    for (int i = 0; i < fx->n; i++) {
        if (strcmp(kind_of(fx->lines[i]), "endpointslices"))
            continue;
        char *page = wrap_page(fx->lines[i]);
        cJSON *doc = jsel_parse(page, strlen(page), jsel_page_rule("endpointslices"));
        const cJSON *obj = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "items"), 0);
        const cJSON *md = cJSON_GetObjectItem(obj, "metadata");
        assert_int_equal(members(md), 5);       /* name namespace resourceVersion labels annotations */
        assert_non_null(cJSON_GetObjectItem(md, "labels"));
        /* the programming-duration histogram reads it (programming.c) */
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(md, "annotations"),
                                            "endpoints.kubernetes.io/last-change-trigger-time"));
        assert_null(cJSON_GetObjectItem(md, "ownerReferences"));
        assert_null(cJSON_GetObjectItem(md, "uid"));
        assert_non_null(cJSON_GetObjectItem(obj, "addressType"));
        assert_non_null(cJSON_GetObjectItem(obj, "ports"));    /* kept, null or not */
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(obj, "endpoints")) {
            assert_null(cJSON_GetObjectItem(e, "deprecatedTopology"));
            const cJSON *ref = cJSON_GetObjectItem(e, "targetRef");
            if (ref) {
                assert_int_equal(members(ref), 2);  /* kind name */
                assert_non_null(cJSON_GetObjectItem(ref, "name"));
            }
            assert_non_null(cJSON_GetObjectItem(e, "addresses"));
            assert_non_null(cJSON_GetObjectItem(e, "conditions"));
        }
        cJSON_Delete(doc);
        free(page);
        seen++;
    }
    assert_true(seen >= 3);
    unload(fx);
}

static void test_other_resources_lose_only_managed_fields(void **state)
{
    (void)state;
    fixtures *fx = load();
    char *page = wrap_page(fx->lines[0]);
    cJSON *full = cJSON_Parse(page);
    cJSON *sel = jsel_parse(page, strlen(page), jsel_page_rule("services"));
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(full, "items"), 0);
    cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(sel, "items"), 0);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "metadata"), "managedFields"));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "metadata"), "managedFields"));
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(a, "metadata"), "managedFields");
    assert_true(cJSON_Compare(a, b, 1));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sel, "metadata"), "continue")->valuestring,
                        "abc");
    cJSON_Delete(full);
    cJSON_Delete(sel);
    free(page);
    unload(fx);
}

static void test_error_event_status_kept(void **state)
{
    (void)state;
    static const char ev[] =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
        "\"status\":\"Failure\",\"message\":\"Too large resource version\",\"reason\":\"Timeout\","
        "\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\",\"message\":\"x\"}]},"
        "\"code\":504}}";
    for (size_t r = 0; r < NRES; r++) {
        cJSON *e = jsel_parse(ev, sizeof ev - 1, jsel_line_rule(resources[r]));
        const cJSON *o = cJSON_GetObjectItem(e, "object");
        assert_int_equal(cJSON_GetObjectItem(o, "code")->valueint, 504);
        assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, "Timeout");
        assert_string_equal(cJSON_GetObjectItem(o, "status")->valuestring, "Failure");
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "details"), "causes"));
        assert_null(jsel_diff(ev, sizeof ev - 1, jsel_line_rule(resources[r])));
        cJSON_Delete(e);
    }
}

/* ---- acceptance is cJSON's ------------------------------------------------------- */

static void test_every_prefix_rejected(void **state)
{
    (void)state;
    fixtures *fx = load();
    char *line = wrap_line(fx->lines[0]);
    size_t n = strlen(line);
    for (size_t k = 0; k < n; k++) {
        assert_null(jsel_parse(line, k, jsel_line_rule("pods")));
        const char *why = jsel_diff(line, k, jsel_line_rule("pods"));
        if (why)
            fail_msg("prefix %zu: %s", k, why);
    }
    assert_null(jsel_diff(line, n, jsel_line_rule("pods")));
    free(line);
    unload(fx);
}

/* Overwrite octets of a pod event (every 7th position, so every kind of
 * place is hit) with octets that change the structure. */
static void test_damaged_event_judged_as_cjson_does(void **state)
{
    (void)state;
    static const char subst[] = "\"\\{}[],: x0-.eu";
    fixtures *fx = load();
    char *line = wrap_line(fx->lines[1]);
    size_t n = strlen(line);
    char *copy = malloc(n);
    int rejected = 0, accepted = 0;
    for (size_t k = 0; k < n; k += 7) {
        for (size_t c = 0; c < sizeof subst; c++) {   /* includes the NUL */
            memcpy(copy, line, n);
            copy[k] = subst[c];
            const char *why = jsel_diff(copy, n, jsel_line_rule("pods"));
            if (why)
                fail_msg("octet %zu set to 0x%02x: %s", k, (unsigned char)subst[c], why);
            cJSON *v = cJSON_ParseWithLength(copy, n);
            v ? accepted++ : rejected++;
            cJSON_Delete(v);
        }
    }
    assert_true(rejected > 100 && accepted > 100);
    free(copy);
    free(line);
    unload(fx);
}

static const jsel *pod_line(void) { return jsel_line_rule("pods"); }

static void check(const char *text, size_t len, int accepted)
{
    const char *why = jsel_diff(text, len, pod_line());
    if (why)
        fail_msg("%.*s: %s", (int)(len > 200 ? 200 : len), text, why);
    cJSON *v = jsel_parse(text, len, pod_line());
    if (accepted >= 0 && !v != !accepted)
        fail_msg("%.*s: expected %s", (int)(len > 200 ? 200 : len), text,
                 accepted ? "accepted" : "rejected");
    cJSON_Delete(v);
}

#define CHECK(t, ok) check(t, sizeof t - 1, ok)   /* ok: 1 accepted, 0 rejected,
                                                      -1 as this cJSON decides */

static void test_edge_cases(void **state)
{
    (void)state;
    /* member names: escaped forms of names the rules know, duplicates, NUL */
    CHECK("{\"object\":{\"met\\u0061data\":{\"name\":\"a\",\"uid\":\"x\"},\"spec\":{}}}", 1);
    CHECK("{\"obj\\u0065ct\":{\"spec\":{\"nodeName\":\"n\",\"containers\":[1]}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"nodeName\":\"a\"},\"spec\":{\"nodeName\":\"b\",\"x\":1}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"node\\u0000Name\":\"a\",\"nodeName\\u0000\":\"b\"}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"nodeName\0x\":\"b\",\"zz\0\":1}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"n\\qodeName\":\"b\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"node\\tName\":\"b\",\"node\\/Name\":1}}}", 1);
    CHECK("{\"object\":{\"m\\u0065tadata\":{\"name\":\"x\",\"r\\u0065sourceVersion\":\"5\"}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"n\\ud800\":\"b\"}}}", 0);
    /* values of another kind than the rule's */
    CHECK("{\"object\":{\"spec\":\"a string\",\"status\":[1,2],\"metadata\":null}}", 1);
    CHECK("{\"object\":[{\"spec\":{}}],\"type\":\"ADDED\"}", 1);
    CHECK("[{\"object\":{}}]", 1);
    CHECK("\"just a string\"", 1);
    /* numbers in skipped places: plain, and what only strtod takes */
    CHECK("{\"object\":{\"spec\":{\"a\":0,\"b\":-0.5e+3,\"c\":12E4,\"d\":123456789012345678901234567890}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":01,\"b\":1.,\"c\":-.5,\"d\":00}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":-}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":1.5.3}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":1e}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":1e+}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":+1}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":1234567890123456789012345678901234567890123456789012345678901234567890}}}", -1);
    CHECK("{\"object\":{\"spec\":{\"a\":123456789012345678901234567890123456789012345678901234567890123}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":0x10}}}", 0);
    /* literals */
    CHECK("{\"object\":{\"spec\":{\"a\":nul}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":truex}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":[true,false,null]}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":fals", 0);
    /* strings: escapes */
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\x\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\u00e9\\ud83d\\ude00\"}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\ud83d\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\udc00\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\u12\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\uZZZZ\"}}}", 1);   /* as cJSON: NUL */
    /* after a \u cJSON takes six octets whatever they are: "\V" is not an escape here */
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\u0\\Version\"}},\"j\\u\\u09b\\u0\\Vx\":1}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":\"\\V\\u0041\"}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"raw\ttab\x01\"}}}", 1);
    CHECK("{\"object\":{\"spec\":{\"a\":\"unterminated}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"ends in a backslash\\", 0);
    /* structure */
    CHECK("{\"object\":{\"spec\":{\"a\" 1}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":1,}}}", 0);
    CHECK("{\"object\":{\"spec\":{,}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":[1,]}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":[1 2]}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":{\"b\":1]}}}", 0);
    CHECK("{\"object\":{\"spec\":{\"a\":[1}}}", 0);
    CHECK("{\"object\":{\"spec\":{1:2}}}", 0);
    CHECK("{\"object\":{\"spec\":{}}} trailing garbage", 1);
    CHECK("  \x01\x1f{\"object\" \n:\r{ } }", 1);
    CHECK("\xEF\xBB\xBF{\"object\":{}}", 1);
    CHECK("\xEF\xBB\xBF{}", 1);
    CHECK("\xEF\xBB\xBF" "1", 0);              /* too short for cJSON's BOM check */
    CHECK("\xEF\xBB\xBF\xEF\xBB\xBF{\"object\":{}}", 0);
    CHECK("{\"object\":{\"spec\":{\"nodeName\":\xEF\xBB\xBF\"a\"}}}", 0);
    CHECK("   ", 0);
    check("", 0, 0);
    CHECK("{\"object\":{\"spec\":{\"a\":\"x\0y\"}}}", 1);
}

/* Nesting is counted from the root, whether the deep value is skipped,
 * kept or built. */
static void test_nesting_limit(void **state)
{
    (void)state;
    /* prefix: {"object":{"spec":{"containers":  (3 levels open), then a value
     * of depth d, then the closers */
    const char *places[] = { "containers", "nodeName" };    /* skipped, kept */
    for (size_t pl = 0; pl < 2; pl++) {
        for (int d = CJSON_NESTING_LIMIT - 5; d <= CJSON_NESTING_LIMIT + 1; d++) {
            size_t cap = 6 * (size_t)d + 128;
            char *s = malloc(cap);
            if (!s)
                abort();
            int n = snprintf(s, cap, "{\"object\":{\"spec\":{\"%s\":", places[pl]);
            for (int k = 0; k < d; k++)
                n += sprintf(s + n, k % 2 ? "[" : "{\"k\":");
            n += sprintf(s + n, "1");
            for (int k = d - 1; k >= 0; k--)
                s[n++] = k % 2 ? ']' : '}';
            n += sprintf(s + n, "}}}");
            const char *why = jsel_diff(s, (size_t)n, pod_line());
            if (why)
                fail_msg("%s at depth %d: %s", places[pl], d, why);
            cJSON *full = cJSON_ParseWithLength(s, (size_t)n);
            assert_true((full != NULL) == (d + 3 <= CJSON_NESTING_LIMIT));
            cJSON_Delete(full);
            free(s);
        }
    }
    /* an object rule applied at the limit: the page's items deep in a list */
    char *s = malloc(12 * CJSON_NESTING_LIMIT + 64);
    if (!s)
        abort();
    for (int d = CJSON_NESTING_LIMIT - 2; d <= CJSON_NESTING_LIMIT + 1; d++) {
        int n = 0;
        for (int k = 0; k < d - 1; k++)
            n += sprintf(s + n, "{\"object\":");
        n += sprintf(s + n, "{}");
        for (int k = 0; k < d - 1; k++)
            s[n++] = '}';
        const char *why = jsel_diff(s, (size_t)n, pod_line());
        if (why)
            fail_msg("object chain of %d: %s", d, why);
    }
    free(s);
}

/* ---- through the arena ---------------------------------------------------------- */

static void test_arena_parse_sel(void **state)
{
    (void)state;
    fixtures *fx = load();
    char *page = wrap_page(fx->lines[0]);
    size_t n = strlen(page);
    for (int round = 0; round < 3; round++) {
        cJSON *doc = jarena_parse_sel(page, n, jsel_page_rule("pods"));
        assert_non_null(doc);
        const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "items"), 0);
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name")->valuestring,
                            "svc-00000-0");
        assert_null(jarena_parse_sel(page, n - 1, jsel_page_rule("pods")));
        jarena_release();
        jarena_delete(doc);
        jarena_release();
    }
    jarena_trim();
    free(page);
    unload(fx);
}

/* A lenient parse leaves out a list item cJSON would reject (a lone UTF-16
 * surrogate escape, nesting deeper than the limit) and counts it; the strict
 * parse refuses the page; an item whose brackets do not balance still
 * fails the page. */
static void test_lenient_skips_bad_items(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"x\":\"\\udcff\"}}}",
        "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"x\":\"\\ud800\\u0041\"}}",
        NULL,                                       /* deep, made below */
    };
    char deep[4096];
    size_t n = (size_t)snprintf(deep, sizeof deep, "{\"metadata\":{\"name\":\"b\"},\"x\":");
    for (int i = 0; i < CJSON_NESTING_LIMIT + 5; i++)
        deep[n++] = '[';
    for (int i = 0; i < CJSON_NESTING_LIMIT + 5; i++)
        deep[n++] = ']';
    snprintf(deep + n, sizeof deep - n, "}");
    const char *res3[] = { "services", "pods", "nodes" };
    for (int k = 0; k < 3; k++) {
        const char *item = bad[k] ? bad[k] : deep;
        for (int r = 0; r < 3; r++) {
            char page[8192];
            snprintf(page, sizeof page,
                     "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":["
                     "{\"metadata\":{\"name\":\"a\"}},%s,{\"metadata\":{\"name\":\"c\"}}]}", item);
            const jsel *rule = jsel_page_rule(res3[r]);
            assert_null(jsel_parse(page, strlen(page), rule));
            assert_null(cJSON_Parse(page));
            unsigned skipped = 0;
            cJSON *doc = jsel_parse_lenient(page, strlen(page), rule, &skipped);
            assert_non_null(doc);
            assert_int_equal(skipped, 1);
            const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items");
            assert_int_equal(cJSON_GetArraySize(items), 2);
            const cJSON *md = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(items, 1), "metadata");
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "name")->valuestring, "c");
            cJSON_Delete(doc);
            /* in the arena too */
            skipped = 0;
            doc = jarena_parse_lenient(page, strlen(page), rule, &skipped);
            assert_non_null(doc);
            assert_int_equal(skipped, 1);
            jarena_delete(doc);
            jarena_release();
        }
    }
    /* brackets that do not balance, an unterminated string: the page fails */
    static const char *const broken[] = {
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"x\":[}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"x\":\"\\udcff}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"x\":\"\\udcff\"}",
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        unsigned skipped = 0;
        assert_null(jsel_parse_lenient(broken[i], strlen(broken[i]), jsel_page_rule("services"),
                                       &skipped));
    }
    /* a good page: nothing skipped, the same tree as the strict parse */
    const char *good = "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"a\":\"\\u00e9\"}]}";
    unsigned skipped = 0;
    cJSON *l = jsel_parse_lenient(good, strlen(good), jsel_page_rule("services"), &skipped);
    cJSON *st = jsel_parse(good, strlen(good), jsel_page_rule("services"));
    assert_int_equal(skipped, 0);
    assert_true(cJSON_Compare(l, st, 1));
    cJSON_Delete(l);
    cJSON_Delete(st);
    jarena_thread_done();
}

/* A watch line refused for its object still gives type, name, namespace
 * and resourceVersion through the salvage rule. */
static void test_salvage_rule(void **state)
{
    (void)state;
    const char *line = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Service\",\"metadata\":"
                       "{\"name\":\"s\",\"namespace\":\"ns\",\"resourceVersion\":\"42\","
                       "\"annotations\":{\"x\":\"\\udcff\"}},\"spec\":{\"y\":[[[\"\\udcff\"]]]}}}";
    assert_null(jsel_parse(line, strlen(line), jsel_line_rule("services")));
    cJSON *ev = jsel_parse(line, strlen(line), jsel_salvage_rule());
    assert_non_null(ev);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring, "MODIFIED");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "object"), "metadata");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "name")->valuestring, "s");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "namespace")->valuestring, "ns");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")->valuestring, "42");
    assert_null(cJSON_GetObjectItemCaseSensitive(md, "annotations"));
    cJSON_Delete(ev);
}

int main(void)
{
    jarena_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_prune_exactly),
        cmocka_unit_test(test_fixtures_decode_the_same),
        cmocka_unit_test(test_pod_rule_keeps_only_what_is_decoded),
        cmocka_unit_test(test_slice_rule_keeps_only_what_is_decoded),
        cmocka_unit_test(test_other_resources_lose_only_managed_fields),
        cmocka_unit_test(test_error_event_status_kept),
        cmocka_unit_test(test_every_prefix_rejected),
        cmocka_unit_test(test_damaged_event_judged_as_cjson_does),
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_arena_parse_sel),
        cmocka_unit_test(test_lenient_skips_bad_items),
        cmocka_unit_test(test_salvage_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
