/* SPDX-License-Identifier: Apache-2.0 */
/*
 * addr.c — written addresses to address bytes and to sockaddrs (addr.h).
 */
#include <assert.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "common/addr.h"

int addr_parse_bytes(const char *text, size_t len, unsigned flags, int *family,
                     uint8_t addr[16])
{
    assert(family && addr && (text || len == 0));
    assert((flags & ~(ADDR_ZONE | ADDR_UNMAP)) == 0);
    *family = AF_UNSPEC;
    memset(addr, 0, 16);
    if (flags & ADDR_ZONE) {
        const char *pct = memchr(text, '%', len);
        if (pct)
            len = (size_t)(pct - text);
    }
    char buf[INET6_ADDRSTRLEN];
    if (len == 0 || len >= sizeof buf || memchr(text, '\0', len))
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, addr) == 1) {
        *family = AF_INET;
    } else if (inet_pton(AF_INET6, buf, addr) == 1) {
        *family = AF_INET6;
        /* compared as bytes: addr need not be aligned for struct in6_addr */
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        if ((flags & ADDR_UNMAP) && memcmp(addr, mapped, sizeof mapped) == 0) {
            memmove(addr, addr + 12, 4);
            memset(addr + 4, 0, 12);
            *family = AF_INET;
        }
    } else {
        memset(addr, 0, 16);
        return -1;
    }
    assert(*family == AF_INET6 || !memcmp(addr + 4, (const uint8_t[12]){ 0 }, 12));
    return 0;
}

int addr_parse_ip(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len)
{
    assert(ip && ss && len);
    if (port < 0 || port > 65535)
        return -1;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    uint8_t a[16];
    int fam;
    if (addr_parse_bytes(ip, strlen(ip), 0, &fam, a) == 0 && fam == AF_INET) {
        memcpy(&s4->sin_addr, a, 4);
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *len = sizeof *s4;
        return 0;
    }
    /* IPv6, with a zone when one is written: getaddrinfo reads both (the
     * family hint keeps it from taking inet_aton's IPv4 forms) */
    struct addrinfo hints = { .ai_family = AF_INET6, .ai_socktype = SOCK_DGRAM,
                              .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    if (!*ip || getaddrinfo(ip, NULL, &hints, &res) != 0)
        return -1;
    int rc = -1;
    if (res && res->ai_family == AF_INET6 && res->ai_addrlen == sizeof(struct sockaddr_in6)) {
        memcpy(ss, res->ai_addr, sizeof(struct sockaddr_in6));
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
        *len = sizeof(struct sockaddr_in6);
        rc = 0;
    }
    freeaddrinfo(res);
    return rc;
}

int addr_parse(const char *text, int defport, struct sockaddr_storage *ss, socklen_t *len)
{
    assert(text && ss && len);
    char buf[INET6_ADDRSTRLEN + 64];
    if (strlen(text) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", text);
    char *host = buf, *p = NULL;
    if (buf[0] == '[') {
        char *close = strchr(buf, ']');
        if (!close)
            return -1;
        *close = '\0';
        host = buf + 1;
        if (close[1] == ':')
            p = close + 2;
        else if (close[1] != '\0')
            return -1;
    } else {
        char *c = strchr(buf, ':');
        if (c && c == strrchr(buf, ':')) {      /* one colon: IPv4:port */
            *c = '\0';
            p = c + 1;
        }
    }
    int port = defport;
    if (p) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        long v = strtol(p, &end, 10);
        if (*end || v < 1 || v > 65535)
            return -1;
        port = (int)v;
    }
    return addr_parse_ip(host, port, ss, len);
}

void sockaddr_unmap(struct sockaddr_storage *ss)
{
    assert(ss);
    if (ss->ss_family != AF_INET6)
        return;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    struct sockaddr_in s4;
    memset(&s4, 0, sizeof s4);
    s4.sin_family = AF_INET;
    s4.sin_port = s6->sin6_port;
    memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(ss, 0, sizeof *ss);
    memcpy(ss, &s4, sizeof s4);
}

const char *addr_default_bind(void)
{
    const char *b = getenv("TOPODNS_DEFAULT_BIND");
    return b && *b ? b : NULL;
}
