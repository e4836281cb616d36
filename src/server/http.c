/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c — the HTTP endpoints of an instance (health, ready, metrics).
 *
 * Every instance that registers at least one path gets its own libevent
 * event_base, filled from the plugins' start() (on the main thread) and then
 * run by one HTTP thread started by http_start(). Each distinct listen
 * address is one socket bound with SO_REUSEADDR and SO_REUSEPORT (so a
 * reloaded instance binds beside the old one; IPv6 sockets are dual-stack,
 * as Go's) with its own evhttp, whose path table holds the registered
 * handlers; any other path gets libevent's 404. The socket is bound when
 * the first path is registered (an address in use fails the plugin's
 * start, at its Corefile line) but listens only from http_start(), when the
 * instance starts serving: an instance waiting to replace another accepts
 * no connection meanwhile.
 *
 * The state lives in the instance (ins->http), made by the first
 * registration; http_stop() breaks the loop, joins the thread and frees the
 * listeners, which closes their sockets. The process must have called
 * evthread_use_pthreads(): the loop is broken from another thread.
 *
 * Connections (the bounds are in http.h): evhttp makes each accepted
 * connection's bufferevent through conn_new (evhttp_set_bevcb), which
 * counts it against the listener's cap and watches its two buffers: what
 * comes in is scanned for the end of the header block before evhttp reads
 * it (an evbuffer callback runs before the bufferevent's read callback),
 * and what goes out tells when an answer starts and when it has been
 * handed to the kernel. Once evhttp has made its connection object (the
 * bufferevent's callback argument, read in the next pass of the loop:
 * conn_adopt), a close callback frees our record, and one timer per
 * connection holds its current deadline; a deadline passing, an eviction
 * or a rejection frees evhttp's connection (evhttp_connection_free), which
 * closes the socket.
 *
 * Addresses follow Go's net.Listen: ":PORT" is every interface (the
 * TOPODNS_DEFAULT_BIND address when set, else [::] dual-stack, else 0.0.0.0),
 * "localhost:PORT" is 127.0.0.1, "[::1]:PORT" and "127.0.0.1:PORT" are taken
 * literally, other host names are resolved once (IPv4 preferred).
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <utlist.h>
#include "server/http.h"
#include "server/accept.h"
#include "server/loophook.h"
#include "cluster/store.h"
#include "common/addr.h"
#include "common/thread.h"
#include "corefile/corefile.h"
#include "server/core.h"

struct hconn;

/* One listen address. The connection records and the guard are touched by
 * the HTTP thread only (or by the loading thread while no HTTP thread
 * runs: http_stop, http_run_once). */
typedef struct hlisten {
    struct sockaddr_storage ss;
    socklen_t sslen;
    int fd;                          /* bound, listening once started; -1 after */
    char addr[256];                  /* as written, for errors */
    struct evhttp *http;
    struct evconnlistener *lev;      /* from http_start; freed by evhttp_free */
    accept_guard guard;              /* lev's (guarded once made) */
    int guarded;
    unsigned nconns;                 /* records in conns */
    struct hconn *conns;             /* every connection, in the order it began
                                      * waiting for a request (utlist.h) */
    struct hlisten *next;
} hlisten;

/* An instance's HTTP side (ins->http), made by the first registration.
 * Built, started and stopped by the loading thread; draining is set by the
 * process (main thread) and read by the HTTP thread. anchor is a timer that
 * never fires in practice: libevent hands the error callback of a listener
 * bound to an evhttp the evhttp, not our record, so http_accept_error finds
 * this state as the argument of the loop's one event whose callback is
 * http_anchor. */
typedef struct http_state {
    struct event_base *base;
    hlisten *ls;
    struct event *anchor;
    pthread_t thread;
    int running;
    atomic_int draining;
} hinst;

/* ---- connections ------------------------------------------------------- */

enum {
    PH_HEADERS,         /* waiting for (the rest of) a request's header block */
    PH_REQUEST,         /* header block read: the body, then the handler */
    PH_RESPONSE,        /* an answer is being written */
    PH_REJECT,          /* header block too large: 431 due */
    PH_LINGER,          /* 431 sent: reading and dropping until the close */
};

/* Our record of one connection: made by conn_new, freed when evhttp frees
 * the connection (conn_closed) or, if evhttp never took the bufferevent,
 * by conn_adopt. */
typedef struct hconn {
    hlisten *l;
    struct bufferevent *bev;        /* evhttp's once adopted */
    struct evhttp_connection *evcon;    /* NULL until conn_adopt */
    struct event *timer;            /* adoption, then the phase's deadline */
    struct evbuffer_cb_entry *in_cb, *out_cb;
    int phase;
    int refused;                    /* over the cap: close at adoption */
    int scan;                       /* http_header_end's state */
    size_t hdr_bytes;               /* octets of the header block so far */
    struct hconn *prev, *next;      /* l->conns (utlist: the head's prev is the tail) */
} hconn;

size_t http_header_end(int *state, const void *p, size_t n)
{
    const unsigned char *b = p;
    int st = *state;            /* 0 in a line, 1 after a line end, 2 after line end + CR */
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '\n') {
            if (st != 0) {
                *state = 0;
                return i + 1;
            }
            st = 1;
        } else {
            st = b[i] == '\r' && st == 1 ? 2 : 0;
        }
    }
    *state = st;
    return 0;
}

