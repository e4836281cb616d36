/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gofmt.c — Go's duration and float formatting as CoreDNS prints them.
 * See gofmt.h. Written from the documented behaviour of Go's time and
 * strconv packages (Duration.String, ParseDuration, AppendFloat 'f' -1).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/gofmt.h"

/* ---- floats ------------------------------------------------------------ */

size_t go_seconds(int64_t ns, char *out, size_t cap)
{
    assert(out || cap == 0);
    /* Duration.Seconds(): whole seconds plus the nanoseconds as a fraction */
    int64_t sec = ns / 1000000000, nsec = ns % 1000000000;
    double v = (double)sec + (double)nsec / 1e9;
    char buf[64];
    int n = 0;
    /* the fewest fractional digits that read back as the same double */
    for (int prec = 0; prec <= 30; prec++) {
        n = snprintf(buf, sizeof buf, "%.*f", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (n < 0)
        n = 0;
    snprintf(out, cap, "%s", buf);
    return cap ? ((size_t)n < cap ? (size_t)n : cap - 1) : 0;
}

/* ---- Duration.String ----------------------------------------------------- */

/* "<int>[.<frac without trailing zeros>]" of v / 10^prec. */
static int put_frac(char *out, size_t cap, uint64_t v, int prec)
{
    uint64_t div = 1;
    for (int i = 0; i < prec; i++)
        div *= 10;
    uint64_t ip = v / div, fp = v % div;
    if (fp == 0)
        return snprintf(out, cap, "%llu", (unsigned long long)ip);
    char frac[24];
    size_t fl = (size_t)prec < sizeof frac - 1 ? (size_t)prec : sizeof frac - 1;
    frac[fl] = '\0';
    for (size_t i = fl; i-- > 0; fp /= 10)
        frac[i] = (char)('0' + fp % 10);
    while (fl > 0 && frac[fl - 1] == '0')
        frac[--fl] = '\0';
    return snprintf(out, cap, "%llu.%s", (unsigned long long)ip, frac);
}

size_t go_duration_str(int64_t ns, char *out, size_t cap)
{
    assert(out || cap == 0);
    char buf[160];
    const char *sign = ns < 0 ? "-" : "";
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    char num[64];
    if (u == 0) {
        snprintf(buf, sizeof buf, "0s");
    } else if (u < 1000ull) {
        snprintf(buf, sizeof buf, "%s%lluns", sign, (unsigned long long)u);
    } else if (u < 1000000ull) {
        put_frac(num, sizeof num, u, 3);
        snprintf(buf, sizeof buf, "%s%s\xc2\xb5s", sign, num);
    } else if (u < 1000000000ull) {
        put_frac(num, sizeof num, u, 6);
        snprintf(buf, sizeof buf, "%s%sms", sign, num);
    } else {
        uint64_t secs = u / 1000000000ull, frac = u % 1000000000ull;
        uint64_t mins = secs / 60, hours = mins / 60;
        put_frac(num, sizeof num, (secs % 60) * 1000000000ull + frac, 9);
        if (hours > 0)
            snprintf(buf, sizeof buf, "%s%lluh%llum%ss", sign, (unsigned long long)hours,
                     (unsigned long long)(mins % 60), num);
        else if (mins > 0)
            snprintf(buf, sizeof buf, "%s%llum%ss", sign, (unsigned long long)mins, num);
        else
            snprintf(buf, sizeof buf, "%s%ss", sign, num);
    }
    snprintf(out, cap, "%s", buf);
    size_t n = strlen(buf);
    return cap ? (n < cap ? n : cap - 1) : 0;
}
