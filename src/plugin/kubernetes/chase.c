/*
 * chase.c — resolve an ExternalName target outside the plugin's zones by a
 * new query from the top of the server (CoreDNS's upstream Lookup): cache,
 * forward, hosts, file… whatever the Corefile routes that name to.
 *
 * The sub-query is an internal request (req_new_internal) with RD set and
 * the client's EDNS size and DO bit (see build_query). It
 * runs to completion on a private event base owned by the calling thread,
 * so a handler that goes asynchronous (forward) is driven there; the worker
 * waits for it (bounded by that handler's own timeout). Nested chases are
 * limited to 4 levels so that names that CNAME back into the cluster zone
 * cannot loop.
 */
#include <event2/event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "server/server.h"

static _Thread_local struct event_base *t_base;
static _Thread_local int t_depth;
static pthread_key_t base_key;
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void base_free(void *b)
{
    event_base_free(b);
}

static void base_key_init(void)
{
    pthread_key_create(&base_key, base_free);
}

/* The calling thread's private base, freed when the thread exits. */
static struct event_base *thread_base(void)
{
    if (!t_base) {
        pthread_once(&base_once, base_key_init);
        if (!(t_base = event_base_new()))
            return NULL;
        pthread_setspecific(base_key, t_base);
    }
    return t_base;
}

/* The sub-query carries the client's EDNS size and DO bit, as CoreDNS's
 * upstream Lookup does (state.SizeAndDo). CoreDNS also keeps the client's
 * transport, so a TCP client's chase goes to the upstream over TCP; here a
 * TCP client without EDNS advertises 65535 instead, so that the upstream
 * answer is not cut to 512 bytes. size 0: no OPT. */
static size_t build_query(uint8_t *buf, const uint8_t *name, uint16_t qtype, uint16_t size,
                          int do_bit)
{
    size_t nl = dname_len(name), o = 0;
    uint16_t id = (uint16_t)rand();
    buf[o++] = (uint8_t)(id >> 8), buf[o++] = (uint8_t)id;
    buf[o++] = 0x01, buf[o++] = 0x00;       /* RD */
    buf[o++] = 0, buf[o++] = 1;             /* QDCOUNT */
    memset(buf + o, 0, 6);
    o += 6;
    memcpy(buf + o, name, nl);
    o += nl;
    buf[o++] = (uint8_t)(qtype >> 8), buf[o++] = (uint8_t)qtype;
    buf[o++] = 0, buf[o++] = C_IN;
    if (size) {
        buf[11] = 1;                        /* ARCOUNT */
        buf[o++] = 0;                       /* root owner */
        buf[o++] = 0, buf[o++] = 41;        /* OPT */
        buf[o++] = (uint8_t)(size >> 8), buf[o++] = (uint8_t)size;
        buf[o++] = 0, buf[o++] = 0;         /* extended rcode, version 0 */
        buf[o++] = do_bit ? 0x80 : 0, buf[o++] = 0;
        buf[o++] = 0, buf[o++] = 0;         /* no options */
    }
    return o;
}

static uint16_t sub_size(const dns_req *r)
{
    if (r->q.edns.present)
        return r->q.edns.udp_size < 512 ? 512 : r->q.edns.udp_size;
    return req_max_size(r) > 512 ? 65535 : 0;
}

int kube_lookup(kq *q, const uint8_t *name, uint16_t qtype, dns_msg *out)
{
    if (!q->k->ins || t_depth >= 4)
        return -1;
    if (!thread_base())
        return -1;
    uint8_t wire[12 + DNAME_MAX + 4 + 11];
    size_t len = build_query(wire, name, qtype, sub_size(q->r), q->r->q.edns.do_bit);
    dns_req *sub = req_new_internal(q->k->ins, t_base, wire, len, NULL);
    if (!sub)
        return -1;
    t_depth++;
    req_run(sub);
    t_depth--;
    int rc = msg_copy(out, &sub->resp) < 0 ? -1 : 0;
    req_free(sub);
    return rc;
}
