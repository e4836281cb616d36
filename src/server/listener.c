/* SPDX-License-Identifier: Apache-2.0 */
/*
 * listener.c — sockets, the UDP path and worker threads.
 *
 * Every worker thread runs one libevent loop and owns, for every listen
 * group (address, port), a UDP socket and a TCP listening socket, all bound
 * with SO_REUSEPORT so the kernel spreads clients across workers. Nothing is
 * shared between workers on the serving path. A group without a `bind`
 * address listens on the wildcard address `::` (dual-stack).
 *
 * UDP: a readable socket is drained (up to UDP_BATCH datagrams per wakeup)
 *   with recvmmsg, up to UDP_MMSG datagrams per system call. IP_PKTINFO /
 *   IPV6_PKTINFO tell each datagram's destination address, which becomes
 *   the request's r.local; the reply leaves from the socket it came in on,
 *   with that address as its source, so that a wildcard socket answers a
 *   query to 127.0.0.5 or 169.254.20.10 from that address (clients drop
 *   replies from another one). Without the control message the kernel's
 *   route picks the source, as before. Replies written while a received
 *   batch is being answered are copied, with their address and control
 *   message, into the worker's out-queue and sent together with sendmmsg
 *   when the batch is done (or when the queue fills); a reply written
 *   later (an asynchronous request such as forward) goes out at once with
 *   sendmsg.
 * tls:// groups have no UDP socket; their TCP connections run over TLS.
 * TCP: accepted connections belong to tcp.c (framing, deadlines, limits);
 *   each one remembers its local address from getsockname. A request may
 *   send several messages (req_write_more: a zone transfer), each framed
 *   and queued on the connection as it is written.
 *
 * Requests go to dispatch.c (core_handle_packet) with f->ops set to this
 * file's UDP transport_ops (tcp.c sets its own); request.c sends their
 * replies and ends them through those tables.
 *
 * Reloads: a new instance takes over (dup) the running instance's UDP and
 * listening TCP sockets for the same address, port and worker index, so the
 * kernel's queues survive the swap; the old workers, when stopped, first
 * stop accepting and give their open connections up to 200 ms to finish.
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
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include "server/core.h"
#include "server/accept.h"
#include "server/loophook.h"
#include "cluster/store.h"
#include "common/addr.h"
#include "common/log.h"
#include "common/thread.h"

#define UDP_BATCH 64        /* datagrams per wakeup */
#define UDP_MMSG 16         /* datagrams per recvmmsg / replies per sendmmsg */
#define OUTQ_BYTES 65536    /* reply octets one out-queue holds */

/* The UDP transport (core.h, transport_ops), below with the UDP path:
 * send a reply (queued while a batch is answered), then back to the pool. */
static int udp_ops_send(req_full *f, const uint8_t *wire, size_t len);
static void udp_ops_done(req_full *f);
static const transport_ops udp_ops = { udp_ops_send, udp_ops_done, NULL };

/* ---- addresses -------------------------------------------------------- */

static socklen_t group_sockaddr(const listen_group *g, struct sockaddr_storage *ss)
{
    socklen_t len;
    return addr_parse_ip(g->addr, g->port, ss, &len) == 0 ? len : 0;
}

/* Ask the kernel for every datagram's destination address and interface
 * (IP_PKTINFO; a dual-stack socket reports IPv4 ones as IPv4-mapped
 * IPV6_PKTINFO). */
