/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dnstap — log client queries and replies, and forward's upstream
 * exchanges, as dnstap messages over Frame Streams (CoreDNS's dnstap).
 *
 *   dnstap unix:///PATH | /PATH | tcp://HOST:PORT | tls://HOST:PORT [full] {
 *       skipverify
 *       identity ID
 *       version V
 *       extra E
 *       message_types TYPE...
 *   }
 *
 * serve() queues a CLIENT_QUERY for every client query (internal requests
 * are not tapped) and registers a write hook that queues the
 * CLIENT_RESPONSE of the reply a plugin writes; the forward plugin queues
 * FORWARDER_QUERY/FORWARDER_RESPONSE through the msg_tap this plugin
 * publishes in its block (server/tap.h). With `full` the messages carry the
 * DNS messages' wire form. Several `dnstap` lines in a block each get every
 * message.
 *
 * Never waiting on the collector: each endpoint has an fstrm I/O thread
 * (libfstrm's writer: Frame Streams framing and handshake, reconnecting
 * every 5 s) fed by one bounded multi-producer queue of 16384 frames. A
 * worker encodes a message (protobuf-c, dnstap.proto), submits it and
 * returns. Dropped, and counted in coredns_dnstap_dropped_total: a frame
 * the full queue does not take (a slow collector), and a frame the I/O
 * thread discards while no collector is connected (fstrm discards those
 * silently; the socket under the writer is this file's own small fstrm_rdwr
 * — connect, read, writev, close with 2 s send/receive timeouts — so that it
 * knows whether one is connected). HOST is an IP address or a name resolved
 * once at setup (getaddrinfo); each connection attempt tries its addresses
 * in order. tls:// runs OpenSSL over that blocking socket in the I/O thread
 * (SSL_connect, SSL_read, SSL_write), verifying the collector's certificate
 * against the system's CAs for HOST unless `skipverify`. The queue's lock
 * is only held to put or take one pointer, never across I/O.
 *
 * Threads and ownership: setup() (loading thread) builds the instance and
 * publishes its msg_tap (freed with the block); start() starts the fstrm
 * threads, stop() flushes and joins them (a collector that stopped reading
 * can hold this up until the socket's send times out); destroy() frees the
 * instance. Workers read the configuration and call the fstrm submit
 * function, which is thread-safe in the MPSC queue model.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fstrm.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "common/log.h"
#include "plugin/dnstap/dnstap.pb-c.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"
#include "server/tap.h"
#include "common/tlsca.h"
#include "common/vec.h"
#include "plugin/dnstap/dnstap_internal.h"
#include "common/addr.h"

#ifndef TOPODNS_VERSION
#define TOPODNS_VERSION "dev"
#endif

#define DNSTAP_QUEUE 16384            /* fstrm's largest input queue */
#define DNSTAP_CONTENT "protobuf:dnstap.Dnstap"
#define DNSTAP_ADDRS 8                /* addresses kept of a resolved HOST */

typedef struct endpoint {
    int tcp;                          /* tcp:// or tls://, else a unix socket */
    int tls, skipverify;              /* tls://; skipverify in its block */
    int host_is_ip;                   /* HOST was an address, not a name */
    char path[sizeof ((struct sockaddr_un *)0)->sun_path]; /* unix: the socket path */
    char addr[256], port[8];          /* tcp/tls: HOST as written, and port */
    struct sockaddr_storage sa[DNSTAP_ADDRS]; /* where to connect, tried in order */
    socklen_t salen[DNSTAP_ADDRS];
    int nsa;                          /* 1..DNSTAP_ADDRS after setup */
    SSL_CTX *ctx;                     /* tls: start() .. stop()/destroy() */
    SSL *ssl;                         /* tls: I/O thread only, with fd */
    int fd;                           /* I/O thread only; -1 when closed */
    atomic_int connected;             /* set by the I/O thread, read by its
                                       * frame free callback */
    metric_family *dropped;
    int full;
    char *identity, *version, *extra;
    uint32_t types;                   /* bit per Message.Type; all by default */
    struct fstrm_iothr *iothr;        /* start() .. stop() */
    struct fstrm_iothr_queue *ioq;
    const cf_token *tok;
} endpoint;

typedef struct dnstap {
    endpoint *eps;
    size_t neps;
    int full;                         /* some endpoint wants the wire form */
    metric_family *dropped;
    msg_tap tap;                      /* published under TAP_KEY */
} dnstap;

/* ---- encoding --------------------------------------------------------- */

static void real_time(uint64_t ago_ns, uint64_t *sec, uint32_t *nsec)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint64_t t = now > ago_ns ? now - ago_ns : 0;
    *sec = t / 1000000000ull;
    *nsec = (uint32_t)(t % 1000000000ull);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Address family, address octets and port of a socket address into m's
 * query (client) or response (upstream) side. */
void dnstap_set_addr(Dnstap__Message *m, const struct sockaddr *sa, int response_side,
                     uint8_t buf[16])
{
    size_t len;
    uint32_t port;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        memcpy(buf, &s4->sin_addr, 4);
        len = 4;
        port = ntohs(s4->sin_port);
        m->socket_family = DNSTAP__SOCKET_FAMILY__INET;
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        memcpy(buf, &s6->sin6_addr, 16);
        len = 16;
        port = ntohs(s6->sin6_port);
        m->socket_family = DNSTAP__SOCKET_FAMILY__INET6;
    } else {
        return;
    }
    m->has_socket_family = 1;
    if (response_side) {
        m->has_response_address = m->has_response_port = 1;
        m->response_address = (ProtobufCBinaryData){ len, buf };
        m->response_port = port;
    } else {
        m->has_query_address = m->has_query_port = 1;
        m->query_address = (ProtobufCBinaryData){ len, buf };
        m->query_port = port;
    }
}

