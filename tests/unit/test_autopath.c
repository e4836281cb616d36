/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_autopath.c — the autopath plugin: resolv.conf search lists, the
 * search-path logic (search.c), the kubernetes plugin's search list for a
 * client pod (autopath.c there), and whole queries through instances
 * loaded from Corefiles: the kubernetes store filled from the acceptance
 * fixture plus a client pod, queries made with req_new_internal() from the
 * pod's address (the plugins' start() is not run, but autopath's, which
 * finds the search path source, is called by hand). A sub-request that
 * waits for an upstream (forward to a fake server on the test's event
 * base) shows the asynchronous path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cjson/cJSON.h>
#include <event2/event.h>
#include "common/resolvconf.h"
#include "plugin/autopath/autopath.h"
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "testenv.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static const uint8_t *N(const char *s)
{
    static uint8_t ring[16][DNAME_MAX];
    static unsigned k;
    uint8_t *b = ring[k++ % 16];
    assert_true(dname_from_str(b, s) > 0);
    return b;
}

static const char *S(const uint8_t *dn)
{
    static char ring[4][DNAME_STR_MAX];
    static unsigned k;
    char *b = ring[k++ % 4];
    dname_to_str(b, DNAME_STR_MAX, dn);
    return b;
}

/* ---- resolv.conf and the search-path logic --------------------------------------- */

static void test_resolv(void **state)
{
    (void)state;
    resolv_search rs;
    resolv_search_parse("nameserver 10.0.0.10\nsearch Default.svc.cluster.local svc.cluster.local"
                        " cluster.local.\noptions ndots:5\n", &rs);
    assert_int_equal(rs.n, 3);
    assert_string_equal(rs.name[0], "default.svc.cluster.local.");
    assert_string_equal(rs.name[2], "cluster.local.");
    /* the last search or domain line wins; domain is a list of one */
    resolv_search_parse("search a b\ndomain c.example d.example\n", &rs);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.name[0], "c.example.");
    resolv_search_parse("domain c\n\tsearch\tx  y\r\n# search z\n; search w\n", &rs);
    assert_int_equal(rs.n, 2);
    assert_string_equal(rs.name[1], "y.");
    resolv_search_parse("search\n", &rs);
    assert_int_equal(rs.n, 0);
    resolv_search_parse("search a b c d e f g h i j k l m n o p q r s\n", &rs);
    assert_int_equal(rs.n, RESOLV_SEARCH_MAX);
    char line[600] = "search ";
    memset(line + 7, 'x', 300);
    strcat(line, " ok\n");
    resolv_search_parse(line, &rs);
    assert_int_equal(rs.n, 1);              /* a name too long is dropped */
    assert_string_equal(rs.name[0], "ok.");
    const char *why = NULL;
    assert_int_equal(resolv_search_read("/nonexistent/resolv.conf", &rs, &why), -1);
    assert_non_null(why);
    assert_int_equal(rs.n, 0);

    autopath_list l;
    resolv_search_parse("search ns1.svc.cluster.local svc.cluster.local\n", &rs);
    assert_int_equal(ap_list_from_resolv(&rs, &l), 3);
    assert_string_equal(S(l.name[0]), "ns1.svc.cluster.local.");
    assert_string_equal(S(l.name[2]), ".");  /* the bare name */
    rs.n = 0;
    assert_int_equal(ap_list_from_resolv(&rs, &l), 1);
}

