/*
 * config.c — where the API server is and how to authenticate to it.
 *
 * Three sources, as CoreDNS's kubernetes plugin has them:
 *   endpoint URL [+ tls CERT KEY CACERT]
 *   kubeconfig PATH [CONTEXT]   (libyaml; clusters, users, contexts,
 *                                current-context; *-data fields base64 via
 *                                OpenSSL, as strict as kubectl, an invalid
 *                                one an error; relative paths against the
 *                                file)
 *   in-cluster                  (KUBERNETES_SERVICE_HOST/PORT, the service
 *                                account token and CA; TOPODNS_SA_DIR
 *                                overrides the directory for tests)
 *
 * A kubeconfig is read whole (a regular file only) and first walked as a
 * stream of parser events, which stops at the first collection nested
 * deeper than KUBECONFIG_MAX_DEPTH: libyaml's document loader has no such
 * limit, and 100k nested '[' kept it busy with ever more memory. Only a
 * document that passes is loaded.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <yaml.h>
#include "common/file.h"
#include "k8s/k8s.h"

/* Real kubeconfigs nest 4 or 5 levels deep. */
#define KUBECONFIG_MAX_DEPTH 64

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

void k8s_config_free(k8s_config *c)
{
    char **f[] = { &c->server, &c->ca_file, &c->ca_data, &c->cert_file, &c->key_file,
                   &c->cert_data, &c->key_data, &c->token, &c->token_file };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        free(*f[i]);
        *f[i] = NULL;
    }
}

/* ---- URLs --------------------------------------------------------------- */

/* Why the port text p (up to end) is not one in 1..65535, or NULL. */
static const char *url_port(const char *p, const char *end)
{
    long v = 0;
    if (p == end || end - p > 5)
        return "the port is not a number in 1..65535";
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return "the port is not a number in 1..65535";
        v = v * 10 + (*p - '0');
    }
    return v >= 1 && v <= 65535 ? NULL : "the port is not a number in 1..65535";
}

/* Why the bracketed IPv6 host at a ("[...]") is bad, or NULL; *rest is
 * what follows the ']'. */
static const char *url_ipv6(const char *a, const char *end, const char **rest)
{
    const char *close = memchr(a, ']', (size_t)(end - a));
    char buf[64];
    unsigned char bin[16];
    if (!close)
        return "unclosed '[' in the host";
    if ((size_t)(close - a - 1) >= sizeof buf)
        return "the host in '[...]' is not an IPv6 address";
    memcpy(buf, a + 1, (size_t)(close - a - 1));
    buf[close - a - 1] = '\0';
    if (inet_pton(AF_INET6, buf, bin) != 1)
        return "the host in '[...]' is not an IPv6 address";
    *rest = close + 1;
    return *rest == end || **rest == ':' ? NULL : "unexpected text after ']'";
}

/* Why the authority a..end ("host[:port]") is bad, or NULL. */
static const char *url_authority(const char *a, const char *end)
{
    const char *rest;
    if (a == end)
        return "no host";
    if (memchr(a, '@', (size_t)(end - a)))
        return "user info in the URL (the host has an '@')";
    if (*a == '[') {
        const char *why = url_ipv6(a, end, &rest);
        return why ? why : rest == end ? NULL : url_port(rest + 1, end);
    }
    rest = memchr(a, ':', (size_t)(end - a));
    if (rest && memchr(rest + 1, ':', (size_t)(end - rest - 1)))
        return "the host is not a name or an address (an IPv6 address needs '[...]')";
    const char *host_end = rest ? rest : end;
    if (host_end == a)
        return "no host";
    for (const char *h = a; h < host_end; h++)
        if (!isalnum((unsigned char)*h) && *h != '.' && *h != '-' && *h != '_')
            return "the host is not a name or an address (an IPv6 address needs '[...]')";
    return rest ? url_port(rest + 1, end) : NULL;
}

const char *k8s_url_check(const char *url)
{
    if (!url)
        return "no URL";
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return "a control character or blank in the URL";
    const char *a = !strncmp(url, "https://", 8) ? url + 8 : !strncmp(url, "http://", 7) ? url + 7
                                                                                          : NULL;
    if (!a)
        return "want http:// or https://";
    if (strpbrk(a, "?#"))
        return "a query or fragment in the URL";
    const char *slash = strchr(a, '/');
    return url_authority(a, slash ? slash : a + strlen(a));
}

