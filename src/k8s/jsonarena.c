/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonarena.c — a per-thread bump arena for cJSON parse trees (jsonarena.h).
 *
 * cJSON's allocation hooks are process-wide, so they are installed once and
 * stay cheap for everyone: a thread that is not inside jarena_parse() gets
 * plain malloc, and free() of a pointer outside this thread's chunks is a
 * plain free (a thread without an arena has no chunks to look at). Inside
 * jarena_parse() allocations are bumped from chunks that start at 64 KiB
 * and double up to 4 MiB, so a small watch event costs one chunk and a list
 * page a handful. Trees may nest (a watch event parsed while a list page's
 * tree is still being applied): the arena is rewound only when every parsed
 * tree was released, so the pages of a long list reuse the same memory
 * without new page faults; jarena_trim() gives the chunks back (the
 * reflector does once a list is complete).
 *
 * jarena_delete() skips cJSON_Delete's walk of the tree when no cJSON
 * allocation happened on this thread outside the arena since the parse:
 * then every node of the tree is arena memory and freeing it is a no-op.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "k8s/jsonarena.h"
#include "k8s/jsonsel.h"

#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (4u << 20)
#define ALIGN 16u

typedef struct chunk {
    struct chunk *next;                 /* the next (larger) chunk */
    uintptr_t lo, hi, p;                /* data range and bump pointer */
    size_t size;
} chunk;

static _Thread_local chunk *arena;      /* oldest (smallest) first */
static _Thread_local chunk *cur;        /* the chunk being bumped */
static _Thread_local int active;
static _Thread_local unsigned long foreign;   /* cJSON mallocs outside */
static _Thread_local unsigned held;     /* trees parsed and not released */

static chunk *chunk_new(size_t size)
{
    chunk *c = malloc(sizeof *c + ALIGN + size);
    if (!c)
        return NULL;
    c->lo = ((uintptr_t)(c + 1) + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    c->hi = c->lo + size;
    c->p = c->lo;
    c->size = size;
    c->next = NULL;
    return c;
}

static void *a_malloc(size_t n)
{
    if (!active) {
        foreign++;
        return malloc(n);
    }
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    while (!cur || cur->hi - cur->p < n) {
        if (cur && cur->next) {         /* a rewound chunk: reuse it */
            cur = cur->next;
            cur->p = cur->lo;
            continue;
        }
        size_t size = cur ? cur->size * 2 : CHUNK_MIN;
        if (size > CHUNK_MAX)
            size = CHUNK_MAX;
        while (size < n)
            size *= 2;
        chunk *c = chunk_new(size);
        if (!c)
            return NULL;
        if (cur)
            cur->next = c;
        else
            arena = c;
        cur = c;
    }
    void *r = (void *)cur->p;
    cur->p += n;
    return r;
}

static void a_free(void *p)
{
    if (!p)
        return;
    uintptr_t u = (uintptr_t)p;
    for (const chunk *c = arena; c; c = c->next)
        if (u >= c->lo && u < c->hi)
            return;                     /* dropped with the arena */
    free(p);
}

static void install(void)
{
    cJSON_Hooks h = { a_malloc, a_free };
    cJSON_InitHooks(&h);
}

void jarena_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}

static void parse_begin(void)
{
    assert(!active);                    /* parses do not run inside one another */
    jarena_init();
    if (held == 0) {                    /* nothing alive: rewind */
        cur = arena;
        if (cur)
            cur->p = cur->lo;
        foreign = 0;
    }
    held++;
    active = 1;
}

cJSON *jarena_parse(const char *text, size_t len)
{
    parse_begin();
    cJSON *doc = cJSON_ParseWithLength(text, len);
    active = 0;
    return doc;
}

cJSON *jarena_parse_sel(const char *text, size_t len, const struct jsel *rule)
{
    return jarena_parse_lenient(text, len, rule, NULL);
}

cJSON *jarena_parse_lenient(const char *text, size_t len, const struct jsel *rule,
                            unsigned *skipped)
{
    parse_begin();
    cJSON *doc = jsel_parse_lenient(text, len, rule, skipped);
    active = 0;
    return doc;
}

size_t jarena_used(void)
{
    size_t n = 0;
    for (const chunk *c = arena; c; c = c->next) {
        n += c->p - c->lo;
        if (c == cur)
            break;                      /* later chunks: rewound, unused */
    }
    return n;
}

void jarena_delete(cJSON *doc)
{
    if (foreign)
        cJSON_Delete(doc);
}

void jarena_release(void)
{
    assert(held > 0);                   /* paired with a parse */
    if (held > 0)
        held--;                         /* the next parse with none left rewinds */
}

void jarena_trim(void)
{
    if (held > 0)
        return;
    while (arena) {
        chunk *c = arena;
        arena = c->next;
        free(c);
    }
    cur = NULL;
}

void jarena_thread_done(void)
{
    jarena_trim();
}
