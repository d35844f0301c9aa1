// SPDX-License-Identifier: MIT
/*
 * main.c - configfsd: options (each with an environment twin), signals, and
 * the wiring of core, samples, modules and the HTTP server.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <configfs/cfs.h>
#include <configfs/limits.h>
#include <configfs/schema.h>
#include <configfs/store.h>

#include "http.h"
#include "log.h"
#include "probe.h"
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
    size_t body_limit;
    size_t header_limit;
    unsigned int max_connections;
    unsigned int per_ip_connections;
    unsigned int timeout_s;
    long history_limit;
    const char *log_level;
    enum cfs_log_level level;
    const char *log_format;
    const char *log_file;
    const char *static_dir;
    bool static_dir_given;
    bool insecure_listen;
};

static void usage(FILE *out)
{
    (void)fprintf(
        out,
        "Usage: configfsd [OPTION]...\n"
        "       configfsd hash-token NAME ROLE < TOKEN\n"
        "       configfsd probe [--timeout SECONDS] [URL]\n"
        "Serve a configfs object model over HTTP.\n\n"
        "  --listen HOST:PORT    address to serve on (CONFIGFSD_LISTEN;"
        " default 127.0.0.1:8080)\n"
        "  --db PATH             SQLite database (CONFIGFSD_DB; default\n"
        "                        " CFS_DEFAULT_DB ")\n"
        "  --schema-dir DIR      declarative subsystems"
        " (CONFIGFSD_SCHEMA_DIR; default\n"
        "                        " CFS_SCHEMA_DIR ")\n"
        "  --module PATH.so      load a client module; repeatable"
        " (CONFIGFSD_MODULES, ':'-separated)\n"
        "  --no-samples          do not register the four sample"
        " subsystems (CONFIGFSD_NO_SAMPLES=1)\n"
        "  --tokens FILE         bearer tokens and roles"
        " (CONFIGFSD_TOKENS); lines of\n"
        "                        NAME reader|writer|admin sha256:HEX, made"
        " by\n"
        "                        `configfsd hash-token NAME ROLE < TOKEN`;\n"
        "                        SIGHUP re-reads it (a bad file keeps the"
        " old tokens)\n"
        "  --insecure-listen     serve beyond loopback WITHOUT tokens: anyone"
        " who reaches\n"
        "                        the port reads and changes everything; for"
        " demos only\n"
        "                        (CONFIGFSD_INSECURE_LISTEN=1)\n"
        "  --tls-cert FILE       TLS certificate (CONFIGFSD_TLS_CERT);"
        " read at start-up only\n"
        "  --tls-key FILE        TLS private key (CONFIGFSD_TLS_KEY);"
        " read at start-up only\n"
        "  --sync full|normal    SQLite synchronous mode"
        " (CONFIGFSD_SYNC; default full)\n"
        "  --threads N           HTTP worker threads (CONFIGFSD_THREADS;"
        " default: one per core)\n"
        "  --history-limit N     journal rows to keep"
        " (CONFIGFSD_HISTORY_LIMIT; default: all)\n"
        "  --body-limit BYTES    largest request body"
        " (CONFIGFSD_BODY_LIMIT; default %zu)\n"
        "  --header-limit BYTES  memory of one connection: request line"
        " and headers\n"
        "                        (CONFIGFSD_HEADER_LIMIT; default %zu)\n"
        "  --max-connections N   concurrent connections"
        " (CONFIGFSD_MAX_CONNECTIONS; default %d)\n"
        "  --per-ip-connections N  concurrent connections from one address;"
        " more are\n"
        "                        closed at once (CONFIGFSD_PER_IP_CONNECTIONS;"
        " default 0:\n"
        "                        no cap, as behind a proxy)\n"
        "  --timeout SECONDS     close a connection silent this long"
        " (CONFIGFSD_TIMEOUT;\n"
        "                        default %d)\n"
        "  --static-dir DIR      the web UI's files (CONFIGFSD_STATIC_DIR;"
        " default\n"
        "                        " CFS_STATIC_DIR ")\n"
        "  --log-level LEVEL     error|warning|info|debug"
        " (CONFIGFSD_LOG_LEVEL; default info)\n"
        "  --log-format FORMAT   logfmt|json (CONFIGFSD_LOG_FORMAT; default"
        " logfmt)\n"
        "  --log-file FILE       log there instead of stderr; SIGHUP"
        " reopens it (CONFIGFSD_LOG_FILE)\n"
        "  --help                this text\n"
        "  --version             the version\n",
        CFS_BODY_MAX,
        CFS_HEADER_MAX,
        CFS_CONN_MAX,
        CFS_CONN_TIMEOUT);
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
        O_BODY_LIMIT,
        O_HEADER_LIMIT,
        O_MAX_CONN,
        O_PER_IP,
        O_TIMEOUT,
        O_LOG,
        O_LOG_FILE,
        O_STATIC_DIR,
        O_INSECURE_LISTEN,
        O_LOG_FORMAT,
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
        {"body-limit", required_argument, NULL, O_BODY_LIMIT},
        {"header-limit", required_argument, NULL, O_HEADER_LIMIT},
        {"max-connections", required_argument, NULL, O_MAX_CONN},
        {"per-ip-connections", required_argument, NULL, O_PER_IP},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"log-level", required_argument, NULL, O_LOG},
        {"log-file", required_argument, NULL, O_LOG_FILE},
        {"static-dir", required_argument, NULL, O_STATIC_DIR},
        {"insecure-listen", no_argument, NULL, O_INSECURE_LISTEN},
        {"log-format", required_argument, NULL, O_LOG_FORMAT},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *threads = env_or("CONFIGFSD_THREADS", NULL);
    const char *history = env_or("CONFIGFSD_HISTORY_LIMIT", NULL);
    const char *mods = env_or("CONFIGFSD_MODULES", NULL);
    const char *body_limit = env_or("CONFIGFSD_BODY_LIMIT", NULL);
    const char *header_limit = env_or("CONFIGFSD_HEADER_LIMIT", NULL);
    const char *max_conn = env_or("CONFIGFSD_MAX_CONNECTIONS", NULL);
    const char *per_ip = env_or("CONFIGFSD_PER_IP_CONNECTIONS", NULL);
    const char *timeout = env_or("CONFIGFSD_TIMEOUT", NULL);
    enum cfs_log_format format;
    long v;
    int c;

    o->listen = env_or("CONFIGFSD_LISTEN", "127.0.0.1:8080");
    o->db = env_or("CONFIGFSD_DB", CFS_DEFAULT_DB);
    o->schema_dir = env_or("CONFIGFSD_SCHEMA_DIR", NULL);
    o->schema_dir_given = o->schema_dir != NULL;
    if (!o->schema_dir) {
        o->schema_dir = CFS_SCHEMA_DIR;
    }
    o->no_samples = strcmp(env_or("CONFIGFSD_NO_SAMPLES", "0"), "0") != 0;
    o->tokens = env_or("CONFIGFSD_TOKENS", NULL);
    o->tls_cert = env_or("CONFIGFSD_TLS_CERT", NULL);
    o->tls_key = env_or("CONFIGFSD_TLS_KEY", NULL);
    o->sync = env_or("CONFIGFSD_SYNC", "full");
    o->log_level = env_or("CONFIGFSD_LOG_LEVEL", "info");
    o->log_file = env_or("CONFIGFSD_LOG_FILE", NULL);
    o->log_format = env_or("CONFIGFSD_LOG_FORMAT", "logfmt");
    o->insecure_listen =
        strcmp(env_or("CONFIGFSD_INSECURE_LISTEN", "0"), "0") != 0;
    o->static_dir = env_or("CONFIGFSD_STATIC_DIR", NULL);
    o->static_dir_given = o->static_dir != NULL;
    if (!o->static_dir) {
        o->static_dir = CFS_STATIC_DIR;
    }
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
                (void)fprintf(
                    stderr, "configfsd: at most %d modules\n", MAX_MODULES);
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
        case O_BODY_LIMIT:
            body_limit = optarg;
            break;
        case O_HEADER_LIMIT:
            header_limit = optarg;
            break;
        case O_MAX_CONN:
            max_conn = optarg;
            break;
        case O_PER_IP:
            per_ip = optarg;
            break;
        case O_TIMEOUT:
            timeout = optarg;
            break;
        case O_LOG:
            o->log_level = optarg;
            break;
        case O_LOG_FILE:
            o->log_file = optarg;
            break;
        case O_STATIC_DIR:
            o->static_dir = optarg;
            o->static_dir_given = true;
            break;
        case O_INSECURE_LISTEN:
            o->insecure_listen = true;
            break;
        case O_LOG_FORMAT:
            o->log_format = optarg;
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
        (void)fprintf(
            stderr, "configfsd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (threads) {
        if (parse_uint(threads, 256, &v) < 0 || v == 0) {
            (void)fprintf(stderr, "configfsd: --threads must be 1..256\n");
            return 2;
        }
        o->threads = (unsigned int)v;
    }
    if (history) {
        if (parse_uint(history, 1L << 40, &v) < 0) {
            (void)fprintf(stderr,
                          "configfsd: --history-limit must be a count\n");
            return 2;
        }
        o->history_limit = v;
    }
    if (body_limit) {
        if (parse_uint(body_limit, 1L << 30, &v) < 0 || v < 4096) {
            (void)fprintf(stderr,
                          "configfsd: --body-limit must be 4096..2^30\n");
            return 2;
        }
        o->body_limit = (size_t)v;
    }
    if (header_limit) {
        if (parse_uint(header_limit, 16L << 20, &v) < 0 || v < 8192) {
            (void)fprintf(stderr,
                          "configfsd: --header-limit must be 8192..2^24\n");
            return 2;
        }
        o->header_limit = (size_t)v;
    }
    if (max_conn) {
        if (parse_uint(max_conn, 65536, &v) < 0 || v == 0) {
            (void)fprintf(stderr,
                          "configfsd: --max-connections must be 1..65536\n");
            return 2;
        }
        o->max_connections = (unsigned int)v;
    }
    if (per_ip) {
        if (parse_uint(per_ip, 65536, &v) < 0) {
            (void)fprintf(stderr,
                          "configfsd: --per-ip-connections must be 0..65536\n");
            return 2;
        }
        o->per_ip_connections = (unsigned int)v;
    }
    if (timeout) {
        if (parse_uint(timeout, 86400, &v) < 0 || v == 0) {
            (void)fprintf(stderr, "configfsd: --timeout must be 1..86400\n");
            return 2;
        }
        o->timeout_s = (unsigned int)v;
    }
    if (strcmp(o->sync, "full") != 0 && strcmp(o->sync, "normal") != 0) {
        (void)fprintf(stderr, "configfsd: --sync is full or normal\n");
        return 2;
    }
    if (cfs_log_format_parse(o->log_format, &format) < 0) {
        (void)fprintf(stderr, "configfsd: --log-format is logfmt or json\n");
        return 2;
    }
    cfs_log_set_format(format);
    if (cfs_log_level_parse(o->log_level, &o->level) < 0) {
        (void)fprintf(stderr,
                      "configfsd: --log-level is error, warning, info or "
                      "debug\n");
        return 2;
    }
    return 0;
}

static struct cfs_schema_set *schemas;
static struct cfs_store *store;
static struct cfs_http_tokens *tokens;
static char *tls_cert, *tls_key;
static bool samples_on;

/* Read a PEM file whole, at start-up; the key never touches the log.
 * @return 0 and *ret (new, NUL-terminated) or -1 after saying why. */