static void test_search_logic(void **state)
{
    (void)state;
    autopath_list l = { 0 };
    assert_int_equal(ap_base_labels(N("a.b."), &l), -1);   /* no list */
    memcpy(l.name[0], N("testns.svc.cluster.local."), dname_len(N("testns.svc.cluster.local.")));
    l.name[1][0] = 0;
    l.n = 2;
    assert_int_equal(ap_base_labels(N("svc1.testns.svc.cluster.local.testns.svc.cluster.local."), &l), 5);
    assert_int_equal(ap_base_labels(N("web.testns.svc.cluster.local."), &l), 1);
    assert_int_equal(ap_base_labels(N("testns.svc.cluster.local."), &l), 0);
    assert_int_equal(ap_base_labels(N("web.otherns.svc.cluster.local."), &l), -1);
    assert_int_equal(ap_base_labels(N("google.com."), &l), -1);
    /* the root as first element: every name, whole */
    l.name[0][0] = 0;
    assert_int_equal(ap_base_labels(N("google.com."), &l), 2);

    uint8_t out[DNAME_MAX];
    assert_int_equal(ap_expand(N("Web.TestNS.svc.cluster.local."), 1, N("svc.cluster.local."), out), 0);
    assert_string_equal(S(out), "Web.svc.cluster.local.");
    assert_int_equal(ap_expand(N("Web.TestNS.svc.cluster.local."), 1, N("."), out), 0);
    assert_string_equal(S(out), "Web.");
    char big[300];
    snprintf(big, sizeof big, "%s.%s.%s.", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
             "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc");
    char suffix[300];
    snprintf(suffix, sizeof suffix, "%s.%s", "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
             "testns.svc.cluster.local.");
    assert_int_equal(ap_expand(N(big), 3, N(suffix), out), -1);   /* > 255 octets */

    /* cnamer: a CNAME in front, from the asked name to the first answer
     * owner that differs, with that record's TTL; the question renamed */
    dns_msg m;
    msg_init(&m);
    dns_msg q;
    msg_init(&q);
    q.has_question = 1;
    memcpy(q.qname, N("svc1.svc.cluster.local."), dname_len(N("svc1.svc.cluster.local.")));
    q.qtype = T_A;
    q.qclass = C_IN;
    msg_reply_to(&m, &q);
    struct in_addr a = { htonl(0x0a000001) };
    msg_add_a(&m, SEC_ANSWER, N("svc1.testns.svc.cluster.local."), 5, &a);
    msg_add_name(&m, SEC_AUTHORITY, N("cluster.local."), T_NS, 5, N("ns.dns.cluster.local."));
    assert_int_equal(ap_cnamer(&m, N("SVC1.ns.svc.cluster.local.")), 0);
    assert_int_equal(msg_count(&m, SEC_ANSWER), 2);
    assert_int_equal(msg_count(&m, SEC_AUTHORITY), 1);
    dns_rr rr = msg_rr(&m, SEC_ANSWER, 0);
    assert_int_equal(rr.type, T_CNAME);
    assert_int_equal(rr.ttl, 5);
    assert_string_equal(S(rr.owner), "SVC1.ns.svc.cluster.local.");
    assert_string_equal(S(rr.rdata), "svc1.testns.svc.cluster.local.");
    assert_string_equal(S(m.qname), "SVC1.ns.svc.cluster.local.");
    /* an answer already owned by the asked name (any case): no CNAME */
    msg_reply_to(&m, &q);
    msg_add_a(&m, SEC_ANSWER, N("svc1.svc.cluster.local."), 5, &a);
    assert_int_equal(ap_cnamer(&m, N("SVC1.svc.cluster.local.")), 0);
    assert_int_equal(msg_count(&m, SEC_ANSWER), 1);
    msg_free(&m);
    msg_free(&q);
}

/* ---- instances -------------------------------------------------------------------- */

static instance *load_conf(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/test_autopath.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    instance *ins = instance_load(test_env(), path, err, errlen);
    unlink(path);
    return ins;
}

static const handler *find(instance *ins, const char *name)
{
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(hs[i]->def->name, name))
            return hs[i];
    return NULL;
}

static int start_autopath(instance *ins, char *err, size_t errlen)
{
    const handler *h = find(ins, "autopath");
    assert_non_null(h);
    return h->def->start(h->inst, ins, err, errlen);
}

static void upsert(store *st, int (*fn)(store *, const cJSON *), const char *json)
{
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    assert_int_equal(fn(st, o), 0);
    cJSON_Delete(o);
}

static void load_fixture(store *st)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/kubernetes/cluster.json", SRCDIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *list = cJSON_Parse(buf);
    assert_non_null(list);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items")) {
        const char *kind = cJSON_GetObjectItem(it, "kind")->valuestring;
        if (!strcmp(kind, "Namespace"))
            store_upsert_namespace(st, it);
        else if (!strcmp(kind, "Service"))
            store_upsert_service(st, it);
        else if (!strcmp(kind, "EndpointSlice"))
            store_upsert_slice(st, it);
        else if (!strcmp(kind, "Pod"))
            store_upsert_pod(st, it);
    }
    cJSON_Delete(list);
}

#define POD_IP "10.1.2.3"

/* A Corefile whose kubernetes plugin gets the fixture, a client pod in
 * testns at POD_IP, and the search domains given (instead of the host's
 * /etc/resolv.conf); autopath started. */
