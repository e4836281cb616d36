/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accept.c — pausing a listener whose accept() fails (accept.h).
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>
#include <event2/listener.h>
#include "server/accept.h"
#include "common/log.h"

unsigned accept_backoff_error(accept_backoff *b, uint64_t now_ms, int *log_now,
                              unsigned long *covered)
{
    assert(now_ms > 0);
    int fresh = b->last_err_ms == 0 || now_ms - b->last_err_ms >= ACCEPT_EPISODE_GAP_MS;
    if (fresh || b->delay_ms == 0)
        b->delay_ms = ACCEPT_PAUSE_MIN_MS;
    else if (b->delay_ms < ACCEPT_PAUSE_MAX_MS)
        b->delay_ms = b->delay_ms * 2 > ACCEPT_PAUSE_MAX_MS ? ACCEPT_PAUSE_MAX_MS
                                                            : b->delay_ms * 2;
    b->last_err_ms = now_ms;
    b->unlogged++;
    *log_now = fresh || b->last_log_ms == 0 || now_ms - b->last_log_ms >= ACCEPT_LOG_INTERVAL_MS;
    *covered = 0;
    if (*log_now) {
        *covered = b->unlogged;
        b->unlogged = 0;
        b->last_log_ms = now_ms;
    }
    return b->delay_ms;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u + 1u;
}

static void resume(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    accept_guard *g = arg;
    if (!g->stopped)
        evconnlistener_enable(g->lev);
}

int accept_guard_init(accept_guard *g, struct evconnlistener *lev, const char *what)
{
    memset(g, 0, sizeof *g);
    g->lev = lev;
    snprintf(g->what, sizeof g->what, "%s", what);
    g->resume = evtimer_new(evconnlistener_get_base(lev), resume, g);
    return g->resume ? 0 : -1;
}

void accept_guard_error(accept_guard *g, int e)
{
    assert(g->lev && g->resume);
    int log_now;
    unsigned long covered;
    unsigned ms = accept_backoff_error(&g->b, now_ms(), &log_now, &covered);
    evconnlistener_disable(g->lev);
    if (!g->stopped) {
        struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
        evtimer_add(g->resume, &tv);
    }
    if (!log_now)
        return;
    if (covered > 1)
        log_error("%s: accept: %s (%lu failed accepts since the last report); "
                  "pausing accepts for %u ms", g->what, strerror(e), covered, ms);
    else
        log_error("%s: accept: %s; pausing accepts for %u ms", g->what, strerror(e), ms);
}

void accept_guard_stop(accept_guard *g)
{
    g->stopped = 1;
    if (g->resume)
        evtimer_del(g->resume);
}

void accept_guard_free(accept_guard *g)
{
    if (g->resume)
        event_free(g->resume);
    g->resume = NULL;
}