static ProtobufCBinaryData bytes_of(const char *s)
{
    return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

/* fstrm's free callback, on the I/O thread after the frame was written or
 * discarded: discarded when no collector is connected. */
static void frame_free(void *buf, void *data)
{
    endpoint *e = data;
    if (!atomic_load_explicit(&e->connected, memory_order_relaxed))
        metrics_add(e->dropped, NULL, 1);
    free(buf);
}

/* Encode m for every endpoint that takes its type and queue it; a frame
 * that cannot be queued is dropped and counted. Worker thread. */
static void emit(const dnstap *t, Dnstap__Message *m)
{
    for (size_t i = 0; i < t->neps; i++) {
        endpoint *e = &t->eps[i];
        if (!e->ioq || !(e->types & (1u << m->type)))
            continue;
        Dnstap__Message mm = *m;
        if (!e->full) {
            mm.has_query_message = mm.has_response_message = 0;
        }
        Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
        d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
        d.message = &mm;
        d.has_identity = 1;
        d.identity = bytes_of(e->identity);
        d.has_version = 1;
        d.version = bytes_of(e->version);
        if (e->extra) {
            d.has_extra = 1;
            d.extra = bytes_of(e->extra);
        }
        size_t len = dnstap__dnstap__get_packed_size(&d);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf) {
            metrics_add(t->dropped, NULL, 1);
            continue;
        }
        dnstap__dnstap__pack(&d, buf);
        if (fstrm_iothr_submit(e->iothr, e->ioq, buf, len, frame_free, e) !=
            fstrm_res_success) {
            free(buf);
            metrics_add(t->dropped, NULL, 1);
        }
    }
}

/* The wire form of a parsed message (malloc'd, *len), or NULL. */
uint8_t *dnstap_encode_msg(const dns_msg *src, size_t *len)
{
    dns_msg m;
    msg_init(&m);
    uint8_t *buf = NULL;
    if (msg_copy(&m, src) == 0 && (buf = malloc(65535))) {
        int n = msg_encode(&m, buf, 65535, 65535, 1);
        if (n < 0) {
            free(buf);
            buf = NULL;
        } else {
            *len = (size_t)n;
        }
    }
    msg_free(&m);
    return buf;
}

