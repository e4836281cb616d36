/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loophook.c — per-loop cleanup hooks (src/server/loophook.c): a hook
 * runs once, before its loop is freed, only for the loop it was registered
 * on and newest first; a loop the server does not own is refused; and the
 * workers' loops run their hooks when listeners_stop frees them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <event2/event.h>
#include "server/core.h"
#include "server/loophook.h"

typedef struct seen {
    struct event_base *base[8];
    int tag[8];
    int n;
} seen;

typedef struct probe {
    seen *s;
    int tag;
} probe;

static void hook(void *arg, struct event_base *base)
{
    probe *p = arg;
    assert_true(p->s->n < 8);
    /* the loop still exists: this would fault under ASan once freed */
    assert_non_null(event_base_get_method(base));
    p->s->base[p->s->n] = base;
    p->s->tag[p->s->n++] = p->tag;
}

static void runs_once_per_loop_newest_first(void **state)
{
    (void)state;
    struct instance *ins = calloc(1, sizeof *ins);
    assert_non_null(ins);
    worker w[2];
    memset(w, 0, sizeof w);
    w[0].base = event_base_new();
    w[1].base = event_base_new();
    ins->workers = w;
    ins->nworkers = 2;
    seen s = {0};
    probe p1 = {&s, 1}, p2 = {&s, 2}, p3 = {&s, 3};
    char err[128];
    assert_int_equal(loop_on_free(ins, w[0].base, hook, &p1, err, sizeof err), 0);
    assert_int_equal(loop_on_free(ins, w[1].base, hook, &p2, err, sizeof err), 0);
    assert_int_equal(loop_on_free(ins, w[0].base, hook, &p3, err, sizeof err), 0);

    struct event_base *other = event_base_new();
    err[0] = 0;
    assert_int_equal(loop_on_free(ins, other, hook, &p1, err, sizeof err), -1);
    assert_string_equal(err, "not one of the server's event loops");
    assert_int_equal(loop_on_free(ins, NULL, hook, &p1, err, sizeof err), -1);

    loop_free_hooks_run(ins, w[0].base);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.tag[0], 3);
    assert_int_equal(s.tag[1], 1);
    assert_ptr_equal(s.base[0], w[0].base);
    loop_free_hooks_run(ins, w[0].base);        /* once only */
    assert_int_equal(s.n, 2);
    loop_free_hooks_run(ins, other);             /* nothing registered */
    assert_int_equal(s.n, 2);
    loop_free_hooks_run(ins, w[1].base);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.tag[2], 2);
    assert_ptr_equal(s.base[2], w[1].base);

    /* the HTTP thread's loop counts while it is published */
    atomic_store(&ins->http_base, other);
    assert_int_equal(loop_on_free(ins, other, hook, &p1, err, sizeof err), 0);
    atomic_store(&ins->http_base, NULL);
    loop_free_hooks_clear(ins);                  /* never-run hook: freed, not called */
    assert_int_equal(s.n, 3);
    event_base_free(other);
    event_base_free(w[0].base);
    event_base_free(w[1].base);
    free(ins);
}

/* The real path: listeners_start makes the workers' loops, listeners_stop
 * runs their hooks before freeing them. */
static void listeners_stop_runs_hooks(void **state)
{
    (void)state;
    struct instance *ins = calloc(1, sizeof *ins);
    assert_non_null(ins);
    server_env env;
    memset(&env, 0, sizeof env);
    ins->env = &env;
    ins->nworkers = 2;
    char err[256];
    assert_int_equal(listeners_start(ins, err, sizeof err), 0);
    struct event_base *b0 = ins->workers[0].base, *b1 = ins->workers[1].base;
    assert_non_null(b0);
    seen s = {0};
    probe p1 = {&s, 1}, p2 = {&s, 2};
    assert_int_equal(loop_on_free(ins, b0, hook, &p1, err, sizeof err), 0);
    assert_int_equal(loop_on_free(ins, b1, hook, &p2, err, sizeof err), 0);
    assert_int_equal(s.n, 0);
    listeners_stop(ins);
    assert_int_equal(s.n, 2);
    assert_ptr_equal(s.base[0], b0);
    assert_ptr_equal(s.base[1], b1);
    loop_free_hooks_clear(ins);
    free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_once_per_loop_newest_first),
        cmocka_unit_test(listeners_stop_runs_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
