/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.h — Kubernetes label selectors (selector.c): parse the
 * Corefile's `labels` text, render it for the API's labelSelector
 * parameter, match an object's labels. The lowest layer of the plugin with
 * scratch.h: it calls nothing else of it.
 *
 * Memory: ksel_parse fills a kselector its caller owns and frees with
 * ksel_free (also after a failed parse); ksel_render returns a malloc'd
 * string the caller frees. Written at setup, read by the API thread's
 * filters afterwards, never changed in between: no locking.
 */
#ifndef TOPODNS_KUBE_SELECTOR_H
#define TOPODNS_KUBE_SELECTOR_H

#include <stddef.h>
#include "cluster/store.h"

/* ---- label selectors (selector.c) -------------------------------------- */
enum { SEL_EQ, SEL_NE, SEL_IN, SEL_NOTIN, SEL_EXISTS, SEL_NOTEXISTS };

typedef struct sel_req {
    char *key;
    int op;
    char **values;
    int nvalues;
} sel_req;

typedef struct kselector {
    sel_req *reqs;
    int n;
} kselector;

/* Parse "a=b,c in (d, e),!f"; 0, or -1 with a message in err. */
int ksel_parse(const char *text, kselector *out, char *err, size_t errlen);
/* Canonical text for the API's labelSelector parameter (malloc'd). */
char *ksel_render(const kselector *s);
/* 1 when labels (n pairs) satisfy every requirement. */
int ksel_match(const kselector *s, const st_label *labels, size_t n);
void ksel_free(kselector *s);

#endif
