/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thread.h — names and scheduling priority of topodns's own threads.
 *
 * Each thread calls these once, on itself, as its first step: nothing is
 * shared, nothing is freed. The names show in `top -H`, `ps -L`, gdb and
 * /proc/PID/task/TID/comm:
 *   topodns-wN     DNS worker N (src/server/listener.c)
 *   topodns-api    a kubernetes instance's API client (src/k8s/client.c)
 *   topodns-http   the HTTP endpoints (health, ready, metrics, explain)
 *   topodns-bg     a background timer task (src/runtime/periodic.c)
 *
 * Priority: the API thread runs at nice THREAD_API_NICE. When the CPU is
 * saturated (a full relist of a large cluster parsing hundreds of MB of
 * JSON), the scheduler then gives the DNS workers most of it and the relist
 * takes longer; when the CPU is idle the API thread runs at full speed.
 * Raising a thread's own nice value needs no privilege; where the kernel
 * refuses, the thread keeps its priority and nothing else changes.
 */
#ifndef TOPODNS_THREAD_H
#define TOPODNS_THREAD_H

enum { THREAD_API_NICE = 10 };

/* Name the calling thread (at most 15 characters are kept). */
void thread_set_name(const char *name);

/* Add `inc` to the calling thread's nice value (Linux: per thread).
 * 0, or -1 when the kernel refused. */
int thread_lower_priority(int inc);

#endif
