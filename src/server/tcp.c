/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tcp.c — DNS over TCP: one worker's connections.
 *
 * Everything here runs on the worker thread that accepted the connection;
 * nothing is shared with another thread. A connection (tcp_conn) is a
 * bufferevent and two timers, allocated at accept and listed in w->conns.
 * Each query read from it becomes a request (request.c) that points back at
 * it until the request is finished (tcp_done), so a connection that
 * the client or a deadline closed stays allocated, without its socket, until
 * its last query is done; then it is freed.
 *
 * A connection of a tls:// listener is the same, over a TLS bufferevent
 * (tls.c) instead of the socket's.
 *
 * Framing is RFC 7766's: a 2-octet length, then the message. Several queries
 * may be pipelined; they are answered as they complete, possibly out of
 * order. A length under 12 (no room for a header) closes the connection.
 *
 * Deadlines, from the listen group's tcp_timeouts (CoreDNS's `timeouts`
 * plugin: read, write, idle, maxtcpqueries):
 *   - A connection is *waiting* while no query is in flight and no reply is
 *     queued. A waiting connection must deliver one complete message before
 *     its deadline: `read` after accept, `idle` after it became waiting
 *     again. The deadline is set once, when waiting starts: octets trickling
 *     in do not move it, and a message still incomplete at the deadline
 *     closes the connection (a slowloris client holds a slot for `read`,
 *     not for ever). While queries are in flight no read deadline runs.
 *   - Replies queued while the output was empty must all be handed to the
 *     kernel within `write`, or the connection is closed; each time the
 *     client has read the queue down to REQ_OUTPUT_LOW octets (the write
 *     callback) the deadline starts again, so that a long transfer to a
 *     client that reads steadily goes on, and one to a client that stopped
 *     reading ends `write` after it stopped.
 *   - After `maxtcpqueries` messages nothing more is read; the connection is
 *     closed once they are answered and the replies handed to the kernel.
 * Limits, per worker (server_env, defaults in server.h): at most max_conns
 * open connections, and at most max_per_source from one client address. A
 * new connection over a limit closes, to make room, the connection of that
 * scope that has been waiting the longest (w->conns is kept in the order
 * waiting started, oldest first); when none in the scope is waiting, the
 * new connection is closed instead.
 * Flow control: reading pauses while TCP_MAX_INFLIGHT queries are in flight
 * or TCP_MAX_OUTPUT octets of replies are queued for a slow reader. A
 * request that sends many messages (a zone transfer) waits for room
 * between them (req_when_writable, request.h): it is kept on the
 * connection's waiters and called back once the queued output is at most
 * REQ_OUTPUT_LOW octets (the bufferevent's write low-watermark, so the
 * write callback comes as soon as the client has read down to it; from a
 * zero timer when there is room already), or once the connection closed
 * (with ok 0: the request finishes, and the connection is freed after
 * it).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <uthash.h>
#include "server/core.h"
#include "common/addr.h"

/* The TCP transport (core.h, transport_ops), at the end of this file:
 * queue a framed reply on the request's connection (-1 when it is closed:
 * the reply is dropped), and end a query of the connection. */
static int tcp_send(req_full *f, const uint8_t *wire, size_t len);
static void tcp_done(req_full *f);
static int tcp_when_writable(req_full *f, req_writable_fn fn, void *arg);
static const transport_ops tcp_ops = { tcp_send, tcp_done, tcp_when_writable };

#define TCP_MAX_INFLIGHT 128
#define TCP_MAX_OUTPUT (1u << 20)

/* The open connections from one client address, in w->sources: made by
 * its first connection, freed with its last. */
typedef struct tcp_source {
    uint8_t key[17];                /* address family, then 16 octets of address */
    unsigned n;
    UT_hash_handle hh;
} tcp_source;

typedef struct tcp_conn {
    worker *w;
    const listen_group *grp;
    struct bufferevent *bev;        /* NULL once closed */
    struct event *deadline;         /* the next message's, or "close now" */
    struct event *write_deadline;   /* queued replies must be out by then */
    struct sockaddr_storage peer, local;
    tcp_source *src;                /* NULL once closed */
    unsigned inflight;              /* queries read and not finished */
    unsigned nread;                 /* messages read */
    int waiting;                    /* deadline armed for the next message */
    int closed;                     /* client gone or we closed: drop replies */
    struct req_full *waiters;       /* req_when_writable(), in flight (f->wait_next) */
    struct event *wake;             /* zero timer: run the waiters from the loop */
    struct tcp_conn *prev, *next;   /* w->conns */
} tcp_conn;

/* ---- client addresses ------------------------------------------------- */

