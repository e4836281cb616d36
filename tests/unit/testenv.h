/*
 * testenv.h — what a unit test that loads whole Corefiles hands the server:
 * every plugin of the binary (src/plugins.c) and one metrics registry for
 * the test program, made on first use (the process's place in main()).
 */
#ifndef TOPODNS_TEST_ENV_H
#define TOPODNS_TEST_ENV_H

#include "server/metrics.h"
#include "server/server.h"

const server_env *test_env(void);
metrics_registry *test_registry(void);

#endif
