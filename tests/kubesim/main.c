/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim main — command line, startup and the event loop.
 *
 *   kubesim [--listen ADDR:PORT] [--load FILE]... [--token T]
 *           [--tls-cert F --tls-key F [--client-ca F]] [--history N]
 *           [--bookmark-interval S]
 *           [--generate nodes=N,pods=N,services=N,zones=Z,endpointsPerService=E]
 *           [--churn N] [--seed N]
 *
 * Startup: namespaces default, kube-system, kube-public, kube-node-lease;
 * then --generate, then every --load file in order; then listen and print
 * "listening on HOST:PORT" as the first stdout line (port 0 picks a free
 * one). SIGINT/SIGTERM stop cleanly (everything freed, valgrind-clean).
 */
#include "kubesim.h"
#include "yamljson.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct opts {
    const char *listen, *cert, *key, *generate;
    const char **loads;
    int nloads;
    long history;
    int churn;
} opts;

static void usage(FILE *f)
{
    fprintf(f, "usage: kubesim [--listen ADDR:PORT] [--load FILE]... [--token T]\n"
               "               [--tls-cert F --tls-key F [--client-ca F]] [--history N]\n"
               "               [--bookmark-interval S]\n"
               "               [--generate nodes=N,pods=N,services=N,zones=Z,endpointsPerService=E]\n"
               "               [--churn N] [--seed N]\n");
}

static int parse_args(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"listen", required_argument, 0, 'l'}, {"load", required_argument, 0, 'f'},
        {"token", required_argument, 0, 't'}, {"tls-cert", required_argument, 0, 'c'},
        {"tls-key", required_argument, 0, 'k'},
        {"client-ca", required_argument, 0, 'A'}, {"history", required_argument, 0, 'H'},
        {"bookmark-interval", required_argument, 0, 'b'},
        {"generate", required_argument, 0, 'g'}, {"churn", required_argument, 0, 'C'},
        {"seed", required_argument, 0, 's'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'l': o->listen = optarg; break;
        case 'f':
            o->loads = realloc(o->loads, sizeof(char *) * (size_t)(o->nloads + 1));
            o->loads[o->nloads++] = optarg;
            break;
        case 't': free(ks_fault.token); ks_fault.token = strdup(optarg); break;
        case 'c': o->cert = optarg; break;
        case 'k': o->key = optarg; break;
        case 'A': http_client_ca = optarg; break;
        case 'H': o->history = atol(optarg); break;
        case 'b': ks_bookmark_interval = atoi(optarg); break;
        case 'g': o->generate = optarg; break;
        case 'C': o->churn = atoi(optarg); break;
        case 's': ks_seed(strtoull(optarg, NULL, 10)); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc || o->history < 1 || (!o->cert != !o->key) || (http_client_ca && !o->cert)) {
        usage(stderr);
        if (!o->cert != !o->key)
            fprintf(stderr, "kubesim: --tls-cert and --tls-key go together\n");
        if (http_client_ca && !o->cert)
            fprintf(stderr, "kubesim: --client-ca needs --tls-cert and --tls-key\n");
        return -1;
    }
    return 0;
}

static int load_file(const char *path)
{
    char err[300];
    cJSON *docs = yj_load_file(path, err, sizeof err), *d;
    ks_err e;
    if (!docs) {
        fprintf(stderr, "kubesim: %s: %s\n", path, err);
        return -1;
    }
    cJSON_ArrayForEach(d, docs) {
        if (obj_load(d, &e) < 0) {
            fprintf(stderr, "kubesim: %s: %s\n", path, e.msg);
            cJSON_Delete(docs);
            return -1;
        }
    }
    cJSON_Delete(docs);
    return 0;
}

static int populate(const opts *o)
{
    static const char *const base_ns[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    size_t i;
    int n;
    for (i = 0; i < sizeof base_ns / sizeof *base_ns; i++) {
        cJSON *d = cJSON_CreateObject();
        ks_err e;
        cJSON_AddStringToObject(d, "apiVersion", "v1");
        cJSON_AddStringToObject(d, "kind", "Namespace");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(d, "metadata"), "name", base_ns[i]);
        obj_load(d, &e);
        cJSON_Delete(d);
    }
    if (o->generate) {
        ks_gen g;
        char err[200];
        if (gen_parse(o->generate, &g, err, sizeof err) < 0) {
            fprintf(stderr, "kubesim: %s\n", err);
            return -1;
        }
        gen_run(&g);
    }
    for (n = 0; n < o->nloads; n++)
        if (load_file(o->loads[n]) < 0)
            return -1;
    return 0;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    (void)arg;
    event_base_loopbreak(ks_base);
}

int main(int argc, char **argv)
{
    opts o = {.listen = "127.0.0.1:0", .history = 10000};
    char bound[80];
    struct event *sigint, *sigterm;
    int rc = 1;

    signal(SIGPIPE, SIG_IGN);
    ks_seed((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
    if (parse_args(argc, argv, &o) < 0)
        return 2;
    ks_base = event_base_new();
    store_init((size_t)o.history);
    if (populate(&o) < 0 || http_start(o.listen, o.cert, o.key, bound, sizeof bound) < 0)
        goto out;
    printf("listening on %s\n", bound);
    fflush(stdout);
    churn_start(o.churn);
    sigint = evsignal_new(ks_base, SIGINT, on_signal, NULL);
    sigterm = evsignal_new(ks_base, SIGTERM, on_signal, NULL);
    evsignal_add(sigint, NULL);
    evsignal_add(sigterm, NULL);
    event_base_dispatch(ks_base);
    event_free(sigint);
    event_free(sigterm);
    rc = 0;
out:
    churn_stop();
    http_stop();
    reqlog_free();
    objects_free();
    store_free();
    crd_free();
    gen_free();
    event_base_free(ks_base);
    free(o.loads);
    free(ks_fault.token);
    return rc;
}
