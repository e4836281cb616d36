/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.h — the life of one query, and the plugin chain it runs through.
 *
 * A worker reads a packet, parses it into req->q, finds the server block whose
 * zone is the longest suffix of the qname and calls the first handler of that
 * block's chain. Handlers are plugin instances in plugin.cfg order; each one
 * either answers (fills req->resp and calls req_write()), passes the query on
 * with plugin_next(), or returns an error rcode without writing.
 *
 * serve() returns, like CoreDNS's ServeDNS:
 *   - the rcode it wrote (after req_write()), or
 *   - an rcode without writing: SERVFAIL/REFUSED/FORMERR/NOTIMP make the
 *     server write a bare reply carrying that rcode, or
 *   - REQ_ASYNC: the handler keeps the request and finishes it later, from the
 *     same worker's event loop, with req_finish(req, rcode). Until then the
 *     request stays alive; nothing else may touch it, or
 *   - what req_drop() returns: the query gets no reply at all.
 *
 * Wrapping plugins observe or change what an inner plugin writes by
 * registering hooks before calling plugin_next():
 *   - req_on_write(): runs when an inner plugin calls req_write(), before the
 *     reply goes out, innermost hook first (cache stores the reply,
 *     loadbalance shuffles it). A bare error reply written by the server does
 *     not pass through these, as in CoreDNS.
 *   - req_on_done(): runs once when the request is finished, whatever
 *     happened, innermost first (log, prometheus and errors report here).
 *   - req_on_finish(): runs once when the chain has ended (req_finish),
 *     innermost first, before the server writes a bare error reply for a
 *     handler that returned SERVFAIL/REFUSED/FORMERR/NOTIMP without writing.
 *     A hook may write the reply itself with req_write(): rewrite answers
 *     such errors through its own write hook, as CoreDNS's rewrite does,
 *     whether the handler after it returned at once or finished later.
 *
 * A write hook that must wait before the reply may go out (rewrite's cname
 * rule looks the new target up) calls req_hold_write() from inside the
 * hook: the hooks outside it and the sending wait until the hook's owner
 * calls req_release_write() from the request's event loop. A req_finish()
 * that comes meanwhile is completed right after the held reply went out.
 *
 * A handler that rewrites the query for the handlers after it (rewrite)
 * replaces it with req_set_query(): r->q and r->raw then hold the new query,
 * and log and prometheus report it, as CoreDNS's plugins see the rewritten
 * message.
 *
 * The serving path never blocks: a handler that needs the network uses the
 * worker's event base (req_event_base()).
 */
#ifndef TOPODNS_REQUEST_H
#define TOPODNS_REQUEST_H

#include <stdint.h>
#include <sys/socket.h>
#include "wire/msg.h"

#define REQ_ASYNC (-1)
#define REQ_MAX_HOOKS 8
#define REQ_MAX_META 24

enum req_proto { PROTO_UDP, PROTO_TCP, PROTO_INTERNAL };

struct handler;
struct dns_req;
struct server_block;
struct event_base;

typedef void (*req_write_hook)(struct dns_req *r, void *data);
typedef void (*req_done_hook)(struct dns_req *r, int rcode, void *data);

typedef struct req_hook {
    union { req_write_hook w; req_done_hook d; } fn;
    void *data;
} req_hook;

/* A metadata value (req_meta_set): computed when read, written into buf
 * (cap octets) and returned, or NULL when there is none for this request.
 * key is the label asked for (one callback may serve several). */
typedef const char *(*req_meta_fn)(const struct dns_req *r, const char *key, const void *data,
                                   char *buf, size_t cap);

typedef struct req_meta {
    const char *key;
    req_meta_fn fn;
    const void *data;
} req_meta;

