/* SPDX-License-Identifier: Apache-2.0 */
/*
 * minimal — minimal responses: only the answer section of positive replies.
 *
 *   minimal
 *
 * A write hook (req_on_write) looks at whatever reply a plugin after this
 * one writes and types it as CoreDNS's response.Typify does. A positive
 * answer (NOERROR, type NoError: records in the answer, or none and neither
 * SOA nor NS in the authority section) loses its authority and additional
 * sections, and the reply's own EDNS options (CoreDNS drops its OPT record
 * with the additional section; the server then echoes the client's EDNS).
 * NXDOMAIN, NODATA, delegations, errors, transfers, updates and replies
 * with an expired signature for a DO query are written as they are.
 *
 * No instance state: the hook reads and changes only the request.
 */
#include <stdint.h>
#include <time.h>
#include "server/plugin.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* miekg/dns RRSIG.ValidityPeriod, with RFC 1982 serial arithmetic. */
static int rrsig_valid(const dns_rr *rr, int64_t now)
{
    if (rr->rdlen < 18)
        return 1;
    const int64_t year68 = (int64_t)1 << 31;
    int64_t exp = get32(rr->rdata + 8), inc = get32(rr->rdata + 12);
    int64_t ti = inc + ((inc - now) / year68) * year68;
    int64_t te = exp + ((exp - now) / year68) * year68;
    return ti <= now && now <= te;
}

static int expired_sig(const dns_msg *m, int64_t now)
{
    for (int sec = 0; sec < SEC_COUNT; sec++)
        for (unsigned i = 0; i < msg_count(m, sec); i++) {
            dns_rr rr = msg_rr(m, sec, i);
            if (rr.type == T_RRSIG && !rrsig_valid(&rr, now))
                return 1;
        }
    return 0;
}

/* Typify(m) == NoError. */
static int plain_success(const dns_msg *m, int64_t now)
{
    unsigned op = msg_opcode(m);
    if (m->rcode != RC_NOERROR || op == 4 || op == 5)          /* NOTIFY, UPDATE */
        return 0;
    if (m->has_question && (m->qtype == T_AXFR || m->qtype == T_IXFR))
        return 0;
    if (m->edns.present && m->edns.do_bit && expired_sig(m, now))
        return 0;
    if (msg_count(m, SEC_ANSWER) > 0)
        return 1;
    for (unsigned i = 0; i < msg_count(m, SEC_AUTHORITY); i++) {
        uint16_t t = msg_rr(m, SEC_AUTHORITY, i).type;
        if (t == T_SOA || t == T_NS)
            return 0;                                           /* NODATA, delegation */
    }
    return 1;
}

static void minimal_write(dns_req *r, void *data)
{
    (void)data;
    if (!plain_success(&r->resp, (int64_t)time(NULL)))
        return;
    msg_clear_section(&r->resp, SEC_AUTHORITY);
    msg_clear_section(&r->resp, SEC_ADDITIONAL);
    r->resp.edns.present = 0;       /* no OPT of its own: the server echoes the client's */
    r->resp.edns.opts_len = 0;
}

static int minimal_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    while (cf_next(d))
        if (cf_next_arg(d) || cf_next_block(d))
            return cf_arg_err(d);
    *inst = NULL;
    return 0;
}

static int minimal_serve(const handler *h, dns_req *r)
{
    req_on_write(r, minimal_write, NULL);
    return plugin_next(h, r);
}

const plugin_def plugin_minimal = {
    .name = "minimal",
    .setup = minimal_setup,
    .serve = minimal_serve,
};