static void udp_want_pktinfo(int fd, int family)
{
    int one = 1;
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    else
        setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
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
    if (type == SOCK_DGRAM)
        udp_want_pktinfo(fd, ss.ss_family);
    if (type == SOCK_STREAM && listen(fd, 1024) < 0) {
        snprintf(err, errlen, "listen tcp %s:%d: %s", g->addr, g->port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- UDP -------------------------------------------------------------- */

#define PKTINFO_SPACE (CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo)))

/* The destination of a received datagram, from its control messages, as
 * f->r.local (the group's port) and f->ifindex; f->has_local when found. */
static void udp_destination(req_full *f, struct msghdr *mh)
{
    memset(&f->r.local, 0, sizeof f->r.local);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(cm), sizeof pi);
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&f->r.local;
            s6->sin6_family = AF_INET6;
            s6->sin6_addr = pi.ipi6_addr;
            f->ifindex = (int)pi.ipi6_ifindex;
            f->has_local = 1;
        } else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(cm), sizeof pi);
            struct sockaddr_in *s4 = (struct sockaddr_in *)&f->r.local;
            s4->sin_family = AF_INET;
            s4->sin_addr = pi.ipi_addr;     /* the header's destination */
            f->ifindex = pi.ipi_ifindex;
            f->has_local = 1;
        }
    }
    sockaddr_unmap(&f->r.local);
    uint16_t port = htons((uint16_t)f->grp->port);
    if (f->r.local.ss_family == AF_INET)
        ((struct sockaddr_in *)&f->r.local)->sin_port = port;
    else if (f->r.local.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&f->r.local)->sin6_port = port;
}

/* ---- the out-queue: replies of one received batch --------------------- */

#define PKTINFO_CTL union { char buf[PKTINFO_SPACE]; struct cmsghdr align; }

struct udp_outq {
    int active;                     /* a batch of fd is being answered */
    int fd;
    unsigned n;                     /* queued replies */
    size_t used;                    /* octets of data[] in use */
    struct mmsghdr mm[UDP_MMSG];
    struct iovec iov[UDP_MMSG];
    struct sockaddr_storage peer[UDP_MMSG];
    PKTINFO_CTL ctl[UDP_MMSG];
    uint8_t data[OUTQ_BYTES];
};

static size_t udp_source_cmsg(const req_full *f, char *buf, size_t cap);

/* Send what q holds with sendmmsg; a reply the kernel refuses with EINVAL
 * because of its source address (broadcast, multicast) is sent again
 * without it, letting routing pick the source. */
static void outq_flush(struct udp_outq *q)
{
    unsigned i = 0;
    while (i < q->n) {
        int r = sendmmsg(q->fd, &q->mm[i], q->n - i, 0);
        if (r > 0) {
            i += (unsigned)r;
            continue;
        }
        struct msghdr *mh = &q->mm[i].msg_hdr;
        if (r < 0 && errno == EINVAL && mh->msg_controllen) {
            mh->msg_control = NULL;
            mh->msg_controllen = 0;
            sendmsg(q->fd, mh, 0);
        }
        i++;                        /* this one failed: the rest still go */
    }
    q->n = 0;
    q->used = 0;
}

/* Queue f's reply; 0, or -1 when it is not for the batch being answered
 * (the caller sends it at once). */
static int outq_add(req_full *f, const uint8_t *wire, size_t len)
{
    worker *w = f->r.worker;
    struct udp_outq *q = w ? w->outq : NULL;
    if (!q || !q->active || q->fd != f->fd || len > OUTQ_BYTES)
        return -1;
    if (q->n == UDP_MMSG || q->used + len > OUTQ_BYTES)
        outq_flush(q);
    unsigned i = q->n++;
    memcpy(q->data + q->used, wire, len);
    q->iov[i].iov_base = q->data + q->used;
    q->iov[i].iov_len = len;
    q->used += len;
    memcpy(&q->peer[i], &f->r.peer, sizeof q->peer[i]);
    struct msghdr *mh = &q->mm[i].msg_hdr;
    memset(mh, 0, sizeof *mh);
    mh->msg_name = &q->peer[i];
    mh->msg_namelen = f->r.peer.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                      : sizeof(struct sockaddr_in);
    mh->msg_iov = &q->iov[i];
    mh->msg_iovlen = 1;
    if (f->has_local) {
        mh->msg_control = q->ctl[i].buf;
        mh->msg_controllen = udp_source_cmsg(f, q->ctl[i].buf, sizeof q->ctl[i].buf);
    }
    return 0;
}

/* A received datagram in f (its buffer, address and control message were
 * given to recvmmsg): the request's fields. */
static void udp_received(req_full *f, struct msghdr *mh, size_t len)
{
    sockaddr_unmap(&f->r.peer);
    f->r.rawlen = len;
    udp_destination(f, mh);
}