/* The client side of a CLIENT_* message: type, the client's address,
 * the transport and when the query came in. abuf holds the address. */
void dnstap_client_msg(Dnstap__Message *m, Dnstap__Message__Type type, const dns_req *r,
                       uint8_t abuf[16])
{
    m->type = type;
    dnstap_set_addr(m, (const struct sockaddr *)&r->peer, 0, abuf);
    m->has_socket_protocol = 1;
    m->socket_protocol = r->proto == PROTO_TCP ? DNSTAP__SOCKET_PROTOCOL__TCP
                                               : DNSTAP__SOCKET_PROTOCOL__UDP;
    uint64_t now = mono_ns();
    m->has_query_time_sec = m->has_query_time_nsec = 1;
    real_time(now > r->start_ns ? now - r->start_ns : 0, &m->query_time_sec,
              &m->query_time_nsec);
}

static void on_write(dns_req *r, void *data)
{
    const dnstap *t = data;
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    dnstap_client_msg(&m, DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, r, abuf);
    m.has_response_time_sec = m.has_response_time_nsec = 1;
    real_time(0, &m.response_time_sec, &m.response_time_nsec);
    uint8_t *wire = NULL;
    size_t wlen = 0;
    if (t->full && (wire = dnstap_encode_msg(&r->resp, &wlen))) {
        m.has_response_message = 1;
        m.response_message = (ProtobufCBinaryData){ wlen, wire };
    }
    emit(t, &m);
    free(wire);
}

static int dnstap_serve(const handler *h, dns_req *r)
{
    const dnstap *t = h->inst;
    if (r->proto == PROTO_INTERNAL)
        return plugin_next(h, r);
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    dnstap_client_msg(&m, DNSTAP__MESSAGE__TYPE__CLIENT_QUERY, r, abuf);
    if (t->full) {
        m.has_query_message = 1;
        m.query_message = (ProtobufCBinaryData){ r->rawlen, (uint8_t *)r->raw };
    }
    emit(t, &m);
    req_on_write(r, on_write, h->inst);
    return plugin_next(h, r);
}

/* msg_tap.forwarded (server/tap.h): forward's exchange with an upstream. */
static void tap_forwarded(const msg_tap *mt, const dns_req *r, const struct sockaddr *upstream,
                          socklen_t uplen, int tcp, const uint8_t *query, size_t qlen,
                          uint64_t rtt_ns, const dns_msg *resp)
{
    (void)r;
    (void)uplen;
    const dnstap *t = mt->data;
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    dnstap_set_addr(&m, upstream, 1, abuf);
    m.has_socket_protocol = 1;
    m.socket_protocol = tcp ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
    m.type = DNSTAP__MESSAGE__TYPE__FORWARDER_QUERY;
    m.has_query_time_sec = m.has_query_time_nsec = 1;
    real_time(rtt_ns, &m.query_time_sec, &m.query_time_nsec);
    if (t->full) {
        m.has_query_message = 1;
        m.query_message = (ProtobufCBinaryData){ qlen, (uint8_t *)query };
    }
    emit(t, &m);
    m.type = DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE;
    m.has_query_message = 0;
    m.has_response_time_sec = m.has_response_time_nsec = 1;
    real_time(0, &m.response_time_sec, &m.response_time_nsec);
    uint8_t *wire = NULL;
    size_t wlen = 0;
    if (t->full && (wire = dnstap_encode_msg(resp, &wlen))) {
        m.has_response_message = 1;
        m.response_message = (ProtobufCBinaryData){ wlen, wire };
    }
    emit(t, &m);
    free(wire);
}

/* ---- setup ------------------------------------------------------------ */

static void endpoint_free(endpoint *e)
{
    free(e->identity);
    free(e->version);
    free(e->extra);
}

static void dnstap_destroy(void *inst)
{
    dnstap *t = inst;
    if (!t)
        return;
    for (size_t i = 0; i < t->neps; i++) {
        if (t->eps[i].iothr)
            fstrm_iothr_destroy(&t->eps[i].iothr);
        SSL_CTX_free(t->eps[i].ctx);
        endpoint_free(&t->eps[i]);
    }
    free(t->eps);
    free(t);
}

