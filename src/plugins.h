/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugins.h — the plugin table of the composition root (src/plugins.c).
 * Immutable: built by the linker, read by main() and by tests that load
 * whole Corefiles.
 */
#ifndef TOPODNS_PLUGINS_H
#define TOPODNS_PLUGINS_H

#include "server/plugin.h"

/* Every plugin of this binary, NULL-terminated, in no particular order
 * (the chain order is src/server/order.h). */
extern const plugin_def *const topodns_plugins[];

#endif
