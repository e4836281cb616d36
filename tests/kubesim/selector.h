/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim selectors — Kubernetes label and field selector parsing/matching.
 *
 * Label selectors follow apimachinery's grammar: comma-separated requirements
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists) and `!k`
 * (does not exist), with key/value syntax validation. Field selectors accept
 * `k=v`, `k==v`, `k!=v` joined by commas, with backslash escapes in values.
 * Matching goes through a lookup callback so the same code serves object
 * labels and object fields. Standalone: no dependency on the rest of kubesim.
 */
#ifndef KUBESIM_SELECTOR_H
#define KUBESIM_SELECTOR_H

#include <stddef.h>

typedef enum {
    SEL_EQ, SEL_NE, SEL_IN, SEL_NOTIN, SEL_EXISTS, SEL_NOTEXISTS
} sel_op;

typedef struct sel_req {
    sel_op op;
    char *key;
    char **vals;
    int nvals;
} sel_req;

typedef struct selector {
    sel_req *reqs;
    int n;
} selector;

/* Returns the value of key in ctx, or NULL when absent. */
typedef const char *(*sel_lookup)(const void *ctx, const char *key);

/* Parse into *out (zeroed first). 0 on success; -1 with a message in err. */
int sel_parse_labels(const char *s, selector *out, char *err, size_t errlen);
int sel_parse_fields(const char *s, selector *out, char *err, size_t errlen);
/* 1 when every requirement holds (an empty selector matches everything). */
int sel_match(const selector *s, sel_lookup fn, const void *ctx);
void sel_free(selector *s);

#endif
