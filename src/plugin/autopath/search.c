/* SPDX-License-Identifier: Apache-2.0 */
/*
 * search.c — see autopath.h: search lists, the base of a name, the names
 * tried, and the CNAME in front of the answer found.
 */
#include <stdlib.h>
#include <string.h>
#include "plugin/autopath/autopath.h"

int ap_list_from_resolv(const resolv_search *rs, autopath_list *out)
{
    out->n = 0;
    for (int i = 0; i < rs->n && out->n < AUTOPATH_MAX - 1; i++)
        if (dname_from_str(out->name[out->n], rs->name[i]) > 0)
            dname_lower(out->name[out->n++]);
    out->name[out->n++][0] = 0;
    return out->n;
}

int ap_base_labels(const uint8_t *lname, const autopath_list *list)
{
    if (list->n == 0 || !dname_is_sub(lname, list->name[0]))
        return -1;
    return dname_labels(lname) - dname_labels(list->name[0]);
}

int ap_expand(const uint8_t *qname, int base, const uint8_t *suffix, uint8_t *out)
{
    const uint8_t *p = qname;
    for (int i = 0; i < base && *p; i++)
        p += *p + 1;
    size_t head = (size_t)(p - qname), sl = dname_len(suffix);
    if (head + sl > DNAME_MAX)
        return -1;
    memcpy(out, qname, head);
    memcpy(out + head, suffix, sl);
    return 0;
}

int ap_cnamer(dns_msg *m, const uint8_t *orig)
{
    unsigned n = msg_count(m, SEC_ANSWER);
    for (unsigned i = 0; i < n; i++) {
        dns_rr rr = msg_rr(m, SEC_ANSWER, i);
        if (dname_equal(rr.owner, orig))
            continue;
        uint8_t target[DNAME_MAX];
        memcpy(target, rr.owner, dname_len(rr.owner));
        if (msg_add_name(m, SEC_ANSWER, orig, T_CNAME, rr.ttl, target) < 0)
            return -1;
        unsigned *perm = malloc((n + 1) * sizeof *perm);
        if (!perm)
            return -1;
        perm[0] = n;
        for (unsigned j = 0; j < n; j++)
            perm[j + 1] = j;
        msg_permute(m, SEC_ANSWER, perm, n + 1);
        free(perm);
        break;
    }
    memcpy(m->qname, orig, dname_len(orig));
    return 0;
}