static void conn_arm(hconn *c, long ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    evtimer_add(c->timer, &tv);
}

/* Waiting for a request from now on: the read deadline starts. */
static void conn_wait(hconn *c)
{
    c->phase = PH_HEADERS;
    c->scan = 0;
    c->hdr_bytes = 0;
    DL_DELETE(c->l->conns, c);
    DL_APPEND(c->l->conns, c);      /* the longest waiting first */
    if (c->evcon)
        conn_arm(c, HTTP_READ_TIMEOUT_S * 1000L);
}

/* Free our record (evhttp's connection is gone or never was ours). */
static void conn_forget(hconn *c)
{
    hlisten *l = c->l;
    DL_DELETE(l->conns, c);
    assert(l->nconns > 0);
    l->nconns--;
    if (c->in_cb)
        evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->in_cb);
    if (c->out_cb)
        evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
    if (c->timer)
        event_free(c->timer);
    free(c);
}

static void conn_closed(struct evhttp_connection *evcon, void *arg)
{
    hconn *c = arg;
    assert(c->evcon == evcon);
    conn_forget(c);
}

/* Close now: evhttp frees its connection, and with it our record. */
static void conn_kill(hconn *c)
{
    if (c->evcon)
        evhttp_connection_free(c->evcon);
    else
        c->refused = 1;             /* conn_adopt closes it */
}

static const char answer_431[] =
    "HTTP/1.1 431 Request Header Fields Too Large\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 36\r\n"
    "Connection: close\r\n"
    "\r\n"
    "431 Request Header Fields Too Large\n";

/* The header block is too large: answer 431 (nothing else was written
 * since the previous answer left: a waiting connection's output is
 * empty), stop sending, and close after a short linger that drops what
 * still arrives. */
static void conn_reject(hconn *c)
{
    int fd = bufferevent_getfd(c->bev);
    if (fd >= 0 && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        ssize_t w = send(fd, answer_431, sizeof answer_431 - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w;                    /* a full socket buffer: closed without it */
        shutdown(fd, SHUT_WR);
    }
    c->phase = PH_LINGER;
    conn_arm(c, HTTP_REJECT_LINGER_MS);
}

/* The next pass after conn_new: evhttp has made its connection around the
 * bufferevent (its callback argument), or gave up on it. */
static void conn_adopt(hconn *c)
{
    struct bufferevent *bev = c->bev;
    void *evcon = NULL;
    bufferevent_getcb(bev, NULL, NULL, NULL, &evcon);
    if (!evcon) {                   /* evhttp failed (out of memory) */
        int taken = bufferevent_getfd(bev) >= 0;    /* and freed it: ours is the last ref */
        conn_forget(c);
        if (!taken)
            bufferevent_free(bev);
        bufferevent_decref(bev);
        return;
    }
    c->evcon = evcon;
    evhttp_connection_set_closecb(c->evcon, conn_closed, c);
    bufferevent_decref(bev);        /* evhttp's from now on */
    if (c->refused)
        evhttp_connection_free(c->evcon);
    else if (c->phase == PH_REJECT)
        conn_reject(c);
    else
        conn_arm(c, HTTP_READ_TIMEOUT_S * 1000L);
}

static void conn_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    hconn *c = arg;
    if (!c->evcon)
        conn_adopt(c);
    else if (c->phase == PH_REJECT)
        conn_reject(c);
    else
        evhttp_connection_free(c->evcon);   /* a deadline passed, or the linger */
}

