/*
 * file.h — reading a whole (small) file: Corefiles, hosts files, tokens.
 * Called from setup, start and background threads, never from a worker.
 */
#ifndef TOPODNS_FILE_H
#define TOPODNS_FILE_H

#include <stddef.h>

/* The file's bytes, NUL-terminated (malloc'd; the caller frees), its length
 * in *len (may be NULL). NULL with errno set when it cannot be read. */
char *file_read(const char *path, size_t *len);

#endif