static int set_str(cf_disp *d, char **out)
{
    if (!cf_next_arg(d))
        return cf_arg_err(d);
    free(*out);
    if (!(*out = strdup(cf_val(d))))
        return cf_err(d, "out of memory");
    if (cf_next_arg(d))
        return cf_arg_err(d);
    return 0;
}

static const char *const type_names[] = {
    NULL, "AUTH_QUERY", "AUTH_RESPONSE", "RESOLVER_QUERY", "RESOLVER_RESPONSE",
    "CLIENT_QUERY", "CLIENT_RESPONSE", "FORWARDER_QUERY", "FORWARDER_RESPONSE",
    "STUB_QUERY", "STUB_RESPONSE", "TOOL_QUERY", "TOOL_RESPONSE", "UPDATE_QUERY",
    "UPDATE_RESPONSE",
};

static int parse_endpoint(cf_disp *d, endpoint *e, const char *arg)
{
    int tls = strncmp(arg, "tls://", 6) == 0;
    if (tls || strncmp(arg, "tcp://", 6) == 0) {
        const char *hp = arg + 6, *colon = strrchr(hp, ':');
        char host[256];
        size_t hl = colon ? (size_t)(colon - hp) : 0;
        if (!colon || hl == 0 || hl >= sizeof host || !colon[1] || strlen(colon + 1) > 5)
            return cf_err(d, "plugin/dnstap: invalid %s endpoint '%s' (%s://HOST:PORT)",
                          tls ? "tls" : "tcp", arg, tls ? "tls" : "tcp");
        memcpy(host, hp, hl);
        host[hl] = '\0';
        if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
            memmove(host, host + 1, hl - 2);
            host[hl - 2] = '\0';
        }
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end || port < 1 || port > 65535)
            return cf_err(d, "plugin/dnstap: invalid port in '%s'", arg);
        e->tcp = 1;
        e->tls = tls;
        snprintf(e->addr, sizeof e->addr, "%s", host);
        snprintf(e->port, sizeof e->port, "%ld", port);
        struct sockaddr_storage ss;
        socklen_t sl;
        e->host_is_ip = addr_parse_ip(host, 0, &ss, &sl) == 0;
        /* a name is resolved here, once (an address takes the same path,
         * without a lookup) */
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                  .ai_flags = e->host_is_ip ? AI_NUMERICHOST : 0 }, *res = NULL;
        int rc = getaddrinfo(host, e->port, &hints, &res);
        if (rc != 0)
            return cf_err(d, "plugin/dnstap: cannot resolve '%s' in '%s': %s", host, arg,
                          gai_strerror(rc));
        e->nsa = 0;
        for (struct addrinfo *ai = res; ai && e->nsa < DNSTAP_ADDRS; ai = ai->ai_next) {
            if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
                ai->ai_addrlen > sizeof e->sa[0])
                continue;
            memcpy(&e->sa[e->nsa], ai->ai_addr, ai->ai_addrlen);
            e->salen[e->nsa++] = ai->ai_addrlen;
        }
        freeaddrinfo(res);
        if (!e->nsa)
            return cf_err(d, "plugin/dnstap: '%s' has no IPv4 or IPv6 address", host);
        return 0;
    }
    if (strstr(arg, "://") && strncmp(arg, "unix://", 7) != 0)
        return cf_err(d, "plugin/dnstap: endpoint '%s' is not supported by topodns "
                      "(unix://, tcp:// or tls://)", arg);
    const char *path = strncmp(arg, "unix://", 7) == 0 ? arg + 7 : arg;
    if (!*path || strlen(path) >= sizeof e->path)
        return cf_err(d, "plugin/dnstap: invalid socket path '%s'", arg);
    snprintf(e->path, sizeof e->path, "%s", path);
    struct sockaddr_un *su = (struct sockaddr_un *)&e->sa[0];
    su->sun_family = AF_UNIX;
    snprintf(su->sun_path, sizeof su->sun_path, "%s", path);
    e->salen[0] = sizeof *su;
    e->nsa = 1;
    return 0;
}

