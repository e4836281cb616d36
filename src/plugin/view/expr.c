/* SPDX-License-Identifier: Apache-2.0 */
/*
 * expr.c — compile and evaluate view expressions (expr.h): a tokenizer, a
 * recursive-descent parser that type-checks as it builds the tree, and an
 * evaluator whose strings live in a fixed scratch buffer on the stack.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "common/addr.h"
#include "common/cidr.h"
#include "common/goregex.h"
#include "plugin/view/expr.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "common/vec.h"

enum vtype { V_BOOL, V_INT, V_STR, V_LIST };

enum kind {
    K_LIT, K_LIST, K_CALL, K_NOT, K_AND, K_OR,
    K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE, K_IN, K_NOTIN,
    K_MATCH, K_CONTAINS, K_STARTS, K_ENDS
};

enum fn {
    F_BUFSIZE, F_CLASS, F_CLIENT_IP, F_DO, F_ID, F_NAME, F_OPCODE, F_PORT, F_PROTO,
    F_SERVER_IP, F_SERVER_PORT, F_SIZE, F_TYPE, F_INCIDR
};

static const struct { const char *name; enum fn fn; enum vtype t; int nargs; } fns[] = {
    { "bufsize", F_BUFSIZE, V_INT, 0 },   { "class", F_CLASS, V_STR, 0 },
    { "client_ip", F_CLIENT_IP, V_STR, 0 }, { "do", F_DO, V_BOOL, 0 },
    { "id", F_ID, V_INT, 0 },             { "name", F_NAME, V_STR, 0 },
    { "opcode", F_OPCODE, V_INT, 0 },     { "port", F_PORT, V_STR, 0 },
    { "proto", F_PROTO, V_STR, 0 },       { "server_ip", F_SERVER_IP, V_STR, 0 },
    { "server_port", F_SERVER_PORT, V_STR, 0 }, { "size", F_SIZE, V_INT, 0 },
    { "type", F_TYPE, V_STR, 0 },         { "incidr", F_INCIDR, V_BOOL, 2 },
};

typedef struct node {
    enum kind kind;
    enum vtype t;
    long i;                         /* K_LIT int/bool */
    char *s;                        /* K_LIT string */
    size_t slen;
    enum fn fn;                     /* K_CALL */
    struct node *a, *b;             /* operands; K_CALL: its arguments */
    struct node **items;            /* K_LIST */
    size_t nitems;
    goregex *re;                    /* K_MATCH */
    int has_cidr;                   /* K_CALL incidr with a literal CIDR */
    cidr net;
} node;

struct expr {
    node *root;
};

/* ---- tokens ----------------------------------------------------------- */

enum tok { T_END, T_IDENT, T_STR, T_INT, T_OP, T_LP, T_RP, T_LB, T_RB, T_COMMA, T_BAD };

typedef struct parser {
    const char *p;
    enum tok tok;
    char text[1024];                /* identifier, operator or decoded string */
    size_t len;
    long num;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errlen, fmt, ap);
    va_end(ap);
}

static void next(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
    const char *p = ps->p;
    ps->len = 0;
    ps->text[0] = '\0';
    if (!*p) {
        ps->tok = T_END;
        return;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        while ((isalnum((unsigned char)*p) || *p == '_') && ps->len < sizeof ps->text - 1)
            ps->text[ps->len++] = *p++;
        ps->text[ps->len] = '\0';
        ps->p = p;
        ps->tok = T_IDENT;
        return;
    }
    if (isdigit((unsigned char)*p)) {
        char *end;
        ps->num = strtol(p, &end, 10);
        if (isalpha((unsigned char)*end) || *end == '.' || end - p > 9) {
            fail(ps, "number '%.*s' is not supported", (int)(end - p + 1), p);
            ps->tok = T_BAD;
            return;
        }
        ps->p = end;
        ps->tok = T_INT;
        return;
    }
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        while (*p && *p != q) {
            char c = *p++;
            if (c == '\\') {
                c = *p++;
                switch (c) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case '\\': case '\'': case '"': break;
                default:
                    fail(ps, "unsupported escape '\\%c' in a string", c ? c : '0');
                    ps->tok = T_BAD;
                    return;
                }
            }
            if (ps->len >= sizeof ps->text - 1) {
                fail(ps, "string longer than %zu characters", sizeof ps->text - 1);
                ps->tok = T_BAD;
                return;
            }
            ps->text[ps->len++] = c;
        }
        if (*p != q) {
            fail(ps, "unterminated string");
            ps->tok = T_BAD;
            return;
        }
        ps->text[ps->len] = '\0';
        ps->p = p + 1;
        ps->tok = T_STR;
        return;
    }
    static const char *const ops[] = { "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i]);
        if (strncmp(p, ops[i], n) == 0) {
            memcpy(ps->text, ops[i], n + 1);
            ps->len = n;
            ps->p = p + n;
            ps->tok = T_OP;
            return;
        }
    }
    ps->p = p + 1;
    switch (*p) {
    case '(': ps->tok = T_LP; return;
    case ')': ps->tok = T_RP; return;
    case '[': ps->tok = T_LB; return;
    case ']': ps->tok = T_RB; return;
    case ',': ps->tok = T_COMMA; return;
    }
    fail(ps, "unsupported character '%c'", *p);
    ps->tok = T_BAD;
}

