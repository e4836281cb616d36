/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch.h — one private scratch directory per fuzz harness process, for
 * the readers that take a path (zone files, hosts files, kubeconfigs,
 * Corefiles naming them).
 *
 * scratch_file(NAME, OUT) writes the path of NAME in that directory into
 * OUT (SCRATCH_PATH octets) and returns OUT. The directory is created on the
 * first call under /dev/shm (memory: no disk metadata per input; /tmp when
 * there is no /dev/shm), the same for every input, so a harness rewrites
 * its file(s) instead of making and removing a directory per input. The
 * directory and its files are removed at exit. Written and read by the
 * harness's one thread; the returned path lives until exit.
 */
#ifndef TOPODNS_FUZZ_SCRATCH_H
#define TOPODNS_FUZZ_SCRATCH_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SCRATCH_PATH = 128 };

static char scratch_dir[64];

static void scratch_remove(void)
{
    DIR *d = opendir(scratch_dir);
    if (d) {
        for (struct dirent *e = readdir(d); e; e = readdir(d))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(scratch_dir);
}

static inline const char *scratch_file(const char *name, char *out)
{
    if (!scratch_dir[0]) {
        snprintf(scratch_dir, sizeof scratch_dir, "%s/topodns-fuzz.XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(scratch_dir))
            abort();
        atexit(scratch_remove);
    }
    snprintf(out, SCRATCH_PATH, "%s/%s", scratch_dir, name);
    return out;
}

#endif
