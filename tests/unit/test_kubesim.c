/* Unit tests for kubesim's standalone parts: label/field selector parsing
 * and matching, RFC 7386 merge patch (the RFC's appendix examples) and the
 * YAML-to-JSON loader's scalar typing and multi-document handling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../kubesim/mergepatch.h"
#include "../kubesim/selector.h"
#include "../kubesim/yamljson.h"

/* ---------- selectors ---------- */

/* ctx: NULL-terminated k, v, k, v ... array */
static const char *lookup(const void *ctx, const char *key)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (!strcmp(kv[0], key))
            return kv[1];
    return NULL;
}

static int lmatch(const char *sel, const char *const *labels)
{
    selector s;
    char err[200];
    int r;
    if (sel_parse_labels(sel, &s, err, sizeof err) < 0)
        return -1;
    r = sel_match(&s, lookup, labels);
    sel_free(&s);
    return r;
}

static void test_label_ops(void **state)
{
    static const char *const l[] = {"app", "web", "tier", "front", "example.com/x", "", NULL};
    (void)state;
    assert_int_equal(lmatch("", l), 1);
    assert_int_equal(lmatch("app=web", l), 1);
    assert_int_equal(lmatch("app==web", l), 1);
    assert_int_equal(lmatch("app=db", l), 0);
    assert_int_equal(lmatch("app!=db", l), 1);
    assert_int_equal(lmatch("missing!=x", l), 1); /* != matches absent keys */
    assert_int_equal(lmatch("app in (db, web)", l), 1);
    assert_int_equal(lmatch("app in (db)", l), 0);
    assert_int_equal(lmatch("app notin (db,cache)", l), 1);
    assert_int_equal(lmatch("missing notin (a)", l), 1);
    assert_int_equal(lmatch("app notin (web)", l), 0);
    assert_int_equal(lmatch("tier", l), 1);
    assert_int_equal(lmatch("!tier", l), 0);
    assert_int_equal(lmatch("!missing", l), 1);
    assert_int_equal(lmatch("missing", l), 0);
    assert_int_equal(lmatch("example.com/x=", l), 1);
    assert_int_equal(lmatch(" app = web , tier in (front) , !missing ", l), 1);
    assert_int_equal(lmatch("app=web,tier=back", l), 0);
}

static void test_label_errors(void **state)
{
    static const char *const l[] = {NULL};
    (void)state;
    assert_int_equal(lmatch("app in web", l), -1);
    assert_int_equal(lmatch("app in (a", l), -1);
    assert_int_equal(lmatch("=x", l), -1);
    assert_int_equal(lmatch("app=web,", l), -1);
    assert_int_equal(lmatch("-bad=x", l), -1);
    assert_int_equal(lmatch("app=bad value", l), -1);
    assert_int_equal(lmatch("app>3", l), -1);
    assert_int_equal(lmatch("!app=x", l), -1);
    assert_int_equal(lmatch("Bad_Prefix/app=x", l), -1);
}

static int fmatch(const char *sel, const char *const *fields)
{
    selector s;
    char err[200];
    int r;
    if (sel_parse_fields(sel, &s, err, sizeof err) < 0)
        return -1;
    r = sel_match(&s, lookup, fields);
    sel_free(&s);
    return r;
}

static void test_field_selectors(void **state)
{
    static const char *const f[] = {"metadata.name", "a=b", "status.phase", "Running",
                                    "spec.nodeName", "", NULL};
    (void)state;
    assert_int_equal(fmatch("status.phase=Running", f), 1);
    assert_int_equal(fmatch("status.phase==Running", f), 1);
    assert_int_equal(fmatch("status.phase!=Succeeded,status.phase!=Failed", f), 1);
    assert_int_equal(fmatch("status.phase!=Running", f), 0);
    assert_int_equal(fmatch("metadata.name=a\\=b", f), 1);
    assert_int_equal(fmatch("spec.nodeName=", f), 1);
    assert_int_equal(fmatch("spec.nodeName!=", f), 0);
    assert_int_equal(fmatch("", f), 1);
    assert_int_equal(fmatch("status.phase", f), -1);
    assert_int_equal(fmatch("=x", f), -1);
}

/* ---------- merge patch (RFC 7386 appendix A) ---------- */

static void mp_case(const char *target, const char *patch, const char *want)
{
    cJSON *t = cJSON_Parse(target), *p = cJSON_Parse(patch), *w = cJSON_Parse(want);
    cJSON *r;
    assert_non_null(p);
    assert_non_null(w);
    r = merge_patch_apply(t, p);
    if (!cJSON_Compare(r, w, 1)) {
        char *got = cJSON_PrintUnformatted(r);
        fail_msg("patch %s on %s: got %s want %s", patch, target, got, want);
    }
    cJSON_Delete(r);
    cJSON_Delete(p);
    cJSON_Delete(w);
}

static void test_merge_patch(void **state)
{
    (void)state;
    mp_case("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    mp_case("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    mp_case("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    mp_case("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    mp_case("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    mp_case("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    mp_case("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}");
    mp_case("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    mp_case("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
    mp_case("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
    mp_case("{\"a\":\"foo\"}", "null", "null");
    mp_case("{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
    mp_case("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    mp_case("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
    mp_case("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
}

/* ---------- YAML loader ---------- */

static void test_yaml(void **state)
{
    const char *y = "a: 1\nb: \"1\"\nc: true\nd: yes\ne: ~\nf: 1.5\ng: text\nh: [x, 'y']\n"
                    "i: &anc {k: v}\nj: *anc\n---\n---\nkind: Second\n";
    char err[200];
    cJSON *docs = yj_parse_yaml(y, strlen(y), err, sizeof err), *d;
    (void)state;
    assert_non_null(docs);
    assert_int_equal(cJSON_GetArraySize(docs), 2); /* the empty document is skipped */
    d = cJSON_GetArrayItem(docs, 0);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(d, "a")));
    assert_string_equal(cJSON_GetObjectItem(d, "b")->valuestring, "1");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "c")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "d")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(d, "e")));
    assert_true(cJSON_GetObjectItem(d, "f")->valuedouble == 1.5);
    assert_string_equal(cJSON_GetObjectItem(d, "g")->valuestring, "text");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "h"), 1)->valuestring, "y");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "j"), "k")->valuestring, "v");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(docs, 1), "kind")->valuestring,
                        "Second");
    cJSON_Delete(docs);
    assert_null(yj_parse_yaml("a: [1, 2\n", 9, err, sizeof err));
    assert_non_null(strstr(err, "line"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_ops),
        cmocka_unit_test(test_label_errors),
        cmocka_unit_test(test_field_selectors),
        cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_yaml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
