/*
 * testenv.c — see testenv.h. Single-threaded: called from a test's main
 * thread before it starts anything.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>
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
    dns_req *r = req_new_internal(ins, NULL, wire, (size_t)n, peer);
    if (r)
        req_run(r);
    return r;
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
