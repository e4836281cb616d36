/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for kubesim's standalone parts: label/field selector parsing
 * and matching, RFC 7386 merge patch (the RFC's appendix examples), the
 * YAML-to-JSON loader's scalar typing and multi-document handling, and the
 * unpadded base64url of continue tokens (RFC 4648's test vectors, what the
 * apiserver's RawURLEncoding rejects). Then the store and object semantics
 * without HTTP: CustomResourceDefinitions (validation, defaults, status,
 * the kind served and unserved, objects deleted with the CRD, restore),
 * dryRun, Kubernetes' version order, the OpenAPI v3 document and
 * --generate podCIDRs=1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../kubesim/kubesim.h"
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

/* ---------- the store: CRDs, dryRun, OpenAPI, generator ---------- */

static int setup_store(void **state)
{
    cJSON *ns = cJSON_Parse("{\"metadata\":{\"name\":\"default\"}}");
    ks_err e;
    (void)state;
    ks_base = event_base_new();
    store_init(1000);
    ver_unref(obj_create(K_NAMESPACE, NULL, ns, 0, &e));
    cJSON_Delete(ns);
    return store_get(K_NAMESPACE, "", "default") ? 0 : -1;
}

static int teardown_store(void **state)
{
    (void)state;
    objects_free();
    store_free();
    crd_free();
    gen_free();
    event_base_free(ks_base);
    ks_base = NULL;
    return 0;
}

static const char widget_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"names\":{\"kind\":\"Widget\",\"plural\":\"widgets\",\"shortNames\":[\"wd\"]},"
    "\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1\",\"served\":true,"
    "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}},"
    "{\"name\":\"v2alpha1\",\"served\":false,\"storage\":false,"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}}]}}";

static ks_ver *create_json(int kind, const char *ns, const char *json, ks_err *e)
{
    cJSON *b = cJSON_Parse(json);
    ks_ver *v;
    assert_non_null(b);
    v = obj_create(kind, ns, b, 1, e);
    cJSON_Delete(b);
    return v;
}

/* the CRD with one change made by edit (a cJSON_Utils-free tweak) */
static int crd_error(const char *from, const char *to, ks_err *e)
{
    char buf[2048];
    const char *at = strstr(widget_crd, from);
    ks_ver *v;
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - widget_crd), widget_crd, to,
             at + strlen(from));
    v = create_json(K_CRD, NULL, buf, e);
    if (v) {
        ver_unref(v);
        return 0;
    }
    return e->code;
}

static void test_crd_validation(void **state)
{
    ks_err e;
    (void)state;
    assert_int_equal(crd_error("widgets.example.com", "gadgets.example.com", &e), 422);
    assert_string_equal(e.msg, "CustomResourceDefinition.apiextensions.k8s.io "
                        "\"gadgets.example.com\" is invalid: metadata.name: Invalid value: "
                        "\"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group");
    assert_string_equal(e.field, "metadata.name");
    assert_int_equal(crd_error("\"Namespaced\"", "\"Everywhere\"", &e), 422);
    assert_string_equal(e.field, "spec.scope");
    assert_string_equal(e.cause, "FieldValueNotSupported");
    assert_int_equal(crd_error("\"storage\":false", "\"storage\":true", &e), 422);
    assert_string_equal(e.field, "spec.versions");
    assert_int_equal(crd_error(",\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}}]",
                               "}]", &e), 422);
    assert_string_equal(e.field, "spec.versions[1].schema.openAPIV3Schema");
    assert_int_equal(crd_error("\"kind\":\"Widget\"", "\"kind\":\"Wid\\\"get\"", &e), 422);
    assert_string_equal(e.field, "spec.names.kind");
    assert_int_equal(crd_error("\"group\":\"example.com\"", "\"group\":\"example\"", &e), 422);
    assert_string_equal(e.field, "spec.group");
    assert_int_equal(store_count(K_CRD), 0);
    assert_int_equal(ks_kind_by_route("example.com", "v1", "widgets"), -1);
}

static const char *jget(const cJSON *o, const char *path)
{
    char buf[200], *p, *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (p = strtok_r(buf, ".", &save); p && o; p = strtok_r(NULL, ".", &save))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(p)) : cJSON_GetObjectItemCaseSensitive(o, p);
    return cJSON_IsString(o) ? o->valuestring : NULL;
}

/* the string at each path of v is the one given: path, value, ..., NULL */
static void assert_paths(const ks_ver *v, const char *const *pv)
{
    cJSON *o = ver_parse(v);
    for (; pv[0]; pv += 2) {
        const char *got = jget(o, pv[0]);
        if (!got || strcmp(got, pv[1]))
            fail_msg("%s: %s, want %s", pv[0], got ? got : "(none)", pv[1]);
    }
    cJSON_Delete(o);
}