static int parse_one(cf_disp *d, endpoint *e)
{
    const char *args[4];
    int n = cf_remaining_args(d, args, 4);
    if (n < 1 || n > 2)
        return cf_arg_err(d);
    if (n == 2 && strcmp(args[1], "full") != 0)
        return cf_err(d, "plugin/dnstap: unknown argument '%s' (only 'full')", args[1]);
    e->full = n == 2;
    if (parse_endpoint(d, e, args[0]) < 0)
        return -1;
    e->types = ~0u;
    while (cf_next_block(d)) {
        const char *p = cf_val(d);
        if (!strcmp(p, "skipverify")) {
            /* as CoreDNS: taken on any endpoint, used by tls:// */
            if (cf_next_arg(d))
                return cf_arg_err(d);
            e->skipverify = 1;
        } else if (!strcmp(p, "identity")) {
            if (set_str(d, &e->identity) < 0)
                return -1;
        } else if (!strcmp(p, "version")) {
            if (set_str(d, &e->version) < 0)
                return -1;
        } else if (!strcmp(p, "extra")) {
            if (set_str(d, &e->extra) < 0)
                return -1;
            if (strchr(e->extra, '{'))
                return cf_err(d, "plugin/dnstap: placeholders in extra are not supported "
                              "by topodns");
        } else if (!strcmp(p, "message_types")) {
            uint32_t types = 0;
            int any = 0;
            while (cf_next_arg(d)) {
                any = 1;
                size_t k = 1;
                for (; k < sizeof type_names / sizeof type_names[0]; k++)
                    if (!strcmp(cf_val(d), type_names[k]))
                        break;
                if (k < sizeof type_names / sizeof type_names[0])
                    types |= 1u << k;
                else
                    log_warning("plugin/dnstap: Unknown message type: %s", cf_val(d));
            }
            if (!any)
                return cf_arg_err(d);
            if (!types)
                log_warning("plugin/dnstap: No valid message types specified, enabling all "
                            "message types");
            e->types = types ? types : ~0u;
        } else {
            return cf_prop_err(d);
        }
    }
    if (!e->identity) {
        char host[256] = "";
        if (gethostname(host, sizeof host - 1) < 0)
            host[0] = '\0';
        if (!(e->identity = strdup(host)))
            return cf_err(d, "out of memory");
    }
    if (!e->version && !(e->version = strdup("topodns-" TOPODNS_VERSION)))
        return cf_err(d, "out of memory");
    return 0;
}

static int dnstap_parse(cf_disp *d, dnstap *t)
{
    while (cf_next(d)) {
        if (VEC_RESIZE(t->eps, t->neps + 1) < 0)
            return cf_err(d, "out of memory");
        endpoint *e = &t->eps[t->neps++];
        memset(e, 0, sizeof *e);
        e->tok = &d->toks[d->cur];
        if (parse_one(d, e) < 0)
            return -1;
        t->full |= e->full;
    }
    return 0;
}

static int dnstap_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    dnstap *t = calloc(1, sizeof *t);
    if (!t)
        return cf_err(d, "out of memory");
    if (dnstap_parse(d, t) < 0) {
        dnstap_destroy(t);
        return -1;
    }
    t->tap.forwarded = tap_forwarded;
    t->tap.data = t;
    if (ctx) {
        t->dropped = metrics_family(instance_metrics(ctx->ins), "coredns_dnstap_dropped_total",
                                    "Counter of dnstap messages dropped because the queue to "
                                    "the collector was full or the message could not be "
                                    "encoded.", METRIC_COUNTER, NULL, NULL, 0);
        for (size_t i = 0; i < t->neps; i++)
            t->eps[i].dropped = t->dropped;
        if (block_set_value(ctx->blk, TAP_KEY, &t->tap, NULL) < 0) {
            dnstap_destroy(t);
            return cf_err(d, "out of memory");
        }
    }
    *inst = t;
    return 0;
}

