/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind — restrict the addresses a server block listens on.
 *
 *   bind ADDRESS|INTERFACE ... { except ADDRESS ... }
 *
 * Interfaces expand to all their addresses (IPv4 and IPv6 link-local
 * excluded, as CoreDNS does). Without bind a block listens on every
 * interface. The plugin is not in the query chain: it only shapes the
 * listeners the server opens.
 */
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "server/plugin.h"
#include "server/server.h"
#include "common/addr.h"
#include "common/vec.h"

/* An IPv4 or IPv6 address without a zone (anything else is an interface
 * name). */
static int is_ip(const char *s)
{
    uint8_t buf[16];
    int fam;
    return addr_parse_bytes(s, strlen(s), 0, &fam, buf) == 0;
}

static int has(char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

static int push(server_block *b, const char *addr)
{
    if (has(b->bind, b->nbind, addr))
        return 0;
    if (VEC_RESIZE(b->bind, b->nbind + 1) < 0)
        return -1;
    if (!(b->bind[b->nbind] = strdup(addr)))
        return -1;
    b->nbind++;
    return 0;
}

/* Addresses of one interface; 0 when it has none / does not exist. */
static int iface_addrs(server_block *b, const char *name)
{
    struct ifaddrs *ifa, *p;
    int found = 0;
    if (getifaddrs(&ifa) < 0)
        return 0;
    for (p = ifa; p; p = p->ifa_next) {
        if (!p->ifa_addr || strcmp(p->ifa_name, name) != 0)
            continue;
        char txt[INET6_ADDRSTRLEN];
        if (p->ifa_addr->sa_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, txt, sizeof txt);
        } else if (p->ifa_addr->sa_family == AF_INET6) {
            struct in6_addr *a = &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr;
            if (IN6_IS_ADDR_LINKLOCAL(a))
                continue;
            inet_ntop(AF_INET6, a, txt, sizeof txt);
        } else {
            continue;
        }
        if (push(b, txt) < 0)
            break;
        found = 1;
    }
    freeifaddrs(ifa);
    return found;
}

static int bind_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    server_block *b = ctx->blk;
    const char *except[64];
    int nexcept = 0;
    while (cf_next(d)) {
        int nargs = 0;
        while (cf_next_arg(d)) {
            const char *a = cf_val(d);
            nargs++;
            if (is_ip(a)) {
                if (push(b, a) < 0)
                    return cf_err(d, "out of memory");
            } else if (!iface_addrs(b, a)) {
                return cf_err(d, "not a valid IP address or interface name");
            }
        }
        if (nargs == 0)
            return cf_arg_err(d);
        while (cf_next_block(d)) {
            if (strcmp(cf_val(d), "except") != 0)
                return cf_prop_err(d);
            int n = 0;
            while (cf_next_arg(d)) {
                if (!is_ip(cf_val(d)))
                    return cf_err(d, "not a valid IP address");
                if (nexcept < 64)
                    except[nexcept++] = cf_val(d);
                n++;
            }
            if (n == 0)
                return cf_arg_err(d);
        }
    }
    for (int i = 0; i < nexcept; i++)
        for (size_t j = 0; j < b->nbind; j++)
            if (strcmp(b->bind[j], except[i]) == 0) {
                free(b->bind[j]);
                b->bind[j] = b->bind[--b->nbind];
                j--;
            }
    if (b->nbind == 0)
        return cf_err(d, "no address left to bind to");
    *inst = NULL;
    return 0;
}

const plugin_def plugin_bind = {
    .name = "bind",
    .setup = bind_setup,
};
