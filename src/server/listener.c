/*
 * listener.c — sockets and worker threads.
 *
 * Every worker thread runs one libevent loop and owns, for every listen
 * group (address, port), a UDP socket and a TCP listening socket, all bound
 * with SO_REUSEPORT so the kernel spreads clients across workers. Nothing is
 * shared between workers on the serving path.
 *
 * UDP: a readable socket is drained (up to UDP_BATCH datagrams per wakeup)
 *   with recvfrom, one system call per datagram; each datagram becomes a
 *   request answered with sendto from the socket it came in on.
 * TCP: RFC 7766 framing (2-octet length). Several queries may be pipelined on
 *   one connection and are answered as they complete, possibly out of order.
 *   Limits: TCP_IDLE seconds without a query closes the connection, at most
 *   TCP_MAX_CONNS connections per worker, TCP_MAX_INFLIGHT queries in flight
 *   per connection (reading pauses beyond it), TCP_MAX_OUTPUT octets queued
 *   for a slow reader (reading pauses beyond it). A length under 12 (no room
 *   for a header) closes the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include "server/core.h"
#include "cluster/store.h"
#include "common/log.h"

#define UDP_BATCH 64
#define TCP_IDLE 10
#define TCP_MAX_CONNS 1024
#define TCP_MAX_INFLIGHT 128
#define TCP_MAX_OUTPUT (1u << 20)

typedef struct tcp_conn {
    worker *w;
    const listen_group *grp;
    struct bufferevent *bev;
    struct sockaddr_storage peer, local;
    unsigned inflight;
    int closed;                     /* client gone or we closed: drop replies */
    struct tcp_conn *prev, *next;
} tcp_conn;

/* ---- addresses -------------------------------------------------------- */

/* IPv4-mapped IPv6 peers (dual-stack sockets) are reported as IPv4. */
static void unmap(struct sockaddr_storage *ss)
{
    if (ss->ss_family != AF_INET6)
        return;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    struct sockaddr_in s4;
    memset(&s4, 0, sizeof s4);
    s4.sin_family = AF_INET;
    s4.sin_port = s6->sin6_port;
    memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(ss, 0, sizeof *ss);
    memcpy(ss, &s4, sizeof s4);
}

static socklen_t group_sockaddr(const listen_group *g, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, g->addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)g->port);
        return sizeof *s4;
    }
    if (inet_pton(AF_INET6, g->addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)g->port);
        return sizeof *s6;
    }
    return 0;
}

