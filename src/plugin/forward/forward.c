/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward — proxy queries to upstream resolvers, on c-ares.
 *
 * serve() walks the block's stanzas: the first whose FROM covers the qname
 * (and no `except` name does) takes the query, else it goes to the next
 * plugin. The stanza orders its upstreams by policy and sends the query
 * bytes exactly as the client sent them but for a fresh random ID (the
 * client's ID is put back on the reply; EDNS travels untouched) over the client's
 * transport, or TCP with force_tcp, or UDP with prefer_udp. The request goes
 * REQ_ASYNC and is finished from the c-ares callback.
 *
 * Transport. Per worker event loop a stanza keeps, per upstream, up to three
 * c-ares channels (UDP for queries without EDNS, UDP for queries with EDNS,
 * TCP), each configured with that one upstream, one try and read_timeout.
 * c-ares reports its sockets through the socket-state callback; each socket
 * becomes a libevent event on the worker's base that calls ares_process_fd(),
 * and one timer per channel drives c-ares' timeouts. Channels close their
 * sockets when no query is pending, so an idle worker holds no events.
 * Nothing here blocks and no thread is started per query.
 *
 * Retries follow CoreDNS's ServeDNS loop: an upstream that is down (more
 * failed health checks than max_fails) is skipped; when every upstream is
 * down the health checks are assumed broken and a random upstream is tried
 * (or SERVFAIL with failfast_all_unhealthy_upstreams); a network error or
 * timeout starts the upstream's health probe and moves on to the next
 * upstream, within 5 s and max_connect_attempts. A reply is returned as is
 * unless its rcode is listed in `failover` (next upstream) or `next` (the
 * next forward stanza). More than max_concurrent queries in flight get
 * REFUSED. With prefer_udp a truncated UDP reply is retried over TCP;
 * otherwise, as in CoreDNS, the truncated reply goes back to the client.
 *
 * add_client_subnet (topodns's own; a node-local cache in front of the
 * cluster DNS): the query is re-encoded with an EDNS Client Subnet option
 * holding the client's address cut to the configured prefix, replacing any
 * ECS the client sent, and an OPT when it had none (the reply's EDNS is
 * still the client's own: see echo_edns in server/request.c).
 *
 * tls:// upstreams (DNS over TLS) go through tls.c's connection pools
 * instead of c-ares, with the same retries, health checks and metrics;
 * their transport is always TLS over TCP (force_tcp / prefer_udp do not
 * apply), as in CoreDNS.
 */
#include <ares.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include "plugin/forward/forward.h"
#include "common/log.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "server/tap.h"
#include "wire/msg.h"

#define FWD_DEADLINE_NS 5000000000ull       /* CoreDNS defaultTimeout */
#define FWD_EDNS_PSZ 4096                   /* largest UDP reply c-ares reads */

typedef struct fwd_sock {
    struct event ev;
    ares_socket_t fd;
    struct fwd_chan *ch;
    struct fwd_sock *next;
} fwd_sock;

typedef struct fwd_chan {
    ares_channel ch;
    struct event_base *base;
    struct event timer;
    int timer_on;
    fwd_sock *socks;
    unsigned pending;                /* queries sent and not called back */
    int dying;                       /* being destroyed: leave libevent alone */
    int reset;                       /* c-ares dropped EDNS: rebuild when idle */
} fwd_chan;

#define FWD_KIND_TLS FWD_NCH          /* q->kind of a tls:// upstream */

typedef struct fwd_loop {
    struct event_base *base;
    fwd_chan *ch[FWD_MAX_UP][FWD_NCH];
    fwd_tpool *tp[FWD_MAX_UP];       /* tls:// upstreams' connections */
    struct fwd_loop *next;
} fwd_loop;

typedef struct fwd_q {
    const handler *h;
    forward *f;
    fwd_stanza *st;
    size_t si;
    dns_req *r;
    fwd_loop *loop;
    unsigned list[FWD_MAX_UP];
    size_t nlist, i;
    unsigned fails, failovers;
    unsigned long attempts;
    uint64_t deadline, sent_at;
    int cur, kind;
    int outstanding, sending, status, got;
    int holds_slot;
    char err[400];
    char why[200];                   /* a tls:// upstream's error */
    size_t wlen;
    uint8_t wire[];                  /* the query as sent: client's, new ID */
} fwd_q;


static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned rnd32(void)
{
    static _Thread_local unsigned s;
    while (!s && getrandom(&s, sizeof s, 0) != sizeof s)
        s = (unsigned)mono_ns() ^ (unsigned)(uintptr_t)&s;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

/* ---- policy ----------------------------------------------------------- */

size_t fwd_policy_list(int policy, size_t n, unsigned rnd, unsigned robin, unsigned *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned)i;
    if (n < 2)
        return n;
    if (policy == FWD_POL_RANDOM) {
        for (size_t i = n - 1; i > 0; i--) {     /* Fisher-Yates */
            rnd ^= rnd >> 16;                    /* one hash round per draw */
            rnd *= 0x7feb352du;
            rnd ^= rnd >> 15;
            rnd *= 0x846ca68bu;
            rnd ^= rnd >> 16;
            size_t j = rnd % (i + 1);
            unsigned t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
    } else if (policy == FWD_POL_ROUND_ROBIN) {
        /* as CoreDNS: p[k], then p[:k], then p[k+1:] */
        unsigned k = robin % (unsigned)n;
        out[0] = k;
        for (size_t i = 0, o = 1; i < n; i++)
            if (i != k)
                out[o++] = (unsigned)i;
    }
    return n;
}

int fwd_down(const fwd_stanza *st, const fwd_upstream *u)
{
    if (st->max_fails == 0)
        return 0;
    return atomic_load(&((fwd_upstream *)u)->fails) > st->max_fails;
}

/* ---- c-ares on libevent ----------------------------------------------- */

static void chan_timer_update(fwd_chan *c)
{
    struct timeval tv, *t = c->pending ? ares_timeout(c->ch, NULL, &tv) : NULL;
    if (t) {
        evtimer_add(&c->timer, t);
        c->timer_on = 1;
    } else if (c->timer_on) {
        evtimer_del(&c->timer);
        c->timer_on = 0;
    }
}

static void sock_cb(evutil_socket_t fd, short what, void *arg)
{
    fwd_chan *c = ((fwd_sock *)arg)->ch;
    ares_process_fd(c->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
                    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
    chan_timer_update(c);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    fwd_chan *c = arg;
    c->timer_on = 0;
    ares_process_fd(c->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    chan_timer_update(c);
}

/* c-ares opens, changes or closes a socket: mirror it in libevent. */
static void sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
    fwd_chan *c = data;
    fwd_sock **pp = &c->socks, *s;
    while ((s = *pp) && s->fd != fd)
        pp = &s->next;
    if (s && !c->dying)
        event_del(&s->ev);
    if (!readable && !writable) {
        if (s) {
            *pp = s->next;
            free(s);
        }
        return;
    }
    if (c->dying)
        return;
    if (!s) {
        if (!(s = calloc(1, sizeof *s)))
            return;
        s->fd = fd;
        s->ch = c;
        s->next = c->socks;
        c->socks = s;
    }
    short ev = (short)(EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
    event_assign(&s->ev, c->base, fd, ev, sock_cb, s);
    event_add(&s->ev, NULL);
}

static void chan_free(fwd_chan *c)
{
    if (!c)
        return;
    c->dying = 1;                   /* callbacks must not touch the worker */
    ares_destroy(c->ch);
    while (c->socks) {
        fwd_sock *s = c->socks;
        c->socks = s->next;
        free(s);
    }
    free(c);
}

static fwd_chan *chan_new(fwd_stanza *st, fwd_upstream *u, int kind, struct event_base *base)
{
    fwd_chan *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base = base;
    evtimer_assign(&c->timer, base, timer_cb, c);
    struct ares_options o;
    memset(&o, 0, sizeof o);
    struct in_addr lo = { htonl(INADDR_LOOPBACK) };
    o.flags = ARES_FLAG_NOCHECKRESP;
    if (kind == FWD_CH_TCP)
        o.flags |= ARES_FLAG_USEVC;
    else if (!st->prefer_udp)
        o.flags |= ARES_FLAG_IGNTC;        /* TC replies go back to the client */
    if (kind == FWD_CH_UDP_EDNS) {
        o.flags |= ARES_FLAG_EDNS;
        o.ednspsz = FWD_EDNS_PSZ;
    }
    double ms = st->read_timeout * 1000;   /* up to 2562047h: beyond int */
    o.timeout = ms < INT_MAX ? (int)ms : INT_MAX;
    o.tries = 1;
    o.ndots = 1;
    o.servers = &lo;                   /* replaced below; avoids resolv.conf */
    o.nservers = 1;
    o.domains = NULL;
    o.ndomains = 0;
    o.lookups = (char *)"b";
    o.sortlist = NULL;
    o.nsort = 0;
    o.sock_state_cb = sock_state_cb;
    o.sock_state_cb_data = c;
    int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_NDOTS |
               ARES_OPT_SERVERS | ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS | ARES_OPT_SORTLIST |
               ARES_OPT_SOCK_STATE_CB;
    if (kind == FWD_CH_UDP_EDNS)
        mask |= ARES_OPT_EDNSPSZ;
    if (ares_init_options(&c->ch, &o, mask) != ARES_SUCCESS) {
        free(c);
        return NULL;
    }
    struct ares_addr_port_node srv;
    memset(&srv, 0, sizeof srv);
    srv.family = u->sa.ss_family;
    if (srv.family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&u->sa;
        srv.addr.addr4 = s4->sin_addr;
        srv.udp_port = srv.tcp_port = ntohs(s4->sin_port);
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&u->sa;
        memcpy(&srv.addr.addr6, &s6->sin6_addr, 16);
        srv.udp_port = srv.tcp_port = ntohs(s6->sin6_port);
    }
    if (ares_set_servers_ports(c->ch, &srv) != ARES_SUCCESS) {
        chan_free(c);
        return NULL;
    }
    if (st->has_src && st->src.ss_family == AF_INET)
        ares_set_local_ip4(c->ch, ntohl(((struct sockaddr_in *)&st->src)->sin_addr.s_addr));
    else if (st->has_src)
        ares_set_local_ip6(c->ch, ((struct sockaddr_in6 *)&st->src)->sin6_addr.s6_addr);
    return c;
}

/* The stanza's state for this event loop; created on first use. The list
 * only grows while the stanza lives (a loop is one worker's or one internal
 * request's event base), so readers walk it without the lock: a node is
 * complete before the release store that links it. */
static fwd_loop *loop_for(fwd_stanza *st, struct event_base *base)
{
    for (fwd_loop *l = atomic_load_explicit(&st->loops, memory_order_acquire); l; l = l->next)
        if (l->base == base)
            return l;
    pthread_mutex_lock(&st->mu);
    fwd_loop *l = atomic_load_explicit(&st->loops, memory_order_relaxed);
    while (l && l->base != base)
        l = l->next;
    if (!l && (l = calloc(1, sizeof *l))) {
        l->base = base;
        l->next = atomic_load_explicit(&st->loops, memory_order_relaxed);
        atomic_store_explicit(&st->loops, l, memory_order_release);
    }
    pthread_mutex_unlock(&st->mu);
    return l;
}

void fwd_loops_free(fwd_stanza *st)
{
    fwd_loop *next;
    for (fwd_loop *l = atomic_load(&st->loops); l; l = next) {
        next = l->next;
        for (size_t i = 0; i < FWD_MAX_UP; i++) {
            for (int k = 0; k < FWD_NCH; k++)
                chan_free(l->ch[i][k]);
            fwd_tpool_free(l->tp[i]);
        }
        free(l);
    }
    atomic_store(&st->loops, NULL);
}

static fwd_chan *chan_get(fwd_q *q, unsigned up, int kind)
{
    fwd_chan **slot = &q->loop->ch[up][kind];
    if (*slot && (*slot)->reset && (*slot)->pending == 0) {
        chan_free(*slot);
        *slot = NULL;
    }
    if (!*slot)
        *slot = chan_new(q->st, &q->st->ups[up], kind, q->loop->base);
    return *slot;
}

/* ---- one query -------------------------------------------------------- */

static void q_free(fwd_q *q)
{
    if (q->holds_slot)
        atomic_fetch_sub(&q->st->concurrent, 1);
    free(q);
}

static int q_kind(const fwd_q *q)
{
    const dns_req *r = q->r;
    int tcp = q->st->force_tcp ? 1 : q->st->prefer_udp ? 0 : r->proto == PROTO_TCP;
    if (tcp)
        return FWD_CH_TCP;
    return r->q.edns.present || q->st->add_ecs ? FWD_CH_UDP_EDNS : FWD_CH_UDP;
}

/* Room add_client_subnet may add to a query: an OPT record (11 octets) and
 * an ECS option for a full IPv6 address (4 + 4 + 16). */
#define FWD_ECS_ROOM 64

/* The client's query re-encoded with ECS = the client's address cut to the
 * stanza's prefix (an IPv4-mapped IPv6 client counts as IPv4). Returns the
 * length written into out, or -1. */
static int with_client_subnet(const fwd_stanza *st, const dns_req *r, uint8_t *out, size_t cap)
{
    dns_msg m;
    dns_ecs e = { 0 };
    const struct sockaddr_storage *sa = &r->peer;
    static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
    if (sa->ss_family == AF_INET) {
        e.family = 1;
        memcpy(e.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->ss_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        e.family = memcmp(a, mapped, 12) ? 2 : 1;
        memcpy(e.addr, e.family == 1 ? a + 12 : a, e.family == 1 ? 4 : 16);
    } else {
        return -1;
    }
    e.source_prefix = e.family == 1 ? st->ecs_bits4 : st->ecs_bits6;
    for (unsigned i = 0; i < 16; i++) {          /* zero past the prefix */
        unsigned keep = e.source_prefix > i * 8 ? e.source_prefix - i * 8 : 0;
        e.addr[i] &= keep >= 8 ? 0xff : (uint8_t)(0xff << (8 - keep));
    }
    msg_init(&m);
    if (msg_copy(&m, &r->q) < 0) {
        msg_free(&m);
        return -1;
    }
    if (!m.edns.present) {
        m.edns.present = 1;
        m.edns.udp_size = FWD_EDNS_PSZ;
    }
    m.edns.has_ecs = 1;
    m.edns.ecs = e;
    uint16_t tc = m.flags & F_TC;
    int n = msg_encode(&m, out, cap, 65535, 1);
    if (n >= 0 && (m.flags & F_TC) != tc)       /* something did not fit */
        n = -1;
    msg_free(&m);
    return n;
}

static const char *status_text(int status)
{
    switch (status) {
    case ARES_ETIMEOUT: return "i/o timeout";
    case ARES_ECONNREFUSED: return "connection refused";
    default: return ares_strerror(status);
    }
}

/* An unparsable UDP reply at the size limit: CoreDNS answers with an empty
 * truncated reply so the client retries over TCP. */
static int truncated_reply(dns_msg *resp, const dns_msg *q, const unsigned char *abuf, int alen,
                           int tcp)
{
    if (tcp || alen < 512)
        return -1;
    msg_reply_to(resp, q);
    resp->flags |= F_TC | (uint16_t)(((abuf[2] << 8) | abuf[3]) & (F_AA | F_RA));
    resp->rcode = abuf[3] & 0xf;
    return 0;
}

int fwd_take_answer(dns_msg *resp, const dns_msg *q, const unsigned char *abuf, int alen,
                    int tcp)
{
    int hdr_ok;
    return msg_parse(resp, abuf, (size_t)alen, &hdr_ok) == 0 ||
           truncated_reply(resp, q, abuf, alen, tcp) == 0 ? 0 : -1;
}

int fwd_answers(const dns_msg *resp, const dns_msg *q)
{
    return (resp->flags & F_QR) && resp->has_question && resp->qtype == q->qtype &&
           dname_equal(resp->qname, q->qname);
}

static void fwd_resume(fwd_q *q);

static void on_answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    (void)timeouts;
    fwd_q *q = arg;
    if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
        free(q);                        /* shutdown: the worker is gone */
        return;
    }
    fwd_chan *c = q->kind < FWD_NCH ? q->loop->ch[q->cur][q->kind] : NULL;
    if (c)
        c->pending--;
    q->outstanding = 0;
    q->status = status;
    q->got = 0;
    if (status == ARES_SUCCESS) {
        if (fwd_take_answer(&q->r->resp, &q->r->q, abuf, alen, q->kind == FWD_CH_TCP) == 0) {
            q->got = 1;
            if (c && q->kind == FWD_CH_UDP_EDNS && q->r->resp.rcode == RC_FORMERR)
                c->reset = 1;
        } else {
            q->status = ARES_EBADRESP;
        }
    }
    if (!q->sending)
        fwd_resume(q);
}

/* A tls:// upstream's reply or failure (tls.c), from the loop. */
static void on_tls_answer(void *arg, int status, const char *why, const uint8_t *msg, size_t len)
{
    fwd_q *q = arg;
    if (status == FWD_TLS_GONE) {
        free(q);                        /* shutdown: the worker is gone */
        return;
    }
    q->outstanding = 0;
    q->got = 0;
    q->status = ARES_SUCCESS;
    if (status == FWD_TLS_OK) {
        int hdr_ok;
        if (msg_parse(&q->r->resp, msg, len, &hdr_ok) == 0)
            q->got = 1;
        else
            q->status = ARES_EBADRESP;
    } else {
        q->status = ARES_ECONNREFUSED;
        snprintf(q->why, sizeof q->why, "%s", why ? why : "error");
    }
    fwd_resume(q);
}

static int q_send_tls(fwd_q *q, unsigned up)
{
    fwd_tpool **tp = &q->loop->tp[up];
    if (!*tp && !(*tp = fwd_tpool_new(q->st, &q->st->ups[up], q->loop->base)))
        return -1;
    q->sent_at = mono_ns();
    q->outstanding = 1;
    uint16_t id = (uint16_t)rnd32();
    q->wire[0] = (uint8_t)(id >> 8);
    q->wire[1] = (uint8_t)id;
    if (fwd_tpool_send(*tp, q->wire, q->wlen, on_tls_answer, q, q->why, sizeof q->why) < 0) {
        q->outstanding = 0;
        return -1;
    }
    return 0;
}

/* Send to upstream `up`. 0 when the query is in flight or already answered
 * (synchronous callback), -1 when no channel could be made. */
static int q_send(fwd_q *q, unsigned up)
{
    q->cur = (int)up;
    if (q->st->ups[up].tls) {
        q->kind = FWD_KIND_TLS;
        return q_send_tls(q, up);
    }
    q->kind = q_kind(q);
    fwd_chan *c = chan_get(q, up, q->kind);
    if (!c)
        return -1;
    uint16_t id = (uint16_t)rnd32();
    q->wire[0] = (uint8_t)(id >> 8);
    q->wire[1] = (uint8_t)id;
    q->sent_at = mono_ns();
    q->outstanding = 1;
    q->sending = 1;
    c->pending++;
    ares_send(c->ch, q->wire, (int)q->wlen, on_answer, q);
    q->sending = 0;
    chan_timer_update(c);
    return 0;
}

/* Next upstream to try, CoreDNS's loop head; -1 when the loop ends. */
static int q_pick(fwd_q *q)
{
    fwd_stanza *st = q->st;
    while (mono_ns() < q->deadline && (st->max_attempts == 0 || q->attempts < st->max_attempts)) {
        if (q->i >= q->nlist) {
            q->i = 0;
            q->fails = 0;
        }
        unsigned up = q->list[q->i++];
        if (!fwd_down(st, &st->ups[up]))
            return (int)up;
        if (++q->fails < st->nups)
            continue;
        metrics_add(q->f->m.broken, NULL, 1);
        if (st->failfast)
            return -1;
        return (int)(rnd32() % st->nups);   /* health checks look broken */
    }
    return -1;
}

static int rc_listed(const uint16_t *l, int n, unsigned rc)
{
    for (int i = 0; i < n; i++)
        if (l[i] == rc)
            return 1;
    return 0;
}

static int serve_stanza(const handler *h, forward *f, size_t si, dns_req *r);

/* The reply in r->resp came back from q->cur. Returns what serve returns:
 * an rcode, REQ_ASYNC, -2 to try the next upstream, -3 for the next stanza. */
static int q_reply(fwd_q *q, int up)
{
    dns_req *r = q->r;
    fwd_stanza *st = q->st;
    char rcb[16];
    const char *lv[] = { "forward", st->ups[up].to, rcode_name(r->resp.rcode, rcb) };
    metrics_observe(q->f->m.duration, lv, (double)(mono_ns() - q->sent_at) / 1e9);
    const msg_tap *tap = q->f->tap;
    if (tap)
        tap->forwarded(tap, r, (const struct sockaddr *)&st->ups[up].sa, st->ups[up].salen,
                       q->kind == FWD_CH_TCP || q->kind == FWD_KIND_TLS, q->wire, q->wlen,
                       mono_ns() - q->sent_at, &r->resp);
    r->resp.id = r->q.id;
    if (!fwd_answers(&r->resp, &r->q)) {
        msg_reply_to(&r->resp, &r->q);
        r->resp.rcode = RC_FORMERR;
        return req_write(r, q->h);
    }
    if (rc_listed(st->failover_rc, st->nfailover, r->resp.rcode) && ++q->failovers < st->nups)
        return -2;
    int go_next = q->si + 1 < q->f->nst &&
        (rc_listed(st->next_rc, st->nnext, r->resp.rcode) ||
         (st->next_on_nodata && r->resp.rcode == RC_NOERROR && msg_count(&r->resp, SEC_ANSWER) == 0));
    if (go_next) {
        msg_reset(&r->resp);
        return -3;
    }
    return req_write(r, q->h);
}

/* Drive q until it is in flight or decided. Returns REQ_ASYNC or the final
 * rcode (q is freed then). */
static int q_drive(fwd_q *q)
{
    for (;;) {
        if (q->outstanding)
            return REQ_ASYNC;
        if (q->cur >= 0) {
            int up = q->cur;
            q->cur = -1;
            if (q->got) {
                int rc = q_reply(q, up);
                if (rc == -3) {
                    const handler *h = q->h;
                    forward *f = q->f;
                    size_t si = q->si + 1;
                    dns_req *r = q->r;
                    q_free(q);
                    return serve_stanza(h, f, si, r);
                }
                if (rc != -2) {
                    q_free(q);
                    return rc;
                }
            } else {
                if (q->kind == FWD_KIND_TLS && q->status != ARES_EBADRESP)
                    snprintf(q->err, sizeof q->err, "tcp-tls %s: %s", q->st->ups[up].to, q->why);
                else
                    snprintf(q->err, sizeof q->err, "%s %s: %s",
                             q->kind == FWD_KIND_TLS ? "tcp-tls" : q->kind == FWD_CH_TCP ? "tcp" : "udp",
                             q->st->ups[up].to, status_text(q->status));
                if (q->st->max_fails)
                    fwd_health_kick(&q->st->ups[up]);
                q->attempts++;
                if (q->st->max_attempts && q->attempts >= q->st->max_attempts)
                    break;
                if (q->fails >= q->st->nups)
                    break;
            }
        }
        int up = q_pick(q);
        if (up < 0)
            break;
        if (q_send(q, (unsigned)up) < 0) {
            if (q->st->ups[up].tls)
                snprintf(q->err, sizeof q->err, "tcp-tls %s: %s", q->st->ups[up].to, q->why);
            else
                snprintf(q->err, sizeof q->err, "cannot create a c-ares channel for %s",
                         q->st->ups[up].to);
            break;
        }
    }
    req_error(q->r, "forward", "plugin/forward: %s", q->err[0] ? q->err : "no healthy proxies");
    q_free(q);
    return RC_SERVFAIL;
}

static void fwd_resume(fwd_q *q)
{
    dns_req *r = q->r;
    int rc = q_drive(q);
    if (rc != REQ_ASYNC)
        req_finish(r, rc);
}

/* ---- serving ---------------------------------------------------------- */

static int stanza_match(const fwd_stanza *st, const uint8_t *qname)
{
    if (!dname_is_sub(qname, st->from))
        return 0;
    if (dname_equal(qname, st->from))
        return 1;
    for (size_t i = 0; i < st->nexcept; i++)
        if (dname_is_sub(qname, st->except[i]))
            return 0;
    return 1;
}

static int serve_stanza(const handler *h, forward *f, size_t si, dns_req *r)
{
    while (si < f->nst && !stanza_match(f->st[si], r->q.qname))
        si++;
    if (si >= f->nst)
        return plugin_next(h, r);
    fwd_stanza *st = f->st[si];
    struct event_base *base = req_event_base(r);
    size_t cap = r->rawlen + (st->add_ecs ? FWD_ECS_ROOM : 0);
    fwd_q *q = calloc(1, sizeof *q + cap);
    fwd_loop *l = base ? loop_for(st, base) : NULL;
    if (!q || !l) {
        free(q);
        req_error(r, "forward", "plugin/forward: no event loop for this request");
        return RC_SERVFAIL;
    }
    if (st->max_concurrent > 0) {
        if (atomic_fetch_add(&st->concurrent, 1) + 1 > st->max_concurrent) {
            atomic_fetch_sub(&st->concurrent, 1);
            metrics_add(f->m.rejects, NULL, 1);
            free(q);
            req_error(r, "forward", "plugin/forward: concurrent queries exceeded maximum %ld",
                      st->max_concurrent);
            return RC_REFUSED;
        }
        q->holds_slot = 1;
    }
    q->h = h;
    q->f = f;
    q->st = st;
    q->si = si;
    q->r = r;
    q->loop = l;
    q->wlen = r->rawlen;
    memcpy(q->wire, r->raw, r->rawlen);
    if (st->add_ecs) {
        int n = with_client_subnet(st, r, q->wire, cap);
        if (n < 0) {
            q_free(q);
            req_error(r, "forward", "plugin/forward: cannot add a client subnet to the query");
            return RC_SERVFAIL;
        }
        q->wlen = (size_t)n;
    }
    q->cur = -1;
    q->deadline = mono_ns() + FWD_DEADLINE_NS;
    unsigned robin = st->policy == FWD_POL_ROUND_ROBIN ? atomic_fetch_add(&st->robin, 1) + 1 : 0;
    q->nlist = fwd_policy_list(st->policy, st->nups, rnd32(), robin, q->list);
    return q_drive(q);
}

static int forward_serve(const handler *h, dns_req *r)
{
    return serve_stanza(h, h->inst, 0, r);
}

/* ---- plugin ----------------------------------------------------------- */

static int forward_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    forward *f = calloc(1, sizeof *f);
    if (!f)
        return cf_err(d, "plugin/forward: out of memory");
    fwd_metrics_init(&f->m, ctx ? instance_metrics(ctx->ins) : NULL);
    if (fwd_parse(d, f) < 0) {
        fwd_free(f);
        return -1;
    }
    for (size_t i = 0; i < f->nst; i++) {
        f->st[i]->m = &f->m;
        f->st[i]->ins = ctx ? ctx->ins : NULL;
    }
    f->tap = ctx ? block_value(ctx->blk, TAP_KEY) : NULL;   /* dnstap's setup ran first */
    *inst = f;
    return 0;
}

static int forward_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    forward *f = inst;
    for (size_t i = 0; i < f->nst; i++)
        if (fwd_health_start(f->st[i], err, errlen) < 0)
            return -1;
    return 0;
}

static void forward_stop(void *inst)
{
    forward *f = inst;
    for (size_t i = 0; i < f->nst; i++)
        fwd_health_stop(f->st[i]);
}

static void forward_destroy(void *inst)
{
    forward *f = inst;
    for (size_t i = 0; f && i < f->nst; i++) {
        fwd_health_stop(f->st[i]);   /* no probe uses the stanza any more */
        fwd_loops_free(f->st[i]);
    }
    fwd_free(f);
}

const plugin_def plugin_forward = {
    .name = "forward",
    .flags = PLUGIN_ANY_CLASS,      /* CoreDNS lets every class through to forward */
    .setup = forward_setup,
    .start = forward_start,
    .stop = forward_stop,
    .destroy = forward_destroy,
    .serve = forward_serve,
};