/* Octets came in (before evhttp reads them). While a header block is
 * awaited, find its end; too large, reject the request. */
static void conn_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    hconn *c = arg;
    if (info->n_added == 0)
        return;
    if (c->phase == PH_REJECT || c->phase == PH_LINGER) {
        evbuffer_drain(buf, evbuffer_get_length(buf));     /* never parsed */
        return;
    }
    if (c->phase != PH_HEADERS)
        return;                     /* a body, or a pipelined request (evhttp's limits) */
    size_t len = evbuffer_get_length(buf), left = info->n_added;
    struct evbuffer_ptr pos;
    if (left > len || evbuffer_ptr_set(buf, &pos, len - left, EVBUFFER_PTR_SET) < 0)
        return;
    while (left > 0) {
        char tmp[2048];
        ev_ssize_t got = evbuffer_copyout_from(buf, &pos, tmp, left < sizeof tmp ? left : sizeof tmp);
        if (got <= 0)
            return;
        size_t end = http_header_end(&c->scan, tmp, (size_t)got);
        c->hdr_bytes += end ? end : (size_t)got;
        if (c->hdr_bytes > HTTP_MAX_HEADER_BYTES)
            break;
        if (end) {
            c->phase = PH_REQUEST;  /* its read deadline still runs */
            return;
        }
        left -= (size_t)got;
        evbuffer_ptr_set(buf, &pos, (size_t)got, EVBUFFER_PTR_ADD);
    }
    if (c->hdr_bytes <= HTTP_MAX_HEADER_BYTES)
        return;
    c->phase = PH_REJECT;
    evbuffer_drain(buf, evbuffer_get_length(buf));
    event_active(c->timer, EV_TIMEOUT, 1);      /* conn_reject, outside libevent's read */
}

/* Octets went out: an answer starts (its write deadline starts), or was
 * handed to the kernel completely (the next request is awaited). */
static void conn_output(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    hconn *c = arg;
    if (c->phase == PH_REJECT || c->phase == PH_LINGER)
        return;
    if (info->n_added > 0 && c->phase != PH_RESPONSE) {
        c->phase = PH_RESPONSE;
        if (c->evcon)
            conn_arm(c, HTTP_WRITE_TIMEOUT_S * 1000L);
    } else if (info->n_deleted > 0 && evbuffer_get_length(buf) == 0 && c->phase == PH_RESPONSE) {
        conn_wait(c);
    }
}

/* evhttp's bufferevent for a connection just accepted (evhttp_set_bevcb):
 * a socket bufferevent as evhttp makes (evhttp closes the socket), with our
 * record watching it. NULL (evhttp then makes its own, untracked) only
 * when out of memory. */
static struct bufferevent *conn_new(struct event_base *base, void *arg)
{
    hlisten *l = arg;
    hconn *c = calloc(1, sizeof *c);
    struct bufferevent *bev = c ? bufferevent_socket_new(base, -1, 0) : NULL;
    if (!bev) {
        free(c);
        return NULL;
    }
    c->l = l;
    c->bev = bev;
    c->timer = evtimer_new(base, conn_timer, c);
    c->in_cb = evbuffer_add_cb(bufferevent_get_input(bev), conn_input, c);
    c->out_cb = evbuffer_add_cb(bufferevent_get_output(bev), conn_output, c);
    l->nconns++;
    DL_APPEND(l->conns, c);
    if (!c->timer || !c->in_cb || !c->out_cb) {
        conn_forget(c);
        bufferevent_free(bev);
        return NULL;
    }
    if (l->nconns > HTTP_MAX_CONNS) {
        hconn *v = l->conns;        /* the one waiting the longest */
        while (v && (v == c || v->phase != PH_HEADERS || v->refused))
            v = v->next;
        if (v)
            conn_kill(v);
        else
            c->refused = 1;
    }
    bufferevent_incref(bev);        /* until conn_adopt: evhttp may free it first */
    event_active(c->timer, EV_TIMEOUT, 1);
    return bev;
}

/* ---- accept errors ------------------------------------------------------ */