static int read_pem(const char *path, const char *flag, char **ret)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t len = 0;
    const char *why = NULL;

    if (!f) {
        why = strerror(errno);
        goto out;
    }
    buf = malloc(CFS_TLS_FILE_MAX + 1);
    if (!buf) {
        why = strerror(ENOMEM);
        goto out;
    }
    len = fread(buf, 1, CFS_TLS_FILE_MAX + 1, f);
    if (ferror(f)) {
        why = strerror(errno ? errno : EIO);
    } else if (len > CFS_TLS_FILE_MAX) {
        why = "larger than 1 MiB";
    } else if (memchr(buf, '\0', len)) {
        why = "not PEM text (DER is not read)";
    } else {
        buf[len] = '\0';
        if (!strstr(buf, "-----BEGIN ")) {
            why = "not PEM text (no -----BEGIN line)";
        }
    }
out:
    if (f) {
        (void)fclose(f);
    }
    if (why) {
        (void)fprintf(
            stderr, "configfsd: cannot use %s %s: %s\n", flag, path, why);
        if (buf) {
            explicit_bzero(buf, len);
        }
        free(buf);
        return -1;
    }
    *ret = buf;
    return 0;
}

/* false with errno set when @path is not a directory we can open */
static bool is_dir(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0) {
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
}

