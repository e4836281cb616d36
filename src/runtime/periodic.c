/* SPDX-License-Identifier: Apache-2.0 */
/*
 * periodic.c — background tasks on a timer. See periodic.h.
 *
 * The thread sleeps on a condition variable with a CLOCK_MONOTONIC deadline,
 * so wall-clock jumps neither fire nor stall it; kick and stop signal the
 * same variable.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "runtime/periodic.h"
#include "cluster/store.h"
#include "common/thread.h"

struct periodic {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    periodic_fn fn;
    void *arg;
    double delay;
    int flags;
    int stop, kicked;
};

static struct timespec deadline(double secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + secs;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    return ts;
}

/* Sleep (mu held) until the delay passes, a kick, or stop. */
static void sleep_for(periodic *p, double secs)
{
    if (secs < 0) {
        while (!p->stop && !p->kicked)
            pthread_cond_wait(&p->cv, &p->mu);
        return;
    }
    struct timespec ts = deadline(secs);
    while (!p->stop && !p->kicked)
        if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) != 0)
            break;                  /* timed out */
}

static void *periodic_main(void *arg)
{
    periodic *p = arg;
    thread_set_name("topodns-bg");
    if (p->flags & PERIODIC_RCU)
        store_reader_register();
    pthread_mutex_lock(&p->mu);
    double wait = p->delay;
    for (;;) {
        if (wait != 0)
            sleep_for(p, wait);
        if (p->stop)
            break;
        p->kicked = 0;
        pthread_mutex_unlock(&p->mu);
        wait = p->fn(p->arg);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    if (p->flags & PERIODIC_RCU)
        store_reader_unregister();
    return NULL;
}

periodic *periodic_start(periodic_fn fn, void *arg, double delay, int flags)
{
    assert(fn);
    assert((flags & ~PERIODIC_RCU) == 0);
    periodic *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fn = fn;
    p->arg = arg;
    p->delay = delay;
    p->flags = flags;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->mu, NULL);
    if (pthread_create(&p->thread, NULL, periodic_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

void periodic_kick(periodic *p)
{
    assert(p);
    pthread_mutex_lock(&p->mu);
    p->kicked = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void periodic_stop(periodic *p)
{
    if (!p)
        return;
    assert(!pthread_equal(pthread_self(), p->thread));  /* it joins the task's thread */
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
