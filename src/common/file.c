/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c — see file.h.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/file.h"
#include "common/vec.h"

#define NOT_REGULAR "not a regular file"

static void set_why(const char **why, const char *text)
{
    if (why)
        *why = text;
}

/* Whether st is a file we read: 0, or -1 with errno and *why. */
static int acceptable(const struct stat *st, int accept, const char **why)
{
    if (S_ISREG(st->st_mode) || (accept == FILE_PIPE_OK && S_ISFIFO(st->st_mode)))
        return 0;
    errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
    set_why(why, errno == EISDIR ? strerror(EISDIR) : NOT_REGULAR);
    return -1;
}

FILE *file_open(const char *path, int accept, const char **why)
{
    assert(path);
    assert(accept == FILE_REGULAR || accept == FILE_PIPE_OK);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        set_why(why, strerror(e));
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (acceptable(&st, accept, why) < 0 || flags < 0 ||
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        set_why(why, strerror(errno));
        close(fd);
    }
    return fp;
}

/* Every byte of fp into a NUL-terminated buffer; NULL with errno. */
static char *read_all(FILE *fp, size_t *len)
{
    assert(fp);
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n + 1 >= cap && vec_reserve(&buf, &cap, cap + 1, 1, 4096) < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, fp);
        if (r == 0)
            break;
        n += r;
    }
    int failed = !buf ? ENOMEM : ferror(fp) ? (errno ? errno : EIO) : 0;
    if (failed) {
        free(buf);
        errno = failed;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *file_read(const char *path, size_t *len, int accept, const char **why)
{
    FILE *fp = file_open(path, accept, why);
    if (!fp)
        return NULL;
    errno = 0;
    char *buf = read_all(fp, len);
    int e = errno;
    fclose(fp);
    if (!buf) {
        errno = e;
        set_why(why, strerror(e));
    }
    return buf;
}

int file_check_regular(const char *path, const char **why)
{
    assert(path);
    struct stat st;
    if (stat(path, &st) < 0) {
        set_why(why, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return 1;
    set_why(why, S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
    return 0;
}