static void http_anchor(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    hinst *h = arg;
    struct timeval day = { 86400, 0 };
    evtimer_add(h->anchor, &day);
}

struct lev_find {
    struct evconnlistener *lev;
    hlisten *l;
};

static int find_listener(const struct event_base *base, const struct event *ev, void *arg)
{
    (void)base;
    struct lev_find *f = arg;
    if (event_get_callback(ev) != http_anchor)
        return 0;
    const hinst *h = event_get_callback_arg(ev);
    for (hlisten *l = h->ls; l; l = l->next)
        if (l->lev == f->lev && l->guarded)
            f->l = l;
    return 1;
}

static void http_accept_error(struct evconnlistener *lev, void *arg)
{
    (void)arg;                      /* the evhttp */
    int e = EVUTIL_SOCKET_ERROR();
    struct lev_find f = { lev, NULL };
    event_base_foreach_event(evconnlistener_get_base(lev), find_listener, &f);
    if (f.l)
        accept_guard_error(&f.l->guard, e);
    else
        evconnlistener_disable(lev);    /* cannot happen; never spin */
}

/* ---- addresses -------------------------------------------------------- */

/* Split "host:port" like Go's net.SplitHostPort. 0 or -1 with err. */
static int split_addr(const char *addr, char *host, size_t hostlen, int *port,
                      char *err, size_t errlen)
{
    const char *colon, *hs = addr, *he;
    if (addr[0] == '[') {
        he = strchr(addr, ']');
        if (!he) {
            snprintf(err, errlen, "address %s: missing ']' in address", addr);
            return -1;
        }
        hs = addr + 1;
        colon = he + 1;
        if (*colon != ':') {
            snprintf(err, errlen, "address %s: missing port in address", addr);
            return -1;
        }
    } else {
        colon = strrchr(addr, ':');
        if (!colon) {
            snprintf(err, errlen, "address %s: missing port in address", addr);
            return -1;
        }
        he = colon;
        if (memchr(addr, ':', (size_t)(colon - addr))) {
            snprintf(err, errlen, "address %s: too many colons in address", addr);
            return -1;
        }
    }
    const char *ps = colon + 1;
    char *end;
    long p = strtol(ps, &end, 10);
    if (!*ps || *end || !isdigit((unsigned char)*ps) || p < 0 || p > 65535) {
        snprintf(err, errlen, "address %s: invalid port", addr);
        return -1;
    }
    if ((size_t)(he - hs) >= hostlen) {
        snprintf(err, errlen, "address %s: host too long", addr);
        return -1;
    }
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = '\0';
    *port = (int)p;
    return 0;
}

int http_addr_check(const char *addr, char *err, size_t errlen)
{
    char host[256];
    int port;
    return split_addr(addr, host, sizeof host, &port, err, errlen);
}

/* A host name: the first IPv4 address, else the first address. */
static int resolve_host(const char *host, int port, struct sockaddr_storage *ss,
                        socklen_t *len)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *p, *pick = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return -1;
    for (p = res; p; p = p->ai_next)
        if (!pick || (p->ai_family == AF_INET && pick->ai_family != AF_INET))
            pick = p;
    char txt[INET6_ADDRSTRLEN] = "";
    if (pick && pick->ai_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ai_addr)->sin_addr, txt, sizeof txt);
    else if (pick && pick->ai_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr, txt, sizeof txt);
    freeaddrinfo(res);
    return txt[0] ? addr_parse_ip(txt, port, ss, len) : -1;
}

/* The socket address to bind for one written address; wild is set when the
 * host was empty and no default bind address is configured. */
static int addr_to_sockaddr(const char *addr, struct sockaddr_storage *ss, socklen_t *len,
                            int *wild, char *err, size_t errlen)
{
    char host[256];
    int port;
    *wild = 0;
    if (split_addr(addr, host, sizeof host, &port, err, errlen) < 0)
        return -1;
    if (!host[0]) {
        const char *def = addr_default_bind();
        *wild = def == NULL;
        snprintf(host, sizeof host, "%s", def ? def : "::");
    } else if (strcmp(host, "localhost") == 0) {
        snprintf(host, sizeof host, "127.0.0.1");
    }
    if (addr_parse_ip(host, port, ss, len) == 0 || resolve_host(host, port, ss, len) == 0)
        return 0;
    snprintf(err, errlen, "listen tcp %s: lookup %s: no such host", addr, host);
    return -1;
}

