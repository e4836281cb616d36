/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.c — the grammar of names under a kubernetes zone.
 *
 * A name minus its zone is read from the right (CoreDNS parseRequest):
 *
 *   (nothing) | svc | pod                  apex-like: no request
 *   X (not svc/pod)                        invalid (NXDOMAIN)
 *   <ns>.svc|pod                           namespace
 *   <svc>.<ns>.svc|pod                     service (or pod label)
 *   <ep>.<svc>.<ns>.svc|pod                endpoint
 *   <port>.<proto>.<svc>.<ns>.svc|pod      SRV form, one leading '_' stripped
 *   <ep>.<cluster>.<svc>.<ns>.svc          multicluster zones, when neither
 *                                          label starts with '_'
 *   <zone…>.pin|prefer._zone.<svc>.<ns>.svc  zonal form (option zonal)
 *   anything longer                        invalid ("too long")
 *
 * Labels are handled in text form with Go's escapes so that a label holding
 * a '.' never matches a Kubernetes name. Also here: endpoint names, pod
 * labels to addresses, and reverse names to addresses.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/names.h"

static void copy_str(char *out, size_t cap, const char *s)
{
    size_t l = strlen(s);
    if (l >= cap)
        l = cap - 1;
    memcpy(out, s, l);
    out[l] = '\0';
}

