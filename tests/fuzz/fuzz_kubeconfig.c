/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_kubeconfig.c — fuzz harness for kubeconfig parsing
 * (src/k8s/config.c): the depth check over libyaml's events, the document
 * walk (clusters, users, contexts, current-context), base64 *-data fields,
 * relative paths, and the server URL check.
 *
 * Input: the kubeconfig text; when its first line is "#context NAME", NAME
 * is the context asked for (else current-context). The text is written to
 * a file in a private directory in /dev/shm (scratch.h; the same file for
 * every input: the parser reads a regular file by path, and resolves
 * relative paths against its directory).
 *
 * Checks: a configuration that loads has a server URL that k8s_url_check
 * accepts, and a file path it names is absolute (relative ones resolved).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "k8s/k8s.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_kubeconfig: %s\n", why);
    abort();
}

static void absolute(const char *p)
{
    if (p && p[0] != '/')
        fail("a relative path left unresolved");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[SCRATCH_PATH];
    char context[256];
    const char *ctx = NULL;
    if (size >= 9 && !memcmp(data, "#context ", 9)) {
        const uint8_t *nl = memchr(data, '\n', size);
        size_t n = (nl ? (size_t)(nl - data) : size) - 9;
        if (n >= sizeof context)
            n = sizeof context - 1;
        memcpy(context, data + 9, n);
        context[n] = '\0';
        ctx = context;
    }
    if (!path[0])
        scratch_file("config", path);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    k8s_config c;
    char err[1024] = "";
    if (k8s_config_kubeconfig(&c, path, ctx, err, sizeof err) == 0) {
        if (!c.server || k8s_url_check(c.server))
            fail("loaded with a server URL that does not pass the check");
        absolute(c.ca_file);
        absolute(c.cert_file);
        absolute(c.key_file);
        absolute(c.token_file);
        k8s_config_free(&c);
    } else if (!err[0]) {
        fail("failed without a message");
    }
    return 0;
}
