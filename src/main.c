/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — topodns: the process.
 *
 * Reads the command line (CoreDNS's flags), loads the Corefile into an
 * instance and starts it, then runs one event loop on the main thread that
 * only handles process events:
 *   SIGUSR1, or a reload request from the reload plugin → load the Corefile
 *       again and start its plugins beside the running instance (the
 *       kubernetes plugin adopts the running cluster context when its
 *       configuration is unchanged); once the new instance is ready (its
 *       watches synced) it starts serving and the old one is stopped, and
 *       until then the old one keeps serving; on failure keep serving the
 *       old one;
 *   SIGTERM / SIGINT → wait the health plugin's lameduck (still serving),
 *       stop and exit 0.
 * DNS is served by the instance's worker threads (src/server/listener.c).
 *
 * main.c is the composition root: it sets up the libraries, makes the
 * metrics registry every instance reports to, and hands the server the
 * plugin table (src/plugins.c) — the server itself knows no plugin.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <ares.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <event2/thread.h>
#include "cluster/store.h"
#include "common/log.h"
#include "plugins.h"
#include "server/http.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "common/vec.h"

#define MAX_WORKERS 1024

/* The process: its options, the running instance and what every instance
 * shares (server_env). Owned by main(); only the main thread changes it. */
typedef struct process {
    const char *conf;               /* -conf, NULL: the built-in Corefile */
    const char *pidfile;
    int quiet;
    int check;                      /* -check: load and set up, serve nothing */
    server_env env;
    instance *ins;                  /* the running configuration */
    instance *pending;              /* a reload waiting to be ready, or NULL */
    double pending_log;             /* when to say again that it waits */
    struct event_base *base;
    struct event *reload_ev;        /* activated from any thread */
    struct event *pending_ev;       /* polls the pending instance */
    metric_family *reload_failed;
} process;

/* server_env.request_reload: any thread (the reload plugin's poller). */
static void request_reload(void *arg)
{
    process *p = arg;
    event_active(p->reload_ev, EV_READ, 0);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reload_failed(process *p, instance *next, const char *err)
{
    log_error("Restart failed: %s", err);
    metrics_add(p->reload_failed, NULL, 1);
    instance_stop(next);
    instance_free(next);
}

/* The pending instance serves; the one it replaces goes. */
static void swap_in(process *p)
{
    char err[1024];
    instance *next = p->pending;
    p->pending = NULL;
    if (instance_serve(next, err, sizeof err) < 0) {
        reload_failed(p, next, err);
        return;
    }
    instance *old = p->ins;
    p->ins = next;
    instance_stop(old);
    instance_free(old);
    log_info("Reloading complete");
}

static void drop_pending(process *p)
{
    if (!p->pending)
        return;
    event_del(p->pending_ev);
    instance_stop(p->pending);
    instance_free(p->pending);
    p->pending = NULL;
}

/* A reloaded instance serves once it is ready (its Kubernetes watches
 * synced); until then the running one keeps serving. */
static void poll_pending(evutil_socket_t fd, short what, void *arg)
{
    process *p = arg;
    if (!p->pending)
        return;
    if (instance_ready(p->pending)) {
        swap_in(p);
        return;
    }
    double now = mono_s();
    if (now >= p->pending_log) {
        log_info("Reload waiting for the new configuration to be ready; "
                 "the running configuration keeps serving");
        p->pending_log = now + 5;
    }
    struct timeval tv = { 0, 50000 };
    event_add(p->pending_ev, &tv);
}

static void reload(evutil_socket_t fd, short what, void *arg)
{
    process *p = arg;
    char err[1024];
    log_info("Reloading");
    drop_pending(p);                /* a newer Corefile replaces a waiting reload */
    instance *next = instance_load(&p->env, p->conf, err, sizeof err);
    if (!next) {
        log_error("Restart failed: %s", err);
        metrics_add(p->reload_failed, NULL, 1);
        return;
    }
    if (instance_prepare(next, p->ins, err, sizeof err) < 0) {
        reload_failed(p, next, err);
        return;
    }
    p->pending = next;
    p->pending_log = mono_s() + 1;      /* say so if it takes more than a second */
    poll_pending(-1, 0, p);
}

static void shutdown_now(evutil_socket_t sig, short what, void *arg)
{
    process *p = arg;
    log_info("%s: Shutting down servers then terminating", sig == SIGINT ? "SIGINT" : "SIGTERM");
    http_set_draining(p->ins);      /* /ready answers 503 from now on */
    double lame = instance_lameduck(p->ins);
    if (lame > 0) {
        log_info("Going into lameduck mode for %gs", lame);
        struct timespec ts = { (time_t)lame, (long)((lame - (double)(time_t)lame) * 1e9) };
        nanosleep(&ts, NULL);
    }
    event_base_loopbreak(p->base);
}

static void print_version(void)
{
    struct utsname u;
    uname(&u);
    printf("topodns-%s\nlinux/%s, %s\n", TOPODNS_VERSION, u.machine, __VERSION__);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_plugins(void)
{
    const char *names[128];
    size_t n = 0;
    for (; topodns_plugins[n] && n < 128; n++)
        names[n] = topodns_plugins[n]->name;
    qsort(names, n, sizeof names[0], cmp_str);
    printf("Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:\n");
    for (size_t i = 0; i < n; i++)
        printf("  dns.%s\n", names[i]);
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage of topodns:\n"
            "  -check\n"
            "    \tCheck the Corefile: set up every plugin, serve nothing, exit\n"
            "  -conf string\n"
            "    \tCorefile to load (default \"Corefile\")\n"
            "  -dns.port string\n"
            "    \tDefault port (default \"53\")\n"
            "  -pidfile string\n"
            "    \tPath to write pid file\n"
            "  -plugins\n"
            "    \tList installed plugins\n"
            "  -quiet\n"
            "    \tQuiet mode (no initialization output)\n"
            "  -version\n"
            "    \tShow version\n"
            "  -workers int\n"
            "    \tDNS worker threads, 1..1024 (default: one per CPU)\n");
}

/* A bad command line, as Go's flag package reports it: the message, then
 * the usage, on standard error. */
static int flag_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    usage(stderr);
    return -1;
}

/* Go's flag package accepts -flag, --flag, -flag=value and -flag value;
 * -h, -help and --help print the usage and exit 0; anything else wrong is
 * an error (exit 2). */
static int parse_args(process *p, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-' || !a[1])
            return flag_error("unexpected argument: %s%s", a, "");
        a += (a[1] == '-') ? 2 : 1;
        if (!strcmp(a, "h") || !strcmp(a, "help")) {
            usage(stderr);
            exit(0);
        }
        char *val = strchr(a, '=');
        if (val)
            *val++ = '\0';
        int is_bool = !strcmp(a, "quiet") || !strcmp(a, "version") || !strcmp(a, "plugins") ||
                      !strcmp(a, "check");
        if (!is_bool && strcmp(a, "conf") && strcmp(a, "dns.port") && strcmp(a, "pidfile") &&
            strcmp(a, "workers"))
            return flag_error("flag provided but not defined: -%s%s", a, "");
        if (!is_bool && !val) {
            if (i + 1 >= argc)
                return flag_error("flag needs an argument: -%s%s", a, "");
            val = argv[++i];
        }
        char *end;
        if (!strcmp(a, "conf")) {
            p->conf = val;
        } else if (!strcmp(a, "dns.port")) {
            long port = strtol(val, &end, 10);
            if (!*val || *end || port < 1 || port > 65535)
                return flag_error("invalid value \"%s\" for flag -%s: parse error", val, a);
            p->env.dns_port = (int)port;
        } else if (!strcmp(a, "pidfile")) {
            p->pidfile = val;
        } else if (!strcmp(a, "workers")) {
            long w = strtol(val, &end, 10);
            if (!*val || *end || w < 1 || w > MAX_WORKERS)
                return flag_error("invalid value \"%s\" for flag -%s: parse error", val, a);
            p->env.workers = (int)w;
        } else if (!strcmp(a, "quiet")) {
            p->quiet = !val || strcmp(val, "false") != 0;
        } else if (!strcmp(a, "check")) {
            p->check = !val || strcmp(val, "false") != 0;
        } else if (!strcmp(a, "version")) {
            print_version();
            exit(0);
        } else {
            print_plugins();
            exit(0);
        }
    }
    return 0;
}

