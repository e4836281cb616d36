/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_topology_plugin.c — the topology directive as the Corefile gives it:
 * where the explain endpoint listens. Instances are loaded (setup only,
 * never started: nothing binds) and the engine's configuration is read
 * from the block.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "server/server.h"
#include "topology/topology.h"
#include "testenv.h"

static char *locate_str(const topo_cfg *c);

/* The engine's configuration of a server block whose topology stanza is
 * props, its instance in *ins (the caller frees it); or NULL with the load
 * error in err. */
static const topo_cfg *load_topology(const char *props, instance **ins, char *err, size_t errlen)
{
    char path[] = "/tmp/test_topology_plugin.XXXXXX", text[512];
    snprintf(text, sizeof text, ".:53 {\n    kubernetes cluster.local\n    topology {\n        %s\n"
             "    }\n}\n", props);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    *ins = instance_load(test_env(), path, err, errlen);
    unlink(path);
    if (!*ins)
        return NULL;
    topo_engine *e = block_value(instance_block(*ins, 0), TOPO_ENGINE_KEY);
    assert_non_null(e);
    return topo_engine_cfg(e);
}

/* The explain address (or, with want_node, the node) the topology stanza
 * props configures, or the load error (malloc'd either way). */
static char *cfg_of(const char *props, int want_node)
{
    char err[1024] = "";
    instance *ins;
    const topo_cfg *c = load_topology(props, &ins, err, sizeof err);
    if (!c)
        return strdup(err);
    const char *addr = want_node ? c->node : c->explain;
    char *out = want_node == 2 ? locate_str(c) : strdup(addr ? addr : "(none)");
    instance_free(ins);
    return out;
}

static char *explain_of(const char *props) { return cfg_of(props, 0); }

static void expect(const char *props, const char *want)
{
    char *got = explain_of(props);
    if (!strstr(got, want))
        fail_msg("%s: got '%s', want '%s'", props, got, want);
    free(got);
}

/* Regression: `explain :8080` listened on every interface, and the
 * endpoint tells anyone who reaches it any client's pod, node and zone.
 * Without a host it listens on loopback; an explicit host is honoured. */
static void test_explain_loopback_by_default(void **state)
{
    (void)state;
    unsetenv("TOPODNS_DEFAULT_BIND");
    expect("explain :8080", "127.0.0.1:8080");
    expect("explain 8080", "127.0.0.1:8080");
    expect("explain", "127.0.0.1:8182");
    expect("explain 127.0.0.1:9000", "127.0.0.1:9000");
    expect("explain localhost:9000", "localhost:9000");
    expect("explain 0.0.0.0:9000", "0.0.0.0:9000");          /* asked for: every interface */
    expect("explain [::]:9000", "[::]:9000");
    expect("explain [::1]:9000", "[::1]:9000");
    expect("explain 10.0.0.1:9000", "10.0.0.1:9000");
    expect("hints off", "(none)");
    /* bad addresses stop the load at their token */
    expect("explain :99999", ":4: address 127.0.0.1:99999: invalid port near ':99999'");
    expect("explain 80x", ":4: address 80x: missing port in address near '80x'");
    expect("explain a:1 b:2", ":4: Wrong argument count");
}

/* client_subnet goes through the one CIDR parser (common/cidr, Go's
 * net.ParseCIDR): networks with host bits cleared, a bare address is one
 * host; a sign, an out-of-range length or a zero-padded octet stops the
 * load. The list is printed as the engine keeps it. */
static char *subnets_of(const char *props)
{
    char err[1024] = "";
    instance *ins;
    const topo_cfg *c = load_topology(props, &ins, err, sizeof err);
    if (!c)
        return strdup(err);
    char out[512] = "", a[INET6_ADDRSTRLEN];
    for (int i = 0; i < c->nsubnets; i++) {
        inet_ntop(c->subnets[i].family, c->subnets[i].addr, a, sizeof a);
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s/%u", i ? " " : "", a,
                 c->subnets[i].bits);
    }
    instance_free(ins);
    return strdup(out);
}

static void expect_subnets(const char *props, const char *want)
{
    char *got = subnets_of(props);
    if (strcmp(got, want) && !strstr(got, want))
        fail_msg("%s: got '%s', want '%s'", props, got, want);
    free(got);
}