typedef struct dns_req {
    dns_msg q;                       /* the query as parsed */
    dns_msg resp;                    /* the reply being built */
    const uint8_t *raw;              /* the query (as rewritten: req_set_query) */
    size_t rawlen;
    size_t rawlen_in;                /* octets of the query as received */
    struct sockaddr_storage peer;    /* client address */
    struct sockaddr_storage local;   /* our address the query came to */
    enum req_proto proto;
    uint64_t start_ns;               /* monotonic clock at receipt */
    const struct server_block *block;/* matched block */
    const char *zone;                /* matched zone in presentation form */
    const char *view;                /* the matched block's view, or NULL */
    const char *server;              /* "dns://:53" as in metrics labels */
    int written;                     /* a reply went out */
    int noreply;                     /* req_drop(): none will */
    const char *writer;              /* plugin that wrote it, "" for the server */
    size_t resp_size;                /* octets sent (every message) */
    unsigned nsent;                  /* messages sent: 1, or more for a
                                      * transfer (req_write_more) */
    unsigned nwrite, ndone;
    req_hook write_hooks[REQ_MAX_HOOKS];
    req_hook done_hooks[REQ_MAX_HOOKS];
    char err[256];                   /* error text for the errors plugin */
    const char *err_plugin;
    struct worker *worker;
    /* Topology (src/topology/topology.h): what of the client the answer
     * depended on, TOPO_DEP_* (0: nothing), and whether the client was
     * located by its ECS address. Set via topo_mark() by the plugin that
     * answered; the cache keys stored answers on topo_dep, and the reply's
     * ECS scope is full only when both are set. */
    uint8_t topo_dep;
    uint8_t topo_ecs;
    /* The answer's owner names are the writer's own spelling, not the
     * question's as asked (template writes the lower-cased name, as
     * CoreDNS's does): set by that writer before req_write; a cache then
     * serves the stored owners as they are instead of in the asking
     * query's case. */
    uint8_t owners_own_case;
    /* Internal requests a handler starts while serving another (a
     * kubernetes ExternalName chase) carry the nesting depth: 0 for a
     * client's query, the parent's + 1, set by the plugin that starts it,
     * so that queries leading back into the same plugin stop somewhere. */
    unsigned depth;
    /* A sub-request whose records the parent copies into a reply sent as
     * is to a UDP client (autopath with no writer wrapped around it): the
     * parent's req_max_size(), which a handler may use as req_max_size()
     * to stop building records that could not be sent (the parent's reply
     * is truncated to it anyway). 0: no such bound. Set by req_new_sub(),
     * read by handlers through req_reply_budget(). */
    size_t sub_max_size;
    /* Metadata (req_meta_set/req_meta_get): labelled values the providers
     * of a block with the metadata plugin registered before the chain ran. */
    int meta_on;                     /* req_meta_enable() */
    unsigned nmeta;
    req_meta meta[REQ_MAX_META];
    void *transport;                 /* private to the server */
} dns_req;

/* Pass the request to the handler after h. With no next handler the result is
 * SERVFAIL with the error "plugin/<name>: no next plugin found". */
int plugin_next(const struct handler *h, dns_req *r);
/* Send r->resp to the client: echo EDNS, apply size limits and truncation,
 * run the write hooks, record the writer. Returns the rcode written.
 * r->resp is a reply (msg_reply_to(), or a copy of a reply): its QR bit is
 * set, which the server asserts of every message it sends, so a query's
 * own octets never go back to its client. */
int req_write(dns_req *r, const struct handler *writer);
/* Several messages for one request (a zone transfer, RFC 5936): after
 * req_write() sent the first, a handler refills r->resp (msg_reply_to()
 * and its records) and sends each further message with req_write_more(),
 * encoded and sized as req_write()'s (EDNS echoed, at most 65535 octets)
 * and queued on the connection in order. The write hooks ran for the first
 * message only; r->resp_size counts every message. Only over TCP: -1 for
 * any other transport, before req_write(), after the request finished, or
 * when the client has gone (the handler should stop); else 0. */
int req_write_more(dns_req *r);
/* Flow control for such a handler: it sends the next message only when
 * the client's connection has room for it, so that a client that reads
 * slowly, or not at all, holds at most about REQ_OUTPUT_LOW octets plus
 * one message of queued output, and the worker serves other queries
 * meanwhile. req_when_writable(r, fn, arg) makes the transport call
 * fn(r, ok, arg) once, never from inside this call:
 *   ok 1: the octets queued on r's connection are at most REQ_OUTPUT_LOW
 *     (on the next turn of r's event loop when they already are; else
 *     when the client has read enough of them);
 *   ok 0: the connection has closed meanwhile (the client went away, a
 *     `timeouts` deadline passed, or the worker stops: then from the
 *     thread that stops it, after its loop ended). The handler stops.
 * Either way fn owns r again: it sends more and waits again, or finishes
 * r with req_finish(). One wait per request at a time. Returns 0; -1 when
 * r cannot wait (not over TCP, finished, its connection already closed, a
 * wait pending): fn will not be called, and the handler stops. The
 * connection's `write` deadline restarts each time the client has read its
 * queue down to REQ_OUTPUT_LOW (src/server/tcp.c). */