static void udp_read(evutil_socket_t fd, short what, void *arg)
{
    sock_ctx *u = arg;
    worker *w = u->w;
    req_full *fs[UDP_MMSG];
    struct mmsghdr mm[UDP_MMSG];
    struct iovec iov[UDP_MMSG];
    PKTINFO_CTL ctl[UDP_MMSG];
    struct udp_outq *q = w->outq;
    for (int done = 0; done < UDP_BATCH;) {
        unsigned n = 0;
        for (; n < UDP_MMSG; n++) {
            req_full *f = req_alloc(w);
            if (!f)
                break;
            if (f->rawcap < 65536) {
                uint8_t *p = realloc(f->raw, 65536);
                if (!p) {
                    req_release(f);
                    break;
                }
                f->raw = p;
                f->rawcap = 65536;
            }
            fs[n] = f;
            iov[n].iov_base = f->raw;
            iov[n].iov_len = f->rawcap;
            memset(&mm[n], 0, sizeof mm[n]);
            mm[n].msg_hdr = (struct msghdr){
                .msg_name = &f->r.peer, .msg_namelen = sizeof f->r.peer,
                .msg_iov = &iov[n], .msg_iovlen = 1,
                .msg_control = ctl[n].buf, .msg_controllen = sizeof ctl[n].buf,
            };
        }
        int got = n ? recvmmsg(fd, mm, n, 0, NULL) : -1;
        if (got < 0)
            got = 0;
        for (unsigned i = (unsigned)got; i < n; i++)
            req_release(fs[i]);
        if (got == 0)
            return;
        if (q) {
            q->active = 1;
            q->fd = fd;
        }
        for (int i = 0; i < got; i++) {
            req_full *f = fs[i];
            f->grp = u->grp;
            udp_received(f, &mm[i].msg_hdr, mm[i].msg_len);
            f->ops = &udp_ops;
            f->fd = fd;
            f->ins = w->ins;
            f->r.proto = PROTO_UDP;
            f->r.raw = f->raw;
            core_handle_packet(f);
        }
        if (q) {
            outq_flush(q);
            q->active = 0;
        }
        done += got;
        if ((unsigned)got < n)
            return;                 /* the socket is drained */
    }
}

/* The control message that makes the reply leave from the address the query
 * was sent to (IP_PKTINFO for IPv4, also on a dual-stack socket; the
 * interface only for an IPv6 link-local address). Returns its length. */
static size_t udp_source_cmsg(const req_full *f, char *buf, size_t cap)
{
    memset(buf, 0, cap);
    struct msghdr mh = { .msg_control = buf, .msg_controllen = cap };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (f->r.local.ss_family == AF_INET) {
        struct in_pktinfo pi = { 0 };
        pi.ipi_spec_dst = ((const struct sockaddr_in *)&f->r.local)->sin_addr;
        cm->cmsg_level = IPPROTO_IP;
        cm->cmsg_type = IP_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(cm), &pi, sizeof pi);
        return CMSG_SPACE(sizeof pi);
    }
    struct in6_pktinfo pi = { 0 };
    pi.ipi6_addr = ((const struct sockaddr_in6 *)&f->r.local)->sin6_addr;
    if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr))
        pi.ipi6_ifindex = (unsigned)f->ifindex;
    cm->cmsg_level = IPPROTO_IPV6;
    cm->cmsg_type = IPV6_PKTINFO;
    cm->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(cm), &pi, sizeof pi);
    return CMSG_SPACE(sizeof pi);
}

static void udp_send(req_full *f, const uint8_t *wire, size_t len)
{
    if (outq_add(f, wire, len) == 0)
        return;
    PKTINFO_CTL ctl;
    struct iovec iov = { (void *)wire, len };
    struct msghdr mh = {
        .msg_name = &f->r.peer,
        .msg_namelen = f->r.peer.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                        : sizeof(struct sockaddr_in),
        .msg_iov = &iov, .msg_iovlen = 1,
    };
    if (f->has_local) {
        mh.msg_control = ctl.buf;
        mh.msg_controllen = udp_source_cmsg(f, ctl.buf, sizeof ctl.buf);
    }
    if (sendmsg(f->fd, &mh, 0) < 0 && errno == EINVAL && f->has_local) {
        /* a destination the kernel will not send from (broadcast,
         * multicast): let routing pick the source */
        mh.msg_control = NULL;
        mh.msg_controllen = 0;
        sendmsg(f->fd, &mh, 0);
    }
}

