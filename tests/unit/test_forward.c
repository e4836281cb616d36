/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_forward.c — the forward plugin's setup and upstream selection:
 * defaults, every option, TO forms (IP, IP:port, [v6]:port, dns://, a
 * resolv.conf file), multiple stanzas, errors with file:line; the policies'
 * orderings (sequential, CoreDNS's round-robin rotation, random permutations)
 * and the down rule (fails > max_fails, never with max_fails 0); the
 * health probe's packet as an upstream receives it, which replies count
 * (c-ares matches ID and question; any rcode), and the health state of an
 * upstream through failed and answered probes.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <cmocka.h>
#include "plugin/forward/forward.h"

static char errbuf[CF_ERR_MAX];

/* Set up `forward` from a Corefile text; NULL on error (message in errbuf). */
static forward *load(const char *text)
{
    cf_file *f = cf_parse_string("Corefile", text, errbuf, sizeof errbuf);
    assert_non_null(f);
    const cf_directive *dir = cf_block_directive(&f->blocks[0], "forward");
    assert_non_null(dir);
    cf_disp d;
    cf_disp_init(&d, dir);
    void *inst = NULL;
    int rc = plugin_forward.setup(&d, NULL, &inst);
    snprintf(errbuf, sizeof errbuf, "%s", d.err);
    cf_free(f);
    return rc == 0 ? inst : NULL;
}

static void test_defaults(void **state)
{
    (void)state;
    forward *f = load(". {\n forward . 127.0.0.1 [::1]:5353 dns://10.0.0.1:54\n}\n");
    assert_non_null(f);
    assert_int_equal(f->nst, 1);
    fwd_stanza *st = f->st[0];
    assert_int_equal(st->nups, 3);
    assert_string_equal(st->ups[0].to, "127.0.0.1:53");
    assert_string_equal(st->ups[1].to, "[::1]:5353");
    assert_string_equal(st->ups[2].to, "10.0.0.1:54");
    assert_int_equal(st->max_fails, 2);
    assert_int_equal(st->policy, FWD_POL_RANDOM);
    assert_true(st->hc_interval == 0.5);
    assert_true(st->read_timeout == 2);
    assert_true(st->expire == 10);
    assert_int_equal(st->max_attempts, 6);       /* 2 x upstreams */
    assert_int_equal(st->hc_rd, 1);
    assert_int_equal(st->max_concurrent, 0);
    fwd_free(f);
}

static void test_options(void **state)
{
    (void)state;
    forward *f = load(". {\n forward example.org 127.0.0.1:5300 {\n"
                      "  except a.example.org B.example.org\n  force_tcp\n  prefer_udp\n"
                      "  expire 20s\n  max_fails 5\n  max_connect_attempts 3\n"
                      "  policy round_robin\n  health_check 2s no_rec domain Example.NET\n"
                      "  max_concurrent 1000\n  next NXDOMAIN servfail\n  next_on_nodata\n"
                      "  failover REFUSED\n  failfast_all_unhealthy_upstreams\n"
                      "  read_timeout 300ms\n  source_address 127.0.0.2\n  max_idle_conns 4\n }\n}\n");
    assert_non_null(f);
    fwd_stanza *st = f->st[0];
    uint8_t w[DNAME_MAX];
    dname_from_str(w, "example.org.");
    assert_true(dname_equal(st->from, w));
    assert_int_equal(st->nexcept, 2);
    dname_from_str(w, "b.example.org.");
    assert_true(dname_equal(st->except[1], w));
    assert_true(st->force_tcp && st->prefer_udp && st->failfast && st->next_on_nodata);
    assert_true(st->expire == 20 && st->hc_interval == 2);
    assert_true(st->read_timeout > 0.29 && st->read_timeout < 0.31);
    assert_int_equal(st->max_fails, 5);
    assert_int_equal(st->max_attempts, 3);
    assert_int_equal(st->policy, FWD_POL_ROUND_ROBIN);
    assert_int_equal(st->hc_rd, 0);
    dname_from_str(w, "example.net.");
    assert_true(dname_equal(st->hc_domain, w));
    assert_int_equal(st->max_concurrent, 1000);
    assert_int_equal(st->nnext, 2);
    assert_int_equal(st->next_rc[0], 3);
    assert_int_equal(st->next_rc[1], 2);
    assert_int_equal(st->nfailover, 1);
    assert_int_equal(st->failover_rc[0], 5);
    assert_true(st->has_src);
    fwd_free(f);
}

static void test_stanzas_and_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_forward.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *rc = "# comment\nsearch x.y\nnameserver 192.0.2.1\nnameserver 2001:db8::1\noptions ndots:5\n";
    assert_int_equal(write(fd, rc, strlen(rc)), (ssize_t)strlen(rc));
    close(fd);
    char text[512];
    snprintf(text, sizeof text, ". {\n forward a.test 127.0.0.1\n forward . %s 127.0.0.1:99\n}\n", path);
    forward *f = load(text);
    unlink(path);
    assert_non_null(f);
    assert_int_equal(f->nst, 2);
    assert_int_equal(f->st[0]->nups, 1);
    assert_int_equal(f->st[1]->nups, 3);
    assert_string_equal(f->st[1]->ups[0].to, "192.0.2.1:53");
    assert_string_equal(f->st[1]->ups[1].to, "[2001:db8::1]:53");
    assert_string_equal(f->st[1]->ups[2].to, "127.0.0.1:99");
    fwd_free(f);
}

