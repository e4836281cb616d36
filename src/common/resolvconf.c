/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolvconf.c — see resolvconf.h.
 */
#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "common/file.h"
#include "common/resolvconf.h"

static void add(resolv_search *out, const char *w, size_t len)
{
    assert(out->n >= 0 && out->n <= RESOLV_SEARCH_MAX);
    if (out->n >= RESOLV_SEARCH_MAX || len == 0)
        return;
    int dot = w[len - 1] == '.';
    if (len + !dot >= RESOLV_NAME_MAX)
        return;
    char *d = out->name[out->n++];
    for (size_t i = 0; i < len; i++)
        d[i] = (char)tolower((unsigned char)w[i]);
    if (!dot)
        d[len++] = '.';
    d[len] = '\0';
}

/* One line: its words (space or tab separated). */
static void line(const char *p, const char *end, resolv_search *out)
{
    const char *words[2 + RESOLV_SEARCH_MAX * 4];
    size_t lens[2 + RESOLV_SEARCH_MAX * 4];
    int n = 0;
    while (p < end && n < (int)(sizeof words / sizeof words[0])) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
            p++;
        const char *w = p;
        while (p < end && !(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
            p++;
        if (p > w) {
            words[n] = w;
            lens[n++] = (size_t)(p - w);
        }
    }
    if (n == 0)
        return;
    int search = lens[0] == 6 && !memcmp(words[0], "search", 6);
    int domain = lens[0] == 6 && !memcmp(words[0], "domain", 6);
    if (!search && !domain)
        return;
    out->n = 0;
    for (int i = 1; i < n && (search || i == 1); i++)
        add(out, words[i], lens[i]);
}

void resolv_search_parse(const char *text, resolv_search *out)
{
    assert(out);
    out->n = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        line(p, end, out);
        p = nl ? nl + 1 : NULL;
    }
}

int resolv_search_read(const char *path, resolv_search *out, const char **why)
{
    assert(path && out);
    out->n = 0;
    char *text = file_read(path, NULL, FILE_REGULAR, why);
    if (!text)
        return -1;
    resolv_search_parse(text, out);
    free(text);
    return 0;
}