static void test_crd_lifecycle(void **state)
{
    ks_err e;
    ks_ver *crd, *w, *cur;
    uint64_t rv;
    int k;
    char saved[] = "before";
    (void)state;

    assert_int_equal(ks_kind_by_kind("example.com/v1", "Widget"), -1);
    crd = create_json(K_CRD, NULL, widget_crd, &e);
    assert_non_null(crd);
    /* the create answers the initial status; the controllers' change follows */
    assert_paths(crd, (const char *const[]){
        "status.acceptedNames.kind", "", "status.storedVersions.0", "v1",
        "spec.names.singular", "widget", "spec.names.listKind", "WidgetList",
        "spec.conversion.strategy", "None", NULL});
    cur = store_get(K_CRD, "", "widgets.example.com");
    assert_int_equal(cur->rv, crd->rv + 1);
    assert_paths(cur, (const char *const[]){
        "status.acceptedNames.kind", "Widget", "status.acceptedNames.shortNames.0", "wd",
        "status.conditions.0.type", "NamesAccepted", "status.conditions.0.reason", "NoConflicts",
        "status.conditions.1.type", "Established", "status.conditions.1.status", "True", NULL});
    ver_unref(crd);

    /* served at v1 only, namespaced */
    k = ks_kind_by_route("example.com", "v1", "widgets");
    assert_true(k >= K_COUNT);
    assert_int_equal(ks_kind_by_route("example.com", "v2alpha1", "widgets"), -1);
    assert_int_equal(ks_kind_by_kind("example.com/v1", "Widget"), k);
    assert_true(ks_kinds[k].namespaced);
    assert_string_equal(ks_kinds[k].api_version, "example.com/v1");
    w = create_json(k, "default", "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                    "\"metadata\":{\"name\":\"w1\"},\"spec\":{\"size\":1}}", &e);
    assert_non_null(w);
    ver_unref(w);
    w = create_json(k, "default", "{\"apiVersion\":\"example.com/v2alpha1\",\"kind\":\"Widget\","
                    "\"metadata\":{\"name\":\"w2\"}}", &e);
    assert_null(w);
    assert_int_equal(e.code, 400);
    assert_null(obj_patch(k, "default", "nope", cJSON_GetArrayItem(NULL, 0), KS_PATCH_MERGE, 0, &e));
    assert_string_equal(e.msg, "widgets.example.com \"nope\" not found");
    assert_string_equal(e.group, "example.com");

    /* the OpenAPI document lists the kind at its served version only */
    {
        char *idx = openapi_v3("/openapi/v3"), *doc = openapi_v3("/openapi/v3/apis/example.com/v1");
        assert_non_null(strstr(idx, "\"apis/example.com/v1\""));
        assert_null(strstr(idx, "v2alpha1"));
        assert_non_null(strstr(doc, "\"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}\""));
        assert_non_null(strstr(doc, "\"fieldValidation\""));
        assert_null(openapi_v3("/openapi/v3/apis/example.com/v2alpha1"));
        assert_null(openapi_v3("/openapi/v3/apis/nope.io/v1"));
        free(idx);
        free(doc);
    }

    /* scope is immutable */
    {
        char buf[2048];
        const char *at = strstr(widget_crd, "\"Namespaced\"");
        cJSON *b;
        snprintf(buf, sizeof buf, "%.*s\"Cluster\"%s", (int)(at - widget_crd), widget_crd,
                 at + strlen("\"Namespaced\""));
        b = cJSON_Parse(buf);
        assert_null(obj_update(K_CRD, "", "widgets.example.com", b, 0, &e));
        assert_int_equal(e.code, 422);
        assert_string_equal(e.field, "spec.scope");
        cJSON_Delete(b);
    }

    store_save(saved);
    /* a dry-run delete of the CRD changes nothing */
    rv = store_rv();
    obj_set_dry_run(1);
    w = obj_delete(K_CRD, "", "widgets.example.com", NULL, &e);
    obj_set_dry_run(0);
    assert_non_null(w);
    ver_unref(w);
    assert_int_equal(store_rv(), rv);
    assert_int_equal(ks_kind_by_route("example.com", "v1", "widgets"), k);
    assert_int_equal(store_count(k), 1);

    /* deleting the CRD deletes its objects and unserves the kind */
    w = obj_delete(K_CRD, "", "widgets.example.com", NULL, &e);
    assert_non_null(w);
    ver_unref(w);
    assert_int_equal(store_count(k), 0);
    assert_int_equal(store_rv(), rv + 2); /* the widget, then the CRD */
    assert_int_equal(ks_kind_by_route("example.com", "v1", "widgets"), -1);
    assert_int_equal(ks_kind_by_kind("example.com/v1", "Widget"), -1);

    /* a restore brings the CRD, its kind (same slot) and its object back */
    assert_int_equal(store_restore(saved), 0);
    crd_sync();
    assert_int_equal(ks_kind_by_route("example.com", "v1", "widgets"), k);
    assert_non_null(store_get(k, "default", "w1"));
}