static int is_op(const parser *ps, const char *op)
{
    return (ps->tok == T_OP || ps->tok == T_IDENT) && strcmp(ps->text, op) == 0;
}

/* ---- tree ------------------------------------------------------------- */

static void node_free(node *n)
{
    if (!n)
        return;
    node_free(n->a);
    node_free(n->b);
    for (size_t i = 0; i < n->nitems; i++)
        node_free(n->items[i]);
    free(n->items);
    free(n->s);
    if (n->re)
        goregex_free(n->re);
    free(n);
}

static node *mk(parser *ps, enum kind k, enum vtype t)
{
    node *n = calloc(1, sizeof *n);
    if (!n)
        fail(ps, "out of memory");
    else {
        n->kind = k;
        n->t = t;
    }
    return n;
}

static const char *type_name(enum vtype t)
{
    return t == V_BOOL ? "bool" : t == V_INT ? "int" : t == V_STR ? "string" : "list";
}

static node *parse_or(parser *ps);

static node *parse_primary(parser *ps)
{
    if (ps->failed)
        return NULL;
    node *n = NULL;
    switch (ps->tok) {
    case T_STR:
        if ((n = mk(ps, K_LIT, V_STR))) {
            n->s = malloc(ps->len + 1);
            if (!n->s) {
                fail(ps, "out of memory");
                break;
            }
            memcpy(n->s, ps->text, ps->len + 1);
            n->slen = ps->len;
        }
        next(ps);
        return n;
    case T_INT:
        if ((n = mk(ps, K_LIT, V_INT)))
            n->i = ps->num;
        next(ps);
        return n;
    case T_LP:
        next(ps);
        n = parse_or(ps);
        if (!ps->failed && ps->tok != T_RP)
            fail(ps, "missing ')'");
        next(ps);
        return n;
    case T_LB:
        n = mk(ps, K_LIST, V_LIST);
        next(ps);
        while (n && !ps->failed && ps->tok != T_RB) {
            node *it = parse_primary(ps);
            if (!it)
                break;
            if (VEC_RESIZE(n->items, n->nitems + 1) < 0) {
                node_free(it);
                fail(ps, "out of memory");
                break;
            }
            n->items[n->nitems++] = it;
            if (it->kind != K_LIT)
                fail(ps, "a list holds literals only");
            else if (ps->tok == T_COMMA)
                next(ps);
            else if (ps->tok != T_RB)
                fail(ps, "missing ']'");
        }
        next(ps);
        return n;
    case T_IDENT:
        if (!strcmp(ps->text, "true") || !strcmp(ps->text, "false")) {
            if ((n = mk(ps, K_LIT, V_BOOL)))
                n->i = ps->text[0] == 't';
            next(ps);
            return n;
        }
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
            if (strcmp(ps->text, fns[i].name))
                continue;
            next(ps);
            if (ps->tok != T_LP) {
                fail(ps, "%s must be called: %s()", fns[i].name, fns[i].name);
                return NULL;
            }
            next(ps);
            n = mk(ps, K_CALL, fns[i].t);
            if (!n)
                return NULL;
            n->fn = fns[i].fn;
            int nargs = 0;
            while (!ps->failed && ps->tok != T_RP) {
                node *arg = parse_or(ps);
                if (nargs == 0)
                    n->a = arg;
                else if (nargs == 1)
                    n->b = arg;
                else
                    node_free(arg);
                nargs++;
                if (ps->tok == T_COMMA)
                    next(ps);
                else if (!ps->failed && ps->tok != T_RP)
                    fail(ps, "missing ')' after the arguments of %s()", fns[i].name);
            }
            if (!ps->failed && nargs != fns[i].nargs)
                fail(ps, "%s() takes %d argument%s", fns[i].name, fns[i].nargs,
                     fns[i].nargs == 1 ? "" : "s");
            next(ps);
            if (!ps->failed && n->fn == F_INCIDR) {
                if (n->a->t != V_STR || n->b->t != V_STR)
                    fail(ps, "incidr() takes two strings");
                else if (n->b->kind == K_LIT) {
                    if (cidr_parse(n->b->s, &n->net) < 0)
                        fail(ps, "incidr(): invalid CIDR '%s'", n->b->s);
                    n->has_cidr = 1;
                }
            }
            return n;
        }
        fail(ps, "unknown or unsupported name '%s'", ps->text);
        return NULL;
    case T_END:
        fail(ps, "unexpected end of expression");
        return NULL;
    case T_BAD:
        return NULL;
    default:
        fail(ps, "unexpected '%c'", ps->p[-1]);
        return NULL;
    }
    return n;
}

