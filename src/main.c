/*
 * main.c — topodns: the process.
 *
 * Reads the command line (CoreDNS's flags), loads the Corefile into an
 * instance and starts it, then runs one event loop on the main thread that
 * only handles process events:
 *   SIGUSR1, or a reload request from the reload plugin → load the Corefile
 *       again; on success start the new instance beside the old one, then
 *       stop the old one; on failure keep serving the old one;
 *   SIGTERM / SIGINT → wait the health plugin's lameduck (still serving),
 *       stop and exit 0.
 * DNS is served by the instance's worker threads (src/server/listener.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/thread.h>
#include "server/http.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/server.h"
#include "cluster/store.h"

static instance *g_ins;
static struct event *g_reload_ev;
static const char *g_pidfile;

static void request_reload(void)
{
    if (g_reload_ev)
        event_active(g_reload_ev, EV_READ, 0);
}

static void reload(evutil_socket_t fd, short what, void *arg)
{
    static metric_family *failed;
    if (!failed)
        failed = metrics_family("coredns_reload_failed_total",
                                "Counter of the number of failed reload attempts.",
                                METRIC_COUNTER, NULL, NULL, 0);
    char err[1024];
    log_info("Reloading");
    instance *next = instance_load(g_opts.conf, err, sizeof err);
    if (!next || instance_start(next, err, sizeof err) < 0) {
        log_error("Restart failed: %s", err);
        metrics_add(failed, NULL, 1);
        instance_free(next);
        return;
    }
    instance *old = g_ins;
    g_ins = next;
    instance_stop(old);
    instance_free(old);
    log_info("Reloading complete");
}

static void shutdown_now(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;
    log_info("%s: Shutting down servers then terminating", sig == SIGINT ? "SIGINT" : "SIGTERM");
    http_set_draining(g_ins);       /* /ready answers 503 from now on */
    double lame = instance_lameduck(g_ins);
    if (lame > 0) {
        log_info("Going into lameduck mode for %gs", lame);
        struct timespec ts = { (time_t)lame, (long)((lame - (double)(time_t)lame) * 1e9) };
        nanosleep(&ts, NULL);
    }
    event_base_loopbreak(base);
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
    const plugin_def *defs[128];
    const char *names[128];
    size_t n = plugin_list(defs, 128);
    for (size_t i = 0; i < n; i++)
        names[i] = defs[i]->name;
    qsort(names, n, sizeof names[0], cmp_str);
    printf("Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:\n");
    for (size_t i = 0; i < n; i++)
        printf("  dns.%s\n", names[i]);
}

static void usage(void)
{
    fprintf(stderr,
            "Usage of topodns:\n"
            "  -conf string        Corefile to load (default \"Corefile\")\n"
            "  -dns.port string    Default port (default \"53\")\n"
            "  -pidfile string     Path to write pid file\n"
            "  -plugins            List installed plugins\n"
            "  -quiet              Quiet mode (no initialization output)\n"
            "  -version            Show version\n"
            "  -workers int        DNS worker threads (default: number of CPUs)\n");
}

/* Go's flag package accepts -flag, --flag, -flag=value and -flag value. */
static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-') {
            fprintf(stderr, "unexpected argument: %s\n", a);
            return -1;
        }
        a += (a[1] == '-') ? 2 : 1;
        char *val = strchr(a, '=');
        if (val)
            *val++ = '\0';
        int is_bool = !strcmp(a, "quiet") || !strcmp(a, "version") || !strcmp(a, "plugins");
        if (!is_bool && !val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "flag needs an argument: -%s\n", a);
                return -1;
            }
            val = argv[++i];
        }
        if (!strcmp(a, "conf")) {
            g_opts.conf = val;
        } else if (!strcmp(a, "dns.port")) {
            char *end;
            long p = strtol(val, &end, 10);
            if (*end || p < 1 || p > 65535) {
                fprintf(stderr, "invalid -dns.port: %s\n", val);
                return -1;
            }
            g_opts.dns_port = (int)p;
        } else if (!strcmp(a, "pidfile")) {
            g_pidfile = val;
        } else if (!strcmp(a, "workers")) {
            g_opts.workers = atoi(val);
        } else if (!strcmp(a, "quiet")) {
            g_opts.quiet = !val || strcmp(val, "false") != 0;
        } else if (!strcmp(a, "version")) {
            print_version();
            exit(0);
        } else if (!strcmp(a, "plugins")) {
            print_plugins();
            exit(0);
        } else {
            fprintf(stderr, "flag provided but not defined: -%s\n", a);
            usage();
            return -1;
        }
    }
    return 0;
}

static void banner(instance *ins)
{
    if (g_opts.quiet)
        return;
    for (size_t b = 0; b < instance_nblocks(ins); b++) {
        server_block *blk = instance_block(ins, b);
        for (size_t k = 0; k < blk->nkeys; k++)
            printf("%s:%d\n", blk->keys[k].zone, blk->keys[k].port);
    }
    print_version();
    fflush(stdout);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (parse_args(argc, argv) < 0)
        return 2;
    log_quiet = g_opts.quiet;
    if (!g_opts.conf && access("Corefile", R_OK) == 0)
        g_opts.conf = "Corefile";
    signal(SIGPIPE, SIG_IGN);
    evthread_use_pthreads();
    store_reader_register();        /* reloads free published data via RCU */

    char err[1024];
    g_ins = instance_load(g_opts.conf, err, sizeof err);
    if (!g_ins) {
        log_msg("FATAL", "%s", err);
        return 1;
    }
    if (instance_start(g_ins, err, sizeof err) < 0) {
        log_msg("FATAL", "%s", err);
        instance_free(g_ins);
        return 1;
    }
    banner(g_ins);
    if (g_pidfile) {
        FILE *fp = fopen(g_pidfile, "w");
        if (!fp) {
            log_msg("FATAL", "pidfile %s: cannot write", g_pidfile);
            return 1;
        }
        fprintf(fp, "%d\n", (int)getpid());
        fclose(fp);
    }

    struct event_base *base = event_base_new();
    struct event *term = evsignal_new(base, SIGTERM, shutdown_now, base);
    struct event *intr = evsignal_new(base, SIGINT, shutdown_now, base);
    struct event *usr1 = evsignal_new(base, SIGUSR1, reload, NULL);
    g_reload_ev = event_new(base, -1, EV_PERSIST, reload, NULL);
    server_reload_hook = request_reload;
    event_add(term, NULL);
    event_add(intr, NULL);
    event_add(usr1, NULL);
    event_add(g_reload_ev, NULL);
    event_base_dispatch(base);

    struct event *evs[] = { term, intr, usr1 };
    for (size_t i = 0; i < 3; i++)
        event_free(evs[i]);
    struct event *rl = g_reload_ev;
    server_reload_hook = NULL;
    g_reload_ev = NULL;
    event_free(rl);
    instance_stop(g_ins);
    instance_free(g_ins);
    event_base_free(base);
    if (g_pidfile)
        unlink(g_pidfile);
    return 0;
}
