/*
 * strtab.c — see strtab.h. A uthash table of flexible-array entries.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "cluster/strtab.h"

typedef struct istr {
    UT_hash_handle hh;
    char s[];
} istr;

struct strtab {
    istr *head;
    size_t bytes;                   /* entries' allocations, see strtab_bytes */
};

strtab *strtab_new(void)
{
    return calloc(1, sizeof(strtab));
}

void strtab_free(strtab *t)
{
    if (!t)
        return;
    istr *e, *tmp;
    HASH_ITER(hh, t->head, e, tmp) {
        HASH_DEL(t->head, e);
        free(e);
    }
    free(t);
}

const char *strtab_intern(strtab *t, const char *s)
{
    if (!s)
        return NULL;
    istr *e;
    size_t n = strlen(s);
    HASH_FIND(hh, t->head, s, n, e);
    if (e)
        return e->s;
    e = malloc(sizeof *e + n + 1);
    if (!e)
        return NULL;
    memcpy(e->s, s, n + 1);
    HASH_ADD(hh, t->head, s, n, e);
    t->bytes += sizeof *e + n + 1;
    return e->s;
}

size_t strtab_bytes(const strtab *t)
{
    return t ? t->bytes : 0;
}

const char *strtab_intern_lower(strtab *t, const char *s)
{
    if (!s)
        return NULL;
    char buf[256];
    size_t n = strlen(s);
    if (n >= sizeof buf)
        return strtab_intern(t, s);
    for (size_t i = 0; i <= n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    return strtab_intern(t, buf);
}
