/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolvconf.h — the search list of a resolv.conf file, read as CoreDNS
 * reads it (miekg/dns ClientConfigFromFile, then zone normalization): the
 * last `search` or `domain` line wins (`domain NAME` is the list of NAME
 * alone), each name lower-cased and made fully qualified ("svc.local" →
 * "svc.local."). Other lines are ignored. Used by the autopath and
 * kubernetes plugins, at setup (it reads the disk).
 *
 * Pure but for the file read; the caller owns the struct.
 */
#ifndef TOPODNS_RESOLVCONF_H
#define TOPODNS_RESOLVCONF_H

#define RESOLV_SEARCH_MAX 16         /* names kept; later ones are dropped */
#define RESOLV_NAME_MAX 256          /* a name and its final dot; longer ones are dropped */

typedef struct resolv_search {
    int n;
    char name[RESOLV_SEARCH_MAX][RESOLV_NAME_MAX];
} resolv_search;

/* Parse text (a whole resolv.conf) into out. */
void resolv_search_parse(const char *text, resolv_search *out);
/* Read path and parse it. 0, or -1 with *why (strerror's, or "not a
 * regular file") when it cannot be read; out is then empty. */
int resolv_search_read(const char *path, resolv_search *out, const char **why);

#endif
