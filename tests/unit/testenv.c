/*
 * testenv.c — see testenv.h. Single-threaded: called from a test's main
 * thread before it starts anything.
 */
#include <stddef.h>
#include "plugins.h"
#include "testenv.h"

static server_env env = { .plugins = topodns_plugins, .dns_port = 53 };

const server_env *test_env(void)
{
    if (!env.metrics)
        env.metrics = metrics_registry_new();
    return &env;
}

metrics_registry *test_registry(void)
{
    return test_env()->metrics;
}
