/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tls — DNS over TLS for a server block's tls:// listeners, in CoreDNS's
 * syntax:
 *
 *   tls CERT KEY [CA] {
 *       client_auth nocert|request|require|verify_if_given|require_and_verify
 *   }
 *
 * Not in the query chain: setup() fills the block's server_tls
 * (src/server/server.h says what each value means); the server loads the
 * files into the TLS context of the block's tls:// listeners and serves
 * DNS over TLS there. Here only the syntax is checked, and that each file
 * can be opened (so a typo stops startup with this line even in a block
 * that has no tls:// key, as CoreDNS loads them at setup). A later
 * occurrence in the block replaces an earlier one. CoreDNS's automatic
 * certificates (`tls` without arguments, acme) and `keylog` are refused
 * with an error rather than ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/plugin.h"
#include "server/server.h"

static int readable(cf_disp *d, const char *what, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cf_err(d, "plugin/tls: %s: open %s: %s", what, path, strerror(errno));
    fclose(f);
    return 0;
}

static int parse_client_auth(cf_disp *d, int *out)
{
    static const char *const names[] = {
        [TLS_AUTH_NOCERT] = "nocert", [TLS_AUTH_REQUEST] = "request",
        [TLS_AUTH_REQUIRE] = "require", [TLS_AUTH_VERIFY_IF_GIVEN] = "verify_if_given",
        [TLS_AUTH_REQUIRE_AND_VERIFY] = "require_and_verify",
    };
    const char *a[2];
    if (cf_remaining_args(d, a, 2) != 1)
        return cf_arg_err(d);
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(a[0], names[i]) == 0) {
            *out = i;
            return 0;
        }
    return cf_err(d, "plugin/tls: unknown authentication type '%s'", a[0]);
}

/* One occurrence: the arguments and the block, into t (replaced). */
static int parse_one(cf_disp *d, server_tls *t)
{
    const cf_token *tok = &d->toks[d->cur];
    const char *args[4];
    int n = cf_remaining_args(d, args, 4);
    if (n == 0)
        return cf_err(d, "plugin/tls: automatic certificates (ACME) are not supported by topodns");
    if (n < 2 || n > 3)
        return cf_arg_err(d);
    int auth = TLS_AUTH_NOCERT;
    while (cf_next_block(d)) {
        const char *p = cf_val(d);
        if (strcmp(p, "client_auth") == 0) {
            if (parse_client_auth(d, &auth) < 0)
                return -1;
        } else if (strcmp(p, "keylog") == 0) {
            return cf_err(d, "plugin/tls: 'keylog' is not supported by topodns");
        } else {
            return cf_err(d, "plugin/tls: unknown option '%s'", p);
        }
    }
    if (readable(d, "could not load TLS cert", args[0]) < 0 ||
        readable(d, "could not load TLS cert", args[1]) < 0 ||
        (n == 3 && readable(d, "error reading", args[2]) < 0))
        return -1;
    char *cert = strdup(args[0]), *key = strdup(args[1]), *ca = n == 3 ? strdup(args[2]) : NULL;
    if (!cert || !key || (n == 3 && !ca)) {
        free(cert);
        free(key);
        free(ca);
        return cf_err(d, "plugin/tls: out of memory");
    }
    free(t->cert);
    free(t->key);
    free(t->ca);
    t->cert = cert;
    t->key = key;
    t->ca = ca;
    t->client_auth = auth;
    t->tok = tok;
    t->set = 1;
    return 0;
}

static int tls_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    *inst = NULL;
    while (cf_next(d))
        if (parse_one(d, &ctx->blk->tls) < 0)
            return -1;
    return 0;
}

const plugin_def plugin_tls = {
    .name = "tls",
    .setup = tls_setup,
};
