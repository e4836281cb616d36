/*
 * testenv.c — see testenv.h. Single-threaded: called from a test's main
 * thread before it starts anything.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

instance *test_load(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/testenv_cf.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, errlen, "mkstemp failed");
        return NULL;
    }
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    close(fd);
    instance *ins = w == (ssize_t)len ? instance_load(test_env(), path, err, errlen) : NULL;
    unlink(path);
    return ins;
}

dns_req *test_query(instance *ins, const dns_query *q, const char *peer)
{
    uint8_t wire[512];
    int n = msg_query(q, wire, sizeof wire);
    if (n < 0)
        return NULL;
    dns_req *r = req_new_internal(ins, NULL, wire, (size_t)n, peer);
    if (r)
        req_run(r);
    return r;
}
