/*
 * fuzz_hosts.c — fuzz harness for the hosts plugin (src/plugin/hosts/):
 * the hosts-file reader (addresses with zone indexes and IPv4-mapped IPv6,
 * names, comments, long lines, duplicates) and the answers built from it
 * (A, AAAA, PTR for any reverse name, NODATA, fallthrough).
 *
 * Input: the hosts file. It is written to a file in /dev/shm (scratch.h;
 * the same file for every input, beside a Corefile written once), an instance is
 * loaded from a Corefile whose `hosts` names it (the table is built at
 * setup; nothing starts), and queries run through the real chain: A, AAAA
 * and MX for the first names of the file, PTR for the reverse names of its
 * addresses, and a few fixed names. Every query that parses gets a reply
 * with its ID and question that encodes within 512 octets.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "cluster/pmap.h"
#include "server/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/msg.h"
#include "plugins.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_hosts: %s\n", why);
    abort();
}

static void ask(instance *ins, const char *name, uint16_t type)
{
    uint8_t qname[DNAME_MAX], qw[512], out[65536];
    if (dname_from_str(qname, name) < 0)
        return;
    dns_query dq = { .id = 0x1234, .flags = F_RD, .qname = qname, .qtype = type, .qclass = 1 };
    int qn = msg_query(&dq, qw, sizeof qw);
    if (qn < 0)
        return;
    dns_req *r = req_new_internal(ins, NULL, qw, (size_t)qn, "127.0.0.1");
    if (!r)
        fail("own query refused");
    req_run(r);
    if (!r->written || r->resp.id != 0x1234 || !r->resp.has_question ||
        !dname_equal(r->resp.qname, qname))
        fail("no reply, or a reply to another question");
    int n = msg_encode(&r->resp, out, sizeof out, 512, 1);
    if (n < 12 || n > 512)
        fail("the reply does not encode within 512 octets");
    req_free(r);
}

/* The reverse name of a textual address, or "" */
static void reverse(const char *addr, char *out, size_t cap)
{
    uint8_t a[16];
    char buf[64];
    snprintf(buf, sizeof buf, "%s", addr);
    char *pct = strchr(buf, '%');
    if (pct)
        *pct = '\0';
    out[0] = '\0';
    if (inet_pton(AF_INET, buf, a) == 1) {
        snprintf(out, cap, "%u.%u.%u.%u.in-addr.arpa.", a[3], a[2], a[1], a[0]);
    } else if (inet_pton(AF_INET6, buf, a) == 1) {
        size_t n = 0;
        for (int i = 15; i >= 0 && n + 4 < cap; i--)
            n += (size_t)snprintf(out + n, cap - n, "%x.%x.", a[i] & 15, a[i] >> 4);
        snprintf(out + n, cap - n, "ip6.arpa.");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static server_env env;
    if (!env.plugins) {
        env.plugins = topodns_plugins;
        env.dns_port = 53;
        env.metrics = metrics_registry_new();
        pmap_register_thread();
    }
    static char hosts[SCRATCH_PATH], cf[SCRATCH_PATH];
    char text[512], err[1024] = "";
    FILE *f;
    if (!cf[0]) {
        scratch_file("hosts", hosts);
        scratch_file("Corefile", cf);
        snprintf(text, sizeof text,
                 ".:53 {\n    hosts %s . {\n        ttl 30\n        reload 0\n"
                 "        fallthrough example.net\n    }\n}\n", hosts);
        f = fopen(cf, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
            abort();
    }
    f = fopen(hosts, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    instance *ins = instance_load(&env, cf, err, sizeof err);
    if (!ins)
        fail(err);
    /* names and addresses of the first lines */
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    int asked = 0;
    char *save_line = NULL;
    for (char *line = strtok_r(copy, "\n", &save_line); line && asked < 8;
         line = strtok_r(NULL, "\n", &save_line)) {
        char *hash = strchr(line, '#'), *save = NULL;
        if (hash)
            *hash = '\0';
        char *addr = strtok_r(line, " \t\r", &save), rev[128];
        if (!addr)
            continue;
        reverse(addr, rev, sizeof rev);
        if (rev[0])
            ask(ins, rev, T_PTR);
        for (char *name = strtok_r(NULL, " \t\r", &save); name && asked < 8;
             name = strtok_r(NULL, " \t\r", &save), asked++) {
            ask(ins, name, T_A);
            ask(ins, name, T_AAAA);
            ask(ins, name, T_MX);
        }
    }
    free(copy);
    ask(ins, "localhost.", T_A);
    ask(ins, "1.0.0.127.in-addr.arpa.", T_PTR);
    ask(ins, "nothing.example.net.", T_A);
    instance_free(ins);
    return 0;
}
