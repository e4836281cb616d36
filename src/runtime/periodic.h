/* SPDX-License-Identifier: Apache-2.0 */
/*
 * periodic.h — a background task: one thread that runs a function again and
 * again, sleeping in between, until it is stopped.
 *
 * Plugins use it for everything that must happen off the serving path on a
 * timer: file and hosts reload their files, health polls itself, errors
 * flushes its summaries, topology's observer re-checks Services. The
 * function returns how long to sleep before its next run (in seconds; a
 * negative value sleeps until periodic_kick()). periodic_stop() wakes the
 * thread, waits for a run in progress to end, and joins it.
 *
 * Layer: src/runtime, below the API client, the topology engine, the
 * server and the plugins; it uses src/cluster only to register an RCU
 * reader (PERIODIC_RCU) and src/common for the thread's name.
 * Ownership: the caller that started a task owns it and must stop it
 * before freeing what arg points to; fn and arg are only used on the
 * task's own thread.
 */
#ifndef TOPODNS_PERIODIC_H
#define TOPODNS_PERIODIC_H

typedef struct periodic periodic;
typedef double (*periodic_fn)(void *arg);

enum { PERIODIC_RCU = 0x1 };         /* the thread reads the store / defers frees (RCU) */

/* Start: the first run happens after `delay` seconds (0: at once). fn is
 * required; flags are PERIODIC_* only (both asserted). NULL when the
 * thread cannot be created. */
periodic *periodic_start(periodic_fn fn, void *arg, double delay, int flags);
/* Run now (or as soon as the run in progress ends); p not NULL. */
void periodic_kick(periodic *p);
/* Stop and free (NULL is fine). Never from the task's own fn: it joins
 * the task's thread (asserted). */
void periodic_stop(periodic *p);

#endif