static void expect_err(const char *text, const char *want)
{
    forward *f = load(text);
    assert_null(f);
    if (!strstr(errbuf, want))
        fail_msg("error '%s' lacks '%s'", errbuf, want);
}

static void test_errors(void **state)
{
    (void)state;
    expect_err(". {\n forward .\n}\n", "Corefile:2: Wrong argument count");
    expect_err(". {\n forward . 127.0.0.1 {\n  policy x\n }\n}\n", "Corefile:3: unknown policy 'x'");
    expect_err(". {\n forward . 127.0.0.1 {\n  nope\n }\n}\n", "Corefile:3: unknown property 'nope'");
    expect_err(". {\n forward . 127.0.0.1 {\n  max_fails -1\n }\n}\n", "Corefile:3:");
    expect_err(". {\n forward . 127.0.0.1 {\n  health_check -1s\n }\n}\n", "Corefile:3:");
    expect_err(". {\n forward . 127.0.0.1 {\n  health_check 1s domain\n }\n}\n", "Corefile:3: Wrong argument count");
    expect_err(". {\n forward . 127.0.0.1 {\n  next BOGUS\n }\n}\n", "BOGUS is not a valid rcode");
    expect_err(". {\n forward . 127.0.0.1 {\n  failover NOERROR\n }\n}\n", "NoError cannot be used");
    expect_err(". {\n forward . 127.0.0.1 {\n  doh_method GET\n }\n}\n", "not supported by topodns");
    /* DNS over TLS options */
    expect_err(". {\n forward . tls://127.0.0.1 {\n  tls a b c d\n }\n}\n",
               "Corefile:3: Wrong argument count");
    expect_err(". {\n forward . tls://127.0.0.1 {\n  tls /nonexistent/ca.pem\n }\n}\n",
               "Corefile:3: plugin/forward: error reading /nonexistent/ca.pem");
    expect_err(". {\n forward . tls://127.0.0.1 {\n  tls /nonexistent/c.pem /nonexistent/k.pem\n }\n}\n",
               "Corefile:3: plugin/forward: could not load TLS cert: /nonexistent/c.pem");
    expect_err(". {\n forward . tls://127.0.0.1 {\n  tls_servername\n }\n}\n",
               "Corefile:3: Wrong argument count");
    expect_err(". {\n forward . tls://127.0.0.1%a.test {\n  tls_servername b.test\n }\n}\n",
               "both forward ('b.test') and proxy level ('a.test') TLS servernames are set");
    expect_err(". {\n forward . tls://dns.example\n}\n", "Corefile:2: plugin/forward: not an IP address");
    expect_err(". {\n forward . tls://127.0.0.1%\n}\n", "empty TLS server name");
    expect_err(". {\n forward . tls://127.0.0.1:0\n}\n", "not an IP address");
    expect_err(". {\n forward . https://127.0.0.1\n}\n", "not supported as a destination protocol");
    expect_err(". {\n forward . udp://127.0.0.1\n}\n", "not supported as a destination protocol");
    expect_err(". {\n forward . 127.0.0.1:0\n}\n", "not an IP address or file");
    expect_err(". {\n forward . 127.0.0.1:70000\n}\n", "not an IP address or file");
    expect_err(". {\n forward . dns.google\n}\n", "not an IP address or file");
    expect_err(". {\n forward . 127.0.0.1 {\n  source_address nowhere\n }\n}\n", "invalid IP address");
    char text[1024];
    int n = snprintf(text, sizeof text, ". {\n forward .");
    for (int i = 1; i <= 16; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, " 127.0.0.%d", i);
    snprintf(text + n, sizeof text - (size_t)n, "\n}\n");
    expect_err(text, "more than 15 TOs configured: 16");
}