static int same_sockaddr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

/* ---- the instance's HTTP state ---------------------------------------- */

static hinst *get_inst(struct instance *ins)
{
    hinst *h = ins->http;
    if (h)
        return h;
    h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    /* epoll's changelist: an event added and deleted within one loop pass
     * (a connection's read and write events, as evhttp toggles them) costs
     * one epoll_ctl at most instead of one per change. Unsafe only for fds
     * made by dup(), which this loop never sees. */
    struct event_config *cfg = event_config_new();
    if (cfg)
        event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    h->base = cfg ? event_base_new_with_config(cfg) : NULL;
    if (cfg)
        event_config_free(cfg);
    h->anchor = h->base ? evtimer_new(h->base, http_anchor, h) : NULL;
    if (!h->anchor) {
        if (h->base)
            event_base_free(h->base);
        free(h);
        return NULL;
    }
    http_anchor(-1, 0, h);
    atomic_init(&h->draining, 0);
    atomic_store(&ins->http_base, h->base);
    return ins->http = h;
}

static void listen_error(const char *addr, int e, char *err, size_t errlen)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s", strerror(e));
    msg[0] = (char)tolower((unsigned char)msg[0]);     /* Go's wording */
    snprintf(err, errlen, "listen tcp %s: bind: %s", addr, msg);
}

/* socket + SO_REUSEADDR + SO_REUSEPORT (+ dual-stack for IPv6, as Go) +
 * bind; the socket listens only when the instance starts serving. -1 with
 * errno set. */
static int bind_one(const struct sockaddr_storage *ss, socklen_t len)
{
    int one = 1, zero = 0, e;
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (ss->ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (const struct sockaddr *)ss, len) == 0)
        return fd;
    e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* Bind a new listener for addr and give it an evhttp. */
static hlisten *new_listener(hinst *h, const char *addr, const struct sockaddr_storage *ss,
                             socklen_t len, int wild, char *err, size_t errlen)
{
    struct sockaddr_storage s = *ss;
    int fd = bind_one(&s, len);
    if (fd < 0 && wild && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&s;   /* no IPv6: 0.0.0.0 */
        int port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
        memset(&s, 0, sizeof s);
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        len = sizeof *s4;
        fd = bind_one(&s, len);
    }
    if (fd < 0) {
        listen_error(addr, errno, err, errlen);
        return NULL;
    }
    hlisten *l = calloc(1, sizeof *l);
    if (!l || !(l->http = evhttp_new(h->base))) {
        free(l);
        close(fd);
        snprintf(err, errlen, "listen tcp %s: out of memory", addr);
        return NULL;
    }
    evhttp_set_timeout(l->http, 5);
    evhttp_set_max_headers_size(l->http, HTTP_MAX_HEADER_BYTES);  /* pipelined requests */
    evhttp_set_max_body_size(l->http, HTTP_MAX_BODY_BYTES);
    evhttp_set_bevcb(l->http, conn_new, l);
    l->fd = fd;
    snprintf(l->addr, sizeof l->addr, "%s", addr);
    l->ss = *ss;                              /* the address as asked, for sharing */
    l->sslen = len;
    l->next = h->ls;
    h->ls = l;
    return l;
}

/* Listen on a bound socket and hand it to its evhttp. */
static int listen_one(hinst *h, hlisten *l, char *err, size_t errlen)
{
    unsigned flags = LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE |
                     LEV_OPT_CLOSE_ON_EXEC;
    struct evconnlistener *lev = evconnlistener_new(h->base, NULL, NULL, flags, -1, l->fd);
    if (!lev) {
        listen_error(l->addr, errno, err, errlen);
        return -1;
    }
    l->fd = -1;                               /* the listener owns it now */
    if (!evhttp_bind_listener(l->http, lev)) {
        evconnlistener_free(lev);
        snprintf(err, errlen, "listen tcp %s: cannot serve HTTP", l->addr);
        return -1;
    }
    l->lev = lev;                             /* freed by evhttp_free */
    char what[300];
    snprintf(what, sizeof what, "http %s", l->addr);
    if (accept_guard_init(&l->guard, lev, what) < 0) {
        snprintf(err, errlen, "listen tcp %s: out of memory", l->addr);
        return -1;
    }
    l->guarded = 1;
    evconnlistener_set_error_cb(lev, http_accept_error);
    return 0;
}

