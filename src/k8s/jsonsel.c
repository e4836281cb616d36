/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonsel.c — the selective JSON parser (jsonsel.h).
 *
 * Three parts:
 *   - a scanner that moves past one JSON value without building anything,
 *     accepting exactly what cJSON's parser accepts: whitespace is every
 *     octet <= 32, literals are null/true/false, a string ends at the
 *     first '"' not escaped and its escapes are \b \f \n \r \t \" \\ \/ or
 *     \u (a string with a \u escape is handed to cJSON, whose UTF-16
 *     checks are its own), a number that is a plain JSON number of at most
 *     63 octets is taken as is and any other run of number octets is
 *     handed to cJSON (its strtod decides), containers nest at most
 *     CJSON_NESTING_LIMIT deep counting from the document's root;
 *   - a builder for the objects and arrays a rule descends into, making
 *     the same nodes cJSON makes (children in order, head->prev = tail,
 *     member names unescaped as cJSON unescapes them);
 *   - kept values, parsed by cJSON itself from their first octet
 *     (cJSON_ParseWithLengthOpts stops after one value), then checked
 *     against the nesting limit counted from the root;
 *   - a loose skipper (JSEL_LOOSE members, and the elements a lenient parse
 *     leaves out) that only balances quotes and brackets.
 * Nothing here keeps state between calls.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "k8s/jsonsel.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define LIMIT ((unsigned)CJSON_NESTING_LIMIT)

typedef struct P {
    const unsigned char *s;
    size_t n, i;                    /* text length, read position */
    unsigned *skipped;              /* lenient parse: elements left out; NULL: strict */
} P;

static void ws(P *p)
{
    while (p->i < p->n && p->s[p->i] <= 32)
        p->i++;
}

#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* The first '"' or '\\' at or after i, or n. */
INLINE size_t quote_or_backslash(const unsigned char *s, size_t i, size_t n)
{
#ifdef __SSE2__
    const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\');
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, q),
                                                              _mm_cmpeq_epi8(v, b)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += 16;
    }
#endif
    while (i < n && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

/* The closing quote of the string whose text starts at i (after its
 * opening '"'), or n when it does not end or has an escape cJSON rejects;
 * *esc is set when it has an escape, to 2 when one is \u (cJSON must
 * check those, and any escape after them). As cJSON scans, a backslash
 * always takes the next octet with it. */
INLINE size_t string_close(const unsigned char *s, size_t i, size_t n, int *esc)
{
    for (;;) {
        i = quote_or_backslash(s, i, n);
        if (i >= n || s[i] == '"')
            return i;
        if (i + 1 >= n)
            return n;
        switch (s[i + 1]) {
        case 'b': case 'f': case 'n': case 'r': case 't': case '"': case '\\': case '/':
            if (!*esc)
                *esc = 1;
            break;
        case 'u':
            *esc = 2;
            break;
        default:
            /* after a \u, cJSON's decoder takes six octets whatever they
             * are, so what looks like an escape here may not be one: cJSON
             * judges such strings */
            if (*esc != 2)
                return n;
        }
        i += 2;
    }
}

/* Let cJSON parse the value at start (one of its own checks decides):
 * 1 and p->i after it, *out the value (or freed when out is NULL); 0 when
 * cJSON rejects it. */
static int ask_cjson(P *p, size_t start, cJSON **out)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts((const char *)p->s + start, p->n - start, &end, 0);
    if (!v)
        return 0;
    p->i = (size_t)((const unsigned char *)end - p->s);
    if (out)
        *out = v;
    else
        cJSON_Delete(v);
    return 1;
}

INLINE int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