/* tls:// upstreams: port 853 by default, a port, the per-upstream server
 * name of IP%NAME (v4 and [v6%NAME]:port), mixed with plain upstreams; the
 * client context is made (system trust store) without a `tls` line. */
static void test_tls_upstreams(void **state)
{
    (void)state;
    forward *f = load(". {\n forward . tls://127.0.0.1 tls://[::1%dns.test]:8853 "
                      "tls://127.0.0.3%b.test:9953 127.0.0.2 {\n  max_idle_conns 4\n  expire 3s\n }\n}\n");
    if (!f)
        fail_msg("%s", errbuf);
    fwd_stanza *st = f->st[0];
    assert_int_equal(st->nups, 4);
    assert_true(st->ups[0].tls);
    assert_string_equal(st->ups[0].to, "127.0.0.1:853");
    assert_string_equal(st->ups[0].servername, "");
    assert_true(st->ups[1].tls);
    assert_string_equal(st->ups[1].to, "[::1]:8853");
    assert_string_equal(st->ups[1].servername, "dns.test");
    assert_string_equal(st->ups[2].to, "127.0.0.3:9953");
    assert_string_equal(st->ups[2].servername, "b.test");
    assert_false(st->ups[3].tls);
    assert_string_equal(st->ups[3].to, "127.0.0.2:53");
    assert_non_null(st->tls_ctx);
    assert_int_equal(st->max_idle_conns, 4);
    assert_true(st->expire == 3);
    fwd_free(f);
    /* the %NAME taken off, the rest read as any upstream: [v6%NAME] without
     * a port, a bare IPv6 address, brackets around IPv4 */
    f = load(". {\n forward . tls://[::1%a.test] tls://::1%b.test tls://[127.0.0.5]:953\n}\n");
    if (!f)
        fail_msg("%s", errbuf);
    st = f->st[0];
    assert_int_equal(st->nups, 3);
    assert_string_equal(st->ups[0].to, "[::1]:853");
    assert_string_equal(st->ups[0].servername, "a.test");
    assert_string_equal(st->ups[1].to, "[::1]:853");
    assert_string_equal(st->ups[1].servername, "b.test");
    assert_string_equal(st->ups[2].to, "127.0.0.5:953");
    assert_string_equal(st->ups[2].servername, "");
    fwd_free(f);
    expect_err(". {\n forward . tls://[::1%a.test:853\n}\n", "not an IP address");
    expect_err(". {\n forward . tls://[::1%]:853\n}\n", "empty TLS server name");
    expect_err(". {\n forward . tls://127.0.0.1%a.test:0\n}\n", "not an IP address");
    expect_err(". {\n forward . tls://127.0.0.1%a.test:x\n}\n", "not an IP address");
    char longname[400];                 /* a server name of 253 octets, of 256 */
    snprintf(longname, sizeof longname, ". {\n forward . tls://1.2.3.4%%%0253d:8853\n}\n", 7);
    f = load(longname);
    if (!f)
        fail_msg("%s", errbuf);
    assert_int_equal(strlen(f->st[0]->ups[0].servername), 253);
    assert_string_equal(f->st[0]->ups[0].to, "1.2.3.4:8853");
    fwd_free(f);
    snprintf(longname, sizeof longname, ". {\n forward . tls://1.2.3.4%%%0256d\n}\n", 7);
    expect_err(longname, "TLS server name too long");
    f = load(". {\n forward . 127.0.0.1\n}\n");    /* plain only: no TLS context */
    assert_non_null(f);
    assert_null(f->st[0]->tls_ctx);
    fwd_free(f);
    f = load(". {\n forward . tls://127.0.0.1 {\n  tls\n  tls_servername dns.test\n }\n}\n");
    assert_non_null(f);
    assert_string_equal(f->st[0]->tls_servername, "dns.test");
    assert_true(f->st[0]->tls_set);
    fwd_free(f);
}

/* Plain upstreams through common/addr's addr_parse: brackets around IPv4
 * (as Go's SplitHostPort), an IPv6 zone kept in the address and its label
 * when it names an interface, refused when it does not; no IPv4 zone. */
