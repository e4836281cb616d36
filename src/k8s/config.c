/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — where the API server is and how to authenticate to it.
 *
 * Three sources, as CoreDNS's kubernetes plugin has them (every server URL
 * parsed by libcurl's URL API, see "URLs" below):
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <curl/curl.h>
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

/* ---- URLs ---------------------------------------------------------------
 * libcurl parses every server URL (curl_url(): the parser of the library
 * that fetches it); its parts then pass our rules. What is stored is
 * libcurl's own rendering of the URL, without trailing '/', so the client
 * appends API paths to exactly what was checked. */

/* Why the URL parsed into u is not an API server's, or NULL. */
static const char *url_parts(CURLU *u)
{
    static const struct { CURLUPart part; const char *why; } absent[] = {
        { CURLUPART_USER, "user info in the URL" },
        { CURLUPART_PASSWORD, "user info in the URL" },
        { CURLUPART_OPTIONS, "user info in the URL" },
        { CURLUPART_QUERY, "a query in the URL" },
        { CURLUPART_FRAGMENT, "a fragment in the URL" },
    };
    char *v = NULL;
    const char *why = NULL;
    if (curl_url_get(u, CURLUPART_SCHEME, &v, 0) != CURLUE_OK ||
        (strcmp(v, "https") && strcmp(v, "http")))
        why = "want http:// or https://";
    curl_free(v);
    for (size_t i = 0; !why && i < sizeof absent / sizeof absent[0]; i++) {
        v = NULL;
        if (curl_url_get(u, absent[i].part, &v, 0) == CURLUE_OK)
            why = absent[i].why;
        curl_free(v);
    }
    v = NULL;
    if (!why && curl_url_get(u, CURLUPART_PORT, &v, 0) == CURLUE_OK && !strcmp(v, "0"))
        why = "port 0";
    curl_free(v);
    return why;
}

/* url as libcurl renders it, trailing '/' removed (malloc'd), or NULL with
 * *why: libcurl's reason, or the rule of url_parts it breaks. */
static char *url_normal(const char *url, const char **why)
{
    if (!url) {
        *why = "no URL";
        return NULL;
    }
    CURLU *u = curl_url();
    char *v = NULL, *out = NULL;
    CURLUcode rc = u ? curl_url_set(u, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    if (rc == CURLUE_BAD_SCHEME || rc == CURLUE_UNSUPPORTED_SCHEME)
        *why = "want http:// or https://";
    else if (rc != CURLUE_OK)
        *why = curl_url_strerror(rc);
    else if (!(*why = url_parts(u)) && curl_url_get(u, CURLUPART_URL, &v, 0) != CURLUE_OK)
        *why = "libcurl cannot render it";
    if (!*why && !(out = strdup(v)))
        *why = "out of memory";
    for (size_t n = out ? strlen(out) : 0; n > 0 && out[n - 1] == '/'; n--)
        out[n - 1] = '\0';
    curl_free(v);
    curl_url_cleanup(u);
    return out;
}

const char *k8s_url_check(const char *url)
{
    const char *why = NULL;
    free(url_normal(url, &why));
    return why;
}

int k8s_config_endpoint(k8s_config *c, const char *url, const char *cert, const char *key,
                        const char *ca, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *why = NULL;
    c->server = url_normal(url, &why);
    if (!c->server) {
        snprintf(err, errlen, "invalid endpoint '%s': %s", url ? url : "", why);
        return -1;
    }
    c->cert_file = dup0(cert);
    c->key_file = dup0(key);
    c->ca_file = dup0(ca);
    return 0;
}

/* https://HOST:PORT of the in-cluster variables, put together by libcurl
 * (an IPv6 host in brackets) and checked as any URL; NULL with *why. */
static char *incluster_url(const char *host, const char *port, const char **why)
{
    char bracketed[256], *v = NULL;
    if (strchr(host, ':') && host[0] != '[') {
        if (strlen(host) + 3 > sizeof bracketed) {
            *why = "the host is too long";
            return NULL;
        }
        snprintf(bracketed, sizeof bracketed, "[%s]", host);
        host = bracketed;
    }
    CURLU *u = curl_url();
    CURLUcode rc = !u ? CURLUE_OUT_OF_MEMORY : curl_url_set(u, CURLUPART_SCHEME, "https", 0);
    if (rc == CURLUE_OK)
        rc = curl_url_set(u, CURLUPART_HOST, host, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_set(u, CURLUPART_PORT, port, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_URL, &v, 0);
    char *out = rc == CURLUE_OK ? url_normal(v, why) : NULL;
    if (rc != CURLUE_OK)
        *why = curl_url_strerror(rc);
    curl_free(v);
    curl_url_cleanup(u);
    return out;
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
    const char *why = NULL;
    c->server = incluster_url(host, port, &why);
    if (!c->server) {
        snprintf(err, errlen, "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST "
                 "'%s' and KUBERNETES_SERVICE_PORT '%s' make no valid endpoint: %s", host, port, why);
        return -1;
    }
    char buf[1024];
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
