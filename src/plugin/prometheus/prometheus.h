/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prometheus.h — the prometheus plugin's reporting, exposed for its tests.
 *
 * prom_report() records one finished request in CoreDNS's coredns_dns_*
 * series (requests, duration, sizes, DO bit, responses by rcode and writer)
 * in the registry of the plugin instance inst. The plugin calls it from its
 * done hook for every query that went through a chain holding it, and from
 * its instance's unrouted observer for queries that never entered a chain
 * (zone "dropped"). Safe from any worker thread; never blocks.
 */
#ifndef TOPODNS_PROMETHEUS_H
#define TOPODNS_PROMETHEUS_H

#include "server/request.h"

void prom_report(const void *inst, const dns_req *r, int rcode);

#endif