static void test_upstream_addresses(void **state)
{
    (void)state;
    forward *f = load(". {\n forward . [127.0.0.6]:54 dns://[127.0.0.7]\n}\n");
    if (!f)
        fail_msg("%s", errbuf);
    assert_int_equal(f->st[0]->nups, 2);
    assert_string_equal(f->st[0]->ups[0].to, "127.0.0.6:54");
    assert_string_equal(f->st[0]->ups[1].to, "127.0.0.7:53");
    fwd_free(f);
    unsigned lo = if_nametoindex("lo");
    if (lo) {
        f = load(". {\n forward . [fe80::1%lo]:5300\n}\n");
        if (!f)
            fail_msg("%s", errbuf);
        assert_string_equal(f->st[0]->ups[0].to, "[fe80::1%lo]:5300");
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&f->st[0]->ups[0].sa;
        assert_int_equal(s6->sin6_family, AF_INET6);
        assert_int_equal(s6->sin6_scope_id, lo);
        assert_int_equal(ntohs(s6->sin6_port), 5300);
        fwd_free(f);
    }
    expect_err(". {\n forward . fe80::1%no-such-if-x\n}\n", "not an IP address or file");
    expect_err(". {\n forward . 127.0.0.1%lo\n}\n", "not an IP address or file");
    expect_err(". {\n forward . 127.0.0.1:+53\n}\n", "not an IP address or file");
}

/* add_client_subnet: off by default, 32/128 without arguments, prefixes
 * checked */
static void test_add_client_subnet(void **state)
{
    (void)state;
    forward *f = load(". {\n forward . 127.0.0.1\n}\n");
    assert_non_null(f);
    assert_int_equal(f->st[0]->add_ecs, 0);
    fwd_free(f);
    f = load(". {\n forward . 127.0.0.1 {\n  add_client_subnet\n }\n}\n");
    assert_non_null(f);
    assert_true(f->st[0]->add_ecs && f->st[0]->ecs_bits4 == 32 && f->st[0]->ecs_bits6 == 128);
    fwd_free(f);
    f = load(". {\n forward . 127.0.0.1 {\n  add_client_subnet 24 56\n }\n}\n");
    assert_non_null(f);
    assert_true(f->st[0]->add_ecs && f->st[0]->ecs_bits4 == 24 && f->st[0]->ecs_bits6 == 56);
    fwd_free(f);
    expect_err(". {\n forward . 127.0.0.1 {\n  add_client_subnet 33\n }\n}\n", "Corefile:3:");
    expect_err(". {\n forward . 127.0.0.1 {\n  add_client_subnet 0\n }\n}\n", "Corefile:3:");
    expect_err(". {\n forward . 127.0.0.1 {\n  add_client_subnet 24 129\n }\n}\n", "Corefile:3:");
    expect_err(". {\n forward . 127.0.0.1 {\n  add_client_subnet 24 64 1\n }\n}\n",
               "Corefile:3: Wrong argument count");
}

static void test_rcodes(void **state)
{
    (void)state;
    assert_int_equal(fwd_rcode_from_str("NOERROR"), 0);
    assert_int_equal(fwd_rcode_from_str("nxdomain"), 3);
    assert_int_equal(fwd_rcode_from_str("Refused"), 5);
    assert_int_equal(fwd_rcode_from_str("BADCOOKIE"), 23);
    assert_int_equal(fwd_rcode_from_str("what"), -1);
}

static void test_policy(void **state)
{
    (void)state;
    unsigned out[FWD_MAX_UP];
    assert_int_equal(fwd_policy_list(FWD_POL_SEQUENTIAL, 3, 77, 0, out), 3);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 2);
    /* round robin: p[k], p[:k], p[k+1:] */
    fwd_policy_list(FWD_POL_ROUND_ROBIN, 4, 0, 2, out);
    unsigned want[] = { 2, 0, 1, 3 };
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], want[i]);
    fwd_policy_list(FWD_POL_ROUND_ROBIN, 4, 0, 5, out);
    assert_int_equal(out[0], 1);
    /* random: always a permutation, and every upstream comes first sometimes */
    int first[5] = { 0 };
    for (unsigned r = 0; r < 500; r++) {
        fwd_policy_list(FWD_POL_RANDOM, 5, r * 2654435761u, 0, out);
        int seen[5] = { 0 };
        for (int i = 0; i < 5; i++)
            seen[out[i]]++;
        for (int i = 0; i < 5; i++)
            assert_int_equal(seen[i], 1);
        first[out[0]]++;
    }
    for (int i = 0; i < 5; i++)
        assert_true(first[i] > 50);
    assert_int_equal(fwd_policy_list(FWD_POL_RANDOM, 1, 9, 0, out), 1);
    assert_int_equal(out[0], 0);
}

