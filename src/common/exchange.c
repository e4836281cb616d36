/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exchange.c — one blocking DNS exchange on c-ares (see exchange.h).
 *
 * A c-ares channel with the one server, one try and the caller's timeout;
 * its sockets and timer are events on a private libevent base that runs
 * until the query's callback came.
 */
#include "common/exchange.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ares.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EX_MAX_SOCKS 4

typedef struct ex_state {
    ares_channel ch;
    struct event_base *base;
    struct event *timer;
    struct { ares_socket_t fd; struct event *ev; } socks[EX_MAX_SOCKS];
    int done, status;
    uint8_t *reply;
    size_t cap, rlen;
} ex_state;

static void ex_timer_update(ex_state *s)
{
    struct timeval tv, *t = s->done ? NULL : ares_timeout(s->ch, NULL, &tv);
    if (t)
        evtimer_add(s->timer, t);
    else
        evtimer_del(s->timer);
}

static void ex_sock_cb(evutil_socket_t fd, short what, void *arg)
{
    ex_state *s = arg;
    ares_process_fd(s->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
                    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
    ex_timer_update(s);
}

static void ex_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    ex_state *s = arg;
    ares_process_fd(s->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    ex_timer_update(s);
}

/* c-ares opens, watches and closes its sockets through this. */
static void ex_sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
    ex_state *s = data;
    int slot = -1, free_slot = -1;
    for (int i = 0; i < EX_MAX_SOCKS; i++) {
        if (s->socks[i].ev && s->socks[i].fd == fd)
            slot = i;
        else if (!s->socks[i].ev && free_slot < 0)
            free_slot = i;
    }
    if (slot >= 0) {
        event_free(s->socks[slot].ev);
        s->socks[slot].ev = NULL;
    }
    if (!readable && !writable)
        return;
    if (slot < 0)
        slot = free_slot;
    if (slot < 0)
        return;                      /* more sockets than one query opens: c-ares times out */
    short what = (short)(EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
    s->socks[slot].fd = fd;
    s->socks[slot].ev = event_new(s->base, fd, what, ex_sock_cb, s);
    if (s->socks[slot].ev)
        event_add(s->socks[slot].ev, NULL);
}

static void ex_answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    (void)timeouts;
    ex_state *s = arg;
    s->done = 1;
    s->status = status;
    if (status == ARES_SUCCESS && abuf && alen > 0) {
        s->rlen = (size_t)alen;
        if (s->reply && s->cap)
            memcpy(s->reply, abuf, s->rlen < s->cap ? s->rlen : s->cap);
    }
    if (s->base)
        event_base_loopbreak(s->base);
}

static int ex_server(ex_state *s, const struct sockaddr *to)
{
    struct ares_addr_port_node srv;
    memset(&srv, 0, sizeof srv);
    srv.family = to->sa_family;
    if (to->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)to;
        srv.addr.addr4 = s4->sin_addr;
        srv.udp_port = srv.tcp_port = ntohs(s4->sin_port);
    } else if (to->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)to;
        memcpy(&srv.addr.addr6, &s6->sin6_addr, 16);
        srv.udp_port = srv.tcp_port = ntohs(s6->sin6_port);
    } else {
        return -1;
    }
    return ares_set_servers_ports(s->ch, &srv) == ARES_SUCCESS ? 0 : -1;
}

int dns_exchange(const dns_exchange_opts *o, const uint8_t *q, size_t qlen, uint8_t *reply,
                 size_t cap, size_t *rlen, char *err, size_t errlen)
{
    assert(o && o->to && q && rlen && err);
    assert(o->timeout_ms > 0);
    assert(reply || cap == 0);
    ex_state s;
    memset(&s, 0, sizeof s);
    s.reply = reply;
    s.cap = cap;
    s.status = ARES_ETIMEOUT;
    *rlen = 0;
    if (qlen < 12 || qlen > 65535) {
        snprintf(err, errlen, "query of %zu octets", qlen);
        return -1;
    }
    if (!(s.base = event_base_new()) || !(s.timer = evtimer_new(s.base, ex_timer_cb, &s))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    struct ares_options ao;
    memset(&ao, 0, sizeof ao);
    struct in_addr lo = { htonl(INADDR_LOOPBACK) };
    ao.flags = ARES_FLAG_NOCHECKRESP | ARES_FLAG_IGNTC | (o->tcp ? ARES_FLAG_USEVC : 0);
    ao.timeout = o->timeout_ms;
    ao.tries = 1;
    ao.ndots = 1;
    ao.servers = &lo;                /* replaced below; keeps resolv.conf out */
    ao.nservers = 1;
    ao.lookups = (char *)"b";
    ao.sock_state_cb = ex_sock_state;
    ao.sock_state_cb_data = &s;
    int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_NDOTS |
               ARES_OPT_SERVERS | ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS | ARES_OPT_SORTLIST |
               ARES_OPT_SOCK_STATE_CB;
    if (ares_init_options(&s.ch, &ao, mask) != ARES_SUCCESS) {
        s.ch = NULL;
        snprintf(err, errlen, "cannot create a c-ares channel");
        goto fail;
    }
    if (ex_server(&s, o->to) < 0) {
        snprintf(err, errlen, "cannot set the server address");
        goto fail;
    }
    if (o->src && o->src->sa_family == AF_INET && o->to->sa_family == AF_INET)
        ares_set_local_ip4(s.ch, ntohl(((const struct sockaddr_in *)o->src)->sin_addr.s_addr));
    else if (o->src && o->src->sa_family == AF_INET6 && o->to->sa_family == AF_INET6)
        ares_set_local_ip6(s.ch, ((const struct sockaddr_in6 *)o->src)->sin6_addr.s6_addr);
    ares_send(s.ch, q, (int)qlen, ex_answer, &s);
    ex_timer_update(&s);
    while (!s.done)
        if (event_base_loop(s.base, EVLOOP_ONCE) < 0)
            break;
    if (!s.done)
        snprintf(err, errlen, "event loop failed");
    else if (s.status != ARES_SUCCESS)
        snprintf(err, errlen, "%s", ares_strerror(s.status));
fail:
    if (s.ch) {
        s.done = 1;
        ares_destroy(s.ch);          /* closes its sockets: ex_sock_state frees their events */
    }
    for (int i = 0; i < EX_MAX_SOCKS; i++)
        if (s.socks[i].ev)
            event_free(s.socks[i].ev);
    if (s.timer)
        event_free(s.timer);
    if (s.base)
        event_base_free(s.base);
    if (s.done && s.status == ARES_SUCCESS) {
        *rlen = s.rlen;
        return 0;
    }
    return -1;
}
