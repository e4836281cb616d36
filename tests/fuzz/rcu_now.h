/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rcu_now.h — for a libFuzzer harness whose code defers frees with RCU
 * (the cluster store, through pmap_defer()): the callbacks run in the
 * harness's own thread at the next barrier, after a real grace period,
 * instead of on liburcu's call_rcu worker thread.
 *
 * Why: the harness waits for the deferred frees after every input (an RCU
 * barrier), so that the input's mallocs and frees balance and libFuzzer's
 * per-input leak check scans the heap only when something really leaked.
 * liburcu's worker sleeps 10 ms after each batch (the "real-time" one
 * polls every 10 ms), so every barrier cost up to 10 ms of waiting plus
 * the wake-ups and their system calls: more than the input itself. Here
 * urcu_memb_call_rcu() only queues the callback, and urcu_memb_barrier()
 * (pmap_barrier(), and the barrier inside pmap_free()) waits for a grace
 * period with urcu_memb_synchronize_rcu() and runs what is queued, in
 * order, until nothing is left — what liburcu's barrier guarantees too.
 *
 * The two definitions take the place of liburcu's in the harness (the
 * executable's own definitions win over the shared library's for the
 * product's objects linked into it). The queue has a lock in case another
 * thread queues. Include it in exactly one file of a harness, and only in
 * the libFuzzer build: the replay build (`make check`) keeps liburcu's
 * worker. The queue is empty after every barrier; nothing is left to free.
 */
#ifndef TOPODNS_FUZZ_RCU_NOW_H
#define TOPODNS_FUZZ_RCU_NOW_H

#include <pthread.h>
#include <urcu/urcu-memb.h>

static pthread_mutex_t rcu_now_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cds_wfcq_node *rcu_now_first, **rcu_now_last = &rcu_now_first;

void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
    head->func = func;
    head->next.next = NULL;
    pthread_mutex_lock(&rcu_now_mu);
    *rcu_now_last = &head->next;
    rcu_now_last = &head->next.next;
    pthread_mutex_unlock(&rcu_now_mu);
}

void urcu_memb_barrier(void)
{
    for (;;) {
        pthread_mutex_lock(&rcu_now_mu);
        struct cds_wfcq_node *n = rcu_now_first;
        rcu_now_first = NULL;
        rcu_now_last = &rcu_now_first;
        pthread_mutex_unlock(&rcu_now_mu);
        if (!n)
            return;
        urcu_memb_synchronize_rcu();    /* every reader that could see them left */
        while (n) {                     /* a callback may queue more: next round */
            struct cds_wfcq_node *next = n->next;
            struct rcu_head *h = caa_container_of(n, struct rcu_head, next);
            h->func(h);
            n = next;
        }
    }
}

#endif