static void test_down(void **state)
{
    (void)state;
    forward *f = load(". {\n forward . 127.0.0.1\n}\n");
    assert_non_null(f);
    fwd_stanza *st = f->st[0];
    fwd_upstream *u = &st->ups[0];
    atomic_store(&u->fails, 2);
    assert_false(fwd_down(st, u));               /* max_fails 2: needs 3 */
    atomic_store(&u->fails, 3);
    assert_true(fwd_down(st, u));
    st->max_fails = 0;
    assert_false(fwd_down(st, u));
    fwd_free(f);
}

static void test_probe_unreachable(void **state)
{
    (void)state;
    /* a loopback port nobody listens on: refused, unhealthy */
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
    close(s);
    char text[128];
    snprintf(text, sizeof text, ". {\n forward . 127.0.0.1:%d\n}\n", ntohs(a.sin_port));
    forward *f = load(text);
    assert_non_null(f);
    assert_int_equal(fwd_probe(f->st[0], &f->st[0]->ups[0]), -1);
    fwd_free(f);
}

/* A one-shot UDP responder: keeps the query it gets, answers it with QR set. */
typedef struct echo_up {
    int fd;
    uint8_t q[512];
    ssize_t qlen;
    int foreign;                     /* answer with another ID */
    int rcode;                       /* answer with this rcode */
} echo_up;

static void *echo_once(void *arg)
{
    echo_up *e = arg;
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    e->qlen = recvfrom(e->fd, e->q, sizeof e->q, 0, (struct sockaddr *)&from, &fl);
    if (e->qlen >= 12) {
        uint8_t r[512];
        memcpy(r, e->q, (size_t)e->qlen);
        r[2] |= 0x80;
        r[3] = (uint8_t)((r[3] & 0xf0) | e->rcode);
        if (e->foreign)
            r[1] ^= 0x5a;
        sendto(e->fd, r, (size_t)e->qlen, 0, (struct sockaddr *)&from, fl);
    }
    return NULL;
}

/* A UDP (or listening TCP) socket for e on 127.0.0.1, port a->sin_port
 * (0: a free one, then written to a), reads and accepts timing out after 3 s. */
static void echo_listen_type(echo_up *e, struct sockaddr_in *a, int type)
{
    socklen_t al = sizeof *a;
    struct timeval tv = { 3, 0 };
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    e->fd = socket(AF_INET, type, 0);
    assert_true(e->fd >= 0);
    assert_int_equal(bind(e->fd, (struct sockaddr *)a, sizeof *a), 0);
    assert_int_equal(getsockname(e->fd, (struct sockaddr *)a, &al), 0);
    setsockopt(e->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (type == SOCK_STREAM)
        assert_int_equal(listen(e->fd, 4), 0);
}

static void echo_listen(echo_up *e, struct sockaddr_in *a)
{
    echo_listen_type(e, a, SOCK_DGRAM);
}

/* fwd_probe against a responder fn on a fresh loopback socket of type,
 * the forward stanza's block holding opts; the probe's result. */
static int probe_against(echo_up *e, int type, void *(*fn)(void *), const char *opts)
{
    struct sockaddr_in a = { 0 };
    echo_listen_type(e, &a, type);
    char text[256];
    snprintf(text, sizeof text, ". {\n forward . 127.0.0.1:%d {\n %s\n }\n}\n",
             ntohs(a.sin_port), opts);
    forward *f = load(text);
    assert_non_null(f);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, e), 0);
    int rc = fwd_probe(f->st[0], &f->st[0]->ups[0]);
    pthread_join(t, NULL);
    close(e->fd);
    fwd_free(f);
    return rc;
}

/* The probe as sent: `<domain> IN NS`, RD unless no_rec, no EDNS. */
static void probe_sends(const char *hc, const uint8_t *want, size_t wlen)
{
    echo_up e = { 0 };
    assert_int_equal(probe_against(&e, SOCK_DGRAM, echo_once, hc), 0);
    assert_int_equal(e.qlen, (ssize_t)wlen);
    assert_memory_equal(e.q + 2, want + 2, wlen - 2);     /* the ID is random */
}

static void test_probe_query(void **state)
{
    (void)state;
    static const uint8_t root[] = { 0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1 };
    probe_sends("health_check 0.5s", root, sizeof root);
    static const uint8_t norec[] = { 0, 0, 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
                                     7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0,
                                     0, 2, 0, 1 };
    probe_sends("health_check 0.5s no_rec domain Example.ORG", norec, sizeof norec);
}

