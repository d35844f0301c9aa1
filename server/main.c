// SPDX-License-Identifier: MIT
/*
 * main.c - configfsd: options (each with an environment twin), signals, and
 * the wiring of core, samples, modules and the HTTP server.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>
#include <configfs/store.h>

#include "http.h"
#include "samples.h"

#define MAX_MODULES 64

struct options {
    const char *listen;
    const char *db;
    const char *schema_dir;
    bool schema_dir_given;
    const char *modules[MAX_MODULES];
    int n_modules;
    bool no_samples;
    const char *tokens;
    const char *tls_cert;
    const char *tls_key;
    const char *sync;
    unsigned int threads;
    long history_limit;
    const char *log_level;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: configfsd [OPTION]...\n"
            "Serve a configfs object model over HTTP.\n\n"
            "  --listen HOST:PORT    address to serve on (CONFIGFSD_LISTEN;"
            " default 127.0.0.1:8080)\n"
            "  --db PATH             SQLite database (CONFIGFSD_DB; default"
            " ./configfsd.db)\n"
            "  --schema-dir DIR      declarative subsystems"
            " (CONFIGFSD_SCHEMA_DIR; default schemas)\n"
            "  --module PATH.so      load a client module; repeatable"
            " (CONFIGFSD_MODULES, ':'-separated)\n"
            "  --no-samples          do not register the four sample"
            " subsystems (CONFIGFSD_NO_SAMPLES=1)\n"
            "  --tokens FILE         bearer tokens and roles"
            " (CONFIGFSD_TOKENS)\n"
            "  --tls-cert FILE       TLS certificate (CONFIGFSD_TLS_CERT)\n"
            "  --tls-key FILE        TLS private key (CONFIGFSD_TLS_KEY)\n"
            "  --sync full|normal    SQLite synchronous mode"
            " (CONFIGFSD_SYNC; default full)\n"
            "  --threads N           HTTP worker threads (CONFIGFSD_THREADS;"
            " default: one per core)\n"
            "  --history-limit N     journal rows to keep"
            " (CONFIGFSD_HISTORY_LIMIT; default: all)\n"
            "  --log-level LEVEL     error|warning|info|debug"
            " (CONFIGFSD_LOG_LEVEL; default info)\n"
            "  --help                this text\n"
            "  --version             the version\n");
}

static int parse_uint(const char *s, long max, long *ret)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > max) {
        return -EINVAL;
    }
    *ret = v;
    return 0;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return v && *v ? v : dflt;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    enum {
        O_LISTEN = 256,
        O_DB,
        O_SCHEMA,
        O_MODULE,
        O_NO_SAMPLES,
        O_TOKENS,
        O_TLS_CERT,
        O_TLS_KEY,
        O_SYNC,
        O_THREADS,
        O_HISTORY,
        O_LOG,
        O_HELP,
        O_VERSION,
    };
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, O_LISTEN},
        {"db", required_argument, NULL, O_DB},
        {"schema-dir", required_argument, NULL, O_SCHEMA},
        {"module", required_argument, NULL, O_MODULE},
        {"no-samples", no_argument, NULL, O_NO_SAMPLES},
        {"tokens", required_argument, NULL, O_TOKENS},
        {"tls-cert", required_argument, NULL, O_TLS_CERT},
        {"tls-key", required_argument, NULL, O_TLS_KEY},
        {"sync", required_argument, NULL, O_SYNC},
        {"threads", required_argument, NULL, O_THREADS},
        {"history-limit", required_argument, NULL, O_HISTORY},
        {"log-level", required_argument, NULL, O_LOG},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *threads = env_or("CONFIGFSD_THREADS", NULL);
    const char *history = env_or("CONFIGFSD_HISTORY_LIMIT", NULL);
    const char *mods = env_or("CONFIGFSD_MODULES", NULL);
    long v;
    int c;

    o->listen = env_or("CONFIGFSD_LISTEN", "127.0.0.1:8080");
    o->db = env_or("CONFIGFSD_DB", "./configfsd.db");
    o->schema_dir = env_or("CONFIGFSD_SCHEMA_DIR", NULL);
    o->schema_dir_given = o->schema_dir != NULL;
    if (!o->schema_dir) {
        o->schema_dir = "schemas";
    }
    o->no_samples = strcmp(env_or("CONFIGFSD_NO_SAMPLES", "0"), "0") != 0;
    o->tokens = env_or("CONFIGFSD_TOKENS", NULL);
    o->tls_cert = env_or("CONFIGFSD_TLS_CERT", NULL);
    o->tls_key = env_or("CONFIGFSD_TLS_KEY", NULL);
    o->sync = env_or("CONFIGFSD_SYNC", "full");
    o->log_level = env_or("CONFIGFSD_LOG_LEVEL", "info");
    o->history_limit = -1;
    if (mods) {
        static char buf[4096];

        (void)snprintf(buf, sizeof(buf), "%s", mods);
        for (char *tok = strtok(buf, ":"); tok && o->n_modules < MAX_MODULES;
             tok = strtok(NULL, ":")) {
            o->modules[o->n_modules++] = tok;
        }
    }
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_LISTEN:
            o->listen = optarg;
            break;
        case O_DB:
            o->db = optarg;
            break;
        case O_SCHEMA:
            o->schema_dir = optarg;
            o->schema_dir_given = true;
            break;
        case O_MODULE:
            if (o->n_modules == MAX_MODULES) {
                fprintf(stderr, "configfsd: at most %d modules\n", MAX_MODULES);
                return 2;
            }
            o->modules[o->n_modules++] = optarg;
            break;
        case O_NO_SAMPLES:
            o->no_samples = true;
            break;
        case O_TOKENS:
            o->tokens = optarg;
            break;
        case O_TLS_CERT:
            o->tls_cert = optarg;
            break;
        case O_TLS_KEY:
            o->tls_key = optarg;
            break;
        case O_SYNC:
            o->sync = optarg;
            break;
        case O_THREADS:
            threads = optarg;
            break;
        case O_HISTORY:
            history = optarg;
            break;
        case O_LOG:
            o->log_level = optarg;
            break;
        case O_HELP:
            usage(stdout);
            exit(0);
        case O_VERSION:
            printf("configfsd %s\n", CFS_VERSION);
            exit(0);
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "configfsd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (threads) {
        if (parse_uint(threads, 256, &v) < 0 || v == 0) {
            fprintf(stderr, "configfsd: --threads must be 1..256\n");
            return 2;
        }
        o->threads = (unsigned int)v;
    }
    if (history) {
        if (parse_uint(history, 1L << 40, &v) < 0) {
            fprintf(stderr, "configfsd: --history-limit must be a count\n");
            return 2;
        }
        o->history_limit = v;
    }
    if (strcmp(o->sync, "full") != 0 && strcmp(o->sync, "normal") != 0) {
        fprintf(stderr, "configfsd: --sync is full or normal\n");
        return 2;
    }
    if (strcmp(o->log_level, "error") && strcmp(o->log_level, "warning") &&
        strcmp(o->log_level, "info") && strcmp(o->log_level, "debug")) {
        fprintf(stderr,
                "configfsd: --log-level is error, warning, info or "
                "debug\n");
        return 2;
    }
    return 0;
}

static struct cfs_schema_set *schemas;
static struct cfs_store *store;
static bool samples_on;

/* Undo start-up, newest first: modules, schemas, samples. */
static void teardown(void)
{
    cfs_module_unload_all();
    cfs_schema_set_free(schemas);
    schemas = NULL;
    if (samples_on) {
        cfs_samples_unregister();
        samples_on = false;
    }
    cfs_store_close(store); /* unregistering wrote nothing: data is kept */
    store = NULL;
}

