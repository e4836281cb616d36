/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_periodic.c — periodic tasks (src/runtime/periodic.c): the first run
 * after the delay, the next after what the function returns, a negative
 * return sleeps until periodic_kick(), and periodic_stop() waits for a run
 * in progress and joins the thread. Waits are bounded (a few seconds at
 * most, polling every millisecond).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>
#include "runtime/periodic.h"

typedef struct task {
    atomic_int runs;
    atomic_int in_run;          /* 1 while fn runs */
    atomic_int ended;           /* runs that returned */
    double next;                /* what fn returns */
    double run_secs;            /* how long one run takes */
} task;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

static double fn(void *arg)
{
    task *t = arg;
    atomic_store(&t->in_run, 1);
    atomic_fetch_add(&t->runs, 1);
    if (t->run_secs > 0)
        sleep_s(t->run_secs);
    atomic_store(&t->in_run, 0);
    atomic_fetch_add(&t->ended, 1);
    return t->next;
}

/* Wait up to `secs` for t->runs >= n; the time it took, or -1. */
static double wait_runs(task *t, int n, double secs)
{
    double t0 = now_s();
    while (atomic_load(&t->runs) < n) {
        if (now_s() - t0 > secs)
            return -1;
        sleep_s(0.001);
    }
    return now_s() - t0;
}

static void test_delay_and_interval(void **state)
{
    (void)state;
    task t = { .next = 0.05 };
    double t0 = now_s();
    periodic *p = periodic_start(fn, &t, 0.2, 0);
    assert_non_null(p);
    sleep_s(0.1);
    assert_int_equal(atomic_load(&t.runs), 0);        /* not before the delay */
    assert_true(wait_runs(&t, 1, 5) >= 0);
    assert_true(now_s() - t0 >= 0.2);
    assert_true(wait_runs(&t, 4, 5) >= 0);            /* again every 50 ms */
    periodic_stop(p);
    int runs = atomic_load(&t.runs);
    sleep_s(0.15);
    assert_int_equal(atomic_load(&t.runs), runs);     /* stopped: no more runs */
}

static void test_kick(void **state)
{
    (void)state;
    task t = { .next = -1 };                           /* sleep until kicked */
    periodic *p = periodic_start(fn, &t, 0, PERIODIC_RCU);
    assert_non_null(p);
    assert_true(wait_runs(&t, 1, 5) >= 0);            /* delay 0: at once */
    sleep_s(0.1);
    assert_int_equal(atomic_load(&t.runs), 1);        /* then waits */
    periodic_kick(p);
    assert_true(wait_runs(&t, 2, 5) >= 0);
    sleep_s(0.05);
    assert_int_equal(atomic_load(&t.runs), 2);
    periodic_stop(p);
}

static void test_stop_waits_for_run(void **state)
{
    (void)state;
    task t = { .next = 10, .run_secs = 0.2 };
    periodic *p = periodic_start(fn, &t, 0, 0);
    assert_non_null(p);
    assert_true(wait_runs(&t, 1, 5) >= 0);
    assert_int_equal(atomic_load(&t.in_run), 1);
    periodic_stop(p);                                  /* returns after the run */
    assert_int_equal(atomic_load(&t.in_run), 0);
    assert_int_equal(atomic_load(&t.ended), 1);
    periodic_stop(NULL);                               /* NULL is fine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_and_interval),
        cmocka_unit_test(test_kick),
        cmocka_unit_test(test_stop_waits_for_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
