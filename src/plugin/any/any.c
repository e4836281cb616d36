/* SPDX-License-Identifier: Apache-2.0 */
/*
 * any — RFC 8482 minimal answers to ANY queries.
 *
 *   any
 *
 * A query of type ANY gets, as CoreDNS's any plugin writes it, one record:
 *   <qname> 8482 IN HINFO "RFC8482" ""
 * (not authoritative). Every other query is passed on.
 */
#include "server/plugin.h"
#include "wire/msg.h"

static int any_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    while (cf_next(d))
        if (cf_next_arg(d))
            return cf_arg_err(d);
    *inst = NULL;
    return 0;
}

static int any_serve(const handler *h, dns_req *r)
{
    if (r->q.qtype != T_ANY)
        return plugin_next(h, r);
    /* HINFO rdata: two character-strings, "RFC8482" and "" */
    static const uint8_t hinfo[] = { 7, 'R', 'F', 'C', '8', '4', '8', '2', 0 };
    msg_reply_to(&r->resp, &r->q);
    msg_add_rr(&r->resp, SEC_ANSWER, r->q.qname, T_HINFO, C_IN, 8482, hinfo, sizeof hinfo);
    return req_write(r, h);
}

const plugin_def plugin_any = {
    .name = "any",
    .flags = PLUGIN_ONCE,
    .setup = any_setup,
    .serve = any_serve,
};
