# SPDX-License-Identifier: Apache-2.0
# src/plugin: every plugin, one folder each, in one archive. The folders
# include nothing of each other; the plugin table that binds names to them
# is src/plugins.c (the composition root).
noinst_LIBRARIES += src/plugin/libplugins.a
src_plugin_libplugins_a_SOURCES =
# One include per plugin folder.
include src/plugin/errors/local.mk
include src/plugin/log/local.mk
include src/plugin/health/local.mk
include src/plugin/ready/local.mk
include src/plugin/prometheus/local.mk
include src/plugin/file/local.mk
include src/plugin/hosts/local.mk
include src/plugin/loadbalance/local.mk
include src/plugin/reload/local.mk
include src/plugin/whoami/local.mk
include src/plugin/bind/local.mk
include src/plugin/timeouts/local.mk
include src/plugin/any/local.mk
include src/plugin/kubernetes/local.mk
include src/plugin/k8s_external/local.mk
include src/plugin/topology/local.mk
include src/plugin/loop/local.mk
include src/plugin/forward/local.mk
include src/plugin/cache/local.mk
include src/plugin/transfer/local.mk
include src/plugin/autopath/local.mk
include src/plugin/bufsize/local.mk
include src/plugin/debug/local.mk
include src/plugin/nsid/local.mk
include src/plugin/acl/local.mk
include src/plugin/chaos/local.mk
include src/plugin/metadata/local.mk
include src/plugin/local/local.mk
include src/plugin/minimal/local.mk
include src/plugin/header/local.mk
include src/plugin/tls/local.mk
include src/plugin/rewrite/local.mk
include src/plugin/template/local.mk
include src/plugin/dns64/local.mk
include src/plugin/dnstap/local.mk
include src/plugin/view/local.mk
