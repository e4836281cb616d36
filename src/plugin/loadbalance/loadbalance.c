/*
 * loadbalance — shuffles address records in replies (round robin).
 *
 *   loadbalance [round_robin]
 *
 * Registered as a write hook, so it applies to whatever an inner plugin
 * writes (file, kubernetes, cache). On NOERROR replies that are not zone
 * transfers, each section is reordered as CoreDNS does: CNAMEs first, then
 * the records that are neither addresses nor MX, then the A/AAAA records
 * shuffled, then the MX records shuffled. The `weighted` policy is not
 * implemented and is refused at start-up.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "server/plugin.h"
#include "wire/msg.h"

/* per-thread xorshift64*: no locks on the serving path */
static _Thread_local uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    if (!rng) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)(uintptr_t)&rng ^ (uint64_t)ts.tv_sec;
        rng |= 1;
    }
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 2685821657736338717ull) >> 33) % n;
}

static void shuffle(unsigned *idx, unsigned n)
{
    for (unsigned j = 0; n > 1 && j < n - 1; j++) {
        unsigned p = j + rnd(n - j);
        unsigned t = idx[j];
        idx[j] = idx[p];
        idx[p] = t;
    }
}

enum { K_CNAME, K_OTHER, K_ADDR, K_MX };

static int kind(uint16_t type)
{
    switch (type) {
    case T_CNAME: return K_CNAME;
    case T_A: case T_AAAA: return K_ADDR;
    case T_MX: return K_MX;
    default: return K_OTHER;
    }
}

static void reorder(dns_msg *m, int sec)
{
    unsigned n = msg_count(m, sec);
    if (n < 2 || n > 4096)
        return;
    unsigned perm[4096], at = 0;
    for (int k = K_CNAME; k <= K_MX; k++) {
        unsigned start = at;
        for (unsigned i = 0; i < n; i++)
            if (kind(msg_rr(m, sec, i).type) == k)
                perm[at++] = i;
        if (k == K_ADDR || k == K_MX)
            shuffle(perm + start, at - start);
    }
    msg_permute(m, sec, perm, n);
}

static void on_write(dns_req *r, void *data)
{
    if (r->resp.rcode != RC_NOERROR || r->q.qtype == T_AXFR || r->q.qtype == T_IXFR)
        return;
    for (int sec = 0; sec < SEC_COUNT; sec++)
        reorder(&r->resp, sec);
}

static int lb_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    while (cf_next(d)) {
        const char *args[4];
        int n = cf_remaining_args(d, args, 4);
        if (n >= 1 && strcmp(args[0], "weighted") == 0)
            return cf_err(d, "plugin/loadbalance: the weighted policy is not supported by topodns");
        if (n > 1)
            return cf_arg_err(d);
        if (n == 1 && strcmp(args[0], "round_robin") != 0)
            return cf_err(d, "plugin/loadbalance: unknown policy: %s", args[0]);
        if (cf_next_block(d))
            return cf_prop_err(d);
    }
    *inst = NULL;
    return 0;
}

static int lb_serve(const handler *h, dns_req *r)
{
    req_on_write(r, on_write, NULL);
    return plugin_next(h, r);
}

const plugin_def plugin_loadbalance = {
    .name = "loadbalance",
    .flags = PLUGIN_ONCE,
    .setup = lb_setup,
    .serve = lb_serve,
};