static void source_key(const struct sockaddr_storage *ss, uint8_t key[17])
{
    memset(key, 0, 17);
    key[0] = (uint8_t)ss->ss_family;
    if (ss->ss_family == AF_INET)
        memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    else if (ss->ss_family == AF_INET6)
        memcpy(key + 1, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

static tcp_source *source_find(worker *w, const struct sockaddr_storage *ss)
{
    uint8_t key[17];
    tcp_source *s;
    source_key(ss, key);
    HASH_FIND(hh, w->sources, key, sizeof key, s);
    return s;
}

/* Count one more connection from ss; NULL without memory. */
static tcp_source *source_get(worker *w, const struct sockaddr_storage *ss)
{
    tcp_source *s = source_find(w, ss);
    if (!s) {
        if (!(s = calloc(1, sizeof *s)))
            return NULL;
        source_key(ss, s->key);
        HASH_ADD(hh, w->sources, key, sizeof s->key, s);
    }
    s->n++;
    return s;
}

static void source_put(worker *w, tcp_source *s)
{
    if (--s->n == 0) {
        HASH_DEL(w->sources, s);
        free(s);
    }
}

/* ---- the worker's list ------------------------------------------------- */

static void list_unlink(tcp_conn *c)
{
    worker *w = c->w;
    if (c->prev)
        c->prev->next = c->next;
    else if (w->conns == c)
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else if (w->conns_tail == c)
        w->conns_tail = c->prev;
    c->prev = c->next = NULL;
}

static void list_append(tcp_conn *c)
{
    worker *w = c->w;
    c->prev = w->conns_tail;
    c->next = NULL;
    if (w->conns_tail)
        w->conns_tail->next = c;
    else
        w->conns = c;
    w->conns_tail = c;
}

/* ---- closing ------------------------------------------------------------ */

static void conn_free(tcp_conn *c)
{
    assert(!c->waiters);            /* each holds a query in flight */
    list_unlink(c);
    event_free(c->deadline);
    event_free(c->write_deadline);
    event_free(c->wake);
    free(c);
}

/* Run the waiters from the loop, on the next turn. */
static void wake_soon(tcp_conn *c)
{
    const struct timeval now = { 0, 0 };
    evtimer_add(c->wake, &now);
}

/* Close the socket now; free the connection once no query holds it. */
static void conn_close(tcp_conn *c)
{
    if (!c->closed) {
        c->closed = 1;
        c->waiting = 0;
        bufferevent_free(c->bev);
        c->bev = NULL;
        evtimer_del(c->deadline);
        evtimer_del(c->write_deadline);
        source_put(c->w, c->src);
        c->src = NULL;
        c->w->nconns--;
        if (c->waiters)             /* they learn it from the loop (ok 0) */
            wake_soon(c);
    }
    if (c->inflight == 0)
        conn_free(c);
}

/* Both timers: a deadline passed, or the connection is spent. */
static void deadline_passed(evutil_socket_t fd, short what, void *arg)
{
    conn_close(arg);
}

/* Close the open connection of src (NULL: of any address) that has been
 * waiting the longest. 0 when none of them is waiting. */
static int evict_oldest(worker *w, const tcp_source *src)
{
    for (tcp_conn *c = w->conns; c; c = c->next)
        if (c->waiting && (!src || c->src == src)) {
            conn_close(c);
            return 1;
        }
    return 0;
}

/* ---- state -------------------------------------------------------------- */

static size_t conn_output(const tcp_conn *c)
{
    return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* maxtcpqueries messages read: read nothing more. */
static int conn_spent(const tcp_conn *c)
{
    int max = c->grp->tcp.max_queries;
    return max > 0 && c->nread >= (unsigned)max;
}

static struct timeval tv_of(int64_t ns)
{
    struct timeval tv = { (time_t)(ns / 1000000000), (suseconds_t)(ns % 1000000000 / 1000) };
    return tv;
}

/* Start waiting for the next message: the deadline is set here, once, and
 * the connection becomes the newest waiter (the last to be evicted). */
static void conn_wait(tcp_conn *c, int64_t ns)
{
    struct timeval tv = tv_of(ns);
    evtimer_add(c->deadline, &tv);
    c->waiting = 1;
    list_unlink(c);
    list_append(c);
}

/* After anything that can change whether the connection waits (a query
 * read or finished, the output drained): start or stop the deadline of the
 * next message, or close a spent connection that has nothing left to do
 * (from the loop: the caller may still be using c). */
static void conn_settle(tcp_conn *c)
{
    if (c->closed)
        return;
    int idle = c->inflight == 0 && conn_output(c) == 0;
    if (idle && conn_spent(c)) {
        struct timeval now = { 0, 0 };
        evtimer_add(c->deadline, &now);
        c->waiting = 0;
    } else if (idle && !c->waiting) {
        conn_wait(c, c->grp->tcp.idle_ns);
    } else if (!idle && c->waiting) {
        evtimer_del(c->deadline);
        c->waiting = 0;
    }
}

/* Read more only while the connection is within its limits. */
static void conn_flow(tcp_conn *c)
{
    if (c->closed)
        return;
    if (c->inflight >= TCP_MAX_INFLIGHT || conn_output(c) >= TCP_MAX_OUTPUT || conn_spent(c))
        bufferevent_disable(c->bev, EV_READ);
    else
        bufferevent_enable(c->bev, EV_READ);
}

/* ---- reading ------------------------------------------------------------ */

/* The framing alone (core.h), apart so that it can be fuzzed. */
int tcp_frame(struct evbuffer *in, size_t *len)
{
    uint8_t lenb[2];
    if (evbuffer_copyout(in, lenb, 2) < 2)
        return 0;
    *len = (size_t)lenb[0] << 8 | lenb[1];
    if (*len < 12)
        return -1;
    return evbuffer_get_length(in) >= *len + 2;
}

/* The next complete message of the input as a new request, or NULL: none
 * complete yet, no memory (the rest waits), or *bad set for a length under
 * 12. */
static req_full *conn_message(tcp_conn *c, int *bad)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t len;
    int framed = tcp_frame(in, &len);
    if (framed < 0) {
        *bad = 1;
        return NULL;
    }
    if (framed == 0)
        return NULL;
    req_full *f = req_alloc(c->w);
    if (!f)
        return NULL;
    if (f->rawcap < len) {
        uint8_t *p = realloc(f->raw, len);
        if (!p) {
            req_release(f);
            return NULL;
        }
        f->raw = p;
        f->rawcap = len;
    }
    evbuffer_drain(in, 2);
    evbuffer_remove(in, f->raw, len);
    f->ops = &tcp_ops;
    f->conn = c;
    f->grp = c->grp;
    f->ins = c->w->ins;
    f->r.proto = PROTO_TCP;
    f->r.raw = f->raw;
    f->r.rawlen = len;
    f->r.peer = c->peer;
    f->r.local = c->local;
    return f;
}

static void tcp_read(struct bufferevent *bev, void *arg)
{
    tcp_conn *c = arg;
    while (!c->closed && c->inflight < TCP_MAX_INFLIGHT && !conn_spent(c)) {
        int bad = 0;
        req_full *f = conn_message(c, &bad);
        if (bad) {
            conn_close(c);
            return;
        }
        if (!f)
            break;
        c->inflight++;
        c->nread++;
        conn_settle(c);             /* a query in flight: no read deadline */
        core_handle_packet(f);      /* may finish it: tcp_done */
    }
    conn_flow(c);
}

static void tcp_query_done(tcp_conn *c);

/* Call back the waiters that may go on: all of them (ok 0) once the
 * connection is closed, else those while the output is within
 * REQ_OUTPUT_LOW (each may queue a message; the others wait on). A
 * callback may finish its query; c stays allocated until the end. */
static void waiters_run(tcp_conn *c)
{
    req_full *list = c->waiters;
    c->waiters = NULL;
    c->inflight++;                  /* held: a callback's tcp_done frees no c */
    while (list) {
        req_full *f = list;
        list = f->wait_next;
        f->wait_next = NULL;
        if (!c->closed && conn_output(c) > REQ_OUTPUT_LOW) {
            f->wait_next = c->waiters;
            c->waiters = f;
            continue;
        }
        req_writable_fn fn = f->wait_fn;
        void *arg = f->wait_arg;
        f->wait_fn = NULL;
        f->wait_arg = NULL;
        assert(fn);
        fn(&f->r, !c->closed, arg);
    }
    tcp_query_done(c);              /* the hold: settles c, or frees a closed one */
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    waiters_run(arg);
}

/* The output drained to the kernel down to the write low-watermark
 * (REQ_OUTPUT_LOW): libevent calls this after a write that left at most
 * that much queued. */
static void tcp_write_done(struct bufferevent *bev, void *arg)
{
    (void)bev;
    tcp_conn *c = arg;
    if (conn_output(c) == 0) {
        evtimer_del(c->write_deadline);
    } else {                        /* the client is reading: its deadline restarts */
        struct timeval tv = tv_of(c->grp->tcp.write_ns);
        evtimer_add(c->write_deadline, &tv);
    }
    if (c->waiters) {
        waiters_run(c);             /* settles c at its end */
        return;
    }
    conn_settle(c);
    conn_flow(c);
}

static void tcp_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & BEV_EVENT_CONNECTED)
        return;                     /* tls://: the handshake is done */
    conn_close(arg);                /* EOF or error */
}

