/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.c — Kubernetes label selectors for `labels` and `namespace_labels`.
 *
 * The syntax is the API's (k8s.io/apimachinery labels.Parse as used by
 * metav1.ParseToLabelSelector): comma-separated requirements, each one of
 *   key   !key   key=value   key==value   key!=value
 *   key in (v1, v2)   key notin (v1, v2)
 * with keys that are qualified names ([prefix/]name) and values of at most
 * 63 characters ([A-Za-z0-9] at both ends, -_. inside, or empty). The parsed
 * selector is rendered back to a canonical string for the API's
 * labelSelector parameter, and can be matched against labels (unit tests,
 * and the kubesim-free tests of namespace filtering).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "common/sbuf.h"
#include "common/vec.h"

typedef struct lexer {
    const char *s;
    size_t i;
    char *err;
    size_t errlen;
} lexer;

static void skip_ws(lexer *l)
{
    while (isspace((unsigned char)l->s[l->i]))
        l->i++;
}

static int is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

/* Next identifier (possibly empty). */
static char *ident(lexer *l)
{
    skip_ws(l);
    size_t st = l->i;
    while (is_ident(l->s[l->i]))
        l->i++;
    char *v = malloc(l->i - st + 1);
    if (v) {
        memcpy(v, l->s + st, l->i - st);
        v[l->i - st] = '\0';
    }
    return v;
}

static int name_ok(const char *s, size_t len, int allow_empty)
{
    if (len == 0)
        return allow_empty;
    if (len > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

static int prefix_ok(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '.'))
            return 0;
    }
    return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[len - 1]);
}

static int key_ok(const char *k)
{
    const char *slash = strchr(k, '/');
    if (!slash)
        return name_ok(k, strlen(k), 0);
    if (strchr(slash + 1, '/'))
        return 0;
    return prefix_ok(k, (size_t)(slash - k)) && name_ok(slash + 1, strlen(slash + 1), 0);
}

static int fail(lexer *l, const char *what)
{
    snprintf(l->err, l->errlen, "invalid label selector '%s': %s", l->s, what);
    return -1;
}

static int add_value(sel_req *r, char *v)
{
    if (VEC_RESIZE(r->values, r->nvalues + 1) != 0) {
        free(v);
        return -1;
    }
    r->values[r->nvalues++] = v;
    return 0;
}

static int parse_set(lexer *l, sel_req *r)
{
    skip_ws(l);
    if (l->s[l->i] != '(')
        return fail(l, "expected '('");
    l->i++;
    for (;;) {
        char *v = ident(l);
        if (!v || !name_ok(v, strlen(v), 1)) {
            free(v);
            return fail(l, "invalid value");
        }
        if (add_value(r, v) < 0)
            return fail(l, "out of memory");
        skip_ws(l);
        if (l->s[l->i] == ',') {
            l->i++;
            continue;
        }
        if (l->s[l->i] == ')') {
            l->i++;
            break;
        }
        return fail(l, "expected ',' or ')'");
    }
    if (r->nvalues == 1 && !r->values[0][0])
        return fail(l, "for 'in', 'notin' operators, values set can't be empty");
    return 0;
}

static int parse_op(lexer *l, sel_req *r)
{
    skip_ws(l);
    const char *p = l->s + l->i;
    if (*p == ',' || *p == '\0') {
        r->op = SEL_EXISTS;
        return 0;
    }
    if (p[0] == '!' && p[1] == '=') {
        r->op = SEL_NE;
        l->i += 2;
    } else if (p[0] == '=') {
        r->op = SEL_EQ;
        l->i += p[1] == '=' ? 2 : 1;
    } else {
        char *w = ident(l);
        int in = w && !strcmp(w, "in"), notin = w && !strcmp(w, "notin");
        free(w);
        if (!in && !notin)
            return fail(l, "unknown operator");
        r->op = in ? SEL_IN : SEL_NOTIN;
        return parse_set(l, r);
    }
    char *v = ident(l);
    if (!v || !name_ok(v, strlen(v), 1)) {
        free(v);
        return fail(l, "invalid value");
    }
    return add_value(r, v) < 0 ? fail(l, "out of memory") : 0;
}

static int parse_req(lexer *l, sel_req *r)
{
    memset(r, 0, sizeof *r);
    skip_ws(l);
    int neg = 0;
    if (l->s[l->i] == '!') {
        neg = 1;
        l->i++;
    }
    r->key = ident(l);
    if (!r->key || !key_ok(r->key))
        return fail(l, "invalid key");
    if (neg) {
        r->op = SEL_NOTEXISTS;
        return 0;
    }
    return parse_op(l, r);
}

int ksel_parse(const char *text, kselector *out, char *err, size_t errlen)
{
    lexer l = { text, 0, err, errlen };
    memset(out, 0, sizeof *out);
    skip_ws(&l);
    if (!text[l.i])
        return 0;
    for (;;) {
        if (VEC_RESIZE(out->reqs, out->n + 1) != 0)
            return fail(&l, "out of memory");
        if (parse_req(&l, &out->reqs[out->n++]) < 0) {
            ksel_free(out);
            return -1;
        }
        skip_ws(&l);
        if (!text[l.i])
            return 0;
        if (text[l.i] != ',') {
            ksel_free(out);
            return fail(&l, "expected ','");
        }
        l.i++;
    }
}

char *ksel_render(const kselector *s)
{
    sbuf b = { 0 };
    for (int i = 0; i < s->n; i++) {
        const sel_req *r = &s->reqs[i];
        if (i)
            sbuf_str(&b, ",");
        if (r->op == SEL_NOTEXISTS)
            sbuf_str(&b, "!");
        sbuf_str(&b, r->key);
        if (r->op == SEL_EQ || r->op == SEL_NE) {
            sbuf_str(&b, r->op == SEL_EQ ? "=" : "!=");
            sbuf_str(&b, r->values[0]);
        } else if (r->op == SEL_IN || r->op == SEL_NOTIN) {
            sbuf_str(&b, r->op == SEL_IN ? " in (" : " notin (");
            for (int j = 0; j < r->nvalues; j++) {
                if (j)
                    sbuf_str(&b, ",");
                sbuf_str(&b, r->values[j]);
            }
            sbuf_str(&b, ")");
        }
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p ? b.p : strdup("");
}

static const char *label_value(const st_label *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(labels[i].key, key))
            return labels[i].value;
    return NULL;
}

static int in_values(const sel_req *r, const char *v)
{
    for (int j = 0; j < r->nvalues; j++)
        if (!strcmp(r->values[j], v))
            return 1;
    return 0;
}

int ksel_match(const kselector *s, const st_label *labels, size_t n)
{
    for (int i = 0; i < s->n; i++) {
        const sel_req *r = &s->reqs[i];
        const char *v = label_value(labels, n, r->key);
        int ok;
        switch (r->op) {
        case SEL_EQ: case SEL_IN: ok = v && in_values(r, v); break;
        case SEL_NE: case SEL_NOTIN: ok = !v || !in_values(r, v); break;
        case SEL_EXISTS: ok = v != NULL; break;
        default: ok = v == NULL; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

void ksel_free(kselector *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->reqs[i].key);
        for (int j = 0; j < s->reqs[i].nvalues; j++)
            free(s->reqs[i].values[j]);
        free(s->reqs[i].values);
    }
    free(s->reqs);
    s->reqs = NULL;
    s->n = 0;
}