/* The probe goes through c-ares: a reply with another ID is not the
 * probe's (unhealthy after the 1 s timeout); a reply with any rcode is. */
static void probe_replies(int foreign, int rcode, int want)
{
    echo_up e = { .foreign = foreign, .rcode = rcode };
    assert_int_equal(probe_against(&e, SOCK_DGRAM, echo_once, ""), want);
    assert_true(e.qlen >= 12);
}

static void test_probe_matching(void **state)
{
    (void)state;
    probe_replies(0, 2, 0);          /* SERVFAIL: the upstream is alive */
    probe_replies(0, 5, 0);          /* REFUSED too */
    probe_replies(1, 0, -1);         /* another ID: not an answer */
}

static int fails_at_least_2(const fwd_upstream *u) { return atomic_load(&u->fails) >= 2; }
static int not_probing(const fwd_upstream *u) { return atomic_load(&u->probing) == 0; }

/* A one-shot TCP responder: one connection, one framed query answered. */
static void *echo_tcp_once(void *arg)
{
    echo_up *e = arg;
    int c = accept(e->fd, NULL, NULL);
    uint8_t len[2], r[512];
    if (c < 0)
        return NULL;
    if (recv(c, len, 2, MSG_WAITALL) == 2) {
        size_t n = (size_t)(len[0] << 8 | len[1]);
        if (n <= sizeof e->q && recv(c, e->q, n, MSG_WAITALL) == (ssize_t)n) {
            e->qlen = (ssize_t)n;
            memcpy(r + 2, e->q, n);
            r[0] = len[0], r[1] = len[1];
            r[4] |= 0x80;
            send(c, r, n + 2, 0);
        }
    }
    close(c);
    return NULL;
}

/* force_tcp: the probe goes over TCP and its answer counts. */
static void test_probe_tcp(void **state)
{
    (void)state;
    echo_up e = { 0 };
    assert_int_equal(probe_against(&e, SOCK_STREAM, echo_tcp_once, "force_tcp"), 0);
    assert_true(e.qlen >= 12);
    assert_int_equal(e.q[2], 0x01);  /* RD, a query */
}

/* Wait up to ms for cond(u); 1 when it held. */
static int wait_for(int (*cond)(const fwd_upstream *), const fwd_upstream *u, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        if (cond(u))
            return 1;
        usleep(10000);
    }
    return cond(u);
}

/* The health state of an upstream over time: a failed query starts the
 * probes, each failed probe counts (down past max_fails), the first answered
 * probe resets the count and stops the probing. */
static void test_health_transitions(void **state)
{
    (void)state;
    echo_up e = { 0 };
    struct sockaddr_in a = { 0 };
    echo_listen(&e, &a);
    close(e.fd);                     /* nobody listens there for now */
    char text[160], err[128];
    snprintf(text, sizeof text,
             ". {\n forward . 127.0.0.1:%d {\n max_fails 1\n health_check 100ms\n }\n}\n",
             ntohs(a.sin_port));
    forward *f = load(text);
    assert_non_null(f);
    fwd_stanza *st = f->st[0];
    fwd_upstream *u = &st->ups[0];
    assert_int_equal(fwd_health_start(st, err, sizeof err), 0);
    assert_int_equal(atomic_load(&u->fails), 0);
    assert_false(fwd_down(st, u));
    fwd_health_kick(u);
    assert_true(wait_for(fails_at_least_2, u, 3000));
    assert_true(fwd_down(st, u));
    assert_int_equal(atomic_load(&u->probing), 1);
    /* the upstream comes back: the next probe is answered */
    echo_listen(&e, &a);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, echo_once, &e), 0);
    assert_true(wait_for(not_probing, u, 3000));
    pthread_join(t, NULL);
    close(e.fd);
    assert_int_equal(atomic_load(&u->fails), 0);
    assert_false(fwd_down(st, u));
    fwd_health_stop(st);
    fwd_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_stanzas_and_file),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tls_upstreams),
        cmocka_unit_test(test_upstream_addresses),
        cmocka_unit_test(test_add_client_subnet),
        cmocka_unit_test(test_rcodes),
        cmocka_unit_test(test_policy),
        cmocka_unit_test(test_down),
        cmocka_unit_test(test_probe_unreachable),
        cmocka_unit_test(test_probe_query),
        cmocka_unit_test(test_probe_matching),
        cmocka_unit_test(test_health_transitions),
        cmocka_unit_test(test_probe_tcp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