static int open_socket(const listen_group *g, int type, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = group_sockaddr(g, &ss);
    if (!sl) {
        snprintf(err, errlen, "listen %s: bad address '%s'", type == SOCK_DGRAM ? "udp" : "tcp", g->addr);
        return -1;
    }
    int fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
        snprintf(err, errlen, "listen %s %s:%d: %s", type == SOCK_DGRAM ? "udp" : "tcp",
                 g->addr, g->port, strerror(errno));
        close(fd);
        return -1;
    }
    if (type == SOCK_STREAM && listen(fd, 1024) < 0) {
        snprintf(err, errlen, "listen tcp %s:%d: %s", g->addr, g->port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- UDP -------------------------------------------------------------- */

/* One (worker, group) pair; local is the UDP socket's own address (the
 * address it is bound to: for a wildcard bind, the wildcard), the server
 * address a UDP query reports, as miekg/dns's LocalAddr does. */
typedef struct udp_ctx {
    worker *w;
    const listen_group *grp;
    int fd;
    struct sockaddr_storage local;
} udp_ctx;

static void udp_read(evutil_socket_t fd, short what, void *arg)
{
    udp_ctx *u = arg;
    worker *w = u->w;
    for (int i = 0; i < UDP_BATCH; i++) {
        req_full *f = req_alloc(w);
        if (!f)
            return;
        if (f->rawcap < 65536) {
            uint8_t *p = realloc(f->raw, 65536);
            if (!p) {
                req_release(f);
                return;
            }
            f->raw = p;
            f->rawcap = 65536;
        }
        socklen_t sl = sizeof f->r.peer;
        ssize_t n = recvfrom(fd, f->raw, f->rawcap, 0, (struct sockaddr *)&f->r.peer, &sl);
        if (n < 0) {
            req_release(f);
            return;
        }
        unmap(&f->r.peer);
        f->transport = TRANSPORT_UDP;
        f->fd = fd;
        f->grp = u->grp;
        f->ins = w->ins;
        f->r.proto = PROTO_UDP;
        f->r.raw = f->raw;
        f->r.rawlen = (size_t)n;
        f->r.local = u->local;
        core_handle_packet(f);
    }
}

/* ---- TCP -------------------------------------------------------------- */

static void conn_free(tcp_conn *c)
{
    worker *w = c->w;
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    w->nconns--;
    free(c);
}

static void conn_close(tcp_conn *c)
{
    if (!c->closed) {
        c->closed = 1;
        bufferevent_free(c->bev);
        c->bev = NULL;
    }
    if (c->inflight == 0)
        conn_free(c);
}

static void tcp_read(struct bufferevent *bev, void *arg);

/* Read more only while the connection is within its limits. */
static void conn_flow(tcp_conn *c)
{
    if (c->closed)
        return;
    size_t out = evbuffer_get_length(bufferevent_get_output(c->bev));
    if (c->inflight >= TCP_MAX_INFLIGHT || out >= TCP_MAX_OUTPUT)
        bufferevent_disable(c->bev, EV_READ);
    else
        bufferevent_enable(c->bev, EV_READ);
}

static void tcp_read(struct bufferevent *bev, void *arg)
{
    tcp_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    while (!c->closed && c->inflight < TCP_MAX_INFLIGHT) {
        uint8_t lenb[2];
        if (evbuffer_copyout(in, lenb, 2) < 2)
            break;
        size_t len = (size_t)lenb[0] << 8 | lenb[1];
        if (len < 12) {
            conn_close(c);
            return;
        }
        if (evbuffer_get_length(in) < len + 2)
            break;
        req_full *f = req_alloc(c->w);
        if (!f)
            break;
        if (f->rawcap < len) {
            uint8_t *p = realloc(f->raw, len);
            if (!p) {
                req_release(f);
                break;
            }
            f->raw = p;
            f->rawcap = len;
        }
        evbuffer_drain(in, 2);
        evbuffer_remove(in, f->raw, len);
        f->transport = TRANSPORT_TCP;
        f->conn = c;
        f->grp = c->grp;
        f->ins = c->w->ins;
        f->r.proto = PROTO_TCP;
        f->r.raw = f->raw;
        f->r.rawlen = len;
        f->r.peer = c->peer;
        f->r.local = c->local;
        c->inflight++;
        core_handle_packet(f);
    }
    conn_flow(c);
}

static void tcp_write_done(struct bufferevent *bev, void *arg)
{
    conn_flow(arg);
}

static void tcp_event(struct bufferevent *bev, short what, void *arg)
{
    conn_close(arg);
}

static void tcp_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                       int salen, void *arg)
{
    udp_ctx *u = arg;                  /* same (worker, group) pair */
    worker *w = u->w;
    if (w->nconns >= TCP_MAX_CONNS) {
        close(fd);
        return;
    }
    tcp_conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->w = w;
    c->grp = u->grp;
    memcpy(&c->peer, sa, (size_t)salen < sizeof c->peer ? (size_t)salen : sizeof c->peer);
    unmap(&c->peer);
    socklen_t ll = sizeof c->local;
    getsockname(fd, (struct sockaddr *)&c->local, &ll);
    unmap(&c->local);
    c->bev = bufferevent_socket_new(w->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->bev) {
        close(fd);
        free(c);
        return;
    }
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    w->nconns++;
    struct timeval idle = { TCP_IDLE, 0 };
    bufferevent_set_timeouts(c->bev, &idle, NULL);
    bufferevent_setcb(c->bev, tcp_read, tcp_write_done, tcp_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* ---- transport interface used by request.c ---------------------------- */

void transport_send(req_full *f, const uint8_t *wire, size_t len)
{
    switch (f->transport) {
    case TRANSPORT_UDP:
        sendto(f->fd, wire, len, 0, (struct sockaddr *)&f->r.peer,
               f->r.peer.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                               : sizeof(struct sockaddr_in));
        break;
    case TRANSPORT_TCP:
        if (f->conn && !f->conn->closed) {
            uint8_t lenb[2] = { (uint8_t)(len >> 8), (uint8_t)len };
            struct evbuffer *out = bufferevent_get_output(f->conn->bev);
            evbuffer_add(out, lenb, 2);
            evbuffer_add(out, wire, len);
        }
        break;
    default:
        break;                      /* internal: the reply stays in f->out */
    }
}

void transport_done(req_full *f)
{
    if (f->transport == TRANSPORT_INTERNAL) {
        f->finished = 1;
        if (f->detached)
            req_release(f);         /* req_start: nobody waits for it */
        return;                     /* else freed by req_free */
    }
    tcp_conn *c = f->conn;
    req_release(f);
    if (c) {
        c->inflight--;
        if (c->closed) {
            if (c->inflight == 0)
                conn_free(c);
        } else {
            conn_flow(c);
        }
    }
}

/* ---- workers ---------------------------------------------------------- */

/* Workers read the cluster store: they are RCU reader threads. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    store_reader_register();
    event_base_dispatch(w->base);
    store_reader_unregister();
    return NULL;
}

static int worker_open(worker *w, struct instance *ins, char *err, size_t errlen)
{
    size_t ng = ins->ngroups;
    w->udp_fds = calloc(ng ? ng : 1, sizeof *w->udp_fds);
    w->udp_evs = calloc(ng ? ng : 1, sizeof *w->udp_evs);
    w->tcp_ls = calloc(ng ? ng : 1, sizeof *w->tcp_ls);
    udp_ctx *ctx = calloc(ng ? ng : 1, sizeof *ctx);
    w->base = event_base_new();
    if (!w->udp_fds || !w->udp_evs || !w->tcp_ls || !ctx || !w->base) {
        free(ctx);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->ctx = ctx;
    for (size_t i = 0; i < ng; i++)
        w->udp_fds[i] = -1;
    for (size_t i = 0; i < ng; i++) {
        w->udp_fds[i] = -1;
        ctx[i].w = w;
        ctx[i].grp = &ins->groups[i];
        int fd = open_socket(&ins->groups[i], SOCK_DGRAM, err, errlen);
        if (fd < 0)
            goto fail;
        w->udp_fds[i] = fd;
        ctx[i].fd = fd;
        socklen_t ll = sizeof ctx[i].local;
        if (getsockname(fd, (struct sockaddr *)&ctx[i].local, &ll) == 0)
            unmap(&ctx[i].local);
        w->udp_evs[i] = event_new(w->base, fd, EV_READ | EV_PERSIST, udp_read, &ctx[i]);
        event_add(w->udp_evs[i], NULL);
        int tfd = open_socket(&ins->groups[i], SOCK_STREAM, err, errlen);
        if (tfd < 0)
            goto fail;
        w->tcp_ls[i] = evconnlistener_new(w->base, tcp_accept, &ctx[i],
                                          LEV_OPT_CLOSE_ON_FREE, -1, tfd);
        if (!w->tcp_ls[i]) {
            close(tfd);
            snprintf(err, errlen, "listen tcp %s:%d failed", ins->groups[i].addr, ins->groups[i].port);
            goto fail;
        }
    }
    w->ins = ins;
    return 0;
fail:
    return -1;
}

static void worker_close(worker *w, size_t ng)
{
    for (size_t i = 0; i < ng; i++) {
        if (w->udp_evs && w->udp_evs[i])
            event_free(w->udp_evs[i]);
        if (w->udp_fds && w->udp_fds[i] >= 0)
            close(w->udp_fds[i]);
        if (w->tcp_ls && w->tcp_ls[i])
            evconnlistener_free(w->tcp_ls[i]);
    }
    while (w->conns) {
        tcp_conn *c = w->conns;
        if (!c->closed) {
            bufferevent_free(c->bev);
            c->closed = 1;
        }
        conn_free(c);
    }
    while (w->pool) {
        req_full *f = w->pool;
        w->pool = f->next_free;
        msg_free(&f->r.q);
        msg_free(&f->r.resp);
        free(f->raw);
        free(f->out);
        free(f);
    }
    free(w->ctx);
    free(w->udp_fds);
    free(w->udp_evs);
    free(w->tcp_ls);
    if (w->base)
        event_base_free(w->base);
    memset(w, 0, sizeof *w);
}

int listeners_start(struct instance *ins, char *err, size_t errlen)
{
    ins->workers = calloc((size_t)ins->nworkers, sizeof *ins->workers);
    if (!ins->workers) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < ins->nworkers; i++) {
        worker *w = &ins->workers[i];
        w->id = i;
        if (worker_open(w, ins, err, errlen) < 0) {
            listeners_stop(ins);
            return -1;
        }
    }
    for (int i = 0; i < ins->nworkers; i++) {
        worker *w = &ins->workers[i];
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            snprintf(err, errlen, "cannot start worker thread");
            listeners_stop(ins);
            return -1;
        }
        w->started = 1;
    }
    return 0;
}

void listeners_stop(struct instance *ins)
{
    if (!ins->workers)
        return;
    for (int i = 0; i < ins->nworkers; i++) {
        worker *w = &ins->workers[i];
        if (w->started) {
            event_base_loopbreak(w->base);
            pthread_join(w->thread, NULL);
        }
    }
    for (int i = 0; i < ins->nworkers; i++)
        worker_close(&ins->workers[i], ins->ngroups);
    free(ins->workers);
    ins->workers = NULL;
}
