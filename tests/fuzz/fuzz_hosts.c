/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_hosts.c — fuzz harness for the hosts plugin (src/plugin/hosts/):
 * the hosts-file reader (addresses with zone indexes and IPv4-mapped IPv6,
 * names, comments, long lines, duplicates), the re-read that publishes a
 * new table, and the answers built from it (A, AAAA, PTR for any reverse
 * name, NODATA, fallthrough).
 *
 * Input: 8 octets that choose the questions, then the hosts file.
 *
 * One instance serves every input: it is loaded once from a Corefile whose
 * `hosts` names a file in /dev/shm (scratch.h) with `reload 0`, and its
 * plugins are started (instance_prepare: metrics, no listener, no reload
 * thread). For each input the harness writes the file and calls
 * hosts_reread(), the step the reload thread takes when the file changed
 * at runtime (build the table, publish it, free the old one after a grace
 * period), so a running server's path is what reads the input. Four questions then run
 * through the real chain: octets 2i and 2i+1 pick the name (among 3 fixed
 * names — localhost., 1.0.0.127.in-addr.arpa., nothing.example.net., the
 * last falling through — the first 8 names of the file and the reverse
 * names of its first 8 addresses) and the type (A, AAAA, MX or PTR) of
 * question i. Every question that parses gets a reply with its ID and
 * question that encodes within 512 octets: the request's own encoding
 * (uncompressed, as the server sends it) is checked; only a reply longer
 * than 512 octets is encoded again, compressed and truncated to 512.
 * Then the file is removed and re-read (an empty table, the input's one
 * freed), so every input frees what it allocated and libFuzzer's
 * per-input leak check stays meaningful.
 *
 * (Until this layout each input loaded and freed a whole instance and
 * asked up to 27 questions — A, AAAA and MX for every name, PTR for every
 * address — re-encoding every reply: about a tenth of the executions per
 * CPU-second for the same code; libFuzzer finds the pairs that matter.)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "cluster/pmap.h"
#include "plugin/hosts/hosts.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/msg.h"
#include "plugins.h"
#include "scratch.h"

enum { PICKS = 4, SELECT = 2 * PICKS, FILE_NAMES = 8, FILE_ADDRS = 8 };

extern const plugin_def plugin_hosts;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_hosts: %s\n", why);
    abort();
}

static void ask(instance *ins, const char *name, uint16_t type)
{
    static uint8_t out[65536];
    uint8_t qname[DNAME_MAX], qw[512];
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
    size_t len;
    const uint8_t *wire = req_reply_wire(r, &len);
    if (!wire || len < 12 || wire[0] != 0x12 || wire[1] != 0x34 || len > 65535)
        fail("the reply sent is not one with the query's ID");
    /* compressed and truncated never exceeds the uncompressed form */
    if (len > 512) {
        int n = msg_encode(&r->resp, out, sizeof out, 512, 1);
        if (n < 12 || n > 512)
            fail("the reply does not encode within 512 octets");
    }
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

typedef struct harness {
    server_env env;
    instance *ins;
    void *hosts;                        /* the hosts plugin's instance */
    char path[SCRATCH_PATH];            /* its file */
} harness;

static harness the;

static harness *setup(void)
{
    if (the.ins)
        return &the;
    the.env.plugins = topodns_plugins;
    the.env.dns_port = 53;
    the.env.metrics = metrics_registry_new();
    pmap_register_thread();
    char cf[SCRATCH_PATH], text[512], err[1024] = "";
    scratch_file("hosts", the.path);
    scratch_file("Corefile", cf);
    snprintf(text, sizeof text,
             ".:53 {\n    hosts %s . {\n        ttl 30\n        reload 0\n"
             "        fallthrough example.net\n    }\n}\n", the.path);
    FILE *f = fopen(cf, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
    if (!(the.ins = instance_load(&the.env, cf, err, sizeof err)) ||
        instance_prepare(the.ins, NULL, err, sizeof err) != 0)
        fail(err);
    const handler *hs[16];
    size_t n = instance_handlers(the.ins, hs, 16);
    for (size_t i = 0; i < n && !the.hosts; i++)
        if (hs[i]->def == &plugin_hosts)
            the.hosts = hs[i]->inst;
    if (!the.hosts)
        fail("no hosts handler");
    return &the;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const fixed[] = {
        "localhost.", "1.0.0.127.in-addr.arpa.", "nothing.example.net.",
    };
    static const uint16_t types[] = { T_A, T_AAAA, T_MX, T_PTR };
    enum { NFIXED = sizeof fixed / sizeof fixed[0], NTYPES = sizeof types / sizeof types[0] };
    /* libFuzzer's first call, an empty input, counts toward no coverage:
     * the one-time setup waits for the first real input, so that the
     * Corefile and instance code it runs counts as reached */
    if (!size && !the.ins)
        return 0;
    harness *H = setup();
    uint8_t pick[SELECT] = { 0 };
    size_t np = size < SELECT ? size : SELECT;
    memcpy(pick, data, np);
    data += np;
    size -= np;
    int fd = open(H->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
        abort();
    hosts_reread(H->hosts);
    /* the names (with their spelling in the file) and reverse names of the
     * first lines */
    char *copy = malloc(size + 1), rev[FILE_ADDRS][80];
    const char *names[NFIXED + FILE_NAMES + FILE_ADDRS];
    size_t nn = 0, nr = 0;
    for (size_t i = 0; i < NFIXED; i++)
        names[nn++] = fixed[i];
    if (!copy)
        abort();
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *save_line = NULL;
    for (char *line = strtok_r(copy, "\n", &save_line);
         line && (nn < NFIXED + FILE_NAMES || nr < FILE_ADDRS);
         line = strtok_r(NULL, "\n", &save_line)) {
        char *hash = strchr(line, '#'), *save = NULL;
        if (hash)
            *hash = '\0';
        char *addr = strtok_r(line, " \t\r", &save);
        if (!addr)
            continue;
        if (nr < FILE_ADDRS) {
            reverse(addr, rev[nr], sizeof rev[nr]);
            if (rev[nr][0])
                nr++;
        }
        for (char *name = strtok_r(NULL, " \t\r", &save); name && nn < NFIXED + FILE_NAMES;
             name = strtok_r(NULL, " \t\r", &save))
            names[nn++] = name;
    }
    for (size_t i = 0; i < nr; i++)
        names[nn++] = rev[i];
    for (size_t i = 0; i < PICKS; i++)
        ask(H->ins, names[pick[2 * i] % nn], types[pick[2 * i + 1] % NTYPES]);
    free(copy);
    /* back to an empty table: what this input allocated is freed in it */
    unlink(H->path);
    hosts_reread(H->hosts);
    return 0;
}
