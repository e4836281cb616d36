/*
 * gofmt.c — Go's duration and float formatting as CoreDNS prints them.
 * See gofmt.h. Written from the documented behaviour of Go's time and
 * strconv packages (Duration.String, ParseDuration, AppendFloat 'f' -1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/gofmt.h"

/* ---- floats ------------------------------------------------------------ */

size_t go_seconds(int64_t ns, char *out, size_t cap)
{
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

/* ---- ParseDuration ------------------------------------------------------- */

static const struct { const char *name; uint64_t ns; } units[] = {
    { "ns", 1ull }, { "us", 1000ull }, { "\xc2\xb5s", 1000ull }, { "\xce\xbcs", 1000ull },
    { "ms", 1000000ull }, { "s", 1000000000ull }, { "m", 60000000000ull },
    { "h", 3600000000000ull },
};

static int dur_err(char *err, size_t errlen, const char *what, const char *unit, const char *orig)
{
    if (unit)
        snprintf(err, errlen, "time: unknown unit \"%s\" in duration \"%s\"", unit, orig);
    else
        snprintf(err, errlen, "time: %s duration \"%s\"", what, orig);
    return -1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* One "<number><unit>" element; adds its value to *d. */
static int parse_elem(const char **sp, uint64_t *d, const char *orig, char *err, size_t errlen)
{
    const char *s = *sp;
    const uint64_t lim = 1ull << 63;
    if (!(*s == '.' || is_digit(*s)))
        return dur_err(err, errlen, "invalid", NULL, orig);
    uint64_t v = 0, f = 0;
    double scale = 1;
    const char *start = s;
    for (; is_digit(*s); s++) {
        if (v > (lim - 1) / 10)
            return dur_err(err, errlen, "invalid", NULL, orig);
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > lim)
            return dur_err(err, errlen, "invalid", NULL, orig);
    }
    int pre = s != start, post = 0;
    if (*s == '.') {
        s++;
        const char *fs = s;
        int overflow = 0;
        for (; is_digit(*s); s++) {
            if (overflow)
                continue;
            if (f > (lim - 1) / 10) {
                overflow = 1;
                continue;
            }
            f = f * 10 + (uint64_t)(*s - '0');
            scale *= 10;
        }
        post = s != fs;
    }
    if (!pre && !post)
        return dur_err(err, errlen, "invalid", NULL, orig);
    const char *us = s;
    while (*s && *s != '.' && !is_digit(*s))
        s++;
    if (s == us)
        return dur_err(err, errlen, "missing unit in", NULL, orig);
    char unit[16];
    snprintf(unit, sizeof unit, "%.*s", (int)(s - us), us);
    uint64_t un = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if ((size_t)(s - us) == strlen(units[i].name) && strncmp(us, units[i].name, (size_t)(s - us)) == 0)
            un = units[i].ns;
    if (!un)
        return dur_err(err, errlen, NULL, unit, orig);
    if (v > lim / un)
        return dur_err(err, errlen, "invalid", NULL, orig);
    v *= un;
    if (f > 0) {
        v += (uint64_t)((double)f * ((double)un / scale));
        if (v > lim)
            return dur_err(err, errlen, "invalid", NULL, orig);
    }
    *d += v;
    if (*d > lim)
        return dur_err(err, errlen, "invalid", NULL, orig);
    *sp = s;
    return 0;
}

int go_parse_duration(const char *s, int64_t *ns, char *err, size_t errlen)
{
    const char *orig = s;
    int neg = 0;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*s)
        return dur_err(err, errlen, "invalid", NULL, orig);
    uint64_t d = 0;
    while (*s)
        if (parse_elem(&s, &d, orig, err, errlen) < 0)
            return -1;
    if (neg) {
        *ns = d == (1ull << 63) ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > (uint64_t)INT64_MAX)
        return dur_err(err, errlen, "invalid", NULL, orig);
    *ns = (int64_t)d;
    return 0;
}