static void test_client_subnet(void **state)
{
    (void)state;
    expect_subnets("client_subnet 10.1.2.3/8 fd00::1/8 192.0.2.7 ::1",
                   "10.0.0.0/8 fd00::/8 192.0.2.7/32 ::1/128");
    expect_subnets("client_subnet 10.0.0.0/08", "10.0.0.0/8");    /* Go takes leading zeros */
    expect_subnets("client_subnet 10.0.0.0/+8", ":4: invalid CIDR");
    expect_subnets("client_subnet 10.0.0.0/-0", ":4: invalid CIDR");
    expect_subnets("client_subnet 10.0.0.0/33", ":4: invalid CIDR");
    expect_subnets("client_subnet ::/129", ":4: invalid CIDR");
    expect_subnets("client_subnet 10.0.0.0/", ":4: invalid CIDR");
    expect_subnets("client_subnet 10.0.0.0/8x", ":4: invalid CIDR");
    expect_subnets("client_subnet 010.0.0.0/8", ":4: invalid CIDR");
    expect_subnets("client_subnet fe80::1%lo/64", ":4: invalid CIDR");
    expect_subnets("client_subnet", ":4: Wrong argument count");
}

static void expect_node(const char *props, const char *want)
{
    char *got = cfg_of(props, 1);
    if (strcmp(got, want) && !strstr(got, want))
        fail_msg("%s: got '%s', want '%s'", props, got, want);
    free(got);
}

/* `node NAME` (node-local mode): the name, from the environment as
 * operators write it; a missing, empty, repeated or invalid name stops the
 * load at file:line and the token. */
static void test_node_option(void **state)
{
    (void)state;
    unsetenv("TOPODNS_DEFAULT_BIND");
    expect_node("hints off", "(none)");
    expect_node("node node-a", "node-a");
    expect_node("node ip-10-0-1-5.eu-west-1.compute.internal",
                "ip-10-0-1-5.eu-west-1.compute.internal");
    setenv("TOPODNS_TEST_NODE", "worker-7", 1);
    expect_node("node {$TOPODNS_TEST_NODE}", "worker-7");
    unsetenv("TOPODNS_TEST_NODE");
    expect_node("node {$TOPODNS_TEST_NODE}",
                ":4: node name is empty (is the environment variable set?)");
    expect_node("node", ":4: Wrong argument count");
    expect_node("node a b", ":4: Wrong argument count");
    expect_node("node a\n        node b", ":5: node given twice near 'node'");
    expect_node("node Node-A", ":4: invalid node name 'Node-A'");
    expect_node("node -a", ":4: invalid node name '-a'");
    expect_node("node a..b", ":4: invalid node name 'a..b'");
    expect_node("node a_b", ":4: invalid node name 'a_b'");
    expect_node("node a\n        events", ":5: events and node cannot be combined");
    expect_node("events\n        node a", ":5: events and node cannot be combined");
}

/* The configured sources as words, "(default)" when none was given. */
static char *locate_str(const topo_cfg *c)
{
    char buf[128] = "";
    size_t o = 0;
    for (uint8_t i = 0; i < c->locate.n; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? " " : "",
                              locator_source_name(c->locate.src[i]));
    return strdup(c->locate.n ? buf : "(default)");
}

static void expect_locate(const char *props, const char *want)
{
    char *got = cfg_of(props, 2);
    if (strcmp(got, want) && !(*want == ':' && strstr(got, want)))
        fail_msg("%s: got '%s', want '%s'", props, got, want);
    free(got);
}

/* `locate SOURCE...`: the words in their order; an unknown, repeated or
 * missing word stops the load at file:line with the word. Accepted in the
 * node-local shape too. */
static void test_locate_option(void **state)
{
    (void)state;
    unsetenv("TOPODNS_DEFAULT_BIND");
    expect_locate("hints off", "(default)");
    expect_locate("locate pods", "pods");
    expect_locate("locate podcidr endpoints", "podcidr endpoints");
    expect_locate("locate endpoints pods", "endpoints pods");
    expect_locate("locate podcidr endpoints cilium calico pods",
                  "podcidr endpoints cilium calico pods");
    expect_locate("node a\n        locate podcidr", "podcidr");
    expect_locate("locate podcidr podCIDR", ":4: unknown locate source 'podCIDR'");
    expect_locate("locate flannel", ":4: unknown locate source 'flannel'");
    expect_locate("locate", ":4: Wrong argument count");
    expect_locate("locate pods pods", ":4: locate source 'pods' given twice");
    expect_locate("locate pods\n        locate podcidr", ":5: locate given twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explain_loopback_by_default),
        cmocka_unit_test(test_client_subnet),
        cmocka_unit_test(test_node_option),
        cmocka_unit_test(test_locate_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