size_t kube_label_text(const uint8_t *label, char *out, size_t cap)
{
    size_t len = label[0], o = 0;
    for (size_t i = 1; i <= len && o + 5 < cap; i++) {
        uint8_t c = label[i];
        if (c == '.' || c == '\\' || c == '"' || c == '(' || c == ')' || c == ';' ||
            c == ' ' || c == '@' || c == '$') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x21 || c > 0x7e) {
            o += (size_t)snprintf(out + o, cap - o, "\\%03u", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return o;
}

static const char *strip_us(const char *s)
{
    return s[0] == '_' ? s + 1 : s;
}

/* Topology zone of the zonal form: labels 0..upto-1 joined by dots. */
static void join_labels(const uint8_t *const *labs, int upto, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < upto && o + KLABEL + 2 < cap; i++) {
        if (i)
            out[o++] = '.';
        o += kube_label_text(labs[i], out + o, cap - o);
    }
}

int kube_parse(const uint8_t *name, int zone_labels, int zonal, kreq *r)
{
    return kube_parse_mc(name, zone_labels, zonal, 0, r);
}

int kube_parse_mc(const uint8_t *name, int zone_labels, int zonal, int mc, kreq *r)
{
    memset(r, 0, sizeof *r);
    const uint8_t *labs[128];
    int n = 0;
    for (const uint8_t *p = name; *p && n < 128; p += *p + 1)
        labs[n++] = p;
    int base = n - zone_labels;             /* labels before the zone */
    if (base <= 0)
        return K_OK;
    char seg[KLABEL];
    int last = base - 1;
    kube_label_text(labs[last], seg, sizeof seg);
    if (base == 1 && (!strcmp(seg, "svc") || !strcmp(seg, "pod")))
        return K_OK;
    if (strcmp(seg, "svc") && strcmp(seg, "pod"))
        return K_INVALID;
    r->podsvc = !strcmp(seg, "svc") ? KR_SVC : KR_POD;
    if (--last < 0)
        return K_OK;
    kube_label_text(labs[last], r->ns, sizeof r->ns);
    if (--last < 0)
        return K_OK;
    kube_label_text(labs[last], r->service, sizeof r->service);
    if (--last < 0)
        return K_OK;
    if (last == 0) {
        kube_label_text(labs[0], r->endpoint, sizeof r->endpoint);
        return K_OK;
    }
    if (last == 1 && mc && labs[0][1] != '_' && labs[1][1] != '_') {
        kube_label_text(labs[1], r->cluster, sizeof r->cluster);
        kube_label_text(labs[0], r->endpoint, sizeof r->endpoint);
        return K_OK;
    }
    if (last == 1) {
        kube_label_text(labs[1], seg, sizeof seg);
        copy_str(r->proto, sizeof r->proto, strip_us(seg));
        kube_label_text(labs[0], seg, sizeof seg);
        copy_str(r->port, sizeof r->port, strip_us(seg));
        return K_OK;
    }
    /* three or more labels: only <zone…>.<directive>._zone is defined */
    kube_label_text(labs[last], seg, sizeof seg);
    if (!zonal || mc || r->podsvc != KR_SVC || strcmp(seg, "_zone"))
        return K_INVALID;
    kube_label_text(labs[last - 1], seg, sizeof seg);
    if (!strcmp(seg, "pin"))
        r->zonal = ZONAL_PIN;
    else if (!strcmp(seg, "prefer"))
        r->zonal = ZONAL_PREFER;
    else
        return K_INVALID;
    join_labels(labs, last - 1, r->topo_zone, sizeof r->topo_zone);
    return K_OK;
}

void kube_dashed_ip(const char *addr, char *out, size_t cap)
{
    /* CoreDNS: dots become dashes if there are any, else colons do (and a
     * trailing dash gets a 0); anything else has no dashed name. */
    char from = strchr(addr, '.') ? '.' : strchr(addr, ':') ? ':' : 0;
    size_t o = 0;
    out[0] = '\0';
    if (!from)
        return;
    for (const char *p = addr; *p && o + 2 < cap; p++)
        out[o++] = *p == from ? '-' : *p;
    if (from == ':' && o > 0 && out[o - 1] == '-')
        out[o++] = '0';
    out[o] = '\0';
}

const char *kube_endpoint_name(const st_endpoint *ep, int pod_names, char *out, size_t cap)
{
    char abuf[ST_ADDR_STRLEN], hbuf[ST_HOST_STRLEN];
    const char *host = st_ep_hostname(ep, hbuf), *pod;
    if (host && *host)
        copy_str(out, cap, host);
    else if (pod_names && (pod = st_ep_pod(ep, hbuf)) && *pod)
        copy_str(out, cap, pod);
    else
        kube_dashed_ip(st_ep_addr(ep, abuf), out, cap);
    return out;
}

void kube_pod_label_ip(const char *label, char *out, size_t cap)
{
    int dashes = 0;
    for (const char *p = label; *p; p++)
        dashes += *p == '-';
    char rep = (dashes == 3 && !strstr(label, "--")) ? '.' : ':';
    size_t o = 0;
    for (const char *p = label; *p && o + 1 < cap; p++)
        out[o++] = *p == '-' ? rep : *p;
    out[o] = '\0';
}

/* in-addr.arpa. and ip6.arpa. in wire format: checked on every query, so
 * not converted from text each time */
static const uint8_t in_addr_arpa[] = "\007in-addr\004arpa";
static const uint8_t ip6_arpa[] = "\003ip6\004arpa";

int kube_is_reverse(const uint8_t *name)
{
    return dname_is_sub(name, in_addr_arpa) || dname_is_sub(name, ip6_arpa);
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int reverse_v4(const uint8_t *name, st_ip *out)
{
    int oct[4], i = 0;
    for (const uint8_t *p = name; i < 4; p += *p + 1, i++) {
        if (*p < 1 || *p > 3)
            return 0;
        int v = 0;
        for (int j = 1; j <= *p; j++) {
            if (p[j] < '0' || p[j] > '9')
                return 0;
            v = v * 10 + (p[j] - '0');
        }
        if (v > 255)
            return 0;
        oct[i] = v;
    }
    memset(out, 0, sizeof *out);
    out->family = 4;
    for (i = 0; i < 4; i++)
        out->addr[i] = (uint8_t)oct[3 - i];
    return 1;
}

static int reverse_v6(const uint8_t *name, st_ip *out)
{
    int nib[32], i = 0;
    for (const uint8_t *p = name; i < 32; p += *p + 1, i++) {
        if (*p != 1 || hexval(p[1]) < 0)
            return 0;
        nib[i] = hexval(p[1]);
    }
    memset(out, 0, sizeof *out);
    out->family = 6;
    for (i = 0; i < 16; i++)
        out->addr[i] = (uint8_t)(nib[31 - 2 * i] << 4 | nib[30 - 2 * i]);
    return 1;
}

int kube_reverse_addr(const uint8_t *name, st_ip *out)
{
    int n = dname_labels(name);
    if (n == 6 && dname_is_sub(name, in_addr_arpa))
        return reverse_v4(name, out);
    if (n == 34 && dname_is_sub(name, ip6_arpa))
        return reverse_v6(name, out);
    return 0;
}
