/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bigsvc_cost.c — the work of one answer for a headless Service of N
 * endpoints, for tests/integration/bigsvc_cost.sh to count under callgrind.
 *
 *   bigsvc_cost N COUNT
 *
 * Loads `kubernetes cluster.local` from a Corefile (nothing started), fills
 * its store with a headless Service big.testns of N ready endpoints (slices
 * of 100, port "p" 9/TCP, hostnames ep-I), then runs COUNT queries of each
 * kind through the server as a client's query: A and SRV over UDP (no
 * EDNS: 512 octets), A and SRV over TCP (up to 65,535 octets), and PTR
 * over UDP of the last endpoint's address (the reverse zone is served
 * too: a PTR must find that address without a pass over the Service's
 * endpoints), and A over UDP through autopath (the client 192.0.2.1 is a
 * pod of namespace other: big.testns.svc.cluster.local.other.svc.cluster.local.
 * is answered with a CNAME to the Service and its records). Each kind
 * runs in its own function run_<kind>() (kept out of line) so that
 * `valgrind --tool=callgrind --toggle-collect='run_*'` counts only the
 * answers; one query of each kind runs before, uncounted (first-use
 * allocations). Prints per kind "<kind> <answers> <reply octets> <records>"
 * of the last reply. Exit 1 when a reply is missing or malformed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "plugin/autopath/autopath.h"
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/server.h"
#include "testenv.h"

extern const plugin_def plugin_kubernetes;

static int upsert(store *st, int (*fn)(store *, const cJSON *), const char *json)
{
    cJSON *o = cJSON_Parse(json);
    int rc = o ? fn(st, o) : -1;
    cJSON_Delete(o);
    return rc;
}

static int fill(store *st, int n)
{
    if (upsert(st, store_upsert_namespace, "{\"metadata\":{\"name\":\"testns\"}}") < 0 ||
        upsert(st, store_upsert_service,
               "{\"metadata\":{\"name\":\"big\",\"namespace\":\"testns\"},"
               "\"spec\":{\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"],"
               "\"ports\":[{\"name\":\"p\",\"port\":9}]}}") < 0)
        return -1;
    if (upsert(st, store_upsert_pod,
               "{\"metadata\":{\"name\":\"client\",\"namespace\":\"other\"},"
               "\"status\":{\"phase\":\"Running\",\"podIP\":\"192.0.2.1\","
               "\"podIPs\":[{\"ip\":\"192.0.2.1\"}]}}") < 0)
        return -1;
    static char json[65536];
    for (int s = 0; s * 100 < n; s++) {
        size_t o = (size_t)snprintf(json, sizeof json,
            "{\"metadata\":{\"name\":\"big-%d\",\"namespace\":\"testns\",\"labels\":{"
            "\"kubernetes.io/service-name\":\"big\"}},\"addressType\":\"IPv4\",\"endpoints\":[", s);
        for (int i = s * 100; i < n && i < (s + 1) * 100; i++)
            o += (size_t)snprintf(json + o, sizeof json - o,
                                  "%s{\"addresses\":[\"10.9.%d.%d\"],\"hostname\":\"ep-%d\","
                                  "\"conditions\":{\"ready\":true}}",
                                  i % 100 ? "," : "", i / 250, i % 250 + 1, i);
        snprintf(json + o, sizeof json - o,
                 "],\"ports\":[{\"name\":\"p\",\"protocol\":\"TCP\",\"port\":9}]}");
        if (upsert(st, store_upsert_slice, json) < 0)
            return -1;
    }
    return 0;
}

typedef struct kind {
    const char *name;
    uint16_t qtype;
    const char *qname;              /* NULL: the Service's name (or SRV) */
    int proto;
    size_t len;                     /* the last reply */
    unsigned records;
} kind;