int k8s_config_endpoint(k8s_config *c, const char *url, const char *cert, const char *key,
                        const char *ca, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *why = k8s_url_check(url);
    if (why) {
        snprintf(err, errlen, "invalid endpoint '%s': %s", url ? url : "", why);
        return -1;
    }
    c->server = strdup(url);
    size_t n = strlen(c->server);
    while (n > 0 && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    c->cert_file = dup0(cert);
    c->key_file = dup0(key);
    c->ca_file = dup0(ca);
    return 0;
}

int k8s_config_incluster(k8s_config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port) {
        snprintf(err, errlen, "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
                 "and KUBERNETES_SERVICE_PORT must be defined");
        return -1;
    }
    const char *dir = getenv("TOPODNS_SA_DIR");
    if (!dir || !*dir)
        dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    char buf[1024];
    snprintf(buf, sizeof buf, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    const char *why = k8s_url_check(buf);
    if (why) {
        snprintf(err, errlen, "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST "
                 "and KUBERNETES_SERVICE_PORT make the invalid endpoint '%s': %s", buf, why);
        return -1;
    }
    c->server = strdup(buf);
    snprintf(buf, sizeof buf, "%s/token", dir);
    c->token_file = strdup(buf);
    snprintf(buf, sizeof buf, "%s/ca.crt", dir);
    c->ca_file = strdup(buf);
    return 0;
}

/* ---- kubeconfig ------------------------------------------------------- */

/* A YAML document loaded with libyaml's document API. */
static yaml_node_t *ymap(yaml_document_t *d, yaml_node_t *m, const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(d, p->value);
    }
    return NULL;
}

static const char *yscalar(yaml_document_t *d, yaml_node_t *m, const char *key)
{
    yaml_node_t *v = ymap(d, m, key);
    return v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
}

/* The entry of a named list (clusters/users/contexts) called name. */
static yaml_node_t *ynamed(yaml_document_t *d, yaml_node_t *root, const char *list,
                           const char *name, const char *inner)
{
    yaml_node_t *l = ymap(d, root, list);
    if (!l || l->type != YAML_SEQUENCE_NODE || !name)
        return NULL;
    for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++) {
        yaml_node_t *e = yaml_document_get_node(d, *i);
        const char *n = yscalar(d, e, "name");
        if (n && strcmp(n, name) == 0)
            return ymap(d, e, inner);
    }
    return NULL;
}

/* ---- *-data fields ------------------------------------------------------
 * kubectl decodes them with Go's standard base64: CR and LF are ignored
 * anywhere, the rest must be whole groups of 4 characters of the standard
 * alphabet, ending in at most two '='. OpenSSL's EVP_DecodeBlock does the
 * decoding; b64_check first rejects what it would accept wrongly ('=' is
 * zero bits to it, anywhere) and counts the padding, which it decodes as
 * bytes. */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* in without CR and LF into s (as long as in); NULL and *pad, or why not. */
static const char *b64_check(const char *in, char *s, size_t *pad)
{
    size_t n = 0;
    for (; *in; in++)
        if (*in != '\r' && *in != '\n')
            s[n++] = *in;
    s[n] = '\0';
    size_t data = strspn(s, b64_alphabet);
    *pad = strspn(s + data, "=");
    if (n == 0)
        return "it is empty";
    if (data + *pad < n)
        return s[data] == '=' ? "data after '=' padding" : "a character outside the base64 alphabet";
    if (*pad > 2)
        return "more than two '=' of padding";
    if (n % 4 != 0)
        return "its length is not a multiple of 4 (padding missing?)";
    if (n > INT_MAX)
        return "it is too long";
    return NULL;
}

/* in decoded into *out (NUL-terminated); NULL, or why not. */
static const char *b64_decode(const char *in, char **out)
{
    size_t n = strlen(in), pad;
    char *s = malloc(n + 1);
    unsigned char *o = malloc(n / 4 * 3 + 1);
    const char *why = !s || !o ? "out of memory" : b64_check(in, s, &pad);
    int len = why ? -1 : EVP_DecodeBlock(o, (const unsigned char *)s, (int)strlen(s));
    if (!why && (len < 0 || (size_t)len <= pad))
        why = "OpenSSL cannot decode it";
    else if (!why && memchr(o, '\0', (size_t)len - pad))
        why = "it decodes to binary data with a NUL byte, not PEM text";
    free(s);
    if (why) {
        free(o);
        return why;
    }
    o[len - pad] = '\0';
    *out = (char *)o;
    return NULL;
}

/* A plain YAML null: "", "~", "null", "Null", "NULL". */
static int ynull(const yaml_node_t *v)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
    if (v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (strcmp((const char *)v->data.scalar.value, nulls[i]) == 0)
            return 1;
    return 0;
}

/* The *-data field key of m (the cluster or user owner) decoded into *out,
 * which stays NULL when the field is absent. Present, it must decode to
 * something: an empty or invalid value is an error naming it, not dropped
 * (a dropped CA would mean trusting the system CAs). 0, or -1 with err. */
