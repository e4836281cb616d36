/*
 * testenv.h — what a unit test that loads whole Corefiles hands the server:
 * every plugin of the binary (src/plugins.c) and one metrics registry for
 * the test program, made on first use (the process's place in main());
 * and helpers to load a Corefile text and run one query through it.
 */
#ifndef TOPODNS_TEST_ENV_H
#define TOPODNS_TEST_ENV_H

#include "server/metrics.h"
#include "server/server.h"

const server_env *test_env(void);
metrics_registry *test_registry(void);

/* A Corefile text loaded into an instance of test_env() (set up, nothing
 * bound or started): NULL with the error in err when it does not load. */
instance *test_load(const char *text, char *err, size_t errlen);
/* One query through ins, routed as a UDP query from the client address
 * peer ("192.0.2.1", "2001:db8::1") would be: the finished request with
 * its reply in r->resp (req_free it), or NULL when the query is not
 * parsable. */
dns_req *test_query(instance *ins, const dns_query *q, const char *peer);

#endif
