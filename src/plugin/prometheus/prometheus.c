/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prometheus — CoreDNS's metrics plugin: per-request series and /metrics.
 *
 *   prometheus [ADDRESS] { runtime_metrics }
 *
 * In the chain (order.h puts it outside errors, log and every answering
 * plugin) it registers a done hook on each request and, when the request is
 * finished, records it (prom_report()): coredns_dns_requests_total,
 * _request_duration_seconds, _request_size_bytes, _response_size_bytes,
 * _do_requests_total and _responses_total, labelled exactly as CoreDNS does
 * (server, zone, view (the view plugin's NAME, else ""), proto, family, type,
 * rcode, plugin).
 *
 * Requests that never reach a chain (no zone, refused class, FORMERR) are
 * counted the same way under zone "dropped", through the instance's
 * unrouted observer (instance_on_unrouted), registered by the first
 * prometheus of an instance.
 *
 * start() binds ADDRESS (default localhost:9153) through http.c and serves
 * /metrics from the instance's registry (the process's, metrics.c),
 * refreshing the process_* gauges from /proc first. Blocks that name the same address share
 * one listener. It also publishes coredns_build_info, coredns_panics_total
 * and coredns_plugin_enabled for the block's chain plugins.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include "server/plugin.h"
#include "plugin/prometheus/prometheus.h"
#include "server/http.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "common/revision.h"

#ifndef TOPODNS_VERSION
#define TOPODNS_VERSION "unknown"
#endif

#define DEFAULT_ADDR "localhost:9153"

/* The families, looked up in the instance's registry at setup. */
typedef struct prom_families {
    metric_family *requests, *duration, *req_size, *resp_size, *do_req, *responses;
    metric_family *build, *panics, *enabled;
    metric_family *cpu, *open_fds, *max_fds, *rss, *vsize, *vmax, *start;
} prom_families;

/* The series one kind of request updates, looked up once: the key is the
 * label values (server, zone, proto, family, type, rcode, plugin); the
 * strings are copies held after the entry. Entries are immutable once
 * published and freed with the instance. */
typedef struct series_set {
    const char *server, *zone, *writer;
    const char *type;               /* type_label(): a string constant */
    int rcode;
    uint8_t udp, v6;
    metric_series *requests, *duration, *resp_size, *req_size, *responses;
} series_set;

#define SERIES_CACHE 256            /* slots; a taken slot is never replaced */

typedef struct prom {
    char addr[256];
    server_block *blk;
    metrics_registry *reg;
    prom_families M;
    /* written by any worker (compare-and-swap into an empty slot), read by
     * all; a key whose slot holds another key takes the slow path */
    _Atomic(series_set *) cache[SERIES_CACHE];
} prom;

/* ---- families --------------------------------------------------------- */

static void register_dns(prom_families *M, metrics_registry *reg)
{
    static const char *const l_req[] = { "server", "zone", "view", "proto", "family", "type", NULL };
    static const char *const l_szv[] = { "server", "zone", "view", NULL };
    static const char *const l_size[] = { "server", "zone", "view", "proto", NULL };
    static const char *const l_resp[] = { "server", "zone", "view", "rcode", "plugin", NULL };
    static const double sizes[] = { 0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291,
                                    16e3, 32e3, 48e3, 64e3 };
    double time[16];
    metrics_exponential_buckets(time, 16, 0.00025, 2);
    M->requests = metrics_family(reg, "coredns_dns_requests_total",
        "Counter of DNS requests made per zone, protocol and family.",
        METRIC_COUNTER, l_req, NULL, 0);
    M->duration = metrics_family(reg, "coredns_dns_request_duration_seconds",
        "Histogram of the time (in seconds) each request took per zone.",
        METRIC_HISTOGRAM, l_szv, time, 16);
    M->req_size = metrics_family(reg, "coredns_dns_request_size_bytes",
        "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.",
        METRIC_HISTOGRAM, l_size, sizes, 14);
    M->resp_size = metrics_family(reg, "coredns_dns_response_size_bytes",
        "Size of the returned response in bytes.", METRIC_HISTOGRAM, l_size, sizes, 14);
    M->do_req = metrics_family(reg, "coredns_dns_do_requests_total",
        "Counter of DNS requests with DO bit set per zone.", METRIC_COUNTER, l_szv, NULL, 0);
    M->responses = metrics_family(reg, "coredns_dns_responses_total",
        "Counter of response status codes.", METRIC_COUNTER, l_resp, NULL, 0);
}