/* A number from the environment for server_env (unset: the default).
 * -1 on a value that is not a number from min to max. */
static int env_number(const char *name, unsigned long min, unsigned long max,
                      unsigned long *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || errno || v[0] < '0' || v[0] > '9' || n < min || n > max) {
        log_msg("FATAL", "%s: invalid value '%s' (a number from %lu to %lu)", name, v, min, max);
        return -1;
    }
    *out = n;
    return 0;
}

static int env_limit(const char *name, unsigned *out)
{
    unsigned long n = *out;
    if (env_number(name, 1, 1000000, &n) < 0)
        return -1;
    *out = (unsigned)n;
    return 0;
}

static void banner(const process *p, instance *ins)
{
    if (p->quiet)
        return;
    for (size_t b = 0; b < instance_nblocks(ins); b++) {
        server_block *blk = instance_block(ins, b);
        for (size_t k = 0; k < blk->nkeys; k++)
            printf("%s:%d\n", blk->keys[k].zone, blk->keys[k].port);
    }
    print_version();
    fflush(stdout);
}

/* Library state every part of the process relies on, set once here. */
static void init_libraries(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    evthread_use_pthreads();        /* loops are woken from other threads */
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ares_library_init(ARES_LIB_INIT_ALL);
    store_reader_register();        /* reloads free published data via RCU */
}

