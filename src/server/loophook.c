/* SPDX-License-Identifier: Apache-2.0 */
/* Per-loop cleanup hooks (loophook.h). */
#include "loophook.h"
#include "core.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct loop_hook {
    struct event_base *base;
    loop_free_fn fn;
    void *arg;
    int ran;                        /* only base's owner writes it */
    struct loop_hook *next;         /* immutable once linked */
};

static int is_own_loop(const struct instance *ins, const struct event_base *base)
{
    if (base == atomic_load_explicit(&ins->http_base, memory_order_acquire))
        return 1;
    for (int i = 0; ins->workers && i < ins->nworkers; i++)
        if (ins->workers[i].base == base)
            return 1;
    return 0;
}

int loop_on_free(struct instance *ins, struct event_base *base, loop_free_fn fn, void *arg,
                 char *err, size_t errlen)
{
    assert(ins && fn);
    if (!base || !is_own_loop(ins, base)) {
        snprintf(err, errlen, "not one of the server's event loops");
        return -1;
    }
    struct loop_hook *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->base = base;
    h->fn = fn;
    h->arg = arg;
    h->next = atomic_load_explicit(&ins->loop_hooks, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&ins->loop_hooks, &h->next, h,
                                                  memory_order_release, memory_order_relaxed))
        ;
    return 0;
}

void loop_free_hooks_run(struct instance *ins, struct event_base *base)
{
    assert(ins && base);
    for (struct loop_hook *h = atomic_load_explicit(&ins->loop_hooks, memory_order_acquire);
         h; h = h->next)
        if (h->base == base && !h->ran) {
            h->ran = 1;
            h->fn(h->arg, base);
        }
}

void loop_free_hooks_clear(struct instance *ins)
{
    struct loop_hook *h = atomic_exchange(&ins->loop_hooks, NULL), *n;
    for (; h; h = n) {
        n = h->next;
        free(h);
    }
}