#define REQ_OUTPUT_LOW (64 * 1024)
typedef void (*req_writable_fn)(struct dns_req *r, int ok, void *arg);
int req_when_writable(dns_req *r, req_writable_fn fn, void *arg);
/* Raw replies — the one fast path of the request layer, kept small. A
 * handler that already holds its reply's octets (the kubernetes plugin's
 * pre-rendered answers) may send them without filling r->resp's records:
 *   req_raw_ok(r): 1 when r may be answered raw: a client's query (UDP or
 *     TCP: internal requests are read back from r->resp by whoever started
 *     them), nothing written yet, and no write hook registered — a write
 *     hook (cache, loadbalance, rewrite, minimal, ...) needs r->resp's
 *     records, so with one the handler must use req_write().
 *   req_write_raw(r, writer, wire, len): wire is the whole reply without
 *     EDNS (QR set): header (ARCOUNT 0) + question + records, exactly as
 *     msg_encode() writes them uncompressed. The server fills r->resp's
 *     header and question (msg_reply_to, the flags and rcode of wire) for
 *     the done hooks (log, prometheus, errors: they see no records),
 *     echoes EDNS as req_write() does and appends the OPT record, and
 *     sends the octets when the whole fits the client's limit without
 *     compression (over UDP: at most 1480 octets for IPv4, 1220 for IPv6,
 *     as req_write() compresses above). Returns the rcode written, or -1
 *     when nothing was sent (not allowed, or too large): the handler then
 *     answers with req_write() as usual, which compresses or truncates. */
int req_raw_ok(const dns_req *r);
/* The octets a reply to r may hold beyond fixed (its header and question)
 * for a handler that stops building records past it: req_max_size() when
 * the reply goes out as is (req_raw_ok), a sub-request's sub_max_size when
 * set, else SIZE_MAX (a writer or a parent wants every record). */
size_t req_reply_budget(const dns_req *r, size_t fixed);
int req_write_raw(dns_req *r, const struct handler *writer, const uint8_t *wire, size_t len);
/* The index of the worker thread serving r (0 .. workers-1): per-worker
 * state of a plugin instance (touched by that worker only) is kept by it;
 * -1 for a request no worker serves (internal, tests). */
int req_worker_index(const dns_req *r);
/* Send no reply at all (the acl plugin's drop): serve() returns what this
 * returns (NOERROR). Nothing goes out; the done hooks still run, with
 * r->written 0 and rcode NOERROR, as CoreDNS reports a query that a plugin
 * swallowed. */