static int write_pidfile(const char *path)
{
    FILE *fp = fopen(path, "w");
    if (!fp) {
        log_msg("FATAL", "pidfile %s: cannot write", path);
        return -1;
    }
    fprintf(fp, "%d\n", (int)getpid());
    fclose(fp);
    return 0;
}

/* -check: every directive of every block that this binary cannot set up
 * (unknown to CoreDNS, or a CoreDNS plugin topodns lacks), one line each
 * with its file:line, on standard error; then, when there is none, the
 * setup of every plugin (instance_load: nothing is bound, no thread or
 * watch starts, no API server is contacted), whose first error is printed
 * the same way. 0 when the Corefile would load, 1 otherwise. */
typedef struct check_line {
    const char *file;
    int line;
    const char *name, *why;
} check_line;

static int cmp_check_line(const void *a, const void *b)
{
    const check_line *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : x->line - y->line;
}

static int check_corefile(process *p)
{
    char err[1024];
    cf_file *cf = NULL;
    if (p->conf && !(cf = cf_parse_file(p->conf, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    check_line *bad = NULL;
    size_t nbad = 0, cap = 0;
    for (size_t b = 0; cf && b < cf->nblocks; b++) {
        const cf_block *blk = &cf->blocks[b];
        for (size_t i = 0; i < blk->ndirs; i++) {
            const cf_directive *dir = &blk->dirs[i];
            const char *why = plugin_order(dir->name) < 0 ? "is an unknown directive"
                              : !plugin_find(p->env.plugins, dir->name)
                                  ? "is not supported by topodns" : NULL;
            cf_disp d;
            cf_disp_init(&d, dir);
            while (why && cf_next(&d)) {
                if (VEC_RESERVE_FROM(bad, cap, nbad + 1, 16) < 0) {
                    free(bad);
                    cf_free(cf);
                    fprintf(stderr, "out of memory\n");
                    return 1;
                }
                bad[nbad++] = (check_line){ cf_file_name(&d), cf_line(&d), dir->name, why };
                while (cf_next_arg(&d))
                    ;
                while (cf_next_block(&d))
                    while (cf_next_arg(&d))
                        ;
            }
        }
    }
    if (nbad)
        qsort(bad, nbad, sizeof *bad, cmp_check_line);
    for (size_t i = 0; i < nbad; i++)
        fprintf(stderr, "%s:%d: plugin '%s' %s\n", bad[i].file, bad[i].line, bad[i].name,
                bad[i].why);
    free(bad);
    cf_free(cf);
    if (nbad)
        return 1;
    instance *ins = instance_load(&p->env, p->conf, err, sizeof err);
    if (!ins) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    instance_free(ins);
    printf("%s: OK\n", p->conf ? p->conf : "Corefile (built-in)");
    return 0;
}

/* The main thread's loop: signals and reload requests, until SIGTERM. */
static void run(process *p)
{
    struct event *evs[] = {
        evsignal_new(p->base, SIGTERM, shutdown_now, p),
        evsignal_new(p->base, SIGINT, shutdown_now, p),
        evsignal_new(p->base, SIGUSR1, reload, p),
    };
    for (size_t i = 0; i < 3; i++)
        event_add(evs[i], NULL);
    event_add(p->reload_ev, NULL);
    p->pending_ev = evtimer_new(p->base, poll_pending, p);
    event_base_dispatch(p->base);
    drop_pending(p);
    event_free(p->pending_ev);
    instance_stop(p->ins);
    instance_free(p->ins);
    p->ins = NULL;
    for (size_t i = 0; i < 3; i++)
        event_free(evs[i]);
}

int main(int argc, char **argv)
{
    process p = { .env = { .plugins = topodns_plugins, .dns_port = 53 } };
    if (parse_args(&p, argc, argv) < 0)
        return 2;
    if (env_limit("TOPODNS_TCP_MAX_CONNS", &p.env.tcp_max_conns) < 0 ||
        env_limit("TOPODNS_TCP_MAX_CONNS_PER_SOURCE", &p.env.tcp_max_per_source) < 0 ||
        env_number("TOPODNS_STRING_TABLE_SLACK", 4096, 1ul << 40, &p.env.strings_slack) < 0)
        return 1;
    if (!p.conf && access("Corefile", R_OK) == 0)
        p.conf = "Corefile";
    init_libraries();
    p.env.metrics = metrics_registry_new();
    p.reload_failed = metrics_family(p.env.metrics, "coredns_reload_failed_total",
                                     "Counter of the number of failed reload attempts.",
                                     METRIC_COUNTER, NULL, NULL, 0);
    /* a reload may be requested (from another thread) before the loop
     * runs: the event exists from the start, so the request waits */
    p.base = event_base_new();
    p.reload_ev = event_new(p.base, -1, EV_PERSIST, reload, &p);
    p.env.request_reload = request_reload;
    p.env.reload_arg = &p;
    /* every exit from here frees what was made above, so a fatal start-up
     * error leaves nothing behind (sanitizer builds check it) */
    int rc = 0;
    char err[1024];
    if (p.check) {
        rc = check_corefile(&p);
    } else if (!(p.ins = instance_load(&p.env, p.conf, err, sizeof err))) {
        log_msg("FATAL", "%s", err);
        rc = 1;
    } else if (instance_start(p.ins, err, sizeof err) < 0) {
        log_msg("FATAL", "%s", err);
        instance_free(p.ins);
        rc = 1;
    } else {
        banner(&p, p.ins);
        if (p.pidfile && write_pidfile(p.pidfile) < 0) {
            instance_stop(p.ins);
            instance_free(p.ins);
            rc = 1;
        } else {
            run(&p);
            if (p.pidfile)
                unlink(p.pidfile);
        }
    }
    metrics_registry_free(p.env.metrics);
    event_free(p.reload_ev);
    event_base_free(p.base);
    return rc;
}
