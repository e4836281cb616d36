/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward/tls.c — DNS over TLS to tls:// upstreams (RFC 7858), on OpenSSL
 * and the worker's libevent loop; c-ares keeps plain DNS.
 *
 * Connections. Per event loop and upstream a pool (fwd_tpool) holds the
 * open connections. A query takes the most recently used idle connection
 * (coredns_proxy_conn_cache_hits_total) or dials a new one (..._misses_total),
 * has it to itself until the reply is read (no pipelining, as CoreDNS's
 * persistent connections), then gives it back: idle connections are closed
 * `expire` after their last use (expire 0: never kept), past
 * `max_idle_conns` idle ones (0: no limit), or when the upstream closes
 * them. A cached connection that turns out closed before any octet of the
 * reply arrived is replaced by a fresh one for the same query, as CoreDNS
 * retries ErrCachedClosed.
 *
 * Each connection is a libevent OpenSSL bufferevent over a non-blocking
 * socket (bound to source_address) and one timer; the states are dial
 * (connect and handshake), busy (the framed query written, replies read
 * length-prefixed from the input evbuffer) and idle. The timer is
 * read_timeout for the connect and handshake, then read_timeout again from
 * the query's write: a silent upstream costs the query one read_timeout per
 * phase, never a blocked worker.
 *
 * Verification is on: the certificate must chain to the `tls` CA (the
 * system's trust store without one) and name the server: tls_servername
 * (or the upstream's own `tls://IP%NAME`) when set, which is also sent as
 * SNI; otherwise the upstream's IP address must be in the certificate, as
 * Go's TLS client checks when CoreDNS dials an IP.
 *
 * Callbacks always come from the loop, never from inside fwd_tpool_send().
 * A pool registers loop_on_free() (server/loophook.h) on its loop: just
 * before the worker's (or HTTP thread's) event base is freed, every
 * connection is closed (a bufferevent cannot outlive its base) and busy
 * queries are called back with FWD_TLS_GONE. On a base the server does not
 * own the hook is refused and no connection is kept idle; the pool is freed
 * with its stanza.
 *
 * A reply is taken only when it answers the query on the wire, as c-ares
 * checks on the UDP/TCP path: the same ID, the QR bit, and the same one
 * question (name without regard to case, type, class). Any other reply —
 * an upstream that answers with ID 0, a stale or foreign message — is
 * dropped and counted (topodns_forward_mismatched_replies_total), and the
 * query goes on reading on the same connection until the right reply or
 * its read_timeout.
 *
 * The health probe (fwd_tls_probe) runs on the upstream's probe thread:
 * a fresh connection with the same verification, driven by libevent's
 * OpenSSL bufferevent on an event base of the probe's own (created and
 * freed by the call); the reply must match as above.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "plugin/forward/forward.h"
#include "runtime/metrics.h"
#include "server/loophook.h"
#include "wire/dname.h"
#include "common/tlsca.h"

enum { T_DIAL, T_BUSY, T_IDLE };

typedef struct tconn {
    struct fwd_tpool *p;
    struct bufferevent *bev;        /* OpenSSL over the socket; NULL until dialed */
    struct event timer;             /* start, deadline or idle expiry */
    int timer_on;
    int state;
    int reused;                     /* taken from the idle list */
    int got;                        /* octets came for this query */
    uint8_t *out;                   /* the framed query */
    size_t outlen;
    fwd_tls_cb cb;                  /* the query's; NULL while idle */
    void *arg;
    struct tconn *prev, *next;      /* p->conns: idle ones first, newest first */
} tconn;

struct fwd_tpool {
    fwd_stanza *st;
    fwd_upstream *u;
    struct event_base *base;
    tconn *conns;
    unsigned nidle;
    int hooked;                     /* loop_on_free registered: idle ones kept */
    int gone;                       /* the loop's hook ran: no connections */
};

/* ---- contexts ------------------------------------------------------------- */

static void ssl_errtext(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    buf[0] = '\0';
    if (e)
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
}

