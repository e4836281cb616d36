/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.h — small HTTP endpoints (health, ready, metrics, explain).
 *
 * Each instance runs one HTTP thread with its own libevent loop. Plugins
 * register a path on an address from their start(); registrations on the same
 * address share one listener. Listeners are bound with SO_REUSEPORT so that a
 * reloaded instance can bind before the old one lets go. Handlers run on the
 * HTTP thread and never on a DNS worker.
 *
 * Addresses are written as in CoreDNS: ":8080" (all interfaces),
 * "localhost:9153", "127.0.0.1:8181", "[::1]:8080".
 *
 * Bounds (docs/security.md), per listener:
 *  - a request's line and header fields, with their line ends and the
 *    blank line, are at most HTTP_MAX_HEADER_BYTES: more gets "431 Request
 *    Header Fields Too Large" and the connection closes (the server stops
 *    sending, reads and drops what still comes for HTTP_REJECT_LINGER_MS,
 *    then closes, so that the client reads the answer rather than a reset);
 *  - a body is at most HTTP_MAX_BODY_BYTES (libevent's "413 Request Entity
 *    Too Large" beyond);
 *  - a request (headers and body) must have arrived HTTP_READ_TIMEOUT_S
 *    after the connection was accepted or the previous answer was handed to
 *    the kernel, however slowly it trickles; an answer must be handed to
 *    the kernel within HTTP_WRITE_TIMEOUT_S; otherwise the connection is
 *    closed (an idle kept-alive connection too);
 *  - at most HTTP_MAX_CONNS connections are open: a new one beyond closes
 *    the connection that has been waiting for its request the longest, or,
 *    when every open one is being answered, is closed itself;
 *  - accept() errors (out of descriptors) pause the listener (accept.h).
 */
#ifndef TOPODNS_HTTP_H
#define TOPODNS_HTTP_H

#include <stddef.h>

#define HTTP_MAX_HEADER_BYTES 8192
#define HTTP_MAX_BODY_BYTES 8192
#define HTTP_MAX_CONNS 256
#define HTTP_READ_TIMEOUT_S 5
#define HTTP_WRITE_TIMEOUT_S 5
#define HTTP_REJECT_LINGER_MS 500

struct evhttp_request;
struct instance;

typedef void (*http_handler_fn)(struct evhttp_request *req, void *data);

/* Bind (if not yet bound for this instance) and route path → fn; the
 * socket listens from http_start(). 0, or -1 with err ("listen tcp :8080:
 * bind: address already in use"). */
int http_register(struct instance *ins, const char *addr, const char *path,
                  http_handler_fn fn, void *data, char *err, size_t errlen);
/* Listen on the instance's sockets and start its HTTP thread (after every
 * plugin registered, when the instance starts serving). */
int http_start(struct instance *ins, char *err, size_t errlen);
/* Close the instance's listeners and stop its thread. */
void http_stop(struct instance *ins);

/* ---- additions (obs): address checks for setup, and lameduck ---------- */
/* Check an address as Go's net.SplitHostPort does ("host:port", "[v6]:port",
 * ":port"; numeric port 0-65535). 0, or -1 with err ("address foo: missing
 * port in address"). Plugins call it from setup() so a bad address stops
 * startup at the right Corefile line. */
int http_addr_check(const char *addr, char *err, size_t errlen);
/* The process is shutting down (lameduck started): /ready answers 503
 * "Shutting down" from now on while /health still answers 200. main() calls
 * http_set_draining(ins) before it waits the lameduck. */
void http_set_draining(struct instance *ins);
int http_draining(struct instance *ins);

/* Setup helper for `NAME [ADDRESS]` directives (health, ready, prometheus):
 * reads the rest of the current line; with an address, checks it and copies
 * it into addr. 0, or -1 with the dispenser's error set. */
struct cf_disp;
int http_addr_arg(struct cf_disp *d, const char *plugin, char *addr, size_t cap);

/* For tests (tests/fuzz/fuzz_http.c), on an instance whose plugins started
 * but whose HTTP thread did not (instance_prepare without instance_serve):
 * http_accept_on() makes the listener of addr also accept connections on
 * fd, a listening stream socket the caller made (e.g. a Unix socket; 0, or
 * -1 when the instance has no listener for addr; the server owns fd from
 * then on); http_run_once() runs the instance's HTTP loop once without
 * waiting, on the caller's thread (event_base_loop's result, -1 when the
 * HTTP thread runs). */
int http_accept_on(struct instance *ins, const char *addr, int fd);
int http_run_once(struct instance *ins);

/* The end of a request's header block in a stream read piece by piece, as
 * libevent's parser finds it: a line end (LF, or CR LF) followed by an
 * empty line. *state (0 at the start of a request) carries what the
 * previous pieces ended with. Returns how many octets of p, up to and
 * including the empty line's end, complete the block, or 0 when p does not
 * complete it (then *state is updated for the next piece). */
size_t http_header_end(int *state, const void *p, size_t n);

#endif