static int ydata(yaml_document_t *d, yaml_node_t *m, const char *key, const char *owner,
                 char **out, const char *path, char *err, size_t errlen)
{
    yaml_node_t *v = ymap(d, m, key);
    if (!v)
        return 0;
    const char *why = v->type != YAML_SCALAR_NODE ? "it is not a string"
                      : ynull(v) ? "it is empty"
                      : b64_decode((const char *)v->data.scalar.value, out);
    if (!why)
        return 0;
    snprintf(err, errlen, "kubeconfig %s: %s of %s: invalid base64 data: %s", path, key, owner,
             why);
    return -1;
}

static char *relpath(const char *dir, const char *p)
{
    if (!p)
        return NULL;
    if (p[0] == '/')
        return strdup(p);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, p);
    return s;
}

/* Walk text's parser events: 0 when it is YAML nested at most max deep;
 * -1 with err (the line of the first collection too deep) otherwise. */
static int yaml_check_depth(const char *text, size_t len, int max, const char *path,
                            char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int depth = 0, rc = 0, done = 0;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done && rc == 0) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "kubeconfig %s: not valid YAML", path);
            rc = -1;
            break;
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
            if (++depth > max) {
                snprintf(err, errlen, "kubeconfig %s:%lu: nested deeper than %d levels", path,
                         (unsigned long)ev.start_mark.line + 1, max);
                rc = -1;
            }
        } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* The kubeconfig at path as a libyaml document, its depth checked first.
 * 0, or -1 with err. */
static int load_document(const char *path, yaml_document_t *d, char *err, size_t errlen)
{
    size_t len = 0;
    const char *why = NULL;
    char *text = file_read(path, &len, FILE_REGULAR, &why);
    if (!text) {
        snprintf(err, errlen, "kubeconfig %s: cannot open: %s", path, why);
        return -1;
    }
    int rc = yaml_check_depth(text, len, KUBECONFIG_MAX_DEPTH, path, err, errlen);
    if (rc == 0) {
        yaml_parser_t p;
        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        if (!yaml_parser_load(&p, d)) {
            snprintf(err, errlen, "kubeconfig %s: not valid YAML", path);
            rc = -1;
        }
        yaml_parser_delete(&p);
    }
    free(text);
    return rc;
}

int k8s_config_kubeconfig(k8s_config *c, const char *path, const char *context,
                          char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    yaml_document_t d;
    if (load_document(path, &d, err, errlen) < 0)
        return -1;
    char *pc = strdup(path), *dir = dirname(pc);
    yaml_node_t *root = yaml_document_get_root_node(&d);
    const char *ctx = context ? context : yscalar(&d, root, "current-context");
    yaml_node_t *cx = ynamed(&d, root, "contexts", ctx, "context");
    int rc = -1;
    if (!cx) {
        snprintf(err, errlen, "kubeconfig %s: context '%s' not found", path, ctx ? ctx : "");
        goto out;
    }
    yaml_node_t *cl = ynamed(&d, root, "clusters", yscalar(&d, cx, "cluster"), "cluster");
    yaml_node_t *us = ynamed(&d, root, "users", yscalar(&d, cx, "user"), "user");
    if (!cl || !yscalar(&d, cl, "server")) {
        snprintf(err, errlen, "kubeconfig %s: cluster of context '%s' has no server", path, ctx);
        goto out;
    }
    char e2[256];
    if (k8s_config_endpoint(c, yscalar(&d, cl, "server"), NULL, NULL, NULL, e2, sizeof e2) < 0) {
        snprintf(err, errlen, "kubeconfig %s: %s", path, e2);
        goto out;
    }
    char clo[300], uso[300];
    snprintf(clo, sizeof clo, "cluster '%s'", yscalar(&d, cx, "cluster"));
    snprintf(uso, sizeof uso, "user '%s'", us ? yscalar(&d, cx, "user") : "");
    if (ydata(&d, cl, "certificate-authority-data", clo, &c->ca_data, path, err, errlen) < 0 ||
        ydata(&d, us, "client-certificate-data", uso, &c->cert_data, path, err, errlen) < 0 ||
        ydata(&d, us, "client-key-data", uso, &c->key_data, path, err, errlen) < 0)
        goto out;
    c->ca_file = relpath(dir, yscalar(&d, cl, "certificate-authority"));
    const char *ins = yscalar(&d, cl, "insecure-skip-tls-verify");
    c->insecure = ins && strcmp(ins, "true") == 0;
    c->cert_file = relpath(dir, yscalar(&d, us, "client-certificate"));
    c->key_file = relpath(dir, yscalar(&d, us, "client-key"));
    c->token = dup0(yscalar(&d, us, "token"));
    c->token_file = relpath(dir, yscalar(&d, us, "tokenFile"));
    rc = 0;
out:
    if (rc < 0)
        k8s_config_free(c);
    free(pc);
    yaml_document_delete(&d);
    return rc;
}