struct ssl_ctx_st *fwd_tls_ctx(const char *cert, const char *key, const char *ca, char *err,
                               size_t errlen)
{
    char why[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(err, errlen, "cannot create a TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (cert && (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
                 SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
                 SSL_CTX_check_private_key(ctx) != 1)) {
        ssl_errtext(why, sizeof why);
        snprintf(err, errlen, "could not load TLS cert: %s %s: %s", cert, key, why);
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (ca && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
        ssl_errtext(why, sizeof why);
        snprintf(err, errlen, "error reading %s: %s", ca, why);
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (!ca) {
        tls_load_system_cas(ctx);
    }
    return ctx;
}

void fwd_tls_ctx_free(struct ssl_ctx_st *ctx)
{
    SSL_CTX_free(ctx);
}

/* The upstream's address without the port, for IP verification. */
static void up_ip(const fwd_upstream *u, char *buf, size_t len)
{
    if (u->sa.ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&u->sa)->sin_addr, buf, (socklen_t)len);
    else
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&u->sa)->sin6_addr, buf, (socklen_t)len);
}

/* A client SSL for u over fd: SNI and the name (or IP) to verify. */
static SSL *up_ssl(const fwd_stanza *st, const fwd_upstream *u, int fd)
{
    SSL *ssl = SSL_new(st->tls_ctx);
    if (!ssl)
        return NULL;
    SSL_set_fd(ssl, fd);
    const char *name = u->servername[0] ? u->servername : st->tls_servername;
    int ok;
    if (name[0]) {
        ok = SSL_set_tlsext_host_name(ssl, name) == 1 && SSL_set1_host(ssl, name) == 1;
    } else {
        char ip[INET6_ADDRSTRLEN];
        up_ip(u, ip, sizeof ip);
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip) == 1;
    }
    if (!ok) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_connect_state(ssl);
    return ssl;
}

/* A non-blocking TCP socket connecting to u (from source_address); -1
 * with why when there is none. A connect that failed at once leaves the
 * socket and its errno in *cerr, for the caller to report from the loop. */