/* A boolean node of kind k over l and r; l itself (r freed) when r is
 * missing or memory runs out (the parser has failed then). */
static node *join(parser *ps, enum kind k, node *l, node *r)
{
    node *n = r ? mk(ps, k, V_BOOL) : NULL;
    if (!n) {
        node_free(r);
        return l;
    }
    n->a = l;
    n->b = r;
    return n;
}

static node *parse_unary(parser *ps)
{
    if (is_op(ps, "!") || is_op(ps, "not")) {
        next(ps);
        node *x = parse_unary(ps);
        if (!x)
            return NULL;
        if (x->t != V_BOOL)
            fail(ps, "'!' needs a bool, not a %s", type_name(x->t));
        node *n = mk(ps, K_NOT, V_BOOL);
        if (!n) {
            node_free(x);
            return NULL;
        }
        n->a = x;
        return n;
    }
    return parse_primary(ps);
}

static node *parse_cmp(parser *ps)
{
    node *l = parse_unary(ps);
    if (!l || ps->failed)
        return l;
    static const struct { const char *op; enum kind k; } cmps[] = {
        { "==", K_EQ }, { "!=", K_NE }, { "<=", K_LE }, { ">=", K_GE }, { "<", K_LT },
        { ">", K_GT }, { "in", K_IN }, { "matches", K_MATCH }, { "contains", K_CONTAINS },
        { "startsWith", K_STARTS }, { "endsWith", K_ENDS },
    };
    enum kind k = K_LIT;
    if (is_op(ps, "not")) {
        next(ps);
        if (!is_op(ps, "in")) {
            fail(ps, "'not' here must be followed by 'in'");
            return l;
        }
        k = K_NOTIN;
    } else {
        for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
            if (is_op(ps, cmps[i].op))
                k = cmps[i].k;
    }
    if (k == K_LIT)
        return l;
    char op[16];
    snprintf(op, sizeof op, "%.15s", k == K_NOTIN ? "not in" : ps->text);
    next(ps);
    node *r = parse_unary(ps);
    node *n = join(ps, k, l, r);
    if (n == l || ps->failed)
        return n;
    switch (k) {
    case K_EQ: case K_NE:
        if (l->t != r->t || l->t == V_LIST)
            fail(ps, "'%s' compares a %s with a %s", op, type_name(l->t), type_name(r->t));
        break;
    case K_LT: case K_LE: case K_GT: case K_GE:
        if (l->t != r->t || (l->t != V_INT && l->t != V_STR))
            fail(ps, "'%s' compares a %s with a %s", op, type_name(l->t), type_name(r->t));
        break;
    case K_IN: case K_NOTIN:
        if (r->kind != K_LIST)
            fail(ps, "'%s' needs a list [...] on its right", op);
        for (size_t i = 0; !ps->failed && i < r->nitems; i++)
            if (r->items[i]->t != l->t)
                fail(ps, "'%s' looks for a %s in a list holding a %s", op, type_name(l->t),
                     type_name(r->items[i]->t));
        break;
    case K_MATCH:
        if (l->t != V_STR || r->kind != K_LIT || r->t != V_STR) {
            fail(ps, "'matches' needs a string on its left and a string literal on its right");
        } else {
            char why[256];
            if (goregex_compile(r->s, &n->re, why, sizeof why) != GOREGEX_OK)
                fail(ps, "'matches': %s", why);
        }
        break;
    default:
        if (l->t != V_STR || r->t != V_STR)
            fail(ps, "'%s' needs two strings", op);
        break;
    }
    return n;
}

