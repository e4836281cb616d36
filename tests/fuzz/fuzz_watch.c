/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_watch.c — fuzz harness for the reflector (src/k8s/reflector.c): the
 * list/watch state machine, the watch-stream framer (events split anywhere,
 * several per chunk, CR/blank padding, oversized lines), selective
 * parsing (jsonsel.c), the parse arena, resourceVersion ordering and the Status
 * bodies of failed responses, with the objects landing in a real cluster
 * store (as the kubernetes plugin's handlers do).
 *
 * Input: a transport script, segments separated by NUL octets. A segment
 * that starts with \x01 is a transport event:
 *   \x01H<status>[ <Retry-After>]   the response's status line (default 200)
 *   \x01D  /  \x01F                  the transfer ended (ok / failed)
 *   \x01T                            the timer the reflector asked for fired
 * any other segment is body octets of the current response. Events arrive
 * only as a real transport sends them: body and end only while a request is
 * outstanding, the timer only when one was scheduled. The reflector starts
 * with its first list; the script answers it and whatever follows.
 *
 * Checks: the reflector never stalls (after a request ends or its timer
 * fires it has started a request or scheduled a timer), never asks for two
 * things at once, never schedules a negative delay, and hands the store a
 * JSON object for every watch event (list items may be any value: the
 * handler's to skip, as k8s.h says).
 *
 * One store serves the process (a fresh one per input would balance
 * exactly, but freeing it destroys eight hash tables, and liburcu's
 * cds_lfht_destroy() flushes its resize worker's queue each time: about
 * 10 ms of waiting per input, as measured with fuzz_store), made with
 * store_opts.expected_pods = 1: its maps start at their 64-bucket minimum
 * instead of a large cluster's (3 MB of buckets no input needs; the maps
 * grow with the pods and shrink back). Each input leaves it empty: an
 * empty relist at the end drops every pod the script left, and
 * pmap_barrier() runs the RCU callbacks that free them. So an input's
 * mallocs and frees balance (but for strings the store's string table
 * interns for the first time: it keeps those), and libFuzzer's per-input
 * leak check scans the heap only when something really leaked. Every
 * 4096th input frees the store (the next makes a new one): its string
 * table keeps every new string a mutation brings, which over millions of
 * inputs would grow without bound; the wait that costs comes once per
 * 4096 inputs. In the
 * libFuzzer build, rcu_now.h runs those callbacks in this thread at the
 * barrier (after a grace period) instead of on liburcu's worker, which
 * sleeps up to 10 ms before each batch; the replay build keeps the worker
 * (a real-time one: it polls instead of waiting to be woken).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <urcu/urcu-memb.h>
#include "cluster/pmap.h"
#include "cluster/store.h"
#include "k8s/jsonarena.h"
#include "k8s/reflector.h"
#ifdef FUZZING_LIBFUZZER
#include "quiet.h"
#include "rcu_now.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct env {
    store *st;
    int outstanding;            /* a request is in flight */
    int headers;                /* its status line was given */
    int scheduled;              /* a timer is armed */
    int acts;                   /* requests started + timers armed */
    double t;
} env;

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_watch: %s\n", why);
    abort();
}

static int e_start(void *ctx, const char *url)
{
    env *e = ctx;
    if (e->outstanding || e->scheduled)
        fail("a request started while another or a timer was pending");
    if (strncmp(url, "http://k:1/api/v1/pods?", 23))
        fail("request URL outside the collection");
    e->outstanding = 1;
    e->headers = 0;
    e->acts++;
    return 0;
}

static void e_schedule(void *ctx, double delay)
{
    env *e = ctx;
    if (e->outstanding || e->scheduled)
        fail("a timer armed while a request or another timer was pending");
    if (!(delay >= 0 && delay <= 1000))
        fail("delay out of range");
    e->scheduled = 1;
    e->acts++;
    e->t += delay;
}

static double e_now(void *ctx) { return ((env *)ctx)->t; }
static double e_random(void *ctx) { (void)ctx; return 0.5; }


