/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zone.c — which of the plugin's zones a name is under (kube_match_zone),
 * used by answer.c and autopath.c. Calls nothing of the plugin.
 */
#include <stdint.h>
#include "plugin/kubernetes/kubernetes.h"

/* Longest zone first found: qname's suffixes are located once; a run of
 * sibling zones (one CIDR's split, zrun) is skipped with one comparison of
 * their parent, so a /18's 64 zones cost about what one zone does. */
int kube_match_zone(const kube *k, const uint8_t *qname)
{
    const uint8_t *at[DNAME_SUFFIXES];
    int nl = dname_suffixes(qname, at);
    int best = -1;
    for (int i = 0; i < k->nzones;) {
        int zl = k->zlabels[i], run = k->zrun[i] > 0 ? k->zrun[i] : 1;
        if (zl > nl || (best >= 0 && zl <= k->zlabels[best])) {
            i += run;
            continue;
        }
        const uint8_t *suf = at[nl - zl];
        if (run > 1 && !dname_equal(suf + 1 + suf[0], k->zwire[i] + 1 + k->zwire[i][0])) {
            i += run;                   /* not under the siblings' parent */
            continue;
        }
        for (int j = i; j < i + run; j++)
            if (dname_equal(suf, k->zwire[j])) {
                best = j;
                break;
            }
        i += run;
    }
    return best;
}
