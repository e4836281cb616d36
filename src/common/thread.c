/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thread.c — thread names and priorities. See thread.h.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/thread.h"

void thread_set_name(const char *name)
{
    assert(name);
    char n[16];
    size_t len = strlen(name);
    if (len > sizeof n - 1)
        len = sizeof n - 1;
    memcpy(n, name, len);
    n[len] = '\0';
    pthread_setname_np(pthread_self(), n);
}

int thread_lower_priority(int inc)
{
    /* On Linux a nice value belongs to a thread (its TID), not the process. */
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, tid);
    if (cur == -1 && errno != 0)
        return -1;
    return setpriority(PRIO_PROCESS, tid, cur + inc) == 0 ? 0 : -1;
}