INLINE int is_number_octet(unsigned char c)
{
    return is_digit(c) || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* At '-' or a digit at i: the end of a plain JSON number (the whole run of
 * number octets, at most 63 of them), or 0 when the run is anything else
 * (cJSON copies the run and takes what strtod consumes; such runs are
 * cJSON's to judge). */
INLINE size_t plain_number(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i, k = i;
    while (j < n && j - i < 64 && is_number_octet(s[j]))
        j++;
    if (k < j && s[k] == '-')
        k++;
    if (k < j && s[k] == '0') {
        k++;
    } else if (k < j && is_digit(s[k])) {
        while (k < j && is_digit(s[k]))
            k++;
    } else {
        return 0;
    }
    if (k < j && s[k] == '.') {
        k++;
        if (!(k < j && is_digit(s[k])))
            return 0;
        while (k < j && is_digit(s[k]))
            k++;
    }
    if (k < j && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < j && (s[k] == '+' || s[k] == '-'))
            k++;
        if (!(k < j && is_digit(s[k])))
            return 0;
        while (k < j && is_digit(s[k]))
            k++;
    }
    return k == j && j - i <= 63 ? j : 0;
}

#define WS() while (i < n && s[i] <= 32) i++

/* Move past the value at p->i (whitespace already skipped), inside
 * `depth` open containers. 1, or 0 when cJSON would reject the text. */
static int skip_value(P *p, unsigned depth)
{
    uint64_t obj[(LIMIT + 63) / 64];    /* bit k: open container k is an object */
    unsigned sp = 0;                    /* containers opened here */
    const unsigned char *s = p->s;
    const size_t n = p->n;
    size_t i = p->i, e;
    int ask, is_obj;
value:
    if (i >= n)
        return 0;
    switch (s[i]) {
    case '{':
    case '[':
        is_obj = s[i] == '{';
        if (depth + sp >= LIMIT)
            return 0;
        if (is_obj)
            obj[sp / 64] |= (uint64_t)1 << (sp % 64);
        else
            obj[sp / 64] &= ~((uint64_t)1 << (sp % 64));
        sp++;
        i++;
        WS();
        if (i < n && s[i] == (is_obj ? '}' : ']')) {
            i++;                        /* empty */
            sp--;
            goto after;
        }
        if (is_obj)
            goto member;
        goto value;
    case '"':
        ask = 0;
        e = string_close(s, i + 1, n, &ask);
        if (e >= n)
            return 0;
        if (ask == 2) {
            p->i = i;
            if (!ask_cjson(p, i, NULL))
                return 0;
            i = p->i;
        } else {
            i = e + 1;
        }
        goto after;
    case 'n':
        if (n - i < 4 || memcmp(s + i, "null", 4) != 0)
            return 0;
        i += 4;
        goto after;
    case 't':
        if (n - i < 4 || memcmp(s + i, "true", 4) != 0)
            return 0;
        i += 4;
        goto after;
    case 'f':
        if (n - i < 5 || memcmp(s + i, "false", 5) != 0)
            return 0;
        i += 5;
        goto after;
    default:
        if (s[i] != '-' && !is_digit(s[i]))
            return 0;
        if ((e = plain_number(s, i, n)) != 0) {
            i = e;
        } else {
            p->i = i;
            if (!ask_cjson(p, i, NULL))
                return 0;
            i = p->i;
        }
        goto after;
    }
member:
    if (i >= n || s[i] != '"')
        return 0;
    ask = 0;
    e = string_close(s, i + 1, n, &ask);
    if (e >= n)
        return 0;
    if (ask == 2) {
        p->i = i;
        if (!ask_cjson(p, i, NULL))
            return 0;
        i = p->i;
    } else {
        i = e + 1;
    }
    WS();
    if (i >= n || s[i] != ':')
        return 0;
    i++;
    WS();
    goto value;
after:
    if (sp == 0) {
        p->i = i;
        return 1;
    }
    WS();
    if (i >= n)
        return 0;
    is_obj = (int)((obj[(sp - 1) / 64] >> ((sp - 1) % 64)) & 1);
    if (s[i] == ',') {
        i++;
        WS();
        if (is_obj)
            goto member;
        goto value;
    }
    if (s[i] != (is_obj ? '}' : ']'))
        return 0;
    i++;
    sp--;
    goto after;
}

/* Move past the value at p->i without judging it: strings end at the first
 * '"' not escaped (any octet may follow a backslash), containers nest
 * without limit (a counter, no recursion), anything else runs to the next
 * ',', ']', '}' or whitespace. 1 when the value ends inside the text with
 * its brackets balanced, else 0. */
static int skip_loose(P *p)
{
    const unsigned char *s = p->s;
    size_t i = p->i, n = p->n, open = 0;
    do {
        if (i >= n)
            return 0;
        unsigned char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            if (i >= n)
                return 0;
            i++;
        } else if (c == '{' || c == '[') {
            open++;
            i++;
        } else if (c == '}' || c == ']') {
            if (open == 0)
                return 0;
            open--;
            i++;
        } else if (c <= 32 || c == ',' || c == ':') {
            if (open == 0)
                return 0;
            i++;
        } else {
            while (i < n && s[i] > 32 && s[i] != ',' && s[i] != ']' && s[i] != '}' &&
                   s[i] != '"' && s[i] != ':' && s[i] != '{' && s[i] != '[')
                i++;
        }
    } while (open > 0);
    p->i = i;
    return 1;
}

