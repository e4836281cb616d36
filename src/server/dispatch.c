/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dispatch.c — a packet to a chain.
 *
 *   core_handle_packet   parse; malformed → FORMERR (header readable) or drop,
 *                        with a DEBUG hex dump when the instance has debug on
 *   core_dispatch        opcode, class, EDNS version, zone match → chain
 *   core_match           the block of a listen group serving a name
 *
 * These are the server-level rules of CoreDNS (core/dnsserver/server.go and
 * miekg/dns's default accept function), in its order: responses are dropped
 * and non-QUERY opcodes get NOTIMP at the door; a class other than IN is
 * REFUSED unless a block on the listen address has a plugin that opens
 * every class (PLUGIN_ANY_CLASS: chaos, forward); an EDNS version above 0
 * gets BADVERS; a name outside every zone is REFUSED.
 *
 * Called by the transports (listener.c, tcp.c, internal.c) with f->ops set;
 * calls only request.c (req_finish, req_send_reply) and the chain.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "server/core.h"
#include "common/log.h"

const listen_zone *core_match(const listen_group *g, const uint8_t *qname, uint16_t qtype,
                              const dns_req *r)
{
    /* the zone with the most labels that is a suffix of qname and whose
     * block's filter (if any) takes r; a zone served by several blocks is
     * listed once a block, blocks with a filter first (filtered_first).
     * qname's suffixes are located once: a CIDR key's split (up to 128
     * zones) costs one short comparison per zone. */
    assert(g && qname);
    const uint8_t *at[DNAME_SUFFIXES];
    int labels = dname_suffixes(qname, at);
    const listen_zone *best = NULL, *parent_fallback = NULL;
    for (size_t i = 0; i < g->nzones; i++) {
        const listen_zone *z = &g->zones[i];
        if (z->nlabels > labels || (best && z->nlabels <= best->nlabels))
            continue;
        if (!dname_equal(z->wire, at[labels - z->nlabels]))
            continue;
        if (r && z->blk->filter && !z->blk->filter(z->blk->filter_data, r))
            continue;
        /* DS lives in the parent: prefer a shorter zone when one exists */
        if (qtype == T_DS && z->nlabels == labels && labels > 0) {
            if (!parent_fallback)
                parent_fallback = z;
            continue;
        }
        best = z;
    }
    return best ? best : parent_fallback;
}

void core_dispatch(req_full *f)
{
    dns_req *r = &f->r;
    assert(f->ops && f->ops->send && f->ops->done && r->q.has_question);
    r->start_ns = now_ns();
    r->rawlen_in = r->rawlen;
    r->server = f->grp ? f->grp->label : "dns://:53";
    if (msg_opcode(&r->q) != 0) {
        req_finish(r, RC_NOTIMP);
        return;
    }
    if (r->q.qclass != C_IN && !(f->grp && f->grp->any_class)) {
        r->zone = "dropped";
        req_finish(r, RC_REFUSED);
        return;
    }
    if (r->q.edns.present && r->q.edns.version > 0) {
        msg_reply_to(&r->resp, &r->q);
        r->resp.rcode = RC_BADVERS;
        r->resp.edns.present = 1;       /* its own OPT: no options echoed */
        r->written = 1;
        r->writer = "";
        req_send_reply(f);
        req_finish(r, RC_BADVERS);
        return;
    }
    const listen_zone *z = f->grp ? core_match(f->grp, r->q.qname, r->q.qtype, r) : NULL;
    if (!z || !z->blk->chain) {
        r->zone = "dropped";
        req_finish(r, RC_REFUSED);
        return;
    }
    r->block = z->blk;
    r->zone = z->zone;
    r->view = z->blk->view;
    const handler *h = z->blk->chain;
    int rc = h->def->serve(h, r);
    if (rc != REQ_ASYNC)
        req_finish(r, rc);
}

/* ---- debug: packets the server could not take ------------------------ */

#define DUMP_MAX 1024                   /* octets shown: one log line (log.c) */

/* "000000 12 34 ..." lines of 16 octets, the form text2pcap reads. */
static size_t hexdump(char *out, size_t cap, const uint8_t *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        if (i % 16 == 0)
            o += (size_t)snprintf(out + o, cap - o, "%s%06zx", i ? "\n" : "", i);
        o += (size_t)snprintf(out + o, cap - o, " %02x", p[i]);
    }
    return o;
}

/* With debug on (req_debug: the instance's switch): one DEBUG line with
 * the packet. */
static void debug_bad_packet(req_full *f, const char *what)
{
    dns_req *r = &f->r;
    if (!req_debug(r))
        return;
    char addr[64], dump[DUMP_MAX / 16 * 56 + 16];
    int port = 0;
    req_peer_str(r, addr, sizeof addr, &port);
    size_t n = r->rawlen < DUMP_MAX ? r->rawlen : DUMP_MAX;
    hexdump(dump, sizeof dump, r->raw, n);
    char head[256];
    snprintf(head, sizeof head, "%s from %s:%d over %s, %zu octets%s:", what, addr, port,
             r->proto == PROTO_TCP ? "tcp" : "udp", r->rawlen,
             n < r->rawlen ? " (the first 1024 shown)" : "");
    log_block("DEBUG", head, dump);
}

void core_handle_packet(req_full *f)
{
    dns_req *r = &f->r;
    assert(f->ops && f->ops->send && f->ops->done && r->raw);
    int hdr_ok = 0;
    r->rawlen_in = r->rawlen;
    if (r->rawlen >= 3 && (r->raw[2] & 0x80)) {
        debug_bad_packet(f, "response packet dropped");
        goto drop;                      /* a response: never answer it */
    }
    int rc = msg_parse(&r->q, r->raw, r->rawlen, &hdr_ok);
    if (rc == 0 && !r->q.has_question)
        rc = RC_FORMERR;
    if (rc != 0) {
        debug_bad_packet(f, hdr_ok ? "malformed packet answered FORMERR"
                                   : "malformed packet dropped");
        if (!hdr_ok)
            goto drop;
        /* FORMERR: the header echoed, no question, no records */
        r->q.has_question = 0;
        msg_reply_to(&r->resp, &r->q);
        r->resp.flags &= (uint16_t)~0x7800;      /* opcode QUERY */
        r->resp.rcode = RC_FORMERR;
        r->q.edns.present = 0;
        r->written = 1;
        r->writer = "";
        r->start_ns = now_ns();
        r->server = f->grp ? f->grp->label : "dns://:53";
        r->zone = "dropped";
        req_send_reply(f);
        req_finish(r, RC_FORMERR);
        return;
    }
    core_dispatch(f);
    return;
drop:
    f->ops->done(f);
}

