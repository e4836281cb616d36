/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup.h — questions a handler asks the whole server while it answers a
 * client: CoreDNS's upstream Lookup. The kubernetes plugin's ExternalName
 * targets, k8s_external's load-balancer hostnames, template's CNAME targets
 * and rewrite's new CNAME target are each a new query from the top of the
 * server (cache, forward, hosts, file… whatever the Corefile routes that
 * name to), answered asynchronously so that no worker waits for an upstream.
 *
 * A handler collects its questions in a lookup set, starts them all with
 * lookup_run(), and reads each reply with lookup_reply() once they have all
 * finished:
 *
 *     lookup_set *s = lookup_new(ins, r, MAX_DEPTH, LOOKUP_CLIENT_RD);
 *     lookup_add(s, name, T_A);                 // index 0, or -1: not asked
 *     if (lookup_run(s, all_done, w))           // w owns s from here on
 *         return REQ_ASYNC;                     // all_done(s, w) comes later
 *     rc = write_the_reply(w);                  // every reply is in
 *
 * Each question is an internal request (request.h, req_new_internal) on the
 * event base of the request being answered, with the client's EDNS size
 * and DO bit, and depth r->depth + 1; a set made at max_depth asks nothing
 * (lookup_add returns -1), so names that lead back into the same plugin
 * stop. The flags choose what else the question copies from the client.
 *
 * Threads and memory: everything happens on r's worker, inside the handler
 * and later from that worker's event loop. The caller owns the set and
 * frees it with lookup_free() — before lookup_run(), after it returned 0,
 * or inside or after its done callback. Replies stay valid until then. The
 * request r must stay alive until done ran (a handler that returned
 * REQ_ASYNC keeps it; req_hold_write() holds a reply). The sub-requests
 * belong to the server once started, which frees them after their replies
 * were copied into the set.
 */
#ifndef TOPODNS_LOOKUP_H
#define TOPODNS_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include "server/request.h"

struct instance;
typedef struct lookup_set lookup_set;

enum {
    LOOKUP_CLIENT_RD = 1,   /* RD as the client set it (else always set) */
    LOOKUP_CLIENT_PEER = 2, /* the client's address as the question's source
                             * (acl, view, topology see the client; else
                             * 127.0.0.1) */
    LOOKUP_TCP_65535 = 4,   /* a TCP client without EDNS asks with EDNS
                             * size 65535, so that an upstream answer is
                             * not cut to 512 octets (else no OPT record) */
};

/* Called once, from r's event loop, when the last question of a set that
 * lookup_run() left running has finished. It may free the set. */
typedef void (*lookup_done_fn)(lookup_set *s, void *data);

/* A set for questions asked on behalf of r. ins is the instance the
 * questions go through (the plugin's, from setup); NULL asks nothing.
 * NULL when memory runs out. */
lookup_set *lookup_new(struct instance *ins, dns_req *r, unsigned max_depth, int flags);
/* Ask name/qtype (name in wire form). The index of its reply, or -1 when
 * it is not asked (no instance, depth limit, a name that does not fit,
 * memory). Only before lookup_run(). */
int lookup_add(lookup_set *s, const uint8_t *name, uint16_t qtype);
/* The index of a question already added with this name (case-insensitive)
 * and type, or -1. */
int lookup_find(const lookup_set *s, const uint8_t *name, uint16_t qtype);
/* Number of questions added. */
size_t lookup_count(const lookup_set *s);
/* The reply to question i as the server sent it, or NULL when i was not
 * asked, has not finished, or its reply could not be kept. */
const dns_msg *lookup_reply(const lookup_set *s, int i);
/* Start every question. 0: all have finished (or there were none) and done
 * is never called; 1: some run on and done(s, data) is called once when
 * the last has finished. */
int lookup_run(lookup_set *s, lookup_done_fn done, void *data);
void lookup_free(lookup_set *s);

#endif