static void test_dry_run(void **state)
{
    ks_err e;
    ks_ver *v;
    cJSON *o, *patch;
    uint64_t rv = store_rv();
    (void)state;
    obj_set_dry_run(1);
    v = create_json(K_CONFIGMAP, "default", "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}", &e);
    assert_non_null(v);
    o = ver_parse(v);
    assert_null(jget(o, "metadata.resourceVersion"));
    assert_non_null(jget(o, "metadata.uid"));
    cJSON_Delete(o);
    ver_unref(v);
    assert_int_equal(store_rv(), rv);
    assert_null(store_get(K_CONFIGMAP, "default", "c"));
    obj_set_dry_run(0);
    ver_unref(create_json(K_CONFIGMAP, "default", "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}", &e));
    rv = store_rv();
    obj_set_dry_run(1);
    patch = cJSON_Parse("{\"data\":{\"a\":\"2\"}}");
    v = obj_patch(K_CONFIGMAP, "default", "c", patch, KS_PATCH_MERGE, 0, &e);
    cJSON_Delete(patch);
    assert_non_null(v);
    assert_int_equal(v->rv, rv); /* the current resourceVersion */
    o = ver_parse(v);
    assert_string_equal(jget(o, "data.a"), "2");
    cJSON_Delete(o);
    ver_unref(v);
    v = obj_delete(K_CONFIGMAP, "default", "c", NULL, &e);
    assert_non_null(v);
    ver_unref(v);
    v = obj_delete(K_NAMESPACE, "", "ns-dry", NULL, &e);
    assert_null(v);
    obj_set_dry_run(0);
    assert_int_equal(store_rv(), rv);
    o = ver_parse(store_get(K_CONFIGMAP, "default", "c"));
    assert_string_equal(jget(o, "data.a"), "1");
    cJSON_Delete(o);
}

static void test_version_order(void **state)
{
    static const char *const sorted[] = {"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1",
                                         "v12alpha1", "v11alpha2", "foo1", "foo10"};
    size_t i, j, n = sizeof sorted / sizeof sorted[0];
    (void)state;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if ((ks_version_cmp(sorted[i], sorted[j]) < 0) != (i < j) ||
                (ks_version_cmp(sorted[i], sorted[j]) == 0) != (i == j))
                fail_msg("%s vs %s", sorted[i], sorted[j]);
}

static void test_generate_pod_cidrs(void **state)
{
    ks_gen g;
    char err[200];
    size_t i;
    (void)state;
    assert_int_equal(gen_parse("nodes=3,pods=900,services=9,podCIDRs=1", &g, err, sizeof err), 0);
    assert_int_equal(g.host_bits, 9); /* 300 pods a node: /23 */
    assert_int_equal(gen_parse("nodes=70000,pods=1,podCIDRs=1", &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "do not fit"));
    assert_int_equal(gen_parse("nodes=3,podCIDRs=2", &g, err, sizeof err), -1);
    assert_int_equal(gen_parse("nodes=4,pods=40,services=4,podCIDRs=1", &g, err, sizeof err), 0);
    gen_run(&g);
    assert_int_equal(store_count(K_POD), 40);
    for (i = 0; i < store_count(K_POD); i++) {
        cJSON *p = ver_parse(store_at(K_POD, i));
        cJSON *n = ver_parse(store_get(K_NODE, "", jget(p, "spec.nodeName")));
        const char *ip = jget(p, "status.podIP"), *cidr = jget(n, "spec.podCIDR");
        unsigned a, b, c, d, x, y, z, w, len;
        assert_int_equal(sscanf(ip, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
        assert_int_equal(sscanf(cidr, "%u.%u.%u.%u/%u", &x, &y, &z, &w, &len), 5);
        assert_int_equal(len, 24);
        assert_true(a == x && b == y && c == z && d >= 1 && d <= 254);
        cJSON_Delete(p);
        cJSON_Delete(n);
    }
}

int main(void)
{
    const struct CMUnitTest store_tests[] = {
        cmocka_unit_test_setup_teardown(test_crd_validation, setup_store, teardown_store),
        cmocka_unit_test_setup_teardown(test_crd_lifecycle, setup_store, teardown_store),
        cmocka_unit_test_setup_teardown(test_dry_run, setup_store, teardown_store),
        cmocka_unit_test_setup_teardown(test_generate_pod_cidrs, setup_store, teardown_store),
    };
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
        cmocka_unit_test(test_version_order),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed + cmocka_run_group_tests(store_tests, NULL, NULL);
}
