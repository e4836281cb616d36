/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonarena.h — parse API responses into a per-thread bump arena
 * (internal to src/k8s).
 *
 * A 500-pod list page is ~2.3 MB of JSON and ~100,000 cJSON nodes and
 * strings; allocating and freeing those one by one with malloc was about
 * 40 % of the API thread's CPU during a first sync (and fragmented the heap
 * that the cluster store lives in). jarena_parse() makes cJSON allocate the
 * tree from large chunks owned by the calling thread; cJSON_Delete() of such
 * a tree frees nothing (jarena_delete() does not even walk it), and
 * jarena_release() drops the whole arena at once.
 *
 * Rules: only the parse itself uses the arena (handlers that allocate cJSON
 * while walking the tree get ordinary malloc memory, freed normally by
 * cJSON_Delete); every jarena_parse() is paired with one jarena_release()
 * when its tree is no longer used (pairs may nest; a release without a
 * parse, or a parse started from inside another, fails an assert).
 * Other threads are unaffected: the
 * hooks fall through to malloc/free when the thread has no arena.
 */
#ifndef TOPODNS_K8S_JSONARENA_H
#define TOPODNS_K8S_JSONARENA_H

#include <stddef.h>

struct cJSON;
struct jsel;

/* Install the cJSON hooks (once per process; call while single-threaded,
 * e.g. when a reflector is made; jarena_parse() also does). */
void jarena_init(void);
/* cJSON_ParseWithLength into this thread's arena (NULL if invalid). */
struct cJSON *jarena_parse(const char *text, size_t len);
/* jsel_parse (jsonsel.h: only the members rule keeps) into this thread's
 * arena, paired with jarena_release() as jarena_parse() is. */
struct cJSON *jarena_parse_sel(const char *text, size_t len, const struct jsel *rule);
/* jsel_parse_lenient (bad list items left out, counted in *skipped) into
 * this thread's arena, paired with jarena_release(). */
struct cJSON *jarena_parse_lenient(const char *text, size_t len, const struct jsel *rule,
                                   unsigned *skipped);
/* Bytes of this thread's arena the trees parsed since the last rewind
 * take (the reflector sizes its list pages by it). */
size_t jarena_used(void);
/* cJSON_Delete for a tree from jarena_parse(): skips the walk when every
 * node is arena memory (no cJSON allocation on this thread outside the
 * arena since the parse, e.g. by a handler adding an item). */
void jarena_delete(struct cJSON *doc);
/* Done with the last tree this thread parsed (jarena_delete it first).
 * Parses may nest: the chunks are rewound (not freed) once every tree
 * parsed was released. */
void jarena_release(void);
/* Give this thread's chunks back (after a list; at thread exit). */
void jarena_trim(void);
void jarena_thread_done(void);

#endif
