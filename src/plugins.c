/* SPDX-License-Identifier: Apache-2.0 */
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

/* one line per plugin, alphabetical */
extern const plugin_def plugin_acl;
extern const plugin_def plugin_any;
extern const plugin_def plugin_autopath;
extern const plugin_def plugin_bind;
extern const plugin_def plugin_bufsize;
extern const plugin_def plugin_cache;
extern const plugin_def plugin_chaos;
extern const plugin_def plugin_debug;
extern const plugin_def plugin_dns64;
extern const plugin_def plugin_dnstap;
extern const plugin_def plugin_errors;
extern const plugin_def plugin_file;
extern const plugin_def plugin_forward;
extern const plugin_def plugin_header;
extern const plugin_def plugin_health;
extern const plugin_def plugin_hosts;
extern const plugin_def plugin_k8s_external;
extern const plugin_def plugin_kubernetes;
extern const plugin_def plugin_loadbalance;
extern const plugin_def plugin_local;
extern const plugin_def plugin_log;
extern const plugin_def plugin_loop;
extern const plugin_def plugin_metadata;
extern const plugin_def plugin_minimal;
extern const plugin_def plugin_nsid;
extern const plugin_def plugin_prometheus;
extern const plugin_def plugin_ready;
extern const plugin_def plugin_reload;
extern const plugin_def plugin_rewrite;
extern const plugin_def plugin_template;
extern const plugin_def plugin_timeouts;
extern const plugin_def plugin_tls;
extern const plugin_def plugin_topology;
extern const plugin_def plugin_transfer;
extern const plugin_def plugin_view;
extern const plugin_def plugin_whoami;

const plugin_def *const topodns_plugins[] = {
    &plugin_acl,
    &plugin_any,
    &plugin_autopath,
    &plugin_bind,
    &plugin_bufsize,
    &plugin_cache,
    &plugin_chaos,
    &plugin_debug,
    &plugin_dns64,
    &plugin_dnstap,
    &plugin_errors,
    &plugin_file,
    &plugin_forward,
    &plugin_header,
    &plugin_health,
    &plugin_hosts,
    &plugin_k8s_external,
    &plugin_kubernetes,
    &plugin_loadbalance,
    &plugin_local,
    &plugin_log,
    &plugin_loop,
    &plugin_metadata,
    &plugin_minimal,
    &plugin_nsid,
    &plugin_prometheus,
    &plugin_ready,
    &plugin_reload,
    &plugin_rewrite,
    &plugin_template,
    &plugin_timeouts,
    &plugin_tls,
    &plugin_topology,
    &plugin_transfer,
    &plugin_view,
    &plugin_whoami,
    NULL,
};
