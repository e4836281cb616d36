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
#include <yaml.h>
#include "plugin/kubernetes/kubernetes.h"
#include "server/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/msg.h"
#include "plugins.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#ifndef SRCDIR
#define SRCDIR "."
#endif

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
} harness;

static harness *H;

/* ---- fixtures ------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, 2 * cap + 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* A YAML node as JSON: mappings, sequences, and plain scalars typed as
 * YAML 1.1 core would (true/false, null, numbers); quoted scalars stay
 * strings. */
static cJSON *yaml_to_json(yaml_document_t *d, yaml_node_t *n)
{
    if (!n)
        return cJSON_CreateNull();
    if (n->type == YAML_MAPPING_NODE) {
        cJSON *o = cJSON_CreateObject();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(d, p->key);
            if (k && k->type == YAML_SCALAR_NODE)
                cJSON_AddItemToObject(o, (const char *)k->data.scalar.value,
                                      yaml_to_json(d, yaml_document_get_node(d, p->value)));
        }
        return o;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        cJSON *a = cJSON_CreateArray();
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
            cJSON_AddItemToArray(a, yaml_to_json(d, yaml_document_get_node(d, *i)));
        return a;
    }
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(s);
    if (!strcmp(s, "true") || !strcmp(s, "false"))
        return cJSON_CreateBool(s[0] == 't');
    if (!strcmp(s, "null") || !strcmp(s, "~") || !*s)
        return cJSON_CreateNull();
    char *end;
    double v = strtod(s, &end);
    if (end != s && !*end)
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(s);
}

static void add_object(store *st, const cJSON *o, const char *file)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    const char *k = cJSON_IsString(kind) ? kind->valuestring : "";
    int rc = !strcmp(k, "Namespace") ? store_upsert_namespace(st, o) :
             !strcmp(k, "Service") ? store_upsert_service(st, o) :
             !strcmp(k, "EndpointSlice") ? store_upsert_slice(st, o) :
             !strcmp(k, "Pod") ? store_upsert_pod(st, o) :
             !strcmp(k, "Node") ? store_upsert_node(st, o) : -1;
    if (rc != 0) {
        fprintf(stderr, "fuzz_kube: %s: a %s the store refused\n", file, k);
        abort();
    }
}

static void load_json(store *st, const char *file)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/tests/data/kubernetes/%s", SRCDIR, file);
    char *text = slurp(path, &len);
    cJSON *list = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!list) {
        fprintf(stderr, "fuzz_kube: cannot read %s\n", path);
        abort();
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
        add_object(st, it, file);
    cJSON_Delete(list);
}

static void load_yaml(store *st, const char *file)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/tests/data/%s", SRCDIR, file);
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "fuzz_kube: cannot read %s\n", path);
        abort();
    }
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        yaml_document_t d;
        if (!yaml_parser_load(&p, &d))
            abort();
        yaml_node_t *root = yaml_document_get_root_node(&d);
        if (!root) {
            yaml_document_delete(&d);
            break;
        }
        cJSON *o = yaml_to_json(&d, root);
        add_object(st, o, file);
        cJSON_Delete(o);
        yaml_document_delete(&d);
    }
    yaml_parser_delete(&p);
    free(text);
}

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
    store *st = kubernetes_store(k);
    load_json(st, "cluster.json");
    load_json(st, "zonal.json");
    load_yaml(st, "topology/cluster.yaml");
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!H)
        LLVMFuzzerInitialize(NULL, NULL);
    if (size < 1)
        return 0;
    instance *ins = H->ins[data[0] >> 7];
    const char *peer = peers[data[0] & 15];
    dns_req *r = req_new_internal(ins, NULL, data + 1, size - 1, peer);
    if (!r)
        return 0;
    req_run(r);
    const dns_msg *q = &r->q, *a = &r->resp;
    if (getenv("FUZZ_KUBE_SHOW")) {         /* to see what the seeds reach */
        char name[DNAME_STR_MAX];
        dname_to_str(name, sizeof name, q->qname);
        printf("%s %u from %s: rcode %d, %u answers, %u additional\n", name, q->qtype, peer,
               a->rcode, msg_count(a, SEC_ANSWER), msg_count(a, SEC_ADDITIONAL));
    }
    if (r->written) {
        if (a->id != q->id)
            fail("reply ID differs from the query's");
        if (a->has_question && (a->qtype != q->qtype || !dname_equal(a->qname, q->qname)))
            fail("reply question differs from the query's");
        /* what a UDP client without EDNS would be sent */
        uint8_t out[65536];
        dns_msg copy;
        msg_init(&copy);
        if (msg_copy(&copy, a) < 0)
            fail("copy");
        int n = msg_encode(&copy, out, sizeof out, q->edns.present ? q->edns.udp_size : 512, 1);
        if (n > 0 && !q->edns.present && n > 512)
            fail("UDP reply over 512 octets without EDNS");
        msg_free(&copy);
    }
    req_free(r);
    return 0;
}