static void register_process(prom_families *M, metrics_registry *reg)
{
    M->cpu = metrics_family(reg, "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.", METRIC_COUNTER, NULL, NULL, 0);
    M->open_fds = metrics_family(reg, "process_open_fds", "Number of open file descriptors.",
        METRIC_GAUGE, NULL, NULL, 0);
    M->max_fds = metrics_family(reg, "process_max_fds", "Maximum number of open file descriptors.",
        METRIC_GAUGE, NULL, NULL, 0);
    M->rss = metrics_family(reg, "process_resident_memory_bytes", "Resident memory size in bytes.",
        METRIC_GAUGE, NULL, NULL, 0);
    M->vsize = metrics_family(reg, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
        METRIC_GAUGE, NULL, NULL, 0);
    M->vmax = metrics_family(reg, "process_virtual_memory_max_bytes",
        "Maximum amount of virtual memory available in bytes.", METRIC_GAUGE, NULL, NULL, 0);
    M->start = metrics_family(reg, "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.", METRIC_GAUGE, NULL, NULL, 0);
}

static void register_all(prom_families *M, metrics_registry *reg)
{
    static const char *const l_build[] = { "version", "revision", "goversion", NULL };
    static const char *const l_enabled[] = { "server", "zone", "view", "name", NULL };
    register_dns(M, reg);
    register_process(M, reg);
    M->build = metrics_family(reg, "coredns_build_info",
        "A metric with a constant '1' value labeled by version, revision, and goversion "
        "from which CoreDNS was built.", METRIC_GAUGE, l_build, NULL, 0);
    M->panics = metrics_family(reg, "coredns_panics_total",
        "A metrics that counts the number of panics.", METRIC_COUNTER, NULL, NULL, 0);
    M->enabled = metrics_family(reg, "coredns_plugin_enabled",
        "A metric that indicates whether a plugin is enabled on per server and zone basis.",
        METRIC_GAUGE, l_enabled, NULL, 0);
    /* goversion: the C compiler topodns was built with */
    const char *const build[] = { TOPODNS_VERSION, TOPODNS_REVISION, __VERSION__ };
    metrics_set(M->build, build, 1);
}

/* ---- per request ------------------------------------------------------ */

/* CoreDNS's monitored query types; everything else is "other". */
static const char *type_label(uint16_t t)
{
    switch (t) {
    case 1: return "A";        case 2: return "NS";       case 5: return "CNAME";
    case 6: return "SOA";      case 12: return "PTR";     case 15: return "MX";
    case 16: return "TXT";     case 28: return "AAAA";    case 33: return "SRV";
    case 43: return "DS";      case 46: return "RRSIG";   case 47: return "NSEC";
    case 48: return "DNSKEY";  case 50: return "NSEC3";   case 64: return "SVCB";
    case 65: return "HTTPS";   case 251: return "IXFR";   case 252: return "AXFR";
    case 255: return "ANY";
    default: return "other";
    }
}

/* miekg/dns's RcodeToString (16 is BADSIG there), else "RCODE<n>". */
static const char *rcode_label(int rc, char buf[16])
{
    static const char *const low[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
        "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE" };
    static const char *const high[] = { "BADSIG", "BADKEY", "BADTIME", "BADMODE",
        "BADNAME", "BADALG", "BADTRUNC", "BADCOOKIE" };
    if (rc >= 0 && rc <= 10)
        return low[rc];
    if (rc >= 16 && rc <= 23)
        return high[rc - 16];
    snprintf(buf, 16, "RCODE%d", rc);
    return buf;
}

static double since_seconds(uint64_t start_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return now > start_ns ? (double)(now - start_ns) / 1e9 : 0;
}

/* Record one finished request in the coredns_dns_* series (the slow path:
 * every series found by its label values). */
static void report(const prom_families *M, const dns_req *r, int rcode)
{
    char rbuf[16];
    const char *server = r->server ? r->server : "", *zone = r->zone ? r->zone : ".",
               *view = r->view ? r->view : "";
    const char *proto = r->proto == PROTO_TCP ? "tcp" : "udp";
    const char *family = req_family(r) == 2 ? "2" : "1";
    const char *const szv[] = { server, zone, view };
    const char *const req[] = { server, zone, view, proto, family, type_label(r->q.qtype) };
    const char *const size[] = { server, zone, view, proto };
    const char *const resp[] = { server, zone, view, rcode_label(rcode, rbuf),
                                 r->writer ? r->writer : "" };
    if (r->q.edns.present && r->q.edns.do_bit)
        metrics_add(M->do_req, szv, 1);
    metrics_add(M->requests, req, 1);
    metrics_observe(M->duration, szv, since_seconds(r->start_ns));
    metrics_observe(M->resp_size, size, (double)r->resp_size);
    metrics_observe(M->req_size, size, (double)r->rawlen_in);   /* before any rewrite */
    metrics_add(M->responses, resp, 1);
}

static int set_matches(const series_set *e, const char *server, const char *zone,
                       const char *writer, const char *type, int rcode, int udp, int v6)
{
    return e->type == type && e->rcode == rcode && e->udp == udp && e->v6 == v6 &&
           !strcmp(e->server, server) && !strcmp(e->zone, zone) && !strcmp(e->writer, writer);
}