/* ---- the socket under fstrm's writer (I/O thread) ---------------------- */

static fstrm_res sock_close(void *obj)
{
    endpoint *e = obj;
    atomic_store(&e->connected, 0);
    if (e->ssl) {
        SSL_shutdown(e->ssl);       /* best effort: one close_notify, not waited for */
        SSL_free(e->ssl);
        e->ssl = NULL;
    }
    if (e->fd >= 0)
        close(e->fd);
    e->fd = -1;
    return fstrm_res_success;
}

/* A connected socket to one of e's addresses, or -1. */
static int sock_connect(const endpoint *e)
{
    for (int i = 0; i < e->nsa; i++) {
        int fd = socket(e->sa[i].ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        struct timeval tv = { .tv_sec = 2 };
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (connect(fd, (const struct sockaddr *)&e->sa[i], e->salen[i]) == 0)
            return fd;
        close(fd);
    }
    return -1;
}

/* TLS over e->fd: SNI and the certificate checked for HOST (a name or an
 * address) unless skipverify. 0 when the handshake completed. */
static int tls_open(endpoint *e)
{
    assert(e->ctx && e->fd >= 0 && !e->ssl);
    SSL *ssl = SSL_new(e->ctx);
    if (!ssl)
        return -1;
    int ok = SSL_set_fd(ssl, e->fd) == 1;
    if (ok && !e->host_is_ip)
        ok = SSL_set_tlsext_host_name(ssl, e->addr) == 1;
    if (ok && !e->skipverify) {
        SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
        ok = e->host_is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), e->addr) == 1
                           : SSL_set1_host(ssl, e->addr) == 1;
    }
    if (ok && SSL_connect(ssl) == 1) {
        e->ssl = ssl;
        return 0;
    }
    unsigned long err = ERR_peek_error();
    char why[256] = "handshake failed";
    if (err)
        ERR_error_string_n(err, why, sizeof why);
    long vr = SSL_get_verify_result(ssl);
    if (vr != X509_V_OK)
        snprintf(why, sizeof why, "certificate: %s", X509_verify_cert_error_string(vr));
    log_error("plugin/dnstap: No connection to dnstap endpoint: tls %s:%s: %s", e->addr, e->port,
              why);
    ERR_clear_error();
    SSL_free(ssl);
    return -1;
}

static fstrm_res sock_open(void *obj)
{
    endpoint *e = obj;
    sock_close(e);
    int fd = sock_connect(e);
    if (fd < 0)
        return fstrm_res_failure;
    e->fd = fd;
    if (e->tls && tls_open(e) < 0) {
        close(fd);
        e->fd = -1;
        return fstrm_res_failure;
    }
    atomic_store(&e->connected, 1);
    return fstrm_res_success;
}

static fstrm_res sock_read(void *obj, void *data, size_t count)
{
    endpoint *e = obj;
    uint8_t *p = data;
    while (count > 0) {
        ssize_t n;
        if (e->ssl) {
            int r = SSL_read(e->ssl, p, count > INT_MAX ? INT_MAX : (int)count);
            if (r <= 0) {
                ERR_clear_error();
                return fstrm_res_failure;
            }
            n = r;
        } else {
            n = read(e->fd, p, count);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fstrm_res_failure;
        p += n;
        count -= (size_t)n;
    }
    return fstrm_res_success;
}

static fstrm_res sock_write(void *obj, const struct iovec *iov, int iovcnt)
{
    endpoint *e = obj;
    if (e->ssl) {
        /* blocking SSL_write without partial writes: each buffer whole */
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].iov_len == 0)
                continue;
            if (iov[i].iov_len > INT_MAX ||
                SSL_write(e->ssl, iov[i].iov_base, (int)iov[i].iov_len) <= 0) {
                ERR_clear_error();
                return fstrm_res_failure;
            }
        }
        return fstrm_res_success;
    }
    struct iovec *v = malloc((size_t)(iovcnt > 0 ? iovcnt : 1) * sizeof *v);
    if (!v)
        return fstrm_res_failure;
    memcpy(v, iov, (size_t)iovcnt * sizeof *v);
    struct iovec *cur = v;
    int left = iovcnt;
    fstrm_res rc = fstrm_res_success;
    while (left > 0) {
        struct msghdr mh = { .msg_iov = cur, .msg_iovlen = (size_t)left };
        ssize_t n = sendmsg(e->fd, &mh, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = fstrm_res_failure;
            break;
        }
        while (left > 0 && (size_t)n >= cur->iov_len) {
            n -= (ssize_t)cur->iov_len;
            cur++;
            left--;
        }
        if (left > 0) {
            cur->iov_base = (uint8_t *)cur->iov_base + n;
            cur->iov_len -= (size_t)n;
        }
    }
    free(v);
    return rc;
}

