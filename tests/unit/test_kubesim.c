/* Unit tests for kubesim's standalone parts: label/field selector parsing
 * and matching, RFC 7386 merge patch (the RFC's appendix examples), the
 * YAML-to-JSON loader's scalar typing and multi-document handling, and the
 * unpadded base64url of continue tokens (RFC 4648's test vectors, what the
 * apiserver's RawURLEncoding rejects). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../kubesim/b64url.h"
#include "../kubesim/jsonpatch.h"
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

/* ---------- JSON patch (RFC 6902, as the apiserver applies it) ---------- */

/* JSON written with ' for " (readable cases) */
static cJSON *jq(const char *s)
{
    char *d = strdup(s), *p;
    cJSON *j;
    for (p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = cJSON_Parse(d);
    free(d);
    assert_non_null(j);
    return j;
}

/* want: the patched document, or NULL with the HTTP code the patch gets */
static void jp_case(const char *doc, const char *patch, const char *want, int want_code)
{
    cJSON *p = jq(patch), *out;
    char err[300] = "";
    int code = 0;
    out = json_patch_apply(jq(doc), p, &code, err, sizeof err);
    if (want) {
        cJSON *w = jq(want);
        if (!out || !cJSON_Compare(out, w, 1)) {
            char *got = out ? cJSON_PrintUnformatted(out) : NULL;
            print_error("doc %s patch %s: got %s (%s), want %s\n", doc, patch,
                        got ? got : "NULL", err, want);
            free(got);
            fail();
        }
        cJSON_Delete(w);
    } else {
        if (out || code != want_code) {
            print_error("doc %s patch %s: want failure %d, got code %d\n", doc, patch,
                        want_code, code);
            fail();
        }
        assert_true(err[0] != '\0');
    }
    cJSON_Delete(out);
    cJSON_Delete(p);
}

static void test_json_patch_rfc(void **state)
{
    (void)state;
    /* RFC 6902 appendix A */
    jp_case("{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux'}]",
            "{'baz':'qux','foo':'bar'}", 0);
    jp_case("{'foo':['bar','baz']}", "[{'op':'add','path':'/foo/1','value':'qux'}]",
            "{'foo':['bar','qux','baz']}", 0);
    jp_case("{'baz':'qux','foo':'bar'}", "[{'op':'remove','path':'/baz'}]", "{'foo':'bar'}", 0);
    jp_case("{'foo':['bar','qux','baz']}", "[{'op':'remove','path':'/foo/1'}]",
            "{'foo':['bar','baz']}", 0);
    jp_case("{'baz':'qux','foo':'bar'}", "[{'op':'replace','path':'/baz','value':'boo'}]",
            "{'baz':'boo','foo':'bar'}", 0);
    jp_case("{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
            "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]",
            "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", 0);
    jp_case("{'foo':['all','grass','cows','eat']}",
            "[{'op':'move','from':'/foo/1','path':'/foo/3'}]",
            "{'foo':['all','cows','eat','grass']}", 0);
    jp_case("{'baz':'qux','foo':['a',2,'c']}",
            "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]",
            "{'baz':'qux','foo':['a',2,'c']}", 0);
    jp_case("{'baz':'qux'}", "[{'op':'test','path':'/baz','value':'bar'}]", NULL, 422);
    jp_case("{'foo':'bar'}", "[{'op':'add','path':'/child','value':{'grandchild':{}}}]",
            "{'foo':'bar','child':{'grandchild':{}}}", 0);
    jp_case("{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux','xyz':123}]",
            "{'foo':'bar','baz':'qux'}", 0);
    jp_case("{'foo':'bar'}", "[{'op':'add','path':'/baz/bat','value':'qux'}]", NULL, 422);
    jp_case("{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':10}]", "{'/':9,'~1':10}", 0);
    jp_case("{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':'10'}]", NULL, 422);
    jp_case("{'foo':['bar']}", "[{'op':'add','path':'/foo/-','value':['abc','def']}]",
            "{'foo':['bar',['abc','def']]}", 0);
    /* escapes in every position, copy, a failed op leaves nothing applied */
    jp_case("{'a/b':{'c~d':1}}", "[{'op':'copy','from':'/a~1b/c~0d','path':'/e'}]",
            "{'a/b':{'c~d':1},'e':1}", 0);
    jp_case("{'a':{'b':[1,2]}}", "[{'op':'copy','from':'/a/b','path':'/a/c'},"
            "{'op':'add','path':'/a/c/0','value':0}]", "{'a':{'b':[1,2],'c':[0,1,2]}}", 0);
    jp_case("{'a':[1]}", "[{'op':'test','path':'/a','value':[1]},"
            "{'op':'test','path':'','value':{'a':[1]}}]", "{'a':[1]}", 0);
}

static void test_json_patch_apiserver(void **state)
{
    (void)state;
    /* the apiserver's deviations from the RFC */
    jp_case("{'a':1}", "[{'op':'replace','path':'/b','value':2}]", "{'a':1,'b':2}", 0);
    jp_case("{'a':[1,2,3]}", "[{'op':'remove','path':'/a/-1'}]", "{'a':[1,2]}", 0);
    jp_case("{'a':[1,2,3]}", "[{'op':'add','path':'/a/-1','value':4}]", "{'a':[1,2,3,4]}", 0);
    jp_case("{'a':[1,2,3]}", "[{'op':'replace','path':'/a/-3','value':0}]", "{'a':[0,2,3]}", 0);
    jp_case("{'a':1}", "[{'op':'copy','from':'/x','path':'/y'}]", "{'a':1,'y':null}", 0);
    jp_case("{'a':null}", "[{'op':'test','path':'/a','value':null},"
            "{'op':'test','path':'/b','value':null},{'op':'test','path':'/c'}]",
            "{'a':null}", 0);
    jp_case("{'a':1}", "[{'op':'add','path':'/b'}]", "{'a':1,'b':null}", 0);
    jp_case("{'a':1}", "[{'op':'replace','path':'','value':{'b':2}}]", "{'b':2}", 0);
    jp_case("{'a':1}", "null", "{'a':1}", 0);
    /* failures: 422 for an operation, 400 for a patch that does not decode */
    jp_case("{'a':1}", "[{'op':'add','path':'','value':{}}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'remove','path':'/b'}]", NULL, 422);
    jp_case("{'a':[1]}", "[{'op':'remove','path':'/a/1'}]", NULL, 422);
    jp_case("{'a':[1]}", "[{'op':'remove','path':'/a/-'}]", NULL, 422);
    jp_case("{'a':[1]}", "[{'op':'add','path':'/a/2','value':3}]", NULL, 422);
    jp_case("{'a':[1]}", "[{'op':'add','path':'/a/-2','value':3}]", "{'a':[3,1]}", 0);
    jp_case("{'a':[1]}", "[{'op':'add','path':'/a/-3','value':3}]", NULL, 422);
    jp_case("{'a':[1]}", "[{'op':'add','path':'/a/x','value':3}]", NULL, 422);
    jp_case("{'a':'s'}", "[{'op':'add','path':'/a/b','value':3}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'move','from':'/b','path':'/c'}]", NULL, 422);
    jp_case("{'a':{'b':1}}", "[{'op':'move','from':'/a','path':'/a/c'}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'frobnicate','path':'/a'}]", NULL, 422);
    jp_case("{'a':1}", "[{'path':'/a'}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'add','value':1}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'copy','path':'/b'}]", NULL, 422);
    jp_case("{'a':1}", "[null]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'test','path':'/a'}]", NULL, 422);
    jp_case("{'a':1}", "[{'op':'replace','path':'','value':3}]", NULL, 422);
    jp_case("{'a':1}", "{'op':'add','path':'/b','value':1}", NULL, 400);
    jp_case("{'a':1}", "['add']", NULL, 400);
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

/* ---------- base64url ---------- */

static void test_b64url_encode(void **state)
{
    /* RFC 4648 section 10, unpadded; then both URL-safe characters */
    static const char *const v[][2] = {
        { "", "" }, { "f", "Zg" }, { "fo", "Zm8" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg" },
        { "fooba", "Zm9vYmE" }, { "foobar", "Zm9vYmFy" }, { "\xfb\xff", "-_8" },
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *e = b64url_encode(v[i][0], strlen(v[i][0]));
        assert_string_equal(e, v[i][1]);
        free(e);
    }
}

static void test_b64url_roundtrip(void **state)
{
    unsigned char in[256];
    size_t n, len, i;
    (void)state;
    for (i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(255 - i);
    for (n = 0; n <= sizeof in; n++) {
        char *e = b64url_encode(in, n), *d;
        assert_null(strpbrk(e, "+/="));
        d = b64url_decode(e, &len);
        assert_non_null(d);
        assert_int_equal(len, n);
        assert_memory_equal(d, in, n);
        assert_int_equal(d[len], '\0');
        free(d);
        free(e);
    }
}

static void test_b64url_decode(void **state)
{
    /* what Go's base64.RawURLEncoding rejects */
    static const char *const bad[] = {
        "Zm9v=", "Zm8=", "Zg==", "Zm9v+", "Zm/v", "Z", "Zm9vY", "%%%garbage", "Zm 9v", "Zm9v\t",
    };
    size_t i, len = 99;
    char *d;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = b64url_decode(bad[i], &len);
        if (d)
            fail_msg("'%s' decoded", bad[i]);
    }
    d = b64url_decode("Zm\r\n9vY\nmE\r", &len); /* CR and LF are ignored, as in Go */
    assert_non_null(d);
    assert_string_equal(d, "fooba");
    free(d);
    d = b64url_decode("", &len);
    assert_non_null(d);
    assert_int_equal(len, 0);
    free(d);
    d = b64url_decode("-_8", &len);
    assert_int_equal(len, 2);
    assert_memory_equal(d, "\xfb\xff", 2);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_ops),
        cmocka_unit_test(test_label_errors),
        cmocka_unit_test(test_field_selectors),
        cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_json_patch_rfc),
        cmocka_unit_test(test_json_patch_apiserver),
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_b64url_encode),
        cmocka_unit_test(test_b64url_roundtrip),
        cmocka_unit_test(test_b64url_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