/* ---- the UDP transport (core.h, transport_ops) ------------------------- */

static int udp_ops_send(req_full *f, const uint8_t *wire, size_t len)
{
    udp_send(f, wire, len);
    return 0;
}

static void udp_ops_done(req_full *f)
{
    req_release(f);
}

/* ---- workers ---------------------------------------------------------- */

/* Workers read the cluster store: they are RCU reader threads. */
/* ---- sockets a reload inherits ---------------------------------------- */

/* The socket worker wid of prev (the instance being replaced) has for g's
 * address and port, duplicated: a reload keeps the very sockets, so what
 * the kernel queued on them while the instances swap is read by one or the
 * other, never dropped with a closed socket. -1 when there is none. */
static int inherit_fd(const struct instance *prev, int wid, const listen_group *g, int tcp)
{
    if (!prev || !prev->workers || wid >= prev->nworkers)
        return -1;
    const worker *pw = &prev->workers[wid];
    for (size_t j = 0; j < prev->ngroups; j++) {
        const listen_group *pg = &prev->groups[j];
        if (pg->port != g->port || strcmp(pg->addr, g->addr) != 0)
            continue;
        int fd = tcp ? (pw->tcp_ls[j] ? evconnlistener_get_fd(pw->tcp_ls[j]) : -1)
                     : pw->udp_fds[j];
        return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
    }
    return -1;
}

static int group_socket(struct instance *ins, int wid, size_t gi, int type, char *err,
                        size_t errlen)
{
    int fd = inherit_fd(ins->prev, wid, &ins->groups[gi], type == SOCK_STREAM);
    return fd >= 0 ? fd : open_socket(&ins->groups[gi], type, err, errlen);
}

/* ---- stopping: drain, then leave ---------------------------------------- */

#define DRAIN_TICK_MS 10
#define DRAIN_MAX_TICKS 20      /* 200 ms at most */

/* Worker thread: leave once no TCP connection is open, or at the limit
 * (connections a client keeps open are closed then). */
static void drain_tick(evutil_socket_t fd, short what, void *arg)
{
    worker *w = arg;
    if (w->nconns == 0 || ++w->drain_ticks >= DRAIN_MAX_TICKS) {
        event_base_loopbreak(w->base);
        return;
    }
    struct timeval tv = { 0, DRAIN_TICK_MS * 1000 };
    evtimer_add(w->drain_timer, &tv);
}

/* Worker thread, asked by listeners_stop(): accept no more connections and
 * give the open ones a moment to deliver and get their answers (a reload
 * hands the listening sockets to the new instance, whose workers accept
 * from then on; queued datagrams are read by either). */
static void drain_start(evutil_socket_t fd, short what, void *arg)
{
    worker *w = arg;
    for (size_t i = 0; w->ins && i < w->ins->ngroups; i++)
        if (w->tcp_ls[i]) {
            accept_guard_stop(&w->tcp_guards[i]);   /* a paused one stays off */
            evconnlistener_disable(w->tcp_ls[i]);
        }
    drain_tick(-1, 0, w);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "topodns-w%d", w->id);
    thread_set_name(name);
    store_reader_register();
    event_base_dispatch(w->base);
    store_reader_unregister();
    return NULL;
}

/* A TCP listener's accept() failed (out of descriptors or memory, or
 * another lasting error): pause it rather than spin (accept.h). */
static void tcp_accept_error(struct evconnlistener *lev, void *arg)
{
    (void)lev;
    sock_ctx *u = arg;
    accept_guard_error(u->guard, EVUTIL_SOCKET_ERROR());
}

