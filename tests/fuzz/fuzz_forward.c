/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_forward.c — fuzz harness for what the forward plugin does with an
 * upstream's answer (src/plugin/forward/forward.c: fwd_take_answer and
 * fwd_answers, called from its c-ares callback): parse it, or turn an
 * unparsable full-size UDP answer into an empty truncated reply; check it
 * answers the question asked (else FORMERR); then the reply goes to the
 * client with the client's ID, encoded for the client's transport.
 *
 * Input: the first octet picks the client's query (low 3 bits: the table
 * below; bit 3: it came over TCP to the upstream; bit 4: the client sent
 * no EDNS); the rest is the upstream's answer as c-ares hands it over.
 *
 * Checks: a taken answer that answers the query, or the FORMERR made when
 * it does not, always reaches the client: it encodes within the client's
 * limit (512 octets without EDNS, else its buffer size) with the client's
 * ID and question.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/forward/forward.h"
#include "wire/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct { const char *name; uint16_t type; } queries[8] = {
    { "example.org.", T_A }, { "example.org.", T_AAAA }, { "www.example.org.", T_CNAME },
    { "example.org.", T_MX }, { "org.", T_NS }, { "1.0.0.127.in-addr.arpa.", T_PTR },
    { "example.org.", T_TXT }, { "_sip._udp.example.org.", T_SRV },
};

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_forward: %s\n", why);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t qw[512], out[65536], name[DNAME_MAX];
    if (dname_from_str(name, queries[data[0] & 7].name) < 0)
        abort();
    dns_query dq = { .id = 0x4242, .flags = F_RD, .qname = name,
                     .qtype = queries[data[0] & 7].type, .qclass = 1,
                     .edns_size = (data[0] & 16) ? 0 : 1232 };
    int qn = msg_query(&dq, qw, sizeof qw);
    dns_msg q, resp;
    int hdr_ok;
    msg_init(&q);
    msg_init(&resp);
    if (qn < 0 || msg_parse(&q, qw, (size_t)qn, &hdr_ok) != 0)
        abort();
    int tcp = (data[0] >> 3) & 1;
    if (fwd_take_answer(&resp, &q, data + 1, (int)(size - 1), tcp) == 0) {
        resp.id = q.id;
        if (!fwd_answers(&resp, &q)) {
            msg_reply_to(&resp, &q);
            resp.rcode = RC_FORMERR;
        }
        if (!fwd_answers(&resp, &q))
            fail("the FORMERR reply does not answer the query");
        size_t max = q.edns.present ? q.edns.udp_size : 512;
        if (max < 512)
            max = 512;
        int n = msg_encode(&resp, out, sizeof out, max, 1);
        if (n < 12 || (size_t)n > max)
            fail("the reply does not reach the client within its limit");
        dns_msg back;
        msg_init(&back);
        if (msg_parse(&back, out, (size_t)n, &hdr_ok) != 0 || back.id != q.id ||
            !back.has_question || !dname_equal(back.qname, q.qname) || back.qtype != q.qtype)
            fail("the client cannot read its reply");
        msg_free(&back);
    } else if (!tcp && size - 1 >= 512) {
        fail("a full-size UDP answer refused");
    }
    msg_free(&q);
    msg_free(&resp);
    return 0;
}
