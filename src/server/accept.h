/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accept.h — what a listening socket does when accept() fails.
 *
 * When the process or the system is out of descriptors (EMFILE, ENFILE) or
 * of kernel memory (ENOBUFS, ENOMEM), the connection stays queued and the
 * socket stays readable: a loop that only logs the error and tries again
 * spins at full CPU and writes millions of log lines a second. Every
 * listening socket of the server (DNS over TCP and TLS in listener.c, the
 * HTTP endpoints in http.c) has a guard instead: on any accept error but
 * the retriable ones libevent handles itself (EAGAIN, EINTR, ECONNABORTED)
 * the listener pauses, first for ACCEPT_PAUSE_MIN_MS, doubling on each
 * error of the same episode up to ACCEPT_PAUSE_MAX_MS (as Go's accept loop
 * backs off), and accepts again after the pause; queued connections wait
 * in the kernel's backlog meanwhile. An episode ends when no error came for
 * ACCEPT_EPISODE_GAP_MS; the next error starts over at the minimum.
 *
 * Logging: the first error of an episode is logged at once; after that at
 * most one line per ACCEPT_LOG_INTERVAL_MS per listener, which says how
 * many failed accepts it stands for (those not logged since the previous
 * line). A listener under a sustained exhaustion writes about one line a
 * second.
 *
 * Ownership: a guard is owned by whoever owns the listener (a worker in
 * listener.c, an HTTP listener in http.c), made after the listener and
 * freed before it; all calls come from the thread running the listener's
 * event loop.
 */
#ifndef TOPODNS_ACCEPT_H
#define TOPODNS_ACCEPT_H

#include <stdint.h>

#define ACCEPT_PAUSE_MIN_MS 5u
#define ACCEPT_PAUSE_MAX_MS 1000u
#define ACCEPT_LOG_INTERVAL_MS 1000u
#define ACCEPT_EPISODE_GAP_MS 3000u

struct evconnlistener;
struct event;

/* The decision state of one listener: pure data, no I/O. */
typedef struct accept_backoff {
    uint64_t last_err_ms;           /* monotonic ms of the last error; 0: none yet */
    uint64_t last_log_ms;           /* of the last line written */
    unsigned delay_ms;              /* the pause after the last error */
    unsigned long unlogged;         /* errors since the last line */
} accept_backoff;

/* One accept error at now_ms (monotonic milliseconds, > 0): returns how
 * long to pause; sets *log_now when a line is due, with *covered the
 * number of failed accepts it stands for (this one included), else
 * *covered is 0. */
unsigned accept_backoff_error(accept_backoff *b, uint64_t now_ms, int *log_now,
                              unsigned long *covered);

typedef struct accept_guard {
    struct evconnlistener *lev;     /* not owned */
    struct event *resume;           /* owned: the end of a pause */
    accept_backoff b;
    int stopped;                    /* accept_guard_stop(): never resume */
    char what[160];                 /* for the log: "dns tcp 127.0.0.1:53 (worker 0)" */
} accept_guard;

/* Make g for lev (whose event base the resume timer uses). 0, or -1 when
 * out of memory. */
int accept_guard_init(accept_guard *g, struct evconnlistener *lev, const char *what);
/* The listener's accept() failed with errno e: pause it (logging as
 * above). Call from the listener's error callback. */
void accept_guard_error(accept_guard *g, int e);
/* The owner disabled the listener for good (a draining worker): a pause
 * running now does not enable it again. */
void accept_guard_stop(accept_guard *g);
/* Free the timer (before the listener); g itself is the caller's. */
void accept_guard_free(accept_guard *g);

#endif