static int up_socket(const fwd_stanza *st, const fwd_upstream *u, char *why, size_t wlen,
                     int *cerr)
{
    *cerr = 0;
    int fd = socket(u->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, wlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (st->has_src && st->src.ss_family == u->sa.ss_family &&
        bind(fd, (const struct sockaddr *)&st->src,
             st->src.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) < 0) {
        snprintf(why, wlen, "bind: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)&u->sa, u->salen) < 0 && errno != EINPROGRESS)
        *cerr = errno;
    return fd;
}

/* The reply a (alen octets) answers the query q (qlen octets, ours and
 * well formed): same ID, QR set, the query's one question. The reply's
 * name must lie within it, uncompressed (the first name of a message). */
static int reply_matches(const uint8_t *q, size_t qlen, const uint8_t *a, size_t alen)
{
    if (qlen < 12 || alen < 12 || a[0] != q[0] || a[1] != q[1] || !(a[2] & 0x80) ||
        a[4] != q[4] || a[5] != q[5] || q[4] != 0 || q[5] != 1)
        return 0;
    size_t qn = dname_len(q + 12), off = 12;
    while (off < alen && a[off] != 0) {
        if (a[off] > 63)
            return 0;                   /* a pointer or an extended label type */
        off += (size_t)a[off] + 1;
    }
    if (off >= alen || off + 1 - 12 != qn || 12 + qn + 4 > alen || 12 + qn + 4 > qlen)
        return 0;
    return dname_equal(a + 12, q + 12) && !memcmp(a + 12 + qn, q + 12 + qn, 4);
}

static void count_mismatch(fwd_tpool *p)
{
    const char *lv[] = { "forward", p->u->to };
    const fwd_metrics *m = p->st->m;
    if (m && m->mismatched)
        metrics_add(m->mismatched, lv, 1);
}

/* ---- one connection --------------------------------------------------------- */

static void list_unlink(tconn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        c->p->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void list_push(tconn *c)
{
    c->prev = NULL;
    c->next = c->p->conns;
    if (c->next)
        c->next->prev = c;
    c->p->conns = c;
}

static void timer_arm(tconn *c, double secs)
{
    struct timeval tv = { (time_t)secs, (suseconds_t)((secs - (double)(time_t)secs) * 1e6) };
    evtimer_add(&c->timer, &tv);
    c->timer_on = 1;
}

/* Close and free c (its bufferevent frees the SSL and the socket); its
 * query (if any) is not called back. The loop must still exist. */
static void conn_free(tconn *c)
{
    if (c->timer_on)
        evtimer_del(&c->timer);
    if (c->state == T_IDLE && !c->cb)
        c->p->nidle--;
    list_unlink(c);
    if (c->bev)
        bufferevent_free(c->bev);
    free(c->out);
    free(c);
}

static void count_conn(fwd_tpool *p, int hit)
{
    const char *lv[] = { "forward", p->u->to, "tcp-tls" };
    const fwd_metrics *m = p->st->m;
    if (m)
        metrics_add(hit ? m->conn_hits : m->conn_misses, lv, 1);
}

/* The query of c failed: call it back after freeing c. */
static void conn_fail(tconn *c, const char *why)
{
    fwd_tls_cb cb = c->cb;
    void *arg = c->arg;
    conn_free(c);
    if (cb)
        cb(arg, FWD_TLS_ERROR, why, NULL, 0);
}

/* The reply a (len octets, malloc'd) answers c's query: keep c for later
 * (or close it) and call back. */
static void conn_done(tconn *c, uint8_t *a, size_t len)
{
    fwd_tpool *p = c->p;
    fwd_tls_cb cb = c->cb;
    void *arg = c->arg;
    c->cb = NULL;
    free(c->out);
    c->out = NULL;
    c->state = T_IDLE;
    c->reused = 0;
    c->got = 0;
    if (c->timer_on)
        evtimer_del(&c->timer);
    c->timer_on = 0;
    p->nidle++;                     /* conn_free counts it out */
    if (p->hooked && p->st->expire > 0 &&
        (p->st->max_idle_conns == 0 || p->nidle <= p->st->max_idle_conns)) {
        list_unlink(c);
        list_push(c);               /* newest idle first */
        timer_arm(c, p->st->expire);    /* reading on: notice the upstream closing it */
    } else {
        conn_free(c);
    }
    cb(arg, FWD_TLS_OK, NULL, a, len);
    free(a);
}

static void conn_start(tconn *c);
static void timer_cb(evutil_socket_t fd, short what, void *arg);

/* Give the query of c (out, cb, arg) to a fresh connection: a cached one
 * was closed under it. */
static void conn_redial(tconn *c)
{
    fwd_tpool *p = c->p;
    tconn *n = calloc(1, sizeof *n);
    if (!n) {
        conn_fail(c, "out of memory");
        return;
    }
    n->p = p;
    n->state = T_DIAL;
    n->out = c->out;
    n->outlen = c->outlen;
    n->cb = c->cb;
    n->arg = c->arg;
    c->out = NULL;
    c->cb = NULL;
    conn_free(c);
    list_push(n);
    count_conn(p, 0);
    evtimer_assign(&n->timer, p->base, timer_cb, n);
    conn_start(n);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tconn *c = arg;
    c->timer_on = 0;
    if (c->state == T_IDLE && !c->cb)
        conn_free(c);               /* expired */
    else
        conn_fail(c, "i/o timeout");
}

/* Length-prefixed messages in the input: each one that answers the query
 * completes it; anything else is dropped and counted. */
static void read_cb(struct bufferevent *bev, void *arg)
{
    tconn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (c->state != T_BUSY) {       /* octets nobody asked for */
        if (c->cb)
            conn_redial(c);         /* taken from the idle list, not started yet */
        else
            conn_free(c);
        return;
    }
    if (evbuffer_get_length(in) > 0)
        c->got = 1;
    uint8_t len[2];
    while (evbuffer_copyout(in, len, 2) == 2) {
        size_t need = (size_t)len[0] << 8 | len[1];
        if (evbuffer_get_length(in) < 2 + need)
            return;
        uint8_t *a = malloc(need ? need : 1);
        if (!a) {
            conn_fail(c, "out of memory");
            return;
        }
        evbuffer_drain(in, 2);
        evbuffer_remove(in, a, need);
        if (reply_matches(c->out + 2, c->outlen - 2, a, need)) {
            conn_done(c, a, need);
            return;
        }
        free(a);
        count_mismatch(c->p);       /* not ours: drop it, read on */
    }
}

/* Why the connection failed, as text. */
static void bev_why(tconn *c, short what, char *buf, size_t len)
{
    SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
    long vr = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
    unsigned long e = bufferevent_get_openssl_error(c->bev);
    int serr = EVUTIL_SOCKET_ERROR();
    if (vr != X509_V_OK)
        snprintf(buf, len, "tls: failed to verify certificate: %s", X509_verify_cert_error_string(vr));
    else if (e) {
        char txt[256];
        ERR_error_string_n(e, txt, sizeof txt);
        snprintf(buf, len, "tls: %s", txt);
    } else if ((what & BEV_EVENT_EOF) || !(what & BEV_EVENT_ERROR) || !serr)
        snprintf(buf, len, "EOF");
    else if (c->state == T_DIAL)
        snprintf(buf, len, "dial tcp %s: connect: %s", c->p->u->to, strerror(serr));
    else
        snprintf(buf, len, "%s", strerror(serr));
    while (bufferevent_get_openssl_error(c->bev))
        ;
    ERR_clear_error();
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    tconn *c = arg;
    if (what & BEV_EVENT_CONNECTED) {
        c->state = T_BUSY;
        timer_arm(c, c->p->st->read_timeout);   /* the exchange's own */
        if (bufferevent_write(bev, c->out, c->outlen) < 0)
            conn_fail(c, "out of memory");
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
        return;
    if (c->state == T_IDLE && !c->cb) {
        conn_free(c);               /* the upstream closed an idle one */
        return;
    }
    char why[300];
    bev_why(c, what, why, sizeof why);
    if (c->reused && !c->got && c->state != T_DIAL)
        conn_redial(c);
    else
        conn_fail(c, why);
}

/* Run c's query from the loop: write it on a cached connection, or dial. */
static void conn_start(tconn *c)
{
    fwd_tpool *p = c->p;
    if (c->state == T_IDLE) {       /* a cached connection: write now */
        c->state = T_BUSY;
        timer_arm(c, p->st->read_timeout);
        if (bufferevent_write(c->bev, c->out, c->outlen) < 0)
            conn_fail(c, "out of memory");
        return;
    }
    char why[160];
    int cerr, fd = up_socket(p->st, p->u, why, sizeof why, &cerr);
    if (fd < 0) {
        conn_fail(c, why);
        return;
    }
    if (cerr) {
        close(fd);
        snprintf(why, sizeof why, "dial tcp %s: connect: %s", p->u->to, strerror(cerr));
        conn_fail(c, why);
        return;
    }
    SSL *ssl = up_ssl(p->st, p->u, fd);
    if (!ssl) {
        close(fd);
        conn_fail(c, "tls: cannot set up the connection");
        return;
    }
    /* libevent owns ssl and fd from here (freed with bev, or by it on failure) */
    c->bev = bufferevent_openssl_socket_new(p->base, fd, ssl, BUFFEREVENT_SSL_CONNECTING,
                                            BEV_OPT_CLOSE_ON_FREE);
    if (!c->bev) {
        conn_fail(c, "tls: cannot set up the connection");
        return;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
    bufferevent_setcb(c->bev, read_cb, NULL, event_cb, c);
    timer_arm(c, p->st->read_timeout);  /* connect and handshake */
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* ---- pools ---------------------------------------------------------------- */

/* The loop is about to be freed (loophook.h): close every connection while
 * its bufferevent can still be freed; busy queries get FWD_TLS_GONE. */
static void pool_close(fwd_tpool *p)
{
    while (p->conns) {
        tconn *c = p->conns;
        fwd_tls_cb cb = c->cb;
        void *arg = c->arg;
        conn_free(c);
        if (cb)
            cb(arg, FWD_TLS_GONE, NULL, NULL, 0);
    }
    assert(p->nidle == 0);
}

static void pool_loop_freed(void *arg, struct event_base *base)
{
    fwd_tpool *p = arg;
    assert(p->base == base);
    (void)base;
    pool_close(p);
    p->gone = 1;
}

fwd_tpool *fwd_tpool_new(fwd_stanza *st, fwd_upstream *u, struct event_base *base)
{
    fwd_tpool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->st = st;
    p->u = u;
    p->base = base;
    char err[128];
    /* idle connections are kept only on a loop that tells us before it goes */
    p->hooked = st->ins && loop_on_free(st->ins, base, pool_loop_freed, p, err, sizeof err) == 0;
    return p;
}

void fwd_tpool_free(fwd_tpool *p)
{
    if (!p)
        return;
    pool_close(p);                  /* none left when the loop's hook ran */
    free(p);
}

static void start_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tconn *c = arg;
    c->timer_on = 0;
    evtimer_assign(&c->timer, c->p->base, timer_cb, c);
    conn_start(c);
}

int fwd_tpool_send(fwd_tpool *p, const uint8_t *wire, size_t len, fwd_tls_cb cb, void *arg,
                   char *why, size_t wlen)
{
    assert(p && !p->gone && wire && cb);
    uint8_t *out = malloc(len + 2);
    if (!out) {
        snprintf(why, wlen, "out of memory");
        return -1;
    }
    out[0] = (uint8_t)(len >> 8);
    out[1] = (uint8_t)len;
    memcpy(out + 2, wire, len);
    tconn *c = NULL;
    for (tconn *i = p->conns; i; i = i->next)
        if (i->state == T_IDLE && !i->cb) {
            c = i;
            break;
        }
    if (c) {
        p->nidle--;
        c->reused = 1;
        if (c->timer_on)
            evtimer_del(&c->timer);
        count_conn(p, 1);
    } else if (!(c = calloc(1, sizeof *c))) {
        snprintf(why, wlen, "out of memory");
        free(out);
        return -1;
    } else {
        c->p = p;
        c->state = T_DIAL;
        list_push(c);
        count_conn(p, 0);
    }
    c->out = out;
    c->outlen = len + 2;
    c->got = 0;
    c->cb = cb;
    c->arg = arg;
    /* start from the loop: the caller's callback never runs inside this call */
    evtimer_assign(&c->timer, p->base, start_cb, c);
    struct timeval now = { 0, 0 };
    evtimer_add(&c->timer, &now);
    c->timer_on = 1;
    return 0;
}

/* ---- the health probe (the probe thread, a private loop) ------------------- */

/* One probe exchange: a bufferevent over OpenSSL on the probe's own event
 * base, which runs until the reply, an error or the deadline. */
typedef struct tprobe {
    struct event_base *base;
    const uint8_t *q;                /* the query, unframed */
    size_t qlen;
    int done, ok;
} tprobe;

static void probe_finish(tprobe *t, int ok)
{
    t->done = 1;
    t->ok = ok;
    event_base_loopbreak(t->base);
}

static void probe_read(struct bufferevent *bev, void *arg)
{
    tprobe *t = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    uint8_t len[2];
    while (!t->done && evbuffer_copyout(in, len, 2) == 2) {
        size_t need = (size_t)len[0] << 8 | len[1];
        if (evbuffer_get_length(in) < 2 + need)
            return;
        uint8_t *a = malloc(need ? need : 1);
        if (!a) {
            probe_finish(t, 0);
            return;
        }
        evbuffer_drain(in, 2);
        evbuffer_remove(in, a, need);
        if (reply_matches(t->q, t->qlen, a, need))
            probe_finish(t, 1);      /* anything else: not ours, read on */
        free(a);
    }
}

static void probe_event(struct bufferevent *bev, short what, void *arg)
{
    tprobe *t = arg;
    if (what & BEV_EVENT_CONNECTED) {
        uint8_t len[2] = { (uint8_t)(t->qlen >> 8), (uint8_t)t->qlen };
        if (bufferevent_write(bev, len, 2) < 0 || bufferevent_write(bev, t->q, t->qlen) < 0)
            probe_finish(t, 0);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        probe_finish(t, 0);
}

static void probe_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    probe_finish(arg, 0);
}

int fwd_tls_probe(const fwd_stanza *st, const fwd_upstream *u, const uint8_t *q, size_t qlen,
                  uint16_t id, const struct timespec *end)
{
    assert(st && u && q && end);
    assert(qlen >= 12 && ((q[0] << 8) | q[1]) == id);
    char why[160];
    int cerr, fd = up_socket(st, u, why, sizeof why, &cerr);
    if (fd < 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
    SSL *ssl = cerr || ms <= 0 ? NULL : up_ssl(st, u, fd);
    tprobe t = { .q = q, .qlen = qlen };
    struct bufferevent *bev = NULL;
    struct event *timer = NULL;
    if (!ssl || !(t.base = event_base_new())) {
        SSL_free(ssl);
        close(fd);
        if (t.base)
            event_base_free(t.base);
        return -1;
    }
    /* libevent owns ssl and fd from here (freed with bev, or by it on failure) */
    bev = bufferevent_openssl_socket_new(t.base, fd, ssl, BUFFEREVENT_SSL_CONNECTING,
                                         BEV_OPT_CLOSE_ON_FREE);
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    if (bev && (timer = evtimer_new(t.base, probe_deadline, &t)) && evtimer_add(timer, &tv) == 0) {
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
        bufferevent_setcb(bev, probe_read, NULL, probe_event, &t);
        bufferevent_enable(bev, EV_READ | EV_WRITE);
        while (!t.done)
            if (event_base_loop(t.base, EVLOOP_ONCE) < 0)
                break;
    }
    if (bev)
        bufferevent_free(bev);
    if (timer)
        event_free(timer);
    event_base_free(t.base);
    ERR_clear_error();
    return t.done && t.ok ? 0 : -1;
}
