/*
 * file.c — see file.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/file.h"

char *file_read(const char *path, size_t *len)
{
    errno = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, fp);
        if (r == 0)
            break;
        n += r;
    }
    int failed = ferror(fp) ? (errno ? errno : EIO) : 0;
    fclose(fp);
    if (buf && failed) {
        free(buf);
        errno = failed;
        return NULL;
    }
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}