/* ---- accepting ---------------------------------------------------------- */

/* Make room for a connection from peer within the worker's limits. */
static int make_room(worker *w, const struct sockaddr_storage *peer)
{
    tcp_source *s = source_find(w, peer);
    if (s && s->n >= w->max_per_source && !evict_oldest(w, s))
        return -1;
    if (w->nconns >= w->max_conns && !evict_oldest(w, NULL))
        return -1;
    return 0;
}

static int conn_open(const sock_ctx *u, evutil_socket_t fd, const struct sockaddr_storage *peer)
{
    worker *w = u->w;
    tcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->w = w;
    c->grp = u->grp;
    c->peer = *peer;
    socklen_t ll = sizeof c->local;
    getsockname(fd, (struct sockaddr *)&c->local, &ll);
    sockaddr_unmap(&c->local);
    c->deadline = evtimer_new(w->base, deadline_passed, c);
    c->write_deadline = evtimer_new(w->base, deadline_passed, c);
    c->wake = evtimer_new(w->base, wake_cb, c);
    if (c->deadline && c->write_deadline && c->wake && (c->src = source_get(w, peer)))
        c->bev = c->grp->tls_ctx ? tls_bev_new(w->base, c->grp, fd)    /* tls:// */
                                 : bufferevent_socket_new(w->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->bev) {
        if (c->src)
            source_put(w, c->src);
        if (c->deadline)
            event_free(c->deadline);
        if (c->write_deadline)
            event_free(c->write_deadline);
        if (c->wake)
            event_free(c->wake);
        free(c);
        return -1;
    }
    w->nconns++;
    list_append(c);
    bufferevent_setcb(c->bev, tcp_read, tcp_write_done, tcp_event, c);
    bufferevent_setwatermark(c->bev, EV_WRITE, REQ_OUTPUT_LOW, 0);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    conn_wait(c, c->grp->tcp.read_ns);
    return 0;
}