static series_set *set_new(const prom_families *M, const char *server, const char *zone,
                           const char *writer, const char *type, int rcode, int udp, int v6)
{
    size_t ls = strlen(server) + 1, lz = strlen(zone) + 1, lw = strlen(writer) + 1;
    series_set *e = calloc(1, sizeof *e + ls + lz + lw);
    if (!e)
        return NULL;
    char *p = (char *)(e + 1);
    e->server = memcpy(p, server, ls);
    e->zone = memcpy(p + ls, zone, lz);
    e->writer = memcpy(p + ls + lz, writer, lw);
    e->type = type;
    e->rcode = rcode;
    e->udp = (uint8_t)udp;
    e->v6 = (uint8_t)v6;
    char rbuf[16];
    const char *proto = udp ? "udp" : "tcp", *family = v6 ? "2" : "1";
    const char *const szv[] = { server, zone, "" };
    const char *const req[] = { server, zone, "", proto, family, type };
    const char *const size[] = { server, zone, "", proto };
    const char *const resp[] = { server, zone, "", rcode_label(rcode, rbuf), writer };
    e->requests = metrics_series(M->requests, req);
    e->duration = metrics_series(M->duration, szv);
    e->resp_size = metrics_series(M->resp_size, size);
    e->req_size = metrics_series(M->req_size, size);
    e->responses = metrics_series(M->responses, resp);
    return e;
}

/* The same updates as report(), with the series of this kind of request
 * found in the instance's cache (one string comparison per label instead
 * of hashing and looking up five series). */
static void report_cached(prom *p, const dns_req *r, int rcode)
{
    const char *server = r->server ? r->server : "", *zone = r->zone ? r->zone : ".",
               *view = r->view ? r->view : "";
    const char *writer = r->writer ? r->writer : "";
    const char *type = type_label(r->q.qtype);
    int udp = r->proto != PROTO_TCP, v6 = req_family(r) == 2;
    if (rcode < 0 || rcode > 23 || (rcode > 10 && rcode < 16) || *view) {
        report(&p->M, r, rcode);    /* RCODE<n> and view labels: not cached */
        return;
    }
    size_t h = strlen(server) * 31 + strlen(zone) * 131 + strlen(writer) * 7 +
               (size_t)r->q.qtype * 17 + (size_t)rcode * 3 + (size_t)(udp * 2 + v6) +
               (size_t)(unsigned char)zone[0] * 5 + (size_t)(unsigned char)writer[0];
    _Atomic(series_set *) *slot = &p->cache[h % SERIES_CACHE];
    series_set *e = atomic_load_explicit(slot, memory_order_acquire);
    if (!e) {
        series_set *n = set_new(&p->M, server, zone, writer, type, rcode, udp, v6);
        if (n && !atomic_compare_exchange_strong_explicit(slot, &e, n, memory_order_acq_rel,
                                                          memory_order_acquire))
            free(n);                /* another worker filled the slot: e is its entry */
        else
            e = n;
    }
    if (!e || !set_matches(e, server, zone, writer, type, rcode, udp, v6)) {
        report(&p->M, r, rcode);
        return;
    }
    if (r->q.edns.present && r->q.edns.do_bit) {
        const char *const szv[] = { server, zone, "" };
        metrics_add(p->M.do_req, szv, 1);
    }
    metrics_series_add(e->requests, 1);
    metrics_series_observe(e->duration, since_seconds(r->start_ns));
    metrics_series_observe(e->resp_size, (double)r->resp_size);
    metrics_series_observe(e->req_size, (double)r->rawlen_in);  /* before any rewrite */
    metrics_series_add(e->responses, 1);
}

void prom_report(const void *inst, const dns_req *r, int rcode)
{
    report_cached((prom *)inst, r, rcode);
}

static void on_done(dns_req *r, int rcode, void *data)
{
    prom_report(data, r, rcode);
}

static int prom_serve(const handler *h, dns_req *r)
{
    req_on_done(r, on_done, h->inst);
    return plugin_next(h, r);
}

/* ---- process metrics (read at scrape time) ---------------------------- */

static double boot_time(void)
{
    FILE *fp = fopen("/proc/stat", "r");
    char line[256];
    double bt = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "btime %lf", &bt) == 1)
            break;
    if (fp)
        fclose(fp);
    return bt;
}

