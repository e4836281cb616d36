/*
 * plugins.c — the composition root's plugin table: every plugin this binary
 * has, bound to its directive name.
 *
 * This is the only file that names plugins. main() hands the table to the
 * server (server_env.plugins); the server knows plugins only through
 * plugin_def and the chain order of names (src/server/order.h). Unit tests
 * that load whole Corefiles link this file too.
 */
#include <stddef.h>
#include "plugins.h"

extern const plugin_def plugin_any, plugin_bind, plugin_cache, plugin_errors, plugin_file,
    plugin_forward, plugin_health, plugin_hosts, plugin_kubernetes, plugin_loadbalance,
    plugin_log, plugin_loop, plugin_prometheus, plugin_ready, plugin_reload, plugin_topology,
    plugin_whoami;
extern const plugin_def plugin_acl, plugin_bufsize, plugin_chaos, plugin_debug, plugin_header,
    plugin_local, plugin_metadata, plugin_minimal, plugin_nsid;

const plugin_def *const topodns_plugins[] = {
    &plugin_any, &plugin_bind, &plugin_cache, &plugin_errors, &plugin_file,
    &plugin_forward, &plugin_health, &plugin_hosts, &plugin_kubernetes, &plugin_loadbalance,
    &plugin_log, &plugin_loop, &plugin_prometheus, &plugin_ready, &plugin_reload,
    &plugin_topology, &plugin_whoami,
    &plugin_acl, &plugin_bufsize, &plugin_chaos, &plugin_debug, &plugin_header, &plugin_local,
    &plugin_metadata, &plugin_minimal, &plugin_nsid,
    NULL,
};