static int one(instance *I, kind *k)
{
    uint8_t qn[DNAME_MAX], w[512];
    dname_from_str(qn, k->qname ? k->qname
                   : k->qtype == T_SRV ? "_p._tcp.big.testns.svc.cluster.local."
                                       : "big.testns.svc.cluster.local.");
    dns_query q = { .id = 1, .flags = F_RD, .qname = qn, .qtype = k->qtype, .qclass = C_IN };
    int n = msg_query(&q, w, sizeof w);
    dns_req *r = n > 0 ? req_new_internal(I, NULL, w, (size_t)n, "192.0.2.1") : NULL;
    if (!r)
        return -1;
    r->proto = k->proto;            /* a client's query over this transport */
    req_run(r);
    size_t len = 0;
    const uint8_t *p = req_reply_wire(r, &len);
    int ok = r->written && len >= 12 && (p[3] & 0xf) == RC_NOERROR;
    k->len = len;
    k->records = ok ? (unsigned)(p[6] << 8 | p[7]) + (unsigned)(p[10] << 8 | p[11]) : 0;
    req_free(r);
    return ok && k->records > 0 ? 0 : -1;
}

#define RUN(fn)                                                                  \
    static __attribute__((noinline)) int fn(instance *I, kind *k, int count)    \
    {                                                                            \
        for (int i = 0; i < count; i++)                                          \
            if (one(I, k) < 0)                                                   \
                return -1;                                                       \
        return 0;                                                                \
    }
RUN(run_a_udp)
RUN(run_srv_udp)
RUN(run_a_tcp)
RUN(run_srv_tcp)
RUN(run_ptr_udp)
RUN(run_autopath_udp)

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[1]), count = atoi(argv[2]);
    char err[512] = "";
    instance *I = test_load(".:53 {\n    autopath @kubernetes\n"
                            "    kubernetes cluster.local in-addr.arpa {\n"
                            "        pods verified\n    }\n}\n", err, sizeof err);
    void *k = I ? test_plugin_inst(I, &plugin_kubernetes) : NULL;
    if (!k) {
        fprintf(stderr, "load: %s\n", err);
        return 1;
    }
    if (fill(kubernetes_store(k), n) < 0) {
        fprintf(stderr, "fill failed\n");
        return 1;
    }
    kubernetes_set_synced(k, 1);
    void *ap = test_plugin_inst(I, &plugin_autopath);    /* finds its source */
    if (!ap || plugin_autopath.start(ap, I, err, sizeof err) < 0) {
        fprintf(stderr, "autopath start: %s\n", err);
        return 1;
    }
    char ptr[64];                   /* the last endpoint's address, reversed */
    snprintf(ptr, sizeof ptr, "%d.%d.9.10.in-addr.arpa.", (n - 1) % 250 + 1, (n - 1) / 250);
    kind kinds[] = {
        { "a_udp", T_A, NULL, PROTO_UDP, 0, 0 }, { "srv_udp", T_SRV, NULL, PROTO_UDP, 0, 0 },
        { "a_tcp", T_A, NULL, PROTO_TCP, 0, 0 }, { "srv_tcp", T_SRV, NULL, PROTO_TCP, 0, 0 },
        { "ptr_udp", T_PTR, ptr, PROTO_UDP, 0, 0 },
        { "autopath_udp", T_A, "big.testns.svc.cluster.local.other.svc.cluster.local.",
          PROTO_UDP, 0, 0 },
    };
    int (*runs[])(instance *, kind *, int) = { run_a_udp, run_srv_udp, run_a_tcp, run_srv_tcp,
                                               run_ptr_udp, run_autopath_udp };
    int rc = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (one(I, &kinds[i]) < 0 || runs[i](I, &kinds[i], count) < 0) {
            fprintf(stderr, "%s: no answer\n", kinds[i].name);
            rc = 1;
        }
        printf("%s %d %zu %u\n", kinds[i].name, count, kinds[i].len, kinds[i].records);
    }
    instance_free(I);
    return rc;
}