int http_register(struct instance *ins, const char *addr, const char *path,
                  http_handler_fn fn, void *data, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int wild;
    if (addr_to_sockaddr(addr, &ss, &len, &wild, err, errlen) < 0)
        return -1;
    hinst *h = get_inst(ins);
    if (!h) {
        snprintf(err, errlen, "listen tcp %s: out of memory", addr);
        return -1;
    }
    hlisten *l;
    for (l = h->ls; l; l = l->next)
        if (same_sockaddr(&l->ss, &ss))
            break;
    if (!l && !(l = new_listener(h, addr, &ss, len, wild, err, errlen)))
        return -1;
    /* A path already routed on this address keeps its first handler
     * (several blocks enabling the same plugin on one address share it). */
    evhttp_set_cb(l->http, path, fn, data);
    return 0;
}

static void *http_thread(void *arg)
{
    hinst *h = arg;
    thread_set_name("topodns-http");
    store_reader_register();         /* explain reads the cluster store */
    event_base_dispatch(h->base);
    store_reader_unregister();
    return NULL;
}

int http_start(struct instance *ins, char *err, size_t errlen)
{
    hinst *h = ins->http;
    if (!h || h->running)
        return 0;
    for (hlisten *l = h->ls; l; l = l->next)
        if (l->fd >= 0 && listen_one(h, l, err, errlen) < 0)
            return -1;
    if (pthread_create(&h->thread, NULL, http_thread, h) != 0) {
        snprintf(err, errlen, "cannot start the HTTP thread");
        return -1;
    }
    h->running = 1;
    return 0;
}

void http_stop(struct instance *ins)
{
    hinst *h = ins->http;
    if (!h)
        return;
    ins->http = NULL;
    if (h->running) {
        event_base_loopbreak(h->base);
        pthread_join(h->thread, NULL);
    }
    while (h->ls) {
        hlisten *l = h->ls;
        h->ls = l->next;
        for (hconn *c = l->conns, *n; c; c = n) {
            n = c->next;
            if (!c->evcon)
                conn_adopt(c);                /* the loop stopped before its pass */
        }
        if (l->guarded)
            accept_guard_free(&l->guard);
        evhttp_free(l->http);                 /* frees the listener: socket closed;
                                               * each connection: conn_closed */
        assert(l->nconns == 0);
        if (l->fd >= 0)
            close(l->fd);                     /* bound, never listened on */
        free(l);
    }
    event_free(h->anchor);
    atomic_store(&ins->http_base, NULL);
    loop_free_hooks_run(ins, h->base);        /* plugins' per-loop state */
    event_base_free(h->base);
    free(h);
}

void http_set_draining(struct instance *ins)
{
    if (ins->http)
        atomic_store(&ins->http->draining, 1);
}

int http_draining(struct instance *ins)
{
    hinst *h = ins->http;
    return h ? atomic_load(&h->draining) : 0;
}

int http_addr_arg(cf_disp *d, const char *plugin, char *addr, size_t cap)
{
    const char *args[2];
    int n = cf_remaining_args(d, args, 2);
    if (n > 1)
        return cf_arg_err(d);
    if (n == 1) {
        char err[300];
        if (http_addr_check(args[0], err, sizeof err) < 0)
            return cf_err(d, "plugin/%s: %s", plugin, err);
        snprintf(addr, cap, "%s", args[0]);
    }
    return 0;
}

/* ---- tests: another listening socket for a listener ------------------ */

int http_accept_on(struct instance *ins, const char *addr, int fd)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int wild;
    char err[300];
    hinst *h = ins->http;
    if (!h || addr_to_sockaddr(addr, &ss, &len, &wild, err, sizeof err) < 0)
        return -1;
    for (hlisten *l = h->ls; l; l = l->next)
        if (same_sockaddr(&l->ss, &ss)) {
            return evhttp_accept_socket(l->http, fd);
        }
    return -1;
}

int http_run_once(struct instance *ins)
{
    hinst *h = ins->http;
    return h && !h->running ? event_base_loop(h->base, EVLOOP_NONBLOCK) : -1;
}