static void free_pem(char **pem)
{
    if (*pem) {
        explicit_bzero(*pem, strlen(*pem));
        free(*pem);
        *pem = NULL;
    }
}

/* SIGHUP: read the --tokens file again. A file that loads replaces the
 * table for new requests (those in flight finish with the old one, which
 * the server frees after them); one that does not is logged and changes
 * nothing. */
static void reload_tokens(struct cfs_http_server *srv, const char *path)
{
    struct cfs_http_tokens *t = NULL;
    char why[512];
    int r;

    r = cfs_http_tokens_load(path, &t, why, sizeof(why));
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "reload",
                "Failed to reload the tokens, the old ones stay: %s",
                why);
        return;
    }
    r = cfs_http_server_set_tokens(srv, t);
    if (r < 0) { /* cannot be: the server started with tokens */
        cfs_log(CFS_LOG_ERROR,
                "reload",
                "Failed to replace the tokens: %s",
                strerror(-r));
        cfs_http_tokens_unref(t);
        return;
    }
    cfs_http_tokens_unref(tokens); /* the server and its requests hold it */
    tokens = t;
    cfs_log_notice("reload",
                   "tokens reloaded from %s: %zu in use",
                   path,
                   cfs_http_tokens_count(t));
}

/* Tell systemd (Type=notify) that requests are served from now on. */
static void notify_manager(struct cfs_http_server *srv)
{
    char state[128];
    int r;

    (void)snprintf(state,
                   sizeof(state),
                   "READY=1\nSTATUS=serving on port %u",
                   cfs_http_server_port(srv));
    r = cfs_notify(state);
    if (r < 0) {
        cfs_log(CFS_LOG_WARNING,
                "start",
                "Failed to notify $NOTIFY_SOCKET: %s",
                strerror(-r));
    }
}