int req_drop(dns_req *r);
/* Finish a request that a handler took with REQ_ASYNC. */
void req_finish(dns_req *r, int rcode);
/* Record an error for the errors plugin (printf-style). */
void req_error(dns_req *r, const char *plugin, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int req_on_write(dns_req *r, req_write_hook fn, void *data);
int req_on_done(dns_req *r, req_done_hook fn, void *data);

/* Metadata, CoreDNS's plugin/metadata: a per-request store of labelled
 * values ("kubernetes/namespace" → "testns"). The metadata plugin, first in
 * the chain, asks every provider of its block (plugin_def.metadata) to
 * register theirs; any plugin reads them later on the same thread (the log
 * plugin's {/LABEL} from its done hook). A value is a callback evaluated
 * when read, so registering costs nothing; key and data must outlive the
 * request (plugin instance memory). Setting a key again replaces its value.
 * The store is off until the metadata plugin turns it on for the request
 * (req_meta_enable), as CoreDNS has no metadata without that plugin:
 * req_meta_set returns 0, or -1 when the store is off or REQ_MAX_META
 * values are set. */
void req_meta_enable(dns_req *r);
int req_meta_set(dns_req *r, const char *key, req_meta_fn fn, const void *data);
/* The value of label for this request (written into buf), or NULL when no
 * provider set it or its callback has none. */
const char *req_meta_get(const dns_req *r, const char *label, char *buf, size_t cap);
int req_on_finish(dns_req *r, req_done_hook fn, void *data);
/* From inside a write hook: keep the reply until req_release_write(). */
void req_hold_write(dns_req *r);
/* Run the remaining write hooks, send the held reply, and complete a
 * req_finish() that came while it was held (r may be gone afterwards).
 * Called later from the request's event loop, never from inside the hook
 * that held the reply. */
void req_release_write(dns_req *r);
/* Replace the query handlers after this one see: wire is parsed into r->q
 * and copied to the server's buffer behind r->raw (valid as long as the
 * request). 0, or -1 when it does not parse or memory runs out (r is then
 * unchanged). */
int req_set_query(dns_req *r, const uint8_t *wire, size_t len);
struct event_base *req_event_base(const dns_req *r);
/* Family of the client: 1 IPv4, 2 IPv6 (as in metrics). */
int req_family(const dns_req *r);
/* Client address and port as text. */
void req_peer_str(const dns_req *r, char *addr, size_t alen, int *port);
/* 1 when the request's instance has debug logging on (instance_set_debug),
 * else 0: the one reader of that switch. A plugin writes its log_debug() lines,
 * and the core its dump of a packet it cannot take, only then. */
int req_debug(const dns_req *r);
/* Largest reply the client accepts over this transport. */
size_t req_max_size(const dns_req *r);
/* Change the query as the handlers after this one see it, in its parsed
 * form (r->q) and in the octets a forwarding plugin sends on (r->raw)
 * together, as a CoreDNS plugin changing the *dns.Msg it passes on:
 * the EDNS UDP size of a query with an OPT record (the bufsize plugin);
 * nothing for a query without one. */
void req_set_query_udp_size(dns_req *r, uint16_t size);
/* The same for the header flags (F_* bits; the opcode and rcode are kept):
 * the header plugin's query rules. */
void req_set_query_flags(dns_req *r, uint16_t flags);
/* CoreDNS's ClientWrite: 1 when a handler returning this rcode is expected
 * to have written the reply itself; 0 for SERVFAIL, REFUSED, FORMERR and
 * NOTIMP, which the server answers with a bare reply. */
int rcode_client_write(int rcode);

/* Internal requests: a query that comes from inside topodns or from a test
 * rather than a socket. req_new_internal() parses wire (NULL on FORMERR),
 * peer is the client address to pretend ("127.0.0.1"; NULL for 127.0.0.1).
 * req_run() routes it through the instance exactly as a UDP query would be
 * (zone match, chain, bare error replies, hooks), with a 64 KiB size limit.
 * When it returns (handlers that went REQ_ASYNC need the event base given to
 * req_new_internal to run), r->resp holds the reply as sent, r->written and
 * r->writer say who wrote it; the return value is the final rcode.
 *
 * req_start() routes it the same way without waiting: the caller, serving
 * on base's thread, registers a done hook first and reads the reply there.
 * The request finishes — before req_start returns, or later from base's
 * loop — and is freed by the server right after its done hooks ran; the
 * caller never frees it and must not touch it once the hook has run. */
struct instance;
dns_req *req_new_internal(struct instance *ins, struct event_base *base,
                          const uint8_t *wire, size_t len, const char *peer);
int req_run(dns_req *r);
void req_start(dns_req *r);
/* Sub-requests: a handler asks the rest of its own chain another question
 * (autopath's search-path expansions; CoreDNS calls its next handler with
 * a writer that keeps the reply). req_new_sub() parses wire into an
 * internal request that keeps the parent's client and local addresses,
 * block, zone, server label, instance and event base, with depth + 1;
 * NULL on FORMERR or out of memory. req_start_next() runs it from the
 * handler after h, as plugin_next() would (no next handler: SERVFAIL with
 * "no next plugin found"), with no zone matching, and its lifetime is
 * req_start()'s: register a done hook first and read the reply there; the
 * server frees it after its done hooks ran. Call both on the parent's
 * worker while it serves. */
dns_req *req_new_sub(const dns_req *parent, const uint8_t *wire, size_t len);
void req_start_next(dns_req *sub, const struct handler *h);
/* Encoded reply of an internal request (valid until req_free). */
const uint8_t *req_reply_wire(const dns_req *r, size_t *len);
void req_free(dns_req *r);

#endif