static instance *cluster(const char *corefile, const char *search)
{
    char err[1024] = "";
    instance *ins = load_conf(corefile, err, sizeof err);
    if (!ins)
        fail_msg("load: %s", err);
    const handler *h = find(ins, "kubernetes");
    assert_non_null(h);
    kube *k = h->inst;
    store *st = kubernetes_store(k);
    load_fixture(st);
    upsert(st, store_upsert_pod,
           "{\"metadata\":{\"name\":\"client\",\"namespace\":\"testns\"},\"spec\":{\"nodeName\":\"n1\"},"
           "\"status\":{\"phase\":\"Running\",\"podIP\":\"" POD_IP "\"}}");
    kubernetes_set_synced(k, 1);
    resolv_search_parse(search, &k->search);
    if (start_autopath(ins, err, sizeof err) < 0)
        fail_msg("start: %s", err);
    return ins;
}

#define MAXR 8

typedef struct res {
    int rcode;
    char writer[32];
    char ans[MAXR][300];
    int nans, nauth;
    char qname[DNAME_STR_MAX];
} res;

static void normalize(char *s)
{
    char *w = s;
    for (char *p = s; *p; p++) {
        char c = (*p == '\t') ? ' ' : *p;
        if (c == ' ' && w > s && w[-1] == ' ')
            continue;
        *w++ = c;
    }
    *w = '\0';
}

static void query_on(instance *ins, struct event_base *base, const char *from, const char *name,
                     uint16_t type, res *out)
{
    uint8_t wire[512];
    memset(wire, 0, 12);
    wire[0] = 0x12, wire[1] = 0x34, wire[2] = 0x01, wire[5] = 1;
    int nl = dname_from_str(wire + 12, name);
    assert_true(nl > 0);
    size_t len = 12 + (size_t)nl;
    wire[len++] = (uint8_t)(type >> 8), wire[len++] = (uint8_t)type;
    wire[len++] = 0, wire[len++] = 1;
    dns_req *r = req_new_internal(ins, base, wire, len, from);
    assert_non_null(r);
    req_run(r);
    memset(out, 0, sizeof *out);
    out->rcode = r->resp.rcode;
    snprintf(out->writer, sizeof out->writer, "%s", r->writer ? r->writer : "");
    out->nans = (int)msg_count(&r->resp, SEC_ANSWER);
    out->nauth = (int)msg_count(&r->resp, SEC_AUTHORITY);
    for (int i = 0; i < out->nans && i < MAXR; i++) {
        dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, (unsigned)i);
        assert_true(rr_to_str(&rr, out->ans[i], sizeof out->ans[i]) >= 0);
        normalize(out->ans[i]);
    }
    dname_to_str(out->qname, sizeof out->qname, r->resp.qname);
    req_free(r);
}

static void query(instance *ins, const char *from, const char *name, uint16_t type, res *out)
{
    query_on(ins, NULL, from, name, type, out);
}

static double successes(void)
{
    static const char *const server[] = { "dns://:53" };
    return metrics_value(test_registry(), "coredns_autopath_success_total", server);
}

#define Z ".testns.svc.cluster.local."

static const char *KUBE_FILE =
    ".:53 {\n    autopath @kubernetes\n    kubernetes cluster.local {\n        pods verified\n"
    "    }\n    file " SRCDIR "/zones/example.org.zone example.org\n}\n";

/* The kubernetes plugin's list: the pod's namespace first, then this
 * server's own search domains, then the bare name. */
static void test_kube_list(void **state)
{
    (void)state;
    instance *ins = cluster(KUBE_FILE, "search example.org corp.test\n");
    kube *k = find(ins, "kubernetes")->inst;
    autopath_list l;
    assert_int_equal(kube_autopath_list(k, 0, "testns", &l), 6);
    const char *want[] = { "testns.svc.cluster.local.", "svc.cluster.local.", "cluster.local.",
                           "example.org.", "corp.test.", "." };
    for (int i = 0; i < 6; i++)
        assert_string_equal(S(l.name[i]), want[i]);
    const autopath_source *src = autopath_source_find(instance_block(ins, 0), "kubernetes");
    assert_non_null(src);
    assert_null(src->off);
    instance_free(ins);

    /* the root zone: <ns>.svc., svc., . */
    char err[1024] = "";
    ins = load_conf(".:53 {\n    kubernetes . {\n        pods verified\n    }\n}\n", err, sizeof err);
    assert_non_null(ins);
    k = find(ins, "kubernetes")->inst;
    k->search.n = 0;
    assert_int_equal(kube_autopath_list(k, 0, "testns", &l), 4);
    assert_string_equal(S(l.name[0]), "testns.svc.");
    assert_string_equal(S(l.name[1]), "svc.");
    assert_string_equal(S(l.name[2]), ".");
    assert_string_equal(S(l.name[3]), ".");
    instance_free(ins);

    /* without pods verified the source says why it gives nothing */
    ins = load_conf(".:53 {\n    kubernetes cluster.local {\n        pods insecure\n    }\n}\n",
                    err, sizeof err);
    assert_non_null(ins);
    src = autopath_source_find(instance_block(ins, 0), "kubernetes");
    assert_non_null(src);
    assert_non_null(strstr(src->off, "pods verified"));
    instance_free(ins);
}

