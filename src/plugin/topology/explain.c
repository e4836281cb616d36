/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explain.c — GET /explain?name=NAME&type=A&client=IP on the `explain`
 * address: why a client gets the endpoints it gets.
 *
 * Runs on the instance's HTTP thread (an RCU reader of the store), never on
 * a DNS worker. It locates the client, finds the Service named by NAME
 * ([_port._proto.]<svc>.<ns>.svc.<zone>), replays the decision with a trace
 * (the same topo_select the kubernetes plugin calls) and then sends the
 * query itself through the server block as that client (an internal
 * request), so "answer" is exactly what dig would get. JSON shape:
 *   { "query":   {name, type},
 *     "client":  {address, located_by, pod, node, zone, region, labels}
 *                (located_by: pod, endpoints, podcidr, cilium, calico,
 *                node-address, node-local or unknown),
 *     "service": {namespace, name, kind, policy, source},
 *     "rules":   [{rule, result, why}...],
 *     "endpoints": {before: [...], after: [...]},
 *     "outcome", "depends_on",
 *     "answer":  {rcode, records: [...]} }
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include "server/plugin.h"
#include "wire/dname.h"
#include "server/http.h"
#include "wire/msg.h"
#include "server/server.h"
#include "plugin/topology/topo_plugin.h"

static void reply(struct evhttp_request *req, int code, const char *reason, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    if (!b)
        return;
    evbuffer_add(b, body, strlen(body));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      code == 200 ? "application/json" : "text/plain; charset=utf-8");
    evhttp_send_reply(req, code, reason, b);
    evbuffer_free(b);
}

/* "<svc>.<ns>.svc.<...>" with optional "_port._proto." in front. */
static int service_of(const char *name, char *ns, char *svc, size_t cap)
{
    char low[DNAME_STR_MAX];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = '\0';
    const char *lab[130];
    int nl = 0;
    for (char *save = NULL, *t = strtok_r(low, ".", &save); t && nl < 130; t = strtok_r(NULL, ".", &save))
        lab[nl++] = t;
    for (int i = 2; i < nl; i++)
        if (!strcmp(lab[i], "svc")) {
            snprintf(svc, cap, "%s", lab[i - 2]);
            snprintf(ns, cap, "%s", lab[i - 1]);
            return 0;
        }
    return -1;
}

static cJSON *client_json(const topo_loc *loc, const char *addr)
{
    cJSON *c = cJSON_CreateObject();
    /* by topo_loc.via: the source that located the client */
    static const char *const via[LOC_VIA_COUNT] = {
        "unknown", "pod", "node-address", "node-local", "endpoints", "podcidr", "cilium", "calico",
    };
    cJSON_AddStringToObject(c, "address", addr);
    cJSON_AddStringToObject(c, "located_by",
                            loc->via >= 0 && loc->via < LOC_VIA_COUNT ? via[loc->via] : "unknown");
    if (loc->pod) {
        char pod[512];
        snprintf(pod, sizeof pod, "%s/%s", loc->pod->ns, loc->pod->name);
        cJSON_AddStringToObject(c, "pod", pod);
    }
    if (loc->node_name)
        cJSON_AddStringToObject(c, "node", loc->node_name);
    if (loc->zone)
        cJSON_AddStringToObject(c, "zone", loc->zone);
    if (loc->region)
        cJSON_AddStringToObject(c, "region", loc->region);
    cJSON *l = cJSON_AddObjectToObject(c, "labels");
    for (uint16_t i = 0; loc->node && i < loc->node->nlabels; i++)
        cJSON_AddStringToObject(l, loc->node->labels[i].key, loc->node->labels[i].value);
    return c;
}

static cJSON *endpoint_json(const st_endpoint *ep)
{
    cJSON *e = cJSON_CreateObject();
    char abuf[ST_ADDR_STRLEN];
    cJSON_AddStringToObject(e, "address", st_ep_addr(ep, abuf));
    if (st_ep_node(ep))
        cJSON_AddStringToObject(e, "node", st_ep_node(ep));
    if (st_ep_zone(ep))
        cJSON_AddStringToObject(e, "zone", st_ep_zone(ep));
    if (st_ep_n_hint_zones(ep)) {
        cJSON *z = cJSON_AddArrayToObject(e, "forZones");
        for (uint16_t i = 0; i < st_ep_n_hint_zones(ep); i++)
            cJSON_AddItemToArray(z, cJSON_CreateString(st_ep_hint_zones(ep)[i]));
    }
    if (st_ep_n_hint_nodes(ep)) {
        cJSON *z = cJSON_AddArrayToObject(e, "forNodes");
        for (uint16_t i = 0; i < st_ep_n_hint_nodes(ep); i++)
            cJSON_AddItemToArray(z, cJSON_CreateString(st_ep_hint_nodes(ep)[i]));
    }
    return e;
}

static int qtype_of(const char *t)
{
    if (!t || !strcasecmp(t, "A"))
        return T_A;
    if (!strcasecmp(t, "AAAA"))
        return T_AAAA;
    if (!strcasecmp(t, "SRV"))
        return T_SRV;
    return -1;
}

