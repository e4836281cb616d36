/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testenv.h — what a unit test that loads whole Corefiles hands the server:
 * every plugin of the binary (src/plugins.c) and one metrics registry for
 * the test program, made on first use (the process's place in main());
 * helpers to load a Corefile text and run one query through it; and an
 * upstream server for tests of plugins that forward.
 */
#ifndef TOPODNS_TEST_ENV_H
#define TOPODNS_TEST_ENV_H

#include "runtime/metrics.h"
#include "server/server.h"

const server_env *test_env(void);
metrics_registry *test_registry(void);

/* A Corefile text loaded into an instance of test_env() (set up, nothing
 * bound or started): NULL with the error in err when it does not load. */
instance *test_load(const char *text, char *err, size_t errlen);
/* The instance data of the first handler of plugin def in ins (the
 * chain's order), or NULL when ins has none. */
void *test_plugin_inst(instance *ins, const plugin_def *def);
/* One query through ins, routed as a UDP query from the client address
 * peer ("192.0.2.1", "2001:db8::1") would be: the finished request with
 * its reply in r->resp (req_free it), or NULL when the query is not
 * parsable. */
dns_req *test_query(instance *ins, const dns_query *q, const char *peer);
/* The same for a query given as octets (e.g. one with EDNS options built
 * with msg_encode): NULL when they are not a parsable query. */
dns_req *test_query_wire(instance *ins, const uint8_t *wire, size_t len, const char *peer);
/* name (presentation form) / type, class IN, RD set, no EDNS, from peer:
 * test_query's result, NULL also when name is not a valid name. */
dns_req *test_ask(instance *ins, const char *name, uint16_t type, const char *peer);
/* Section sec of m in presentation form, one record a line ("owner ttl
 * CLASS TYPE rdata", single spaces, '\n' between records, none after the
 * last), into out (cut at cap); returns out. */
const char *test_section(const dns_msg *m, int sec, char *out, size_t cap);
/* For cmocka tests: text loaded, the test failing with the error when it
 * does not load; and name/type asked from 192.0.2.1, the test failing
 * unless the reply has this rcode and this answer section (test_section's
 * text). */
instance *test_must_load(const char *text);
void test_expect(instance *ins, const char *name, uint16_t type, int rcode, const char *answer);
/* For cmocka tests: text must not load, and its error must contain msg. */
void test_load_fails(const char *text, const char *msg);
/* The error of loading text when it does not load, into err; "" when it
 * loads (the instance is freed). Returns err. */
const char *test_load_err(const char *text, char *err, size_t errlen);

/* An upstream DNS server played by the test on a UDP socket of 127.0.0.1:
 * from base's loop it answers every query with one A record (ip in host
 * order, ttl), counts the queries and keeps the last one (its name, and
 * its octets as received). */
struct event_base;
struct event;
typedef struct test_upstream {
    int fd;
    struct event *ev;
    uint32_t ip, ttl;
    int nq;
    char last[DNAME_STR_MAX];
    uint8_t lastq[512];
    size_t lastqlen;
} test_upstream;
/* Its port (a test fails when the socket cannot be made). */
int test_upstream_start(test_upstream *u, struct event_base *base, uint32_t ip, uint32_t ttl);
void test_upstream_stop(test_upstream *u);

#endif