static void test_kubernetes(void **state)
{
    (void)state;
    instance *ins = cluster(KUBE_FILE, "search example.org\n");
    double before = successes();
    res x;
    /* <svc>.<ns>.svc.<zone> asked with the pod's first search domain
     * appended (ndots:5): a CNAME to the name found, then its answer */
    query(ins, POD_IP, "svc1.testns.svc.cluster.local" Z, T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_string_equal(x.writer, "autopath");
    assert_int_equal(x.nans, 2);
    assert_string_equal(x.ans[0], "svc1.testns.svc.cluster.local" Z " 5 IN CNAME svc1" Z);
    assert_string_equal(x.ans[1], "svc1" Z " 5 IN A 10.0.0.1");
    assert_string_equal(x.qname, "svc1.testns.svc.cluster.local" Z);
    assert_true(successes() == before + 1);
    /* <svc>.<ns> relative: found through svc.<zone> */
    query(ins, POD_IP, "svc1.testns.svc" Z, T_A, &x);
    assert_int_equal(x.nans, 2);
    assert_string_equal(x.ans[0], "svc1.testns.svc" Z " 5 IN CNAME svc1" Z);
    /* the case of the asked name is kept in the CNAME's owner */
    query(ins, POD_IP, "SVC1.TestNS.svc.cluster.local" Z, T_A, &x);
    assert_string_equal(x.ans[0], "SVC1.TestNS.svc.cluster.local" Z " 5 IN CNAME SVC1.TestNS.svc.cluster.local.");
    /* this server's search domains, then the rest of the chain (file) */
    query(ins, POD_IP, "www" Z, T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.nans, 2);
    assert_string_equal(x.ans[0], "www" Z " 300 IN CNAME www.example.org.");
    assert_string_equal(x.ans[1], "www.example.org. 300 IN A 192.0.2.10");
    /* the query itself answers: no CNAME, but it counts (as in CoreDNS) */
    before = successes();
    query(ins, POD_IP, "svc1" Z, T_A, &x);
    assert_int_equal(x.nans, 1);
    assert_string_equal(x.writer, "autopath");
    assert_true(successes() == before + 1);
    /* NODATA is an answer too */
    query(ins, POD_IP, "svc1" Z, T_AAAA, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.nans, 0);
    assert_int_equal(x.nauth, 1);
    /* nothing anywhere: the query's own NXDOMAIN as it came (the bare
     * name went to file, which refuses names outside its zone) */
    before = successes();
    query(ins, POD_IP, "nothing" Z, T_A, &x);
    assert_int_equal(x.rcode, RC_NXDOMAIN);
    assert_int_equal(x.nans, 0);
    assert_int_equal(x.nauth, 1);
    assert_string_equal(x.writer, "autopath");
    assert_true(successes() == before);
    /* the first element itself: passed on (CoreDNS fails it) */
    query(ins, POD_IP, "testns.svc.cluster.local.", T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_string_equal(x.writer, "kubernetes");
    /* another namespace's names, other zones, and clients that are no
     * pod: untouched */
    query(ins, POD_IP, "svc1.otherns.svc.cluster.local.", T_A, &x);
    assert_int_equal(x.rcode, RC_NXDOMAIN);
    assert_string_equal(x.writer, "kubernetes");
    query(ins, POD_IP, "www.example.org.", T_A, &x);
    assert_string_equal(x.writer, "file");
    query(ins, "10.9.9.9", "svc1.testns.svc.cluster.local" Z, T_A, &x);
    assert_int_equal(x.rcode, RC_NXDOMAIN);
    assert_string_equal(x.writer, "kubernetes");
    instance_free(ins);
}

/* The bare name goes to an upstream: that try waits, the worker's loop
 * (here req_run's) carries on, and the answer comes when it replied. */
static void test_async(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    test_upstream up;
    int port = test_upstream_start(&up, base, 0xc0000235, 42);
    char conf[512];
    snprintf(conf, sizeof conf, ".:53 {\n    autopath @kubernetes\n    kubernetes cluster.local {\n"
             "        pods verified\n    }\n    forward . 127.0.0.1:%d\n}\n", port);
    instance *ins = cluster(conf, "");
    res x;
    query_on(ins, base, POD_IP, "Bare" Z, T_A, &x);
    assert_int_equal(up.nq, 1);                 /* only the bare name left the server */
    assert_string_equal(up.last, "Bare.");
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.nans, 2);
    assert_string_equal(x.ans[0], "Bare" Z " 42 IN CNAME Bare.");
    assert_string_equal(x.ans[1], "Bare. 42 IN A 192.0.2.53");
    instance_free(ins);
    test_upstream_stop(&up);
    event_base_free(base);
}

/* autopath RESOLV-CONF: the file's list for every client. */
static void test_resolv_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_autopath_resolv.XXXXXX";
    int fd = mkstemp(path);
    const char *text = "search testns.svc.cluster.local svc.cluster.local cluster.local\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char conf[512];
    snprintf(conf, sizeof conf, ".:53 {\n    autopath cluster.local %s\n    kubernetes cluster.local\n}\n",
             path);
    instance *ins = cluster(conf, "");
    res x;
    query(ins, "10.9.9.9", "svc1" Z, T_A, &x);
    assert_string_equal(x.writer, "autopath");
    query(ins, "10.9.9.9", "svc1.testns" Z, T_A, &x);
    assert_int_equal(x.nans, 2);
    assert_string_equal(x.ans[0], "svc1.testns" Z " 5 IN CNAME svc1" Z);
    instance_free(ins);
    unlink(path);
}