static int worker_open(worker *w, struct instance *ins, char *err, size_t errlen)
{
    size_t ng = ins->ngroups;
    w->udp_fds = calloc(ng ? ng : 1, sizeof *w->udp_fds);
    w->udp_evs = calloc(ng ? ng : 1, sizeof *w->udp_evs);
    w->tcp_ls = calloc(ng ? ng : 1, sizeof *w->tcp_ls);
    w->tcp_guards = calloc(ng ? ng : 1, sizeof *w->tcp_guards);
    sock_ctx *ctx = calloc(ng ? ng : 1, sizeof *ctx);
    w->base = event_base_new();
    if (!w->udp_fds || !w->udp_evs || !w->tcp_ls || !w->tcp_guards || !ctx || !w->base) {
        free(ctx);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->ctx = ctx;
    w->outq = calloc(1, sizeof *w->outq);
    if (!w->outq) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->drain_ev = event_new(w->base, -1, 0, drain_start, w);
    w->drain_timer = evtimer_new(w->base, drain_tick, w);
    if (!w->drain_ev || !w->drain_timer) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->max_conns = ins->env->tcp_max_conns ? ins->env->tcp_max_conns : TCP_MAX_CONNS_DEFAULT;
    w->max_per_source = ins->env->tcp_max_per_source ? ins->env->tcp_max_per_source
                                                     : TCP_MAX_PER_SOURCE_DEFAULT;
    for (size_t i = 0; i < ng; i++)
        w->udp_fds[i] = -1;
    for (size_t i = 0; i < ng; i++) {
        w->udp_fds[i] = -1;
        ctx[i].w = w;
        ctx[i].grp = &ins->groups[i];
        if (!ins->groups[i].tls) {          /* tls:// listens on TCP only */
            int fd = group_socket(ins, w->id, i, SOCK_DGRAM, err, errlen);
            if (fd < 0)
                goto fail;
            w->udp_fds[i] = fd;
            ctx[i].fd = fd;
            w->udp_evs[i] = event_new(w->base, fd, EV_READ | EV_PERSIST, udp_read, &ctx[i]);
            event_add(w->udp_evs[i], NULL);
        }
        int tfd = group_socket(ins, w->id, i, SOCK_STREAM, err, errlen);
        if (tfd < 0)
            goto fail;
        /* backlog 0: the socket listens already (with open_socket's backlog) */
        w->tcp_ls[i] = evconnlistener_new(w->base, tcp_accept, &ctx[i],
                                          LEV_OPT_CLOSE_ON_FREE, 0, tfd);
        if (!w->tcp_ls[i]) {
            close(tfd);
            snprintf(err, errlen, "listen tcp %s:%d failed", ins->groups[i].addr, ins->groups[i].port);
            goto fail;
        }
        char what[160];
        snprintf(what, sizeof what, "%s (worker %d)", ins->groups[i].label, w->id);
        if (accept_guard_init(&w->tcp_guards[i], w->tcp_ls[i], what) < 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        ctx[i].guard = &w->tcp_guards[i];
        evconnlistener_set_error_cb(w->tcp_ls[i], tcp_accept_error);
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
        if (w->tcp_guards)
            accept_guard_free(&w->tcp_guards[i]);
        if (w->tcp_ls && w->tcp_ls[i])
            evconnlistener_free(w->tcp_ls[i]);
    }
    tcp_close_all(w);
    if (w->drain_ev)
        event_free(w->drain_ev);
    if (w->drain_timer)
        event_free(w->drain_timer);
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
    free(w->outq);
    free(w->udp_fds);
    free(w->udp_evs);
    free(w->tcp_ls);
    free(w->tcp_guards);
    if (w->base) {
        if (w->ins)
            loop_free_hooks_run(w->ins, w->base);   /* plugins' per-loop state */
        event_base_free(w->base);
    }
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
    for (int i = 0; i < ins->nworkers; i++)
        if (ins->workers[i].started)
            event_active(ins->workers[i].drain_ev, 0, 0);
    for (int i = 0; i < ins->nworkers; i++)
        if (ins->workers[i].started)
            pthread_join(ins->workers[i].thread, NULL);
    for (int i = 0; i < ins->nworkers; i++)
        worker_close(&ins->workers[i], ins->ngroups);
    free(ins->workers);
    ins->workers = NULL;
}
