/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.h — the plugin's name grammar (names.c): a query name under a zone
 * parsed into its parts (CoreDNS parseRequest), endpoint names, dashed
 * addresses, pod labels and reverse names to addresses. Pure functions of
 * their arguments: any thread, no memory kept; the caller owns every
 * output buffer (its size is cap).
 */
#ifndef TOPODNS_KUBE_NAMES_H
#define TOPODNS_KUBE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "cluster/store.h"
#include "wire/dname.h"

/* ---- names (names.c) ---------------------------------------------------- */
enum { K_OK = 0, K_NOITEMS, K_INVALID, K_NSNOTEXPOSED, K_FAIL };
enum { KR_NONE = 0, KR_SVC, KR_POD };
enum { ZONAL_NONE = 0, ZONAL_PIN, ZONAL_PREFER };

#define KLABEL 256                  /* one label in text form, escaped */

typedef struct kreq {
    int podsvc;                     /* KR_NONE for the apex, svc.Z, pod.Z */
    char ns[KLABEL], service[KLABEL], endpoint[KLABEL], port[KLABEL], proto[KLABEL];
    char cluster[KLABEL];           /* multicluster <ep>.<cluster>.<svc>... */
    int zonal;                      /* ZONAL_* */
    char topo_zone[DNAME_STR_MAX];
} kreq;

/* Parse a lower-cased name under a zone of zone_labels labels (CoreDNS
 * parseRequest, plus the zonal form when zonal is on). K_OK or K_INVALID. */
int kube_parse(const uint8_t *name, int zone_labels, int zonal, kreq *out);
/* The same in a multicluster zone when multicluster is set: two labels
 * left of the service are <endpoint>.<cluster> unless either starts with
 * '_', and there are no zonal names. */
int kube_parse_mc(const uint8_t *name, int zone_labels, int zonal, int multicluster, kreq *out);
/* One wire label as text, with Go's escapes (\. \\ \DDD ...). */
size_t kube_label_text(const uint8_t *label, char *out, size_t cap);
/* The endpoint name of an address (hostname, pod name with
 * endpoint_pod_names, dashed IP). Returns out. */
const char *kube_endpoint_name(const st_endpoint *ep, int pod_names, char *out, size_t cap);
/* The dashed form of an address as written ("fd00::" → "fd00--0"). */
void kube_dashed_ip(const char *addr, char *out, size_t cap);
/* Pod label → address text as CoreDNS builds it ("1-2-3-4" → "1.2.3.4",
 * "fd00--1" → "fd00::1"). */
void kube_pod_label_ip(const char *label, char *out, size_t cap);
/* Full reverse name → address: 1 when name is a complete IPv4 (4 labels)
 * or IPv6 (32 nibbles) reverse name. */
int kube_reverse_addr(const uint8_t *name, st_ip *out);
/* 1 when the name lies under in-addr.arpa. or ip6.arpa. */
int kube_is_reverse(const uint8_t *name);

#endif