/* The writer and I/O thread of one endpoint. */
static int endpoint_start(endpoint *e, char *err, size_t errlen)
{
    struct fstrm_writer_options *wopt = fstrm_writer_options_init();
    struct fstrm_iothr_options *iopt = fstrm_iothr_options_init();
    struct fstrm_writer *w = NULL;
    int rc = -1;
    if (!wopt || !iopt ||
        fstrm_writer_options_add_content_type(wopt, DNSTAP_CONTENT, strlen(DNSTAP_CONTENT)) !=
            fstrm_res_success)
        goto out;
    e->fd = -1;
    if (e->tls && !e->ctx) {
        /* the system's CAs, as CoreDNS's Go TLS client uses */
        if (!(e->ctx = SSL_CTX_new(TLS_client_method())))
            goto out;
        SSL_CTX_set_min_proto_version(e->ctx, TLS1_2_VERSION);
        tls_load_system_cas(e->ctx);
    }
    struct fstrm_rdwr *rw = fstrm_rdwr_init(e);
    if (!rw)
        goto out;
    fstrm_rdwr_set_open(rw, sock_open);
    fstrm_rdwr_set_close(rw, sock_close);
    fstrm_rdwr_set_read(rw, sock_read);
    fstrm_rdwr_set_write(rw, sock_write);
    w = fstrm_writer_init(wopt, &rw);
    if (!w && rw)
        fstrm_rdwr_destroy(&rw);
    if (!w)
        goto out;
    fstrm_iothr_options_set_queue_model(iopt, FSTRM_IOTHR_QUEUE_MODEL_MPSC);
    fstrm_iothr_options_set_num_input_queues(iopt, 1);
    fstrm_iothr_options_set_input_queue_size(iopt, DNSTAP_QUEUE);
    e->iothr = fstrm_iothr_init(iopt, &w);
    if (!e->iothr) {
        fstrm_writer_destroy(&w);
        goto out;
    }
    e->ioq = fstrm_iothr_get_input_queue(e->iothr);
    rc = e->ioq ? 0 : -1;
out:
    if (rc < 0)
        snprintf(err, errlen, "%s:%d: plugin/dnstap: cannot start the writer for %s%s%s%s",
                 e->tok->file, e->tok->line, e->tcp ? e->addr : e->path, e->tcp ? ":" : "",
                 e->tcp ? e->port : "", "");
    if (wopt)
        fstrm_writer_options_destroy(&wopt);
    if (iopt)
        fstrm_iothr_options_destroy(&iopt);
    return rc;
}

static int dnstap_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    dnstap *t = inst;
    for (size_t i = 0; i < t->neps; i++)
        if (endpoint_start(&t->eps[i], err, errlen) < 0)
            return -1;
    return 0;
}

static void dnstap_stop(void *inst)
{
    dnstap *t = inst;
    for (size_t i = 0; i < t->neps; i++) {
        t->eps[i].ioq = NULL;
        if (t->eps[i].iothr)
            fstrm_iothr_destroy(&t->eps[i].iothr);
    }
}

const plugin_def plugin_dnstap = {
    .name = "dnstap",
    .setup = dnstap_setup,
    .start = dnstap_start,
    .stop = dnstap_stop,
    .destroy = dnstap_destroy,
    .serve = dnstap_serve,
};