static void proc_stat(const prom_families *M)
{
    FILE *fp = fopen("/proc/self/stat", "r");
    char buf[1024];
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');                  /* comm may hold spaces */
    unsigned long utime, stime, vsize;
    unsigned long long start;
    long rss;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d "
                     "%*d %*d %*d %*d %llu %lu %ld", &utime, &stime, &start, &vsize, &rss) != 5)
        return;
    double tck = (double)sysconf(_SC_CLK_TCK);
    metrics_set(M->cpu, NULL, (double)(utime + stime) / tck);
    metrics_set(M->vsize, NULL, (double)vsize);
    metrics_set(M->rss, NULL, (double)rss * (double)sysconf(_SC_PAGESIZE));
    metrics_set(M->start, NULL, boot_time() + (double)start / tck);
}

static double rlimit_value(int res)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) < 0)
        return 0;
    return rl.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : (double)rl.rlim_cur;
}

static void proc_collect(const prom_families *M)
{
    int fds = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            fds++;
    if (d) {
        closedir(d);
        metrics_set(M->open_fds, NULL, fds);   /* counts the directory's own fd, as Go does */
    }
    metrics_set(M->max_fds, NULL, rlimit_value(RLIMIT_NOFILE));
    metrics_set(M->vmax, NULL, rlimit_value(RLIMIT_AS));
    proc_stat(M);
}

static void metrics_http(struct evhttp_request *req, void *data)
{
    const prom *p = data;
    size_t len = 0;
    proc_collect(&p->M);
    char *text = metrics_render(p->reg, &len);
    struct evbuffer *b = evbuffer_new();
    if (!text || !b) {
        evhttp_send_error(req, 500, "Internal Server Error");
    } else {
        evbuffer_add(b, text, len);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "text/plain; version=0.0.4; charset=utf-8");
        evhttp_send_reply(req, 200, "OK", b);
    }
    if (b)
        evbuffer_free(b);
    free(text);
}

/* ---- setup / start ---------------------------------------------------- */

static int prom_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    char addr[256];
    snprintf(addr, sizeof addr, "%s", DEFAULT_ADDR);
    while (cf_next(d)) {
        if (http_addr_arg(d, "prometheus", addr, sizeof addr) < 0)
            return -1;
        while (cf_next_block(d)) {
            if (strcmp(cf_val(d), "runtime_metrics") == 0) {
                if (cf_next_arg(d))
                    return cf_arg_err(d);
                continue;                         /* Go runtime only: nothing to add */
            }
            return cf_err(d, "plugin/prometheus: unknown option: %s", cf_val(d));
        }
    }
    prom *p = calloc(1, sizeof *p);
    if (!p)
        return cf_err(d, "plugin/prometheus: out of memory");
    p->blk = ctx->blk;
    p->reg = instance_metrics(ctx->ins);
    register_all(&p->M, p->reg);
    snprintf(p->addr, sizeof p->addr, "%s", addr);
    *inst = p;
    return 0;
}

/* coredns_plugin_enabled for every key and listen address of the block. */
static void publish_enabled(const prom_families *M, const server_block *b)
{
    for (size_t k = 0; k < b->nkeys; k++) {
        size_t nh = b->nbind ? b->nbind : 1;
        for (size_t a = 0; a < nh; a++) {
            const char *host = b->nbind ? b->bind[a] : "";
            int v6 = strchr(host, ':') != NULL;
            char server[300];
            snprintf(server, sizeof server, "%s://%s%s%s:%d", b->keys[k].scheme,
                     v6 ? "[" : "", host, v6 ? "]" : "", b->keys[k].port);
            for (size_t i = 0; i < b->nhandlers; i++) {
                if (!b->handlers[i].def->serve)
                    continue;                     /* only chain plugins, as CoreDNS */
                const char *const v[] = { server, b->keys[k].zone, "",
                                          b->handlers[i].def->name };
                metrics_set(M->enabled, v, 1);
            }
        }
    }
}

/* The first prometheus of an instance to start clears the plugin_enabled
 * series of the previous configuration and watches the requests that never
 * reach a chain (counted under zone "dropped", as CoreDNS does). */
static int prom_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    prom *p = inst;
    if (http_register(ins, p->addr, "/metrics", metrics_http, p, err, errlen) < 0)
        return -1;
    if (!instance_value(ins, "prometheus")) {
        metrics_remove(p->M.enabled, NULL);
        if (instance_set_value(ins, "prometheus", p, NULL) < 0 ||
            instance_on_unrouted(ins, on_done, p) < 0) {
            snprintf(err, errlen, "plugin/prometheus: out of memory");
            return -1;
        }
    }
    publish_enabled(&p->M, p->blk);
    return 0;
}

static void prom_destroy(void *inst)
{
    prom *p = inst;
    for (size_t i = 0; i < SERIES_CACHE; i++)
        free(atomic_load_explicit(&p->cache[i], memory_order_relaxed));
    free(inst);
}

const plugin_def plugin_prometheus = {
    .name = "prometheus",
    .flags = PLUGIN_ONCE,
    .setup = prom_setup,
    .start = prom_start,
    .destroy = prom_destroy,
    .serve = prom_serve,
};