static void decision_json(cJSON *o, topo_inst *t, const char *ns, const char *name,
                          const topo_loc *loc, int qtype)
{
    store *st = topo_engine_store(t->engine);
    const st_service *svc = store_service(st, ns, name);
    if (!svc) {
        cJSON_AddNullToObject(o, "service");
        return;
    }
    static const char *const kinds[] = { "ClusterIP", "Headless", "ExternalName" };
    cJSON *s = cJSON_AddObjectToObject(o, "service");
    cJSON_AddStringToObject(s, "namespace", svc->ns);
    cJSON_AddStringToObject(s, "name", svc->name);
    cJSON_AddStringToObject(s, "kind", kinds[svc->kind]);
    if (svc->kind != SVC_HEADLESS) {
        cJSON_AddStringToObject(s, "policy", "none");
        cJSON_AddStringToObject(s, "source", "not headless: topology does not apply");
        return;
    }
    const st_endpoints *eps = store_endpoints(st, ns, name);
    size_t n = eps ? eps->n : 0;
    uint8_t *keep = calloc(n ? n : 1, 1);
    topo_trace *tr = calloc(1, sizeof *tr);
    if (!keep || !tr) {
        free(keep);
        free(tr);
        return;
    }
    int fams = qtype == T_A ? 1 : qtype == T_AAAA ? 2 : 3;
    topo_result res;
    topo_select(t->engine, svc, eps, loc, fams, keep, &res, tr);
    cJSON_AddStringToObject(s, "policy", topo_policy_name(res.policy));
    cJSON_AddStringToObject(s, "source", tr->source);
    cJSON *rules = cJSON_AddArrayToObject(o, "rules");
    for (int i = 0; i < tr->n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "rule", tr->step[i].rule);
        cJSON_AddStringToObject(r, "result", tr->step[i].result);
        cJSON_AddStringToObject(r, "why", tr->step[i].why);
        cJSON_AddItemToArray(rules, r);
    }
    cJSON *e = cJSON_AddObjectToObject(o, "endpoints");
    cJSON *before = cJSON_AddArrayToObject(e, "before"), *after = cJSON_AddArrayToObject(e, "after");
    for (size_t i = 0; i < n; i++) {
        const st_endpoint *ep = &eps->eps[i];
        if (!ep->ready || !((st_ep_family(ep) == 4 ? 1 : 2) & fams))
            continue;
        cJSON_AddItemToArray(before, endpoint_json(ep));
        if (keep[i])
            cJSON_AddItemToArray(after, endpoint_json(ep));
    }
    static const char *const deps[] = { "nothing", "zone", "node" };
    cJSON_AddStringToObject(o, "outcome", topo_outcome_name(res.outcome));
    cJSON_AddStringToObject(o, "depends_on", deps[res.dep]);
    free(keep);
    free(tr);
}

/* Send the query through the instance as the client; the reply's records. */
static void answer_json(cJSON *o, topo_inst *t, struct evhttp_request *req, const char *name,
                        int qtype, const char *client)
{
    uint8_t wire[12 + DNAME_MAX + 4], dn[DNAME_MAX];
    if (dname_from_str(dn, name) < 0)
        return;
    dns_query q = { .id = 0x1200, .qname = dn, .qtype = (uint16_t)qtype, .qclass = C_IN };
    int len = msg_query(&q, wire, sizeof wire);
    if (len < 0)
        return;
    struct event_base *base = evhttp_connection_get_base(evhttp_request_get_connection(req));
    dns_req *r = req_new_internal(t->ins, base, wire, (size_t)len, client);
    if (!r)
        return;
    int rc = req_run(r);
    char buf[1024], rcb[16];
    cJSON *a = cJSON_AddObjectToObject(o, "answer");
    cJSON_AddStringToObject(a, "rcode", rcode_name((unsigned)rc, rcb));
    cJSON *recs = cJSON_AddArrayToObject(a, "records");
    for (unsigned i = 0; i < msg_count(&r->resp, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, i);
        if (rr_to_str(&rr, buf, sizeof buf) > 0)
            cJSON_AddItemToArray(recs, cJSON_CreateString(buf));
    }
    req_free(r);
}

static void explain_handler(struct evhttp_request *req, void *data)
{
    topo_inst *t = data;
    struct evkeyvalq q;
    if (evhttp_parse_query_str(evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req)) ?
                               evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req)) : "", &q) < 0)
        return reply(req, 400, "Bad Request", "bad query string\n");
    const char *name = evhttp_find_header(&q, "name"), *client = evhttp_find_header(&q, "client");
    int qtype = qtype_of(evhttp_find_header(&q, "type"));
    st_ip ip;
    char ns[256], svc[256];
    if (!name || !client || qtype < 0 || st_parse_ip(client, &ip) < 0 ||
        service_of(name, ns, svc, sizeof ns) < 0) {
        evhttp_clear_headers(&q);
        return reply(req, 400, "Bad Request",
                     "usage: /explain?name=<svc>.<ns>.svc.<zone>&type=A|AAAA|SRV&client=<IP>\n");
    }
    cJSON *o = cJSON_CreateObject();
    cJSON *qo = cJSON_AddObjectToObject(o, "query");
    cJSON_AddStringToObject(qo, "name", name);
    cJSON_AddStringToObject(qo, "type", qtype == T_A ? "A" : qtype == T_AAAA ? "AAAA" : "SRV");
    store_read_begin();
    topo_loc loc;
    topo_locate_ip(t->engine, &ip, &loc);
    cJSON_AddItemToObject(o, "client", client_json(&loc, client));
    decision_json(o, t, ns, svc, &loc, qtype);
    store_read_end();
    answer_json(o, t, req, name, qtype, client);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    evhttp_clear_headers(&q);
    reply(req, 200, "OK", text ? text : "{}");
    free(text);
}

int topo_explain_start(topo_inst *t, char *err, size_t errlen)
{
    return http_register(t->ins, topo_engine_cfg(t->engine)->explain, "/explain",
                         explain_handler, t, err, errlen);
}