/* Undo start-up, newest first: modules, schemas, samples, the store,
 * tokens and TLS files. */
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
    cfs_http_tokens_unref(tokens);
    tokens = NULL;
    free_pem(&tls_cert);
    free_pem(&tls_key);
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
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to open the database '%s': %s",
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
            cfs_log(CFS_LOG_ERROR,
                    "start",
                    "Failed to register the samples: %s",
                    strerror(-r));
            return 1;
        }
        samples_on = true;
    }
    r = cfs_schema_load_dir(o->schema_dir, &schemas, &err);
    if (r == -ENOENT && !o->schema_dir_given && !err.path[0]) {
        cfs_log(CFS_LOG_WARNING,
                "start",
                "no %s directory: no declarative subsystems",
                o->schema_dir);
        r = 0;
    } else if (r == 0) {
        r = cfs_schema_set_register(schemas, &err);
    }
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to load schemas: %s",
                cfs_schema_error_format(&err, line, sizeof(line)));
        teardown();
        return 1;
    }
    for (int i = 0; i < o->n_modules; i++) {
        struct module *mod;

        r = cfs_module_load(o->modules[i], &mod);
        if (r < 0) {
            cfs_log(CFS_LOG_ERROR,
                    "start",
                    "Failed to load module '%s': %s",
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
    sigset_t set;
    int sig;
    int r;

#ifdef M_MXFAST
    /* Under durable writes the store's commit thread frees what workers
     * allocated (change records, events, its tickets). glibc frees a chunk
     * up to M_MXFAST bytes without a lock (a fast bin), a bigger one under
     * the lock of the arena it came from, which its worker holds to
     * allocate: that contention was two thirds of the server's futex calls.
     * 160 is the largest M_MXFAST glibc takes. */
    (void)mallopt(M_MXFAST, 160);
#endif
    if (argc > 1 && strcmp(argv[1], "hash-token") == 0) {
        return cfs_http_hash_token_main(argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "probe") == 0) {
        return cfs_probe_main(argc - 1, argv + 1);
    }
    memset(&o, 0, sizeof(o));
    r = parse_options(argc, argv, &o);
    if (r) {
        return r;
    }
    cfs_log_set_level(o.level);
    if (o.log_file) {
        r = cfs_log_open_file(o.log_file);
        if (r < 0) {
            (void)fprintf(stderr,
                          "configfsd: cannot open log file %s: %s\n",
                          o.log_file,
                          strerror(-r));
            return 1;
        }
    }
    if (!o.tls_cert != !o.tls_key) {
        (void)fprintf(stderr,
                      "configfsd: --tls-cert and --tls-key go together\n");
        return 2;
    }
    r = cfs_http_listen_check(o.listen, o.tokens != NULL || o.insecure_listen);
    if (r == -EPERM) {
        (void)fprintf(stderr,
                      "configfsd: refusing to listen on %s without --tokens; "
                      "bind a loopback address, give --tokens, or (for a "
                      "demo) --insecure-listen\n",
                      o.listen);
        return 2;
    }
    if (r < 0) {
        (void)fprintf(stderr,
                      "configfsd: --listen wants IPV4:PORT or localhost:PORT, "
                      "not %s\n",
                      o.listen);
        return 2;
    }
    if (o.tokens) {
        char why[512];

        r = cfs_http_tokens_load(o.tokens, &tokens, why, sizeof(why));
        if (r < 0) {
            (void)fprintf(stderr, "configfsd: bad --tokens file: %s\n", why);
            return 1;
        }
    }
    if (o.tls_cert && (read_pem(o.tls_cert, "--tls-cert", &tls_cert) < 0 ||
                       read_pem(o.tls_key, "--tls-key", &tls_key) < 0)) {
        teardown();
        return 1;
    }
    if (!tokens && cfs_http_listen_check(o.listen, false) == -EPERM) {
        cfs_log(CFS_LOG_WARNING,
                "insecure",
                "--insecure-listen: serving %s WITHOUT AUTHENTICATION; anyone "
                "who reaches it can read, change and delete everything. For "
                "demos only: give --tokens",
                o.listen);
    }
    if (tokens && !tls_cert && cfs_http_listen_check(o.listen, false) < 0) {
        cfs_log(CFS_LOG_WARNING,
                "start",
                "tokens travel in clear text to %s: give --tls-cert and "
                "--tls-key",
                o.listen);
    }
    if (!is_dir(o.static_dir)) {
        if (o.static_dir_given) {
            (void)fprintf(stderr,
                          "configfsd: cannot use --static-dir %s: %s\n",
                          o.static_dir,
                          strerror(errno));
            teardown();
            return 1;
        }
        cfs_log(CFS_LOG_WARNING,
                "start",
                "no %s directory: the web UI is not served",
                o.static_dir);
        o.static_dir = NULL;
    }
    /* Blocked before any thread exists (libmicrohttpd's, a module's), so
     * that every thread inherits the mask and only the sigwait() below
     * takes them. */
    (void)signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    r = open_store(&o);
    if (r) {
        teardown();
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
                cfs_log(CFS_LOG_WARNING,
                        "replay",
                        "stored %s of '%s' could not be replayed: %s (kept)",
                        cfs_store_step_name(ps[i].op),
                        ps[i].path,
                        strerror(-ps[i].error));
            }
            cfs_store_problems_free(ps, n);
        }
    }

    memset(&hopts, 0, sizeof(hopts));
    hopts.listen = o.listen;
    hopts.threads = o.threads;
    hopts.body_limit = o.body_limit;
    hopts.header_limit = o.header_limit;
    hopts.max_connections = o.max_connections;
    hopts.per_ip_connections = o.per_ip_connections;
    hopts.timeout_s = o.timeout_s;
    hopts.schemas = schemas;
    hopts.store = store;
    hopts.tokens = tokens;
    hopts.insecure_listen = o.insecure_listen;
    hopts.static_dir = o.static_dir;
    hopts.tls_cert_pem = tls_cert;
    hopts.tls_key_pem = tls_key;
    r = cfs_http_server_start(&hopts, &srv);
    free_pem(&tls_key); /* GnuTLS holds its own copy now */
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to serve on %s: %s",
                o.listen,
                r == -EIO ? "libmicrohttpd said why, above" : strerror(-r));
        teardown();
        return 1;
    }
    cfs_log_notice("start",
                   "configfsd %s listening on %s://%s (port %u)",
                   CFS_VERSION,
                   tls_cert ? "https" : "http",
                   o.listen,
                   cfs_http_server_port(srv));
    notify_manager(srv);

    /* One signal at a time, in the order they came: a SIGTERM right after
     * a SIGHUP is never lost to it. */
    while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
        r = cfs_log_reopen(); /* a no-op when logging to stderr */
        if (r < 0) {
            cfs_log(CFS_LOG_ERROR,
                    "signal",
                    "Failed to reopen %s: %s",
                    o.log_file,
                    strerror(-r));
        }
        if (tokens) { /* without --tokens there is nothing to reload */
            reload_tokens(srv, o.tokens);
        }
    }
    cfs_log_notice("stop", "stopping");
    (void)cfs_notify("STOPPING=1");
    cfs_http_server_free(srv); /* requests in flight finish */
    teardown();
    cfs_log_close();
    return 0;
}
