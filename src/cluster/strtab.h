/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strtab.h — a string table: each distinct string stored once.
 *
 * The cluster store owns one (label keys and values, zones, node names,
 * namespaces, port names repeat across thousands of objects). Only the
 * store's writer — the API thread, through the decoders — interns; the
 * strings are immutable and readers (DNS workers, the HTTP thread, the
 * topology observer) use them freely. Nothing is ever removed: a string
 * lives until the table is freed, with its store, after every reader is
 * gone. There is no table shared between stores: a reload's new store
 * interns into its own.
 *
 * So the table keeps strings no object uses any more (a label value that
 * changed, a deleted namespace's name), and anyone who may write an API
 * object can make new ones. The store's owner watches strtab_bytes() and
 * replaces the whole store (a new one, filled by a full list) when the
 * table has grown too far.
 */
#ifndef TOPODNS_STRTAB_H
#define TOPODNS_STRTAB_H

#include <stddef.h>

typedef struct strtab strtab;

strtab *strtab_new(void);
void strtab_free(strtab *t);
/* The table's copy of s (NULL for NULL, or when memory runs out). */
const char *strtab_intern(strtab *t, const char *s);
/* The same for s in lower case. */
const char *strtab_intern_lower(strtab *t, const char *s);
/* Octets the entries take (each string, its terminator and its 12-byte
 * header; not the buckets or the allocator's overhead). Only grows. Read
 * by the writer. */
size_t strtab_bytes(const strtab *t);

#endif