/* A list item may be any JSON value: the handler's to log and skip
 * (k8s.h); the store writers do. */
static void h_up(void *ctx, const cJSON *o)
{
    if (!o)
        fail("upsert of nothing");
    store_upsert_pod(((env *)ctx)->st, o);
}

static void h_rm(void *ctx, const cJSON *o)
{
    if (!cJSON_IsObject(o))
        fail("remove of a non-object");     /* only watch events remove */
    store_remove(((env *)ctx)->st, "pods", o);
}

static void h_begin(void *ctx) { store_relist_begin(((env *)ctx)->st, "pods"); }
static void h_end(void *ctx) { store_relist_end(((env *)ctx)->st, "pods"); }

static const refl_ops OPS = { e_start, e_schedule, e_now, e_random, NULL, NULL, NULL, NULL };

/* The request ended (ok or not): the reflector must go on. */
static void done(refl *r, env *e, int ok)
{
    int before = e->acts;
    if (!e->headers)
        refl_on_headers(r, 200, NULL);
    e->outstanding = 0;
    refl_on_done(r, ok);
    if (e->acts == before)
        fail("stalled after a request ended");
}

static void segment(refl *r, env *e, const uint8_t *s, size_t n)
{
    if (n >= 2 && s[0] == 1) {
        if (s[1] == 'H' && e->outstanding) {
            char buf[64];
            size_t m = n - 2 < sizeof buf - 1 ? n - 2 : sizeof buf - 1;
            memcpy(buf, s + 2, m);
            buf[m] = '\0';
            char *sp = strchr(buf, ' ');
            if (sp)
                *sp++ = '\0';
            refl_on_headers(r, strtol(buf, NULL, 10), sp);
            e->headers = 1;
        } else if ((s[1] == 'D' || s[1] == 'F') && e->outstanding) {
            done(r, e, s[1] == 'D');
        } else if (s[1] == 'T' && e->scheduled) {
            int before = e->acts;
            e->scheduled = 0;
            refl_on_timer(r);
            if (e->acts == before)
                fail("stalled after its timer");
        }
        return;
    }
    if (!e->outstanding || n == 0)
        return;
    if (!e->headers) {
        refl_on_headers(r, 200, NULL);
        e->headers = 1;
    }
    if (refl_on_body(r, (const char *)s, n) < 0)
        done(r, e, 0);                  /* the transport aborts the transfer */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const k8s_handler H = { NULL, h_up, h_rm, h_begin, h_end };
    static store *st;               /* see the top comment */
    static int registered;
    static unsigned inputs;
    if (!registered) {
        store_reader_register();
#ifdef FUZZING_LIBFUZZER
        fuzz_quiet_stdout();
#else
        urcu_memb_set_thread_call_rcu_data(urcu_memb_create_call_rcu_data(URCU_CALL_RCU_RT, -1));
#endif
        registered = 1;
    }
    if (!st) {
        store_opts o = { .expected_pods = 1 };
        st = store_new(&o);
    }
    env e = { .t = 1000, .st = st };
    k8s_handler h = H;
    h.ctx = &e;
    refl *r = refl_new("http://k:1", "/api/v1/pods", NULL, &h, &OPS, &e);
    if (!e.st || !r)
        abort();
    refl_start(r);
    size_t i = 0;
    while (i <= size) {
        const uint8_t *nul = i < size ? memchr(data + i, 0, size - i) : NULL;
        size_t n = nul ? (size_t)(nul - (data + i)) : size - i;
        segment(r, &e, data + i, n);
        i += n + 1;
    }
    if (e.outstanding)
        done(r, &e, 1);
    if (strlen(refl_version(r)) >= 64)
        fail("resourceVersion too long");
    refl_free(r);
    jarena_thread_done();
    store_relist_begin(st, "pods");         /* nothing listed: every pod goes */
    store_relist_end(st, "pods");
    pmap_barrier();
    if (++inputs % 4096 == 0) {     /* see the top comment */
        store_free(st);
        st = NULL;
    }
    return 0;
}
