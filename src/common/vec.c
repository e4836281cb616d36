/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vec.c — the array growth of vec.h.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/vec.h"

int vec_reserve(void *vp, size_t *cap, size_t need, size_t elsz, size_t first)
{
    assert(vp && cap && elsz > 0);
    void *v;
    memcpy(&v, vp, sizeof v);               /* vp points to some T *, not a void * */
    assert(v || *cap == 0);                 /* no capacity without an array */
    if (need <= *cap)
        return 0;
    size_t max = SIZE_MAX / elsz;
    if (need > max)
        return -1;
    size_t nc = *cap ? *cap : first ? first : 8;
    while (nc < need)
        nc = nc > max / 2 ? need : nc * 2;  /* near the limit take just what is needed */
    if (nc > max)
        nc = need;
    void *nv = realloc(v, nc * elsz);
    if (!nv)
        return -1;
    memcpy(vp, &nv, sizeof nv);
    *cap = nc;
    assert(*cap >= need);
    return 0;
}

int vec_resize(void *vp, size_t n, size_t elsz)
{
    assert(vp && elsz > 0);
    void *v;
    memcpy(&v, vp, sizeof v);
    if (n > SIZE_MAX / elsz)
        return -1;
    void *nv = realloc(v, n ? n * elsz : 1);
    if (!nv)
        return -1;
    memcpy(vp, &nv, sizeof nv);
    return 0;
}
