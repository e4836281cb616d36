/* SPDX-License-Identifier: Apache-2.0 */
/* Per-loop cleanup hooks: a plugin learns that one of the instance's event
 * loops (a worker's, or the HTTP thread's) is about to be freed, so that it
 * can free what it keeps on that loop (bufferevents, events) while the
 * event_base still exists.
 *
 * Who writes: plugins register with loop_on_free() from any thread while
 * the instance runs (lock-free push). Who reads: the loop's owner, once its
 * thread has stopped, calls loop_free_hooks_run() just before
 * event_base_free() (listener.c worker_close, http.c http_stop); each hook
 * runs once, on that thread, newest first. Memory: the hook records belong
 * to the instance and are freed by loop_free_hooks_clear() (instance_free),
 * without calling hooks that never ran. */
#ifndef TOPODNS_LOOPHOOK_H
#define TOPODNS_LOOPHOOK_H

#include <stddef.h>

struct instance;
struct event_base;

/* Called once with base still valid; the loop is no longer running. */
typedef void (*loop_free_fn)(void *arg, struct event_base *base);

/* Register fn(arg, base) to run before base is freed. base must be one of
 * ins's loops (a worker's or the HTTP thread's): 0 on success; -1 with err
 * when it is not (e.g. a plugin's private loop: the caller then must not
 * keep anything on base that outlives its own use) or out of memory. */
int loop_on_free(struct instance *ins, struct event_base *base, loop_free_fn fn, void *arg,
                 char *err, size_t errlen);

/* Core: run and retire the hooks registered for base (its thread stopped). */
void loop_free_hooks_run(struct instance *ins, struct event_base *base);

/* Core: free every hook record (all loops freed; none runs). */
void loop_free_hooks_clear(struct instance *ins);

#endif