static node *parse_logic(parser *ps, int level)
{
    node *l = level ? parse_cmp(ps) : parse_logic(ps, 1);
    while (l && !ps->failed &&
           (level ? (is_op(ps, "&&") || is_op(ps, "and")) : (is_op(ps, "||") || is_op(ps, "or")))) {
        const char *op = level ? "&&" : "||";
        next(ps);
        node *r = level ? parse_cmp(ps) : parse_logic(ps, 1);
        node *n = join(ps, level ? K_AND : K_OR, l, r);
        if (n == l)
            return l;
        l = n;
        if (!ps->failed && (n->a->t != V_BOOL || n->b->t != V_BOOL))
            fail(ps, "'%s' needs two bools", op);
    }
    return l;
}

static node *parse_or(parser *ps)
{
    return parse_logic(ps, 0);
}

expr *expr_compile(const char *text, char *err, size_t errlen)
{
    assert(text && err);
    parser ps = { .p = text, .err = err, .errlen = errlen };
    next(&ps);
    node *root = parse_or(&ps);
    if (!ps.failed && ps.tok != T_END)
        fail(&ps, "unexpected '%s' after the expression", ps.text[0] ? ps.text : ps.p - 1);
    if (!ps.failed && root && root->t != V_BOOL)
        fail(&ps, "the expression is a %s, not a bool", type_name(root->t));
    expr *e = ps.failed ? NULL : malloc(sizeof *e);
    if (!e) {
        if (!ps.failed)
            snprintf(err, errlen, "out of memory");
        node_free(root);
        return NULL;
    }
    e->root = root;
    return e;
}

void expr_free(expr *e)
{
    if (!e)
        return;
    node_free(e->root);
    free(e);
}

/* ---- evaluation ------------------------------------------------------- */

typedef struct val {
    enum vtype t;
    long i;
    const char *s;
    size_t n;
} val;

typedef struct scratch {
    char buf[4096];                 /* every string one evaluation makes */
    size_t used;
    int overflow;
} scratch;

static char *take(scratch *sc, size_t n)
{
    if (sc->used + n > sizeof sc->buf) {
        sc->overflow = 1;
        return NULL;
    }
    char *p = sc->buf + sc->used;
    sc->used += n;
    return p;
}

static val str_val(const char *s)
{
    return (val){ .t = V_STR, .s = s ? s : "", .n = s ? strlen(s) : 0 };
}

/* Address and port of a socket address as Go's net.SplitHostPort gives
 * them (no brackets around an IPv6 address). */
static val addr_val(scratch *sc, const struct sockaddr_storage *ss, int want_port)
{
    char *out = take(sc, INET6_ADDRSTRLEN + 8);
    if (!out)
        return str_val("");
    out[0] = '\0';
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        if (want_port)
            snprintf(out, INET6_ADDRSTRLEN + 8, "%u", ntohs(s4->sin_port));
        else
            inet_ntop(AF_INET, &s4->sin_addr, out, INET6_ADDRSTRLEN);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        if (want_port)
            snprintf(out, INET6_ADDRSTRLEN + 8, "%u", ntohs(s6->sin6_port));
        else
            inet_ntop(AF_INET6, &s6->sin6_addr, out, INET6_ADDRSTRLEN);
    }
    return str_val(out);
}

static int in_cidr(const char *ip, size_t n, const cidr *c)
{
    if (n >= 2 && ip[0] == '[' && ip[n - 1] == ']') {
        ip++;
        n -= 2;
    }
    /* an IPv4-mapped IPv6 address is IPv4 against an IPv4 network */
    uint8_t a[16];
    int fam;
    if (addr_parse_bytes(ip, n, c->family == AF_INET ? ADDR_UNMAP : 0, &fam, a) < 0 ||
        fam != c->family)
        return 0;
    return cidr_contains(c, fam, a);
}

static val eval(const node *n, const dns_req *r, scratch *sc);