/* ---- building ----------------------------------------------------------------------- */

/* How deep v's containers nest (0 for a scalar). */
static unsigned nesting(const cJSON *v)
{
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
        return 0;
    unsigned m = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        unsigned d = nesting(c);
        if (d > m)
            m = d;
    }
    return m + 1;
}

/* A kept value: cJSON's own parse of it, inside `depth` containers. */
static cJSON *keep(P *p, unsigned depth)
{
    size_t start = p->i;
    if (start >= p->n)
        return NULL;
    unsigned char c = p->s[start];
    if (!(c == '{' || c == '[' || c == '"' || c == '-' || is_digit(c) || c == 'n' || c == 't' ||
          c == 'f'))
        return NULL;                    /* (cJSON would also skip a BOM here) */
    cJSON *v = NULL;
    if (!ask_cjson(p, start, &v))
        return NULL;
    /* cJSON counted its nesting from this value; the whole document's
     * parse counts from the root. Nesting L takes at least 2L octets. */
    if (depth > 0 && p->i - start >= 2 * (size_t)(LIMIT + 1 - depth) &&
        depth + nesting(v) > LIMIT) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

static cJSON *parse_rule(P *p, const jsel *rule, unsigned depth);

static void append(cJSON *parent, cJSON **tail, cJSON *v)
{
    if (!parent->child)
        parent->child = v;
    else {
        (*tail)->next = v;
        v->prev = *tail;
    }
    *tail = v;
}

static void finish(cJSON *parent, cJSON *tail)
{
    if (parent->child)
        parent->child->prev = tail;
}

static const jsel *member_rule(const jsel *rule, const char *key, size_t len)
{
    for (const jsel *m = rule->sub; m && m->name; m++) {
        size_t j = 0;
        while (j < len && m->name[j] == key[j])
            j++;
        if (j == len && m->name[len] == '\0')
            return m;
    }
    return NULL;
}

/* A member name at p->i ('"'): *key is its unescaped text as cJSON makes
 * it (a NUL-terminated copy from cJSON's allocator), *len its C length. */
static int member_name(P *p, char **key, size_t *len)
{
    int ask = 0;
    if (p->i >= p->n || p->s[p->i] != '"')
        return 0;
    size_t close = string_close(p->s, p->i + 1, p->n, &ask);
    if (close >= p->n)
        return 0;
    if (ask) {                          /* escapes: cJSON unescapes them */
        cJSON *k = NULL;
        if (!ask_cjson(p, p->i, &k))
            return 0;
        *key = k->valuestring;          /* take the string, drop the node */
        k->valuestring = NULL;
        cJSON_Delete(k);
        if (!*key)
            return 0;
        *len = strlen(*key);
        return 1;
    }
    const unsigned char *b = p->s + p->i + 1;
    size_t raw = close - p->i - 1;
    const unsigned char *nul = memchr(b, 0, raw);   /* cJSON's string ends there */
    *len = nul ? (size_t)(nul - b) : raw;
    *key = cJSON_malloc(*len + 1);
    if (!*key)
        return 0;
    memcpy(*key, b, *len);
    (*key)[*len] = '\0';
    p->i = close + 1;
    return 1;
}

/* After a member or element: past a ',' (and whitespace) 1, past the
 * container's closing character 0, anything else -1. */
static int next_member(P *p, char close)
{
    ws(p);
    if (p->i < p->n && p->s[p->i] == ',') {
        p->i++;
        ws(p);
        return 1;
    }
    if (p->i < p->n && p->s[p->i] == (unsigned char)close) {
        p->i++;
        return 0;
    }
    return -1;
}

/* One member of an object at p->i: 1 with *out its value named by its key,
 * or NULL when the rule skips it; 0 on malformed text. */
static int object_member(P *p, const jsel *rule, unsigned depth, cJSON **out)
{
    char *key = NULL;
    size_t len = 0;
    if (!member_name(p, &key, &len))
        return 0;
    ws(p);
    if (p->i >= p->n || p->s[p->i] != ':') {
        cJSON_free(key);
        return 0;
    }
    p->i++;
    ws(p);
    const jsel *m = member_rule(rule, key, len);
    jsel_kind kind = m ? m->kind : rule->others;
    if (kind == JSEL_SKIP || kind == JSEL_LOOSE) {
        cJSON_free(key);
        return kind == JSEL_SKIP ? skip_value(p, depth + 1) : skip_loose(p);
    }
    if (!(*out = parse_rule(p, m, depth + 1))) {
        cJSON_free(key);
        return 0;
    }
    (*out)->string = key;
    return 1;
}

/* One element of an array at p->i, by the array's element rule. In a
 * lenient parse an element cJSON would reject but whose brackets balance
 * is left out (*out NULL) and counted. */
static int array_element(P *p, const jsel *rule, unsigned depth, cJSON **out)
{
    size_t start = p->i;
    if ((*out = parse_rule(p, rule->sub, depth + 1)) != NULL)
        return 1;
    if (!p->skipped)
        return 0;
    p->i = start;
    if (!skip_loose(p))
        return 0;
    (*p->skipped)++;
    return 1;
}

/* The object or array at p->i (its opening octet), built by rule. */
static cJSON *parse_container(P *p, const jsel *rule, unsigned depth, int object)
{
    if (depth >= LIMIT)
        return NULL;
    const char close = object ? '}' : ']';
    cJSON *c = object ? cJSON_CreateObject() : cJSON_CreateArray(), *tail = NULL;
    if (!c)
        return NULL;
    p->i++;
    ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return c;
    }
    for (;;) {
        cJSON *v = NULL;
        if (!(object ? object_member(p, rule, depth, &v) : array_element(p, rule, depth, &v)))
            goto fail;
        if (v)
            append(c, &tail, v);
        int more = next_member(p, close);
        if (more < 0)
            goto fail;
        if (!more)
            break;
    }
    finish(c, tail);
    return c;
fail:
    finish(c, tail);
    cJSON_Delete(c);
    return NULL;
}

/* The value at p->i (whitespace skipped) by rule (NULL: kept). */
static cJSON *parse_rule(P *p, const jsel *rule, unsigned depth)
{
    if (p->i < p->n && rule) {
        if (rule->kind == JSEL_OBJECT && p->s[p->i] == '{')
            return parse_container(p, rule, depth, 1);
        if (rule->kind == JSEL_ARRAY && p->s[p->i] == '[')
            return parse_container(p, rule, depth, 0);
    }
    return keep(p, depth);
}

cJSON *jsel_parse(const char *text, size_t len, const jsel *rule)
{
    return jsel_parse_lenient(text, len, rule, NULL);
}

cJSON *jsel_parse_lenient(const char *text, size_t len, const jsel *rule, unsigned *skipped)
{
    assert(text || len == 0);
    if (!text || len == 0)
        return NULL;
    P p = { (const unsigned char *)text, len, 0, skipped };
    if (len > 4 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        p.i = 3;                        /* a UTF-8 BOM, as cJSON skips it */
    ws(&p);
    return parse_rule(&p, rule, 0);
}
