/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testenv.c — see testenv.h. Single-threaded: called from a test's main
 * thread before it starts anything.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>
#include <cmocka.h>
#include "plugins.h"
#include "testenv.h"

static server_env env = { .plugins = topodns_plugins, .dns_port = 53 };

const server_env *test_env(void)
{
    if (!env.metrics)
        env.metrics = metrics_registry_new();
    return &env;
}

metrics_registry *test_registry(void)
{
    return test_env()->metrics;
}

instance *test_load(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/testenv_cf.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, errlen, "mkstemp failed");
        return NULL;
    }
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    close(fd);
    instance *ins = w == (ssize_t)len ? instance_load(test_env(), path, err, errlen) : NULL;
    unlink(path);
    return ins;
}

void *test_plugin_inst(instance *ins, const plugin_def *def)
{
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (hs[i]->def == def)
            return hs[i]->inst;
    return NULL;
}

dns_req *test_query(instance *ins, const dns_query *q, const char *peer)
{
    uint8_t wire[512];
    int n = msg_query(q, wire, sizeof wire);
    if (n < 0)
        return NULL;
    return test_query_wire(ins, wire, (size_t)n, peer);
}

dns_req *test_query_wire(instance *ins, const uint8_t *wire, size_t len, const char *peer)
{
    dns_req *r = req_new_internal(ins, NULL, wire, len, peer);
    if (r)
        req_run(r);
    return r;
}

dns_req *test_ask(instance *ins, const char *name, uint16_t type, const char *peer)
{
    uint8_t qn[DNAME_MAX];
    if (dname_from_str(qn, name) <= 0)
        return NULL;
    dns_query q = { .id = 7, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    return test_query(ins, &q, peer);
}

const char *test_section(const dns_msg *m, int sec, char *out, size_t cap)
{
    size_t o = 0;
    if (cap)
        out[0] = '\0';
    for (unsigned i = 0; i < msg_count(m, sec) && o + 1 < cap; i++) {
        dns_rr rr = msg_rr(m, sec, i);
        char line[2048];
        if (rr_to_str(&rr, line, sizeof line) < 0)
            snprintf(line, sizeof line, "(type %u, %u octets)", rr.type, rr.rdlen);
        for (char *t = line; *t; t++)
            if (*t == '\t')
                *t = ' ';
        int w = snprintf(out + o, cap - o, "%s%s", i ? "\n" : "", line);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return out;
}

const char *test_load_err(const char *text, char *err, size_t errlen)
{
    instance *ins = test_load(text, err, errlen);
    if (ins) {
        instance_free(ins);
        if (errlen)
            err[0] = '\0';
    }
    return err;
}

static void upstream_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    test_upstream *u = arg;
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    uint8_t b[512], out[512];
    ssize_t n = recvfrom(fd, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
    dns_msg q, a;
    int hdr_ok;
    msg_init(&q);
    msg_init(&a);
    if (n > 0 && msg_parse(&q, b, (size_t)n, &hdr_ok) == 0) {
        u->nq++;
        dname_to_str(u->last, sizeof u->last, q.qname);
        memcpy(u->lastq, b, (size_t)n);
        u->lastqlen = (size_t)n;
        msg_reply_to(&a, &q);
        struct in_addr ip = { htonl(u->ip) };
        int len = -1;
        if (msg_add_a(&a, SEC_ANSWER, q.qname, u->ttl, &ip) == 0)
            len = msg_encode(&a, out, sizeof out, 512, 0);
        if (len > 0)
            sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, fl);
    }
    msg_free(&q);
    msg_free(&a);
}

int test_upstream_start(test_upstream *u, struct event_base *base, uint32_t ip, uint32_t ttl)
{
    memset(u, 0, sizeof *u);
    u->ip = ip;
    u->ttl = ttl;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (u->fd < 0 || bind(u->fd, (struct sockaddr *)&sa, sl) != 0 ||
        getsockname(u->fd, (struct sockaddr *)&sa, &sl) != 0) {
        fprintf(stderr, "test_upstream_start: no UDP socket on 127.0.0.1\n");
        abort();
    }
    u->ev = event_new(base, u->fd, EV_READ | EV_PERSIST, upstream_read, u);
    event_add(u->ev, NULL);
    return ntohs(sa.sin_port);
}

void test_upstream_stop(test_upstream *u)
{
    event_free(u->ev);
    close(u->fd);
}

instance *test_must_load(const char *text)
{
    char err[512] = "";
    instance *ins = test_load(text, err, sizeof err);
    if (!ins)
        fail_msg("%s", err);
    return ins;
}

void test_expect(instance *ins, const char *name, uint16_t type, int rcode, const char *answer)
{
    dns_req *r = test_ask(ins, name, type, "192.0.2.1");
    if (!r)
        fail_msg("%s: no request", name);
    char got[4096];
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    int rc = (int)r->resp.rcode;
    req_free(r);
    if (rc != rcode || strcmp(got, answer) != 0)
        fail_msg("%s type %u: rcode %d '%s', want %d '%s'", name, type, rc, got, rcode, answer);
}

void test_load_fails(const char *text, const char *msg)
{
    char err[512];
    test_load_err(text, err, sizeof err);
    if (!err[0] || !strstr(err, msg))
        fail_msg("Corefile\n%s: error '%s', want '%s'", text, err, msg);
}