static val call(const node *n, const dns_req *r, scratch *sc)
{
    char *b;
    switch (n->fn) {
    case F_BUFSIZE:
        return (val){ .t = V_INT, .i = r->q.edns.present ? (r->q.edns.udp_size < 512 ? 512
                                                                : r->q.edns.udp_size) : 512 };
    case F_CLASS:
        if (!(b = take(sc, 16)))
            return str_val("");
        return str_val(rr_class_name(r->q.qclass, b));
    case F_TYPE:
        if (!(b = take(sc, 16)))
            return str_val("");
        return str_val(rr_type_name(r->q.qtype, b));
    case F_CLIENT_IP: return addr_val(sc, &r->peer, 0);
    case F_PORT: return addr_val(sc, &r->peer, 1);
    case F_SERVER_IP: return addr_val(sc, &r->local, 0);
    case F_SERVER_PORT: return addr_val(sc, &r->local, 1);
    case F_DO: return (val){ .t = V_BOOL, .i = r->q.edns.present && r->q.edns.do_bit };
    case F_ID: return (val){ .t = V_INT, .i = r->q.id };
    case F_OPCODE: return (val){ .t = V_INT, .i = msg_opcode(&r->q) };
    case F_SIZE: return (val){ .t = V_INT, .i = (long)r->rawlen_in };
    case F_PROTO: return str_val(r->proto == PROTO_TCP ? "tcp" : "udp");
    case F_NAME: {
        /* lower case, as CoreDNS's request.Name() */
        char tmp[DNAME_STR_MAX];
        size_t len = dname_to_str(tmp, sizeof tmp, r->q.qname);
        if (len >= sizeof tmp || !(b = take(sc, len + 1)))
            return str_val("");
        for (size_t i = 0; i < len; i++)
            b[i] = (char)tolower((unsigned char)tmp[i]);
        b[len] = '\0';
        return str_val(b);
    }
    case F_INCIDR: {
        val ip = eval(n->a, r, sc);
        if (n->has_cidr)
            return (val){ .t = V_BOOL, .i = in_cidr(ip.s, ip.n, &n->net) };
        val net = eval(n->b, r, sc);
        cidr c;
        return (val){ .t = V_BOOL, .i = cidr_parse(net.s, &c) == 0 && in_cidr(ip.s, ip.n, &c) };
    }
    }
    return (val){ .t = V_BOOL };
}

static int val_eq(val a, val b)
{
    if (a.t != b.t)
        return 0;
    if (a.t == V_STR)
        return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
    return a.i == b.i;
}

static int val_cmp(val a, val b)
{
    if (a.t == V_INT)
        return a.i < b.i ? -1 : a.i > b.i;
    size_t m = a.n < b.n ? a.n : b.n;
    int c = memcmp(a.s, b.s, m);
    return c ? c : (a.n < b.n ? -1 : a.n > b.n);
}

static val boolv(int x)
{
    return (val){ .t = V_BOOL, .i = !!x };
}

static val eval(const node *n, const dns_req *r, scratch *sc)
{
    val a, b;
    switch (n->kind) {
    case K_LIT:
        return n->t == V_STR ? (val){ .t = V_STR, .s = n->s, .n = n->slen }
                             : (val){ .t = n->t, .i = n->i };
    case K_LIST:
        return (val){ .t = V_LIST };
    case K_CALL:
        return call(n, r, sc);
    case K_NOT:
        return boolv(!eval(n->a, r, sc).i);
    case K_AND:
        return boolv(eval(n->a, r, sc).i && eval(n->b, r, sc).i);
    case K_OR:
        return boolv(eval(n->a, r, sc).i || eval(n->b, r, sc).i);
    case K_IN: case K_NOTIN: {
        a = eval(n->a, r, sc);
        int found = 0;
        for (size_t i = 0; !found && i < n->b->nitems; i++)
            found = val_eq(a, eval(n->b->items[i], r, sc));
        return boolv(n->kind == K_IN ? found : !found);
    }
    default:
        break;
    }
    a = eval(n->a, r, sc);
    b = eval(n->b, r, sc);
    switch (n->kind) {
    case K_EQ: return boolv(val_eq(a, b));
    case K_NE: return boolv(!val_eq(a, b));
    case K_LT: return boolv(val_cmp(a, b) < 0);
    case K_LE: return boolv(val_cmp(a, b) <= 0);
    case K_GT: return boolv(val_cmp(a, b) > 0);
    case K_GE: return boolv(val_cmp(a, b) >= 0);
    case K_MATCH: return boolv(strlen(a.s) == a.n && goregex_match(n->re, a.s, NULL, 0));
    case K_CONTAINS: return boolv(b.n <= a.n && memmem(a.s, a.n, b.s, b.n) != NULL);
    case K_STARTS: return boolv(b.n <= a.n && memcmp(a.s, b.s, b.n) == 0);
    case K_ENDS: return boolv(b.n <= a.n && memcmp(a.s + a.n - b.n, b.s, b.n) == 0);
    default: return boolv(0);
    }
}

int expr_eval(const expr *e, const dns_req *r)
{
    assert(e && r);
    scratch sc = { .used = 0 };
    val v = eval(e->root, r, &sc);
    return !sc.overflow && v.t == V_BOOL && v.i;
}
