/* SPDX-License-Identifier: Apache-2.0 */
/*
 * whoami — tells the client its own address and port.
 *
 *   whoami
 *
 * Every query that reaches it is answered, authoritatively, with an empty
 * answer section and two records in the additional section, TTL 0, as
 * CoreDNS's whoami writes them:
 *   <qname>       A or AAAA   the client's address (by its family)
 *   _<proto>.<qname> SRV 0 0 <client port> .
 */
#include <string.h>
#include <arpa/inet.h>
#include "server/plugin.h"
#include "wire/msg.h"

static int whoami_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    while (cf_next(d))
        if (cf_next_arg(d))
            return cf_arg_err(d);
    *inst = NULL;
    return 0;
}

static int whoami_serve(const handler *h, dns_req *r)
{
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    const uint8_t *qn = r->q.qname;
    if (r->peer.ss_family == AF_INET6)
        msg_add_aaaa(&r->resp, SEC_ADDITIONAL, qn, 0,
                     &((const struct sockaddr_in6 *)&r->peer)->sin6_addr);
    else
        msg_add_a(&r->resp, SEC_ADDITIONAL, qn, 0, &((const struct sockaddr_in *)&r->peer)->sin_addr);
    /* _udp.<qname> (or _tcp.): one more label in front of the question */
    const char *proto = r->proto == PROTO_TCP ? "tcp" : "udp";
    uint8_t owner[DNAME_MAX];
    size_t ql = dname_len(qn);
    if (ql + 5 <= DNAME_MAX) {
        owner[0] = 4;
        owner[1] = '_';
        memcpy(owner + 2, proto, 3);
        memcpy(owner + 5, qn, ql);
        char addr[64];
        int port = 0;
        req_peer_str(r, addr, sizeof addr, &port);
        static const uint8_t root[1] = { 0 };
        msg_add_srv(&r->resp, SEC_ADDITIONAL, owner, 0, 0, 0, (uint16_t)port, root);
    }
    return req_write(r, h);
}

const plugin_def plugin_whoami = {
    .name = "whoami",
    .flags = PLUGIN_ONCE,
    .setup = whoami_setup,
    .serve = whoami_serve,
};
