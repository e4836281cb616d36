/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_kube.c — fuzz harness for the whole request path of a cluster query:
 * a query packet goes through the real chain of an instance loaded from a
 * Corefile with `kubernetes` and `topology` (request parsing, zone match,
 * the kubernetes plugin's name grammar, lookup and answers, the topology
 * engine's decision for the client, EDNS and ECS handling, the reply's
 * encoding), over a store filled from the test fixtures
 * (the JSON lists of tests/data/kubernetes/ and the three-zone cluster of
 * tests/data/topology/cluster.yaml).
 *
 * Input: the first octet picks the instance (bit 7: the second Corefile
 * below) and the client address (low 4 bits, the table `peers`: pods and
 * nodes of the fixtures, trusted and untrusted for ECS, unknown, IPv6);
 * the rest is the query as it came off the wire. The reply must exist for
 * every query that parses, keep the query's ID and question, and encode
 * within 512 octets over UDP when the query had no EDNS.
 *
 * With FUZZ_KUBE_SHOW set in the environment each query's name, client,
 * rcode and record counts are printed (to see what the seeds reach).
 *
 * Nothing listens and no API server is contacted: the instances are loaded,
 * never started; ExternalName targets outside the cluster (a query through
 * the chain that needs an event base) fail as without one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "runtime/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/msg.h"
#include "plugins.h"
#include "fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const corefiles[2] = {
    ".:53 {\n"
    "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
    "        pods verified\n"
    "        zonal\n"
    "        ttl 7\n"
    "    }\n"
    "    topology {\n"
    "        client_subnet 127.0.0.0/16 ::1/128\n"
    "        hints compute\n"
    "    }\n"
    "}\n",
    "cluster.local:53 example.org:53 {\n"
    "    kubernetes cluster.local example.org {\n"
    "        pods insecure\n"
    "        endpoint_pod_names\n"
    "        noendpoints\n"
    "        fallthrough example.org\n"
    "    }\n"
    "    topology {\n"
    "        client_subnet 0.0.0.0/0 ::/0\n"
    "        hints consume\n"
    "        internal_traffic_policy off\n"
    "    }\n"
    "}\n",
};

static const char *const peers[16] = {
    "127.0.1.1", "127.0.1.2", "127.0.2.1", "127.0.2.2", "127.0.3.1", "127.0.3.2",
    "127.0.10.1", "127.0.10.4", "10.240.0.1", "10.244.0.20", "172.17.0.5", "192.0.2.1",
    "::1", "fd00::1", "2001:db8::7", "127.0.0.1",
};

/* The process's setup, made once (a fuzz harness's instances live as long
 * as the process). */
typedef struct harness {
    server_env env;
    instance *ins[2];
    uint8_t slow[65536], fast[65536];   /* one query's replies */
} harness;

static harness *H;

static void *kube_of(instance *ins)
{
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (hs[i]->def == &plugin_kubernetes)
            return hs[i]->inst;
    abort();
}

static instance *load(const char *text)
{
    char path[] = "/tmp/fuzz_kube.XXXXXX", err[1024] = "";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
    instance *ins = instance_load(&H->env, path, err, sizeof err);
    unlink(path);
    if (!ins) {
        fprintf(stderr, "fuzz_kube: Corefile: %s\n", err);
        abort();
    }
    void *k = kube_of(ins);
    fuzz_fixture_load(kubernetes_store(k));
    kubernetes_set_synced(k, 1);
    return ins;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (H)
        return 0;
    setenv("TOPODNS_SELF_IPS", "10.244.0.20", 1);
    H = calloc(1, sizeof *H);
    H->env.plugins = topodns_plugins;
    H->env.dns_port = 53;
    H->env.metrics = metrics_registry_new();
    store_reader_register();
    for (int i = 0; i < 2; i++)
        H->ins[i] = load(corefiles[i]);
    return 0;
}

/* ---- one query ---------------------------------------------------------- */

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_kube: %s\n", why);
    abort();
}

/* One run of the query as if it came over UDP (the pre-rendered answers
 * serve only clients' queries); the reply's octets are copied to out. */
static dns_req *run(instance *ins, const char *peer, const uint8_t *data, size_t size,
                    uint8_t *out, size_t *outlen)
{
    dns_req *r = req_new_internal(ins, NULL, data, size, peer);
    if (!r)
        return NULL;
    r->proto = PROTO_UDP;
    req_run(r);
    size_t n = 0;
    const uint8_t *w = req_reply_wire(r, &n);
    *outlen = r->written ? n : 0;
    if (*outlen)
        memcpy(out, w, n);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!H)
        LLVMFuzzerInitialize(NULL, NULL);
    if (size < 1)
        return 0;
    instance *ins = H->ins[data[0] >> 7];
    void *k = kube_of(ins);
    const char *peer = peers[data[0] & 15];
    /* the slow path, then twice with the pre-rendered answers (the first
     * may fill the memo, the second may be answered from it): the same
     * octets every time */
    uint8_t *slow = H->slow, *fast = H->fast;
    size_t nslow = 0, nfast = 0;
    kubernetes_set_prerender(k, 0);
    dns_req *r = run(ins, peer, data + 1, size - 1, slow, &nslow);
    kubernetes_set_prerender(k, 1);
    if (!r)
        return 0;
    req_free(r);
    for (int i = 0; i < 2; i++) {
        r = run(ins, peer, data + 1, size - 1, fast, &nfast);
        if (!r)
            fail("the query parsed once and then not");
        if (nfast != nslow || memcmp(fast, slow, nslow))
            fail("a pre-rendered reply differs from the slow path's");
        if (i == 0)
            req_free(r);
    }
    const dns_msg *q = &r->q, *a = &r->resp;
    if (getenv("FUZZ_KUBE_SHOW")) {         /* to see what the seeds reach */
        char name[DNAME_STR_MAX];
        dname_to_str(name, sizeof name, q->qname);
        printf("%s %u from %s: rcode %d, %zu octets\n", name, q->qtype, peer, a->rcode, nfast);
    }
    if (r->written) {
        if (a->id != q->id)
            fail("reply ID differs from the query's");
        if (a->has_question && (a->qtype != q->qtype || !dname_equal(a->qname, q->qname)))
            fail("reply question differs from the query's");
        /* what a UDP client without EDNS is sent */
        if (!q->edns.present && nfast > 512)
            fail("UDP reply over 512 octets without EDNS");
    }
    req_free(r);
    return 0;
}
