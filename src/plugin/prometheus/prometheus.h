/*
 * prometheus.h — what the server core needs from the prometheus plugin.
 *
 * prom_report() records one finished request in CoreDNS's coredns_dns_*
 * series (requests, duration, sizes, DO bit, responses by rcode and writer).
 * The plugin calls it from its done hook for every query that went through a
 * chain holding it; the server core calls it for queries that never entered a
 * chain (r->zone = "dropped": no matching zone, a refused class, FORMERR...),
 * from req_finish(), once the reply is sent. It does nothing until a
 * prometheus instance has been started in this process, never blocks and is
 * safe from any worker thread.
 */
#ifndef TOPODNS_PROMETHEUS_H
#define TOPODNS_PROMETHEUS_H

#include "server/request.h"

void prom_report(const dns_req *r, int rcode);

#endif
