/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/alloccost.c — the topology allocators' cost per endpoint: the
 * Auto hints (ta_auto_hints, topology-mode Auto) and the same-zone Prefer
 * groups (ta_local_groups) for one Service of 50, 500, 5,000 and 20,000
 * ready endpoints over 3 zones of 10 nodes each, 80 % of the endpoints in
 * one zone (so many move). Prints microseconds per call and nanoseconds
 * per endpoint: flat means linear. Built by hand against a build dir:
 *   cc -O2 -I src -o /tmp/alloccost bench/alloccost.c BUILD/src/topology/libtopology.a \
 *      BUILD/src/cluster/libcluster.a BUILD/src/common/libcommon.a -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "topology/alloc.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(void)
{
    const char *zn[3] = { "a", "b", "c" };
    ta_node nodes[30];
    for (int i = 0; i < 30; i++) nodes[i] = (ta_node){ zn[i % 3], 4000, 1, 0 };
    ta_ratios r;
    ta_zone_ratios(nodes, 30, &r);
    ta_zone_nodes zs[3] = { { "a", 10 }, { "b", 10 }, { "c", 10 } };
    for (size_t n = 50; n <= 20000; n = n == 50 ? 500 : n == 500 ? 5000 : n == 5000 ? 20000 : 20001) {
        ta_ep *eps = calloc(n, sizeof *eps);
        const char **hz = calloc(n, sizeof *hz);
        for (size_t i = 0; i < n; i++) eps[i] = (ta_ep){ i % 10 < 8 ? "a" : zn[i % 3], "node", 1 };
        char msg[256];
        int reps = (int)(200000 / n) + 1;
        double t0 = now();
        for (int k = 0; k < reps; k++) ta_auto_hints(&r, eps, n, 4, hz, msg, sizeof msg);
        double t1 = now();
        for (int k = 0; k < reps; k++) ta_local_groups(zs, 3, eps, n, 0, hz, msg, sizeof msg);
        double t2 = now();
        printf("n=%zu auto %.1f us/call (%.1f ns/ep)  local %.1f us/call (%.1f ns/ep)\n", n,
               (t1 - t0) / reps * 1e6, (t1 - t0) / reps / n * 1e9, (t2 - t1) / reps * 1e6, (t2 - t1) / reps / n * 1e9);
        free(eps); free(hz);
    }
    return 0;
}
