/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — opening and reading whole (small) files: Corefiles, zone files,
 * hosts files, kubeconfigs, tokens. Called from setup, start and background
 * threads, never from a worker.
 *
 * Only regular files (after symlinks) are read, unless FILE_PIPE_OK lets a
 * pipe or FIFO through (the Corefile may come from standard input): a
 * directory, a device such as /dev/zero (whose reading never ends) or a
 * socket is refused without reading from it. The open never blocks: a FIFO
 * is opened non-blocking, so one without a writer reads as empty.
 */
#ifndef TOPODNS_FILE_H
#define TOPODNS_FILE_H

#include <stddef.h>
#include <stdio.h>

enum { FILE_REGULAR = 0, FILE_PIPE_OK = 1 };

/* path opened for reading ("rb"). NULL with errno set and *why (a static
 * string, "not a regular file" or strerror's) when it cannot be opened or
 * is not a file we read; why may be NULL. */
FILE *file_open(const char *path, int accept, const char **why);

/* The file's bytes, NUL-terminated (malloc'd; the caller frees), its length
 * in *len (may be NULL). NULL with errno and *why set as file_open's when
 * it cannot be read. */
char *file_read(const char *path, size_t *len, int accept, const char **why);

/* 1 when path names a regular file, 0 when it names something else (*why:
 * "is a directory" or "is not a regular file"), -1 when it cannot be
 * stat'ed (*why: strerror's). For setup checks that name the file. */
int file_check_regular(const char *path, const char **why);

#endif