/* Open the database first: every subsystem registered after it gets its
 * stored state replayed as it appears. */
static int open_store(const struct options *o)
{
    struct cfs_store_options so;
    int r;

    memset(&so, 0, sizeof(so));
    so.path = o->db;
    so.sync = strcmp(o->sync, "normal") == 0 ? CFS_STORE_SYNC_NORMAL
                                             : CFS_STORE_SYNC_FULL;
    so.history_limit = o->history_limit > 0 ? (uint64_t)o->history_limit : 0;
    r = cfs_store_open(&so, &store);
    if (r < 0) {
        fprintf(stderr,
                "configfsd: Failed to open the database '%s': %s\n",
                o->db,
                strerror(-r));
        return 1;
    }
    return 0;
}

/* Samples, declarative subsystems, modules. @return 0 or an exit code. */
static int start_subsystems(const struct options *o)
{
    struct cfs_schema_error err;
    char line[1024];
    int r;

    if (!o->no_samples) {
        r = cfs_samples_register();
        if (r < 0) {
            fprintf(stderr,
                    "configfsd: Failed to register the samples: %s\n",
                    strerror(-r));
            return 1;
        }
        samples_on = true;
    }
    r = cfs_schema_load_dir(o->schema_dir, &schemas, &err);
    if (r == -ENOENT && !o->schema_dir_given && !err.path[0]) {
        fprintf(stderr,
                "configfsd: no %s directory: no declarative "
                "subsystems\n",
                o->schema_dir);
        r = 0;
    } else if (r == 0) {
        r = cfs_schema_set_register(schemas, &err);
    }
    if (r < 0) {
        fprintf(stderr,
                "configfsd: Failed to load schemas: %s\n",
                cfs_schema_error_format(&err, line, sizeof(line)));
        teardown();
        return 1;
    }
    for (int i = 0; i < o->n_modules; i++) {
        struct module *mod;

        r = cfs_module_load(o->modules[i], &mod);
        if (r < 0) {
            fprintf(stderr,
                    "configfsd: Failed to load module '%s': %s\n",
                    o->modules[i],
                    strerror(-r));
            teardown();
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    struct cfs_http_options hopts;
    struct cfs_http_server *srv = NULL;
    struct sigaction sa;
    sigset_t set, old;
    int r;

    memset(&o, 0, sizeof(o));
    r = parse_options(argc, argv, &o);
    if (r) {
        return r;
    }
    /* Not part of this build yet: refuse rather than pretend. */
    if (o.tokens || o.tls_cert || o.tls_key) {
        fprintf(stderr,
                "configfsd: --tokens and TLS are not available in "
                "this build\n");
        return 2;
    }
    if (strncmp(o.listen, "127.", 4) != 0 &&
        strncmp(o.listen, "localhost:", 10) != 0) {
        fprintf(stderr,
                "configfsd: refusing to listen on %s without --tokens; "
                "bind a loopback address\n",
                o.listen);
        return 2;
    }
    r = open_store(&o);
    if (r) {
        return r;
    }
    r = start_subsystems(&o);
    if (r) {
        return r;
    }
    {
        struct cfs_store_problem *ps = NULL;
        size_t n = 0;

        if (cfs_store_problems(store, &ps, &n) == 0) {
            for (size_t i = 0; i < n; i++) {
                fprintf(stderr,
                        "configfsd: warning: stored %s of '%s' could not be "
                        "replayed: %s (kept)\n",
                        cfs_store_step_name(ps[i].op),
                        ps[i].path,
                        strerror(-ps[i].error));
            }
            cfs_store_problems_free(ps, n);
        }
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    memset(&hopts, 0, sizeof(hopts));
    hopts.listen = o.listen;
    hopts.threads = o.threads;
    hopts.schemas = schemas;
    hopts.store = store;
    hopts.quiet = strcmp(o.log_level, "error") == 0 ||
                  strcmp(o.log_level, "warning") == 0;
    r = cfs_http_server_start(&hopts, &srv);
    if (r < 0) {
        fprintf(stderr,
                "configfsd: Failed to listen on %s: %s\n",
                o.listen,
                strerror(-r));
        teardown();
        return 1;
    }
    fprintf(stderr,
            "configfsd %s: listening on http://%s (port %u)\n",
            CFS_VERSION,
            o.listen,
            cfs_http_server_port(srv));

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    for (;;) {
        while (!stop_signal) {
            sigsuspend(&old);
        }
        if (stop_signal == SIGHUP) {
            stop_signal = 0; /* logs go to stderr: nothing to reopen */
            fprintf(stderr, "configfsd: SIGHUP\n");
            continue;
        }
        break;
    }
    fprintf(stderr, "configfsd: stopping\n");
    cfs_http_server_free(srv); /* requests in flight finish */
    teardown();
    return 0;
}