static void test_setup(void **state)
{
    (void)state;
    char err[1024] = "";
    instance *ins = load_conf(".:53 {\n    autopath\n}\n", err, sizeof err);
    assert_null(ins);
    assert_non_null(strstr(err, ":2: plugin/autopath: no resolv-conf specified"));
    ins = load_conf(".:53 {\n    autopath /nonexistent/resolv.conf\n}\n", err, sizeof err);
    assert_null(ins);
    assert_non_null(strstr(err, "plugin/autopath: failed to parse \"/nonexistent/resolv.conf\""));
    /* @PLUGIN naming a plugin of the block that offers no search path */
    ins = load_conf(".:53 {\n    autopath @whoami\n    whoami\n}\n", err, sizeof err);
    assert_non_null(ins);
    assert_int_equal(start_autopath(ins, err, sizeof err), -1);
    assert_non_null(strstr(err, "plugin/autopath: whoami does not implement the AutoPather interface"));
    instance_free(ins);
    /* …and one that is not in the block: accepted, no autopath */
    ins = load_conf(".:53 {\n    autopath @kubernetes\n    whoami\n}\n", err, sizeof err);
    assert_non_null(ins);
    assert_int_equal(start_autopath(ins, err, sizeof err), 0);
    res x;
    query(ins, POD_IP, "a.testns.svc.cluster.local.", T_A, &x);
    assert_string_equal(x.writer, "whoami");
    instance_free(ins);
    /* pods insecure: accepted as CoreDNS does (a warning at start), and
     * no autopath */
    ins = cluster(".:53 {\n    autopath @kubernetes\n    kubernetes cluster.local {\n"
                  "        pods insecure\n    }\n}\n", "");
    query(ins, POD_IP, "svc1.testns.svc.cluster.local" Z, T_A, &x);
    assert_int_equal(x.rcode, RC_NXDOMAIN);
    assert_string_equal(x.writer, "kubernetes");
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolv),
        cmocka_unit_test(test_search_logic),
        cmocka_unit_test(test_kube_list),
        cmocka_unit_test(test_kubernetes),
        cmocka_unit_test(test_async),
        cmocka_unit_test(test_resolv_file),
        cmocka_unit_test(test_setup),
    };
    store_reader_register();
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    store_reader_unregister();
    return rc;
}