void tcp_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                void *arg)
{
    const sock_ctx *u = arg;
    struct sockaddr_storage peer;
    memset(&peer, 0, sizeof peer);
    memcpy(&peer, sa, (size_t)salen < sizeof peer ? (size_t)salen : sizeof peer);
    sockaddr_unmap(&peer);
    if (make_room(u->w, &peer) < 0 || conn_open(u, fd, &peer) < 0)
        close(fd);
}

/* ---- the TCP transport (tcp_ops) ---------------------------------------- */

static int tcp_send(req_full *f, const uint8_t *wire, size_t len)
{
    tcp_conn *c = f->conn;
    assert(f->ops == &tcp_ops);
    if (!c || c->closed)
        return -1;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (evbuffer_get_length(out) == 0) {
        struct timeval tv = tv_of(c->grp->tcp.write_ns);
        evtimer_add(c->write_deadline, &tv);
    }
    uint8_t lenb[2] = { (uint8_t)(len >> 8), (uint8_t)len };
    if (evbuffer_add(out, lenb, 2) < 0 || evbuffer_add(out, wire, len) < 0)
        return -1;
    return 0;
}

/* A query of c is finished: bookkeeping, deadlines, flow control. */
static void tcp_query_done(tcp_conn *c)
{
    assert(c->inflight > 0);
    c->inflight--;
    if (c->closed) {
        if (c->inflight == 0)
            conn_free(c);
        return;
    }
    conn_settle(c);
    conn_flow(c);
}

static void tcp_done(req_full *f)
{
    tcp_conn *c = f->conn;
    assert(!f->wait_fn);            /* a waiting request is finished by its callback */
    req_release(f);
    if (c)
        tcp_query_done(c);
}

/* req_when_writable() over TCP: f joins its connection's waiters; a
 * closed connection takes none. */
static int tcp_when_writable(req_full *f, req_writable_fn fn, void *arg)
{
    tcp_conn *c = f->conn;
    assert(f->ops == &tcp_ops && !f->wait_fn);
    if (!c || c->closed)
        return -1;
    f->wait_fn = fn;
    f->wait_arg = arg;
    f->wait_next = c->waiters;
    c->waiters = f;
    if (conn_output(c) <= REQ_OUTPUT_LOW)
        wake_soon(c);
    return 0;
}

void tcp_close_all(worker *w)
{
    while (w->conns) {
        tcp_conn *c = w->conns;
        if (c->waiters) {           /* told now (the loop has ended): they finish */
            conn_close(c);
            waiters_run(c);         /* may free c; else it comes round again */
            continue;
        }
        c->inflight = 0;            /* the worker is stopping: nobody finishes them */
        conn_close(c);
    }
}
