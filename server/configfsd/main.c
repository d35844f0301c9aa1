// SPDX-License-Identifier: MIT
/*
 * main.c - configfsd: options (one table: each with its environment twin
 * and its --help line), signals, and the wiring of core, samples, modules
 * and the HTTP server.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <configfs/cfs.h>
#include <configfs/limits.h>
#include <configfs/schema.h>
#include <configfs/store.h>
#include <nettle/sha2.h>

#include "http.h"
#ifdef CFS_HAVE_MOUNT
#include "mount.h"
#endif
#include "probe.h"
#include "samples.h"

#define MAX_MODULES 64

/* Ordered by size, widest first, so the struct has no padding to speak of
 * (clang-tidy's optin.performance.Padding). */
struct options {
    const char *listen;
    const char *db;
    const char *store_url;
    const char *etcd_cacert;
    const char *etcd_cert;
    const char *etcd_key;
    const char *etcd_user;
    const char *etcd_password_file;
    const char *advertise_url;
    const char *peer_cacert;
    const char *schema_dir;
    const char *modules[MAX_MODULES];
    const char *tokens;
    const char *tls_cert;
    const char *tls_key;
    const char *sync;
    const char *log_level;
    const char *log_format;
    const char *log_file;
    const char *static_dir;
    const char *mount;
    long snapshot_every;
    long snapshot_growth;
    long history_limit;
    size_t body_limit;
    size_t header_limit;
    int n_modules;
    unsigned int threads;
    unsigned int max_connections;
    unsigned int per_ip_connections;
    unsigned int timeout_s;
    unsigned int auth_fail_burst;
    unsigned int auth_fail_window;
    enum cfs_log_level level;
    bool forward_writes;
    bool schema_dir_given;
    bool no_samples;
    bool static_dir_given;
    bool insecure_listen;
    bool mount_allow_other;
    bool help, version;
};

enum opt_kind {
    OPT_STRING, /* const char *; the last one given wins */
    OPT_FLAG,   /* bool, no argument; its variable is on unless "0" */
    OPT_MODULE, /* repeatable; its variable is a ':'-separated list */
    OPT_UINT,   /* unsigned int, from min to max */
    OPT_SIZE,   /* size_t, from min to max */
    OPT_LONG,   /* long, from min to max */
};

/* One option: the command line, its environment twin and --help all come
 * from here. The variable is read first, the flag overrides it. */
struct opt {
    const char *name; /* --name */
    const char *arg;  /* what it takes, in --help; NULL: nothing */
    const char *env;  /* the environment twin, or NULL */
    enum opt_kind kind;
    size_t field;      /* offsetof(struct options, ...) */
    long min, max;     /* a number's range ... */
    const char *range; /* ... as said when it is out of it */
    const char *help;  /* what it does (and its default, if not shown) */
    long shown;        /* a number's default for --help; 0: none */
};

/* A string, a flag or --module; a number with its range and default. */
#define OPT(name, arg, env, kind, member, help)                                \
    {                                                                          \
        name, arg, env, kind, offsetof(struct options, member), 0, 0, NULL,    \
            help, 0                                                            \
    }
#define NUM(name, arg, env, kind, member, min, max, range, help, shown)        \
    {                                                                          \
        name, arg, env, kind, offsetof(struct options, member), min, max,      \
            range, help, shown                                                 \
    }

/* clang-format off */
static const struct opt opts[] = {
    OPT("listen", "HOST:PORT", "CONFIGFSD_LISTEN", OPT_STRING, listen,
        "address to serve on; default 127.0.0.1:8080"),
    OPT("db", "PATH", "CONFIGFSD_DB", OPT_STRING, db,
        "SQLite database; default " CFS_DEFAULT_DB),
    OPT("store", "etcd://HOST:PORT[,HOST:PORT...][/PREFIX]", "CONFIGFSD_STORE",
        OPT_STRING, store_url,
        "cluster mode: keep the tree in this etcd v3 cluster, shared with "
        "every node given the same URL (docs/cluster.md); --db is then "
        "not used; etcds:// for TLS"),
    OPT("etcd-cacert", "FILE", "CONFIGFSD_ETCD_CACERT", OPT_STRING,
        etcd_cacert, "cluster mode: CA certificate of the etcd members"),
    OPT("etcd-cert", "FILE", "CONFIGFSD_ETCD_CERT", OPT_STRING, etcd_cert,
        "cluster mode: this node's TLS client certificate for etcd"),
    OPT("etcd-key", "FILE", "CONFIGFSD_ETCD_KEY", OPT_STRING, etcd_key,
        "cluster mode: the key of --etcd-cert"),
    OPT("etcd-user", "NAME", "CONFIGFSD_ETCD_USER", OPT_STRING, etcd_user,
        "cluster mode: etcd user (etcd's authentication enabled)"),
    OPT("etcd-password-file", "FILE", "CONFIGFSD_ETCD_PASSWORD_FILE",
        OPT_STRING, etcd_password_file,
        "cluster mode: file holding the password of --etcd-user (its "
        "first line)"),
    NUM("snapshot-every", "N", "CONFIGFSD_SNAPSHOT_EVERY", OPT_LONG,
        snapshot_every, 0, 1L << 40, "0..2^40",
        "cluster mode: write a snapshot of the tree to etcd each N "
        "revisions, for nodes to start from, and trim the log below it; "
        "0 writes none", 10000),
    NUM("snapshot-growth", "PERCENT", "CONFIGFSD_SNAPSHOT_GROWTH", OPT_LONG,
        snapshot_growth, 0, 1L << 20, "0..2^20",
        "cluster mode: write a snapshot only once the log since the last "
        "one holds PERCENT % of its size too (snapshots carry the "
        "journal); 0: by --snapshot-every alone", 100),
    OPT("forward-writes", NULL, "CONFIGFSD_FORWARD_WRITES", OPT_FLAG,
        forward_writes,
        "cluster mode: one node of those started with it appends every "
        "write for them (the writer); the others send it their writes "
        "instead of racing it (docs/cluster.md)"),
    OPT("advertise-url", "URL", "CONFIGFSD_ADVERTISE_URL", OPT_STRING,
        advertise_url,
        "cluster mode, --forward-writes: where the other nodes reach this "
        "one (http[s]://HOST:PORT); default: the --listen address unless "
        "it is 0.0.0.0"),
    OPT("peer-cacert", "FILE", "CONFIGFSD_PEER_CACERT", OPT_STRING,
        peer_cacert,
        "cluster mode: CA certificate of the other nodes' https, for "
        "writes sent to the writer node; default: the system's CAs"),
    OPT("schema-dir", "DIR", "CONFIGFSD_SCHEMA_DIR", OPT_STRING, schema_dir,
        "declarative subsystems; default " CFS_SCHEMA_DIR),
    OPT("module", "PATH.so", "CONFIGFSD_MODULES", OPT_MODULE, modules,
        "load a client module; repeatable; the variable is ':'-separated"),
    OPT("no-samples", NULL, "CONFIGFSD_NO_SAMPLES", OPT_FLAG, no_samples,
        "do not register the four sample subsystems"),
    OPT("tokens", "FILE", "CONFIGFSD_TOKENS", OPT_STRING, tokens,
        "bearer tokens and roles; lines of NAME reader|writer|admin "
        "sha256:HEX [SUBTREE...], made by `configfsd hash-token NAME ROLE "
        "[SUBTREE...] < TOKEN`; subtrees limit a token to them; "
        "SIGHUP re-reads it (a bad file keeps the old tokens)"),
    OPT("insecure-listen", NULL, "CONFIGFSD_INSECURE_LISTEN", OPT_FLAG,
        insecure_listen,
        "serve beyond loopback WITHOUT tokens: anyone who reaches the port "
        "reads and changes everything; for demos only"),
    OPT("tls-cert", "FILE", "CONFIGFSD_TLS_CERT", OPT_STRING, tls_cert,
        "TLS certificate; read at start-up only"),
    OPT("tls-key", "FILE", "CONFIGFSD_TLS_KEY", OPT_STRING, tls_key,
        "TLS private key; read at start-up only"),
    OPT("sync", "full|normal", "CONFIGFSD_SYNC", OPT_STRING, sync,
        "SQLite synchronous mode; default full"),
    NUM("threads", "N", "CONFIGFSD_THREADS", OPT_UINT, threads,
        1, 256, "1..256", "HTTP worker threads; default: one per core", 0),
    NUM("history-limit", "N", "CONFIGFSD_HISTORY_LIMIT", OPT_LONG,
        history_limit, 0, 1L << 40, "a count",
        "revisions of the journal to keep; default: all", 0),
    NUM("body-limit", "BYTES", "CONFIGFSD_BODY_LIMIT", OPT_SIZE, body_limit,
        4096, 1L << 30, "4096..2^30", "largest request body",
        (long)CFS_BODY_MAX),
    NUM("header-limit", "BYTES", "CONFIGFSD_HEADER_LIMIT", OPT_SIZE,
        header_limit, 8192, 16L << 20, "8192..2^24",
        "memory of one connection: request line and headers",
        (long)CFS_HEADER_MAX),
    NUM("max-connections", "N", "CONFIGFSD_MAX_CONNECTIONS", OPT_UINT,
        max_connections, 1, 65536, "1..65536", "concurrent connections",
        CFS_CONN_MAX),
    NUM("per-ip-connections", "N", "CONFIGFSD_PER_IP_CONNECTIONS", OPT_UINT,
        per_ip_connections, 0, 65536, "0..65536",
        "concurrent connections from one address; more are closed at once; "
        "default 0: no cap, as behind a proxy", 0),
    NUM("auth-fail-burst", "N", "CONFIGFSD_AUTH_FAIL_BURST", OPT_UINT,
        auth_fail_burst, 1, 100000, "1..100000",
        "wrong tokens one address may send per --auth-fail-window before "
        "it is answered 429", CFS_AUTH_FAIL_BURST),
    NUM("auth-fail-window", "SECONDS", "CONFIGFSD_AUTH_FAIL_WINDOW", OPT_UINT,
        auth_fail_window, 1, 86400, "1..86400",
        "the window of --auth-fail-burst", CFS_AUTH_FAIL_WINDOW),
    NUM("timeout", "SECONDS", "CONFIGFSD_TIMEOUT", OPT_UINT, timeout_s,
        1, 86400, "1..86400", "close a connection silent this long",
        CFS_CONN_TIMEOUT),
    OPT("static-dir", "DIR", "CONFIGFSD_STATIC_DIR", OPT_STRING, static_dir,
        "the web UI's files; default " CFS_STATIC_DIR),
    OPT("log-level", "LEVEL", "CONFIGFSD_LOG_LEVEL", OPT_STRING, log_level,
        "error|warning|info|debug; default info"),
    OPT("log-format", "FORMAT", "CONFIGFSD_LOG_FORMAT", OPT_STRING,
        log_format, "logfmt|json; default logfmt"),
    OPT("log-file", "FILE", "CONFIGFSD_LOG_FILE", OPT_STRING, log_file,
        "log there instead of stderr; SIGHUP reopens it"),
    OPT("mount", "DIR", "CONFIGFSD_MOUNT", OPT_STRING, mount,
        "serve the tree as a filesystem on the empty directory DIR too "
        "(FUSE; docs/mount.md)"),
    OPT("mount-allow-other", NULL, "CONFIGFSD_MOUNT_ALLOW_OTHER", OPT_FLAG,
        mount_allow_other,
        "let other users use the mount, under the attributes' modes"),
    OPT("help", NULL, NULL, OPT_FLAG, help, "this text"),
    OPT("version", NULL, NULL, OPT_FLAG, version, "the version"),
};
/* clang-format on */

#define N_OPTS  (sizeof(opts) / sizeof(opts[0]))
#define OPT_VAL 256 /* getopt_long()'s value for opts[i]: OPT_VAL + i */

/* @text from column @col on, wrapped at 79 columns, continued at 26. */
static void put_wrapped(FILE *out, const char *text, int col)
{
    const char *p = text;

    while (*p) {
        size_t n = strcspn(p, " ");

        if (col > 26 && col + 1 + (int)n > 79) {
            (void)fprintf(out, "\n%26s", "");
            col = 26;
        } else if (col > 26) {
            (void)fputc(' ', out);
            col++;
        }
        (void)fprintf(out, "%.*s", (int)n, p);
        col += (int)n;
        p += n;
        p += strspn(p, " ");
    }
    (void)fputc('\n', out);
}

static void usage(FILE *out)
{
    (void)fprintf(out,
                  "Usage: configfsd [OPTION]...\n"
                  "       configfsd hash-token NAME ROLE [SUBTREE...] < TOKEN\n"
                  "       configfsd probe [--timeout SECONDS] [URL]\n"
                  "Serve a configfs object model over HTTP. Each option "
                  "may be given in its\nenvironment variable instead; the "
                  "command line wins.\n\n");
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt *d = &opts[i];
        char help[512];
        size_t n = (size_t)snprintf(help, sizeof(help), "%s", d->help);
        int col = fprintf(out,
                          "  --%s%s%s",
                          d->name,
                          d->arg ? " " : "",
                          d->arg ? d->arg : "");

        if (d->shown && n < sizeof(help)) {
            n += (size_t)snprintf(
                help + n, sizeof(help) - n, "; default %ld", d->shown);
        }
        if (d->env && n < sizeof(help)) {
            (void)snprintf(help + n, sizeof(help) - n, " (%s)", d->env);
        }
        if (col > 25) {
            (void)fprintf(out, "\n%26s", "");
        } else {
            (void)fprintf(out, "%*s", 26 - col, "");
        }
        put_wrapped(out, help, 26);
    }
}

/* Set option @d from @value (the command line's, or its variable's); a
 * number is only kept in *@raw, and read once all are set, so that a flag
 * overrides a variable that would be refused. */
static int opt_set(const struct opt *d,
                   const char *value,
                   struct options *o,
                   const char **raw)
{
    char *field = (char *)o + d->field;

    switch (d->kind) {
    case OPT_STRING:
        *(const char **)(void *)field = value;
        return 0;
    case OPT_FLAG:
        *(bool *)(void *)field = strcmp(value, "0") != 0;
        return 0;
    case OPT_MODULE:
        if (o->n_modules == MAX_MODULES) {
            (void)fprintf(
                stderr, "configfsd: at most %d modules\n", MAX_MODULES);
            return 2;
        }
        o->modules[o->n_modules++] = value;
        return 0;
    case OPT_UINT:
    case OPT_SIZE:
    case OPT_LONG:
        *raw = value;
        return 0;
    }
    return 2;
}

/* A number option from the text it was given last. */
static int opt_number(const struct opt *d, const char *raw, struct options *o)
{
    char *field = (char *)o + d->field;
    char *end;
    long v;

    errno = 0;
    v = strtol(raw, &end, 10);
    if (!*raw || *end || errno || v < d->min || v > d->max) {
        (void)fprintf(
            stderr, "configfsd: --%s must be %s\n", d->name, d->range);
        return 2;
    }
    if (d->kind == OPT_UINT) {
        *(unsigned int *)(void *)field = (unsigned int)v;
    } else if (d->kind == OPT_SIZE) {
        *(size_t *)(void *)field = (size_t)v;
    } else {
        *(long *)(void *)field = v;
    }
    return 0;
}

/* The environment twins: a variable set and not empty counts. */
static int env_options(struct options *o, const char **raw)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const char *v = opts[i].env ? getenv(opts[i].env) : NULL;
        int r = 0;

        if (!v || !*v) {
            continue;
        }
        if (opts[i].kind == OPT_MODULE) {
            static char buf[4096];

            (void)snprintf(buf, sizeof(buf), "%s", v);
            for (char *tok = strtok(buf, ":");
                 tok && o->n_modules < MAX_MODULES;
                 tok = strtok(NULL, ":")) {
                r = opt_set(&opts[i], tok, o, &raw[i]);
            }
        } else {
            r = opt_set(&opts[i], v, o, &raw[i]);
        }
        if (r) {
            return r;
        }
    }
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    struct option longopts[N_OPTS + 1];
    const char *raw[N_OPTS] = {NULL};
    enum cfs_log_format format;
    int c, r;

    o->listen = "127.0.0.1:8080";
    o->db = CFS_DEFAULT_DB;
    o->log_format = "logfmt";
    o->sync = "full";
    o->log_level = "info";
    o->history_limit = -1;
    o->snapshot_every = 10000;
    o->snapshot_growth = 100;
    r = env_options(o, raw);
    if (r) {
        return r;
    }
    for (size_t i = 0; i < N_OPTS; i++) {
        longopts[i] =
            (struct option){opts[i].name,
                            opts[i].arg ? required_argument : no_argument,
                            NULL,
                            OPT_VAL + (int)i};
    }
    longopts[N_OPTS] = (struct option){NULL, 0, NULL, 0};
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        size_t i = (size_t)(c - OPT_VAL);

        if (c < OPT_VAL || i >= N_OPTS) {
            usage(stderr);
            return 2;
        }
        r = opt_set(&opts[i], optarg ? optarg : "1", o, &raw[i]);
        if (r) {
            return r;
        }
        if (o->help) {
            usage(stdout);
            exit(0);
        }
        if (o->version) {
            printf("configfsd %s\n", CFS_VERSION);
            exit(0);
        }
    }
    if (optind < argc) {
        (void)fprintf(
            stderr, "configfsd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    for (size_t i = 0; i < N_OPTS; i++) {
        r = raw[i] ? opt_number(&opts[i], raw[i], o) : 0;
        if (r) {
            return r;
        }
    }
    o->schema_dir_given = o->schema_dir != NULL;
    if (!o->schema_dir) {
        o->schema_dir = CFS_SCHEMA_DIR;
    }
    o->static_dir_given = o->static_dir != NULL;
    if (!o->static_dir) {
        o->static_dir = CFS_STATIC_DIR;
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

/* After a --tokens file failed to load with @err: what to do about the two
 * failures a container's first start meets. A missing file (the image's
 * default /run/secrets/configfsd-tokens) names the two ways to start; an
 * unreadable one (a secret mounted 0600 root) says which user must read
 * it, since this process never runs with the privileges to read it for
 * itself (docs/install.md, "Containers"). */
static void tokens_hint(int err)
{
    if (err == -ENOENT) {
        (void)fprintf(stderr,
                      "configfsd: make the tokens file with `configfsd "
                      "hash-token NAME ROLE < TOKEN_FILE > TOKENS_FILE` and "
                      "mount it there, or serve without authentication (a "
                      "demo only) with --insecure-listen\n");
    } else if (err == -EACCES) {
        (void)fprintf(stderr,
                      "configfsd: this process (uid %u, gid %u) cannot read "
                      "it: mount the secret readable by that user or group "
                      "(mode 0440 with group 0 suits any container uid), "
                      "not 0600 owned by root\n",
                      (unsigned)getuid(),
                      (unsigned)getgid());
    }
}

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

/* The bound on a stop (docs/security.md, "Stopping"): the drain's
 * CFS_DRAIN_ANSWER_MS and CFS_DRAIN_CLOSE_MS, then libmicrohttpd's stop
 * and the store's close. A stop that takes longer is stuck (a worker
 * blocked in a write to a log nobody reads, a connection libmicrohttpd
 * keeps): the process exits anyway, rather than waiting for a service
 * manager's SIGKILL. */
#define STOP_BOUND_MS 5000u

/* Started on the SIGTERM or SIGINT that stops: exits the process with
 * status 1 once STOP_BOUND_MS have passed, or at once on a second SIGTERM
 * or SIGINT (a SIGHUP meanwhile is dropped). @arg: the signals, blocked in
 * every thread. It may not block on anything: stderr may be what the
 * stop is stuck on. */
static void *stop_watchdog(void *arg)
{
    const sigset_t *set = arg;
    struct timespec end, now;
    bool second = false;
    char msg[160];
    int n, fl;

    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += STOP_BOUND_MS / 1000u;
    end.tv_nsec += (long)(STOP_BOUND_MS % 1000u) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    for (;;) {
        struct timespec left;
        int sig;

        clock_gettime(CLOCK_MONOTONIC, &now);
        left.tv_sec = end.tv_sec - now.tv_sec;
        left.tv_nsec = end.tv_nsec - now.tv_nsec;
        if (left.tv_nsec < 0) {
            left.tv_sec--;
            left.tv_nsec += 1000000000L;
        }
        if (left.tv_sec < 0) {
            break;
        }
        sig = sigtimedwait(set, NULL, &left);
        if (sig == SIGTERM || sig == SIGINT) {
            second = true;
            break;
        }
        if (sig < 0 && errno == EAGAIN) {
            break;
        }
    }
    n = second ? snprintf(msg,
                          sizeof(msg),
                          "configfsd: stop: a second signal; exiting now\n")
               : snprintf(msg,
                          sizeof(msg),
                          "configfsd: stop: still stopping after %u ms; "
                          "exiting now\n",
                          STOP_BOUND_MS);
    fl = fcntl(STDERR_FILENO, F_GETFL);
    if (fl >= 0) {
        (void)fcntl(STDERR_FILENO, F_SETFL, fl | O_NONBLOCK);
    }
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n);

        (void)w; /* whether or not it went: the process ends */
    }
    _exit(EXIT_FAILURE);
}

/* The running server, for another node's changes to reach the event
 * stream (set once it serves, cleared before it stops). */
static pthread_mutex_t g_srv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cfs_http_server *g_srv;

/* Cluster mode: another node's change set was applied here. */
static void remote_applied(void *ctx, const struct cfs_change *ch, size_t n)
{
    (void)ctx;
    pthread_mutex_lock(&g_srv_lock);
    if (g_srv) {
        cfs_http_server_changes(g_srv, ch, n);
    }
    pthread_mutex_unlock(&g_srv_lock);
}

/* Another node's change, refused here by a callback (a non-deterministic
 * module): this node now differs from the cluster until it is settled. */
static void remote_refused(void *ctx, const struct cfs_change *c, int error)
{
    (void)ctx;
    cfs_log(CFS_LOG_ERROR,
            "replay",
            "revision %" PRIu64 ": %s of '%s', made on another node, refused "
            "here: %s; this node differs from the cluster and is not ready "
            "(kept in the log; see /readyz)",
            c->revision,
            cfs_op_name(c->op),
            c->path,
            strerror(-error));
}

/* Set when this node fell behind the trimmed log: main() stops, then
 * starts again by re-executing itself. */
static atomic_bool restart_wanted;
static char **restart_args; /* argv as given (getopt_long() reorders it) */

/*
 * Cluster mode: the log this node needs next was trimmed below a
 * snapshot (it was stopped or cut off longer than its lease). The tree in
 * memory holds what the subsystems' callbacks made (a module's state
 * cannot be unloaded in-process), so the node restarts: it stops as on
 * SIGTERM, then executes itself again with its own arguments, and the
 * new process loads the snapshot.
 */
static void fell_behind(void *ctx, uint64_t applied, uint64_t snapshot)
{
    (void)ctx;
    cfs_log(CFS_LOG_ERROR,
            "cluster",
            "fell behind: applied revision %" PRIu64 ", but the shared log "
            "after it was trimmed (snapshot at revision %" PRIu64 "); "
            "restarting to load the snapshot",
            applied,
            snapshot);
    atomic_store(&restart_wanted, true);
    (void)kill(getpid(), SIGTERM);
}

/* Open the database first: every subsystem registered after it gets its
 * stored state replayed as it appears. */
/* ---- --mount (mount/) ----------------------------------------------- */

#ifdef CFS_HAVE_MOUNT
/* The mount's changes take the server's commit path: durable, journaled,
 * announced on the event stream, as an HTTP write. */
static int mount_commit(void *ctx, struct cfs_txn *txn, const char *principal)
{
    return cfs_http_server_commit(ctx, txn, principal);
}
#endif

static int
start_mount(const struct options *o, struct cfs_http_server *srv, void **ret)
{
#ifdef CFS_HAVE_MOUNT
    struct cfs_mount_options mo = {
        .dir = o->mount,
        .allow_other = o->mount_allow_other,
        .commit = mount_commit,
        .ctx = srv,
    };
    struct cfs_mount *m = NULL;
    char err[512];
    int r = cfs_mount_start(&mo, &m, err, sizeof(err));

    if (r < 0) {
        (void)fprintf(stderr, "configfsd: cannot --mount: %s\n", err);
        return r;
    }
    cfs_log_notice("start", "the tree is mounted on %s", o->mount);
    *ret = m;
    return 0;
#else
    (void)srv;
    (void)ret;
    (void)fprintf(stderr,
                  "configfsd: cannot --mount %s: built without libfuse3 "
                  "(meson -Dmount=enabled)\n",
                  o->mount);
    return -ENOTSUP;
#endif
}

static void stop_mount(void *m)
{
#ifdef CFS_HAVE_MOUNT
    cfs_mount_stop(m);
#else
    (void)m;
#endif
}

static int open_store(const struct options *o)
{
    struct cfs_store_options so;
    char password[512] = "";
    int r;

    memset(&so, 0, sizeof(so));
    so.path = o->db;
    if (o->store_url && o->store_url[0]) {
        if (strncmp(o->store_url, "etcd://", 7) != 0 &&
            strncmp(o->store_url, "etcds://", 8) != 0) {
            cfs_log(CFS_LOG_ERROR,
                    "start",
                    "--store '%s': expected etcd[s]://HOST:PORT[,HOST:PORT"
                    "...][/PREFIX]",
                    o->store_url);
            return 1;
        }
        so.etcd = o->store_url;
        so.etcd_cacert = o->etcd_cacert;
        so.etcd_cert = o->etcd_cert;
        so.etcd_key = o->etcd_key;
        so.etcd_user = o->etcd_user;
        if (o->etcd_user && o->etcd_password_file) {
            FILE *f = fopen(o->etcd_password_file, "r");

            if (!f || !fgets(password, sizeof(password), f)) {
                cfs_log(CFS_LOG_ERROR,
                        "start",
                        "Failed to read --etcd-password-file '%s': %s",
                        o->etcd_password_file,
                        f ? "it is empty" : strerror(errno));
                if (f) {
                    (void)fclose(f);
                }
                return 1;
            }
            (void)fclose(f);
            password[strcspn(password, "\r\n")] = '\0';
            so.etcd_password = password;
        }
        so.on_applied = remote_applied;
        so.on_replay_error = remote_refused;
        so.on_fell_behind = fell_behind;
        so.snapshot_every = (uint64_t)o->snapshot_every;
        so.snapshot_growth = (uint64_t)o->snapshot_growth;
    }
    so.sync = strcmp(o->sync, "normal") == 0 ? CFS_STORE_SYNC_NORMAL
                                             : CFS_STORE_SYNC_FULL;
    so.history_limit = o->history_limit > 0 ? (uint64_t)o->history_limit : 0;
    r = cfs_store_open(&so, &store);
    explicit_bzero(password, sizeof(password));
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to open the %s '%s': %s",
                so.etcd ? "etcd cluster" : "database",
                so.etcd ? so.etcd : o->db,
                strerror(-r));
        return 1;
    }
    return 0;
}

/* One line of the subsystem set: "KIND NAME sha256:HEX" of a file. */
static int
set_line_file(char ***lines, size_t *n, const char *kind, const char *path)
{
    FILE *f = fopen(path, "rb");
    struct sha256_ctx ctx;
    uint8_t d[SHA256_DIGEST_SIZE], buf[8192];
    char hex[2 * SHA256_DIGEST_SIZE + 1], **v;
    const char *base = strrchr(path, '/');
    size_t got;

    if (!f) {
        return -errno;
    }
    sha256_init(&ctx);
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
        sha256_update(&ctx, got, buf);
    }
    (void)fclose(f);
    sha256_digest(&ctx, sizeof(d), d);
    for (size_t i = 0; i < sizeof(d); i++) {
        (void)snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    v = realloc(*lines, (*n + 1) * sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    *lines = v;
    if (asprintf(&v[*n], "%s %s sha256:%s", kind, base ? base + 1 : path, hex) <
        0) {
        return -ENOMEM;
    }
    (*n)++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines of @a missing from @b, comma-separated, appended to @out. */
static void set_missing(const char *a, const char *b, char *out, size_t cap)
{
    const char *p = a;

    if (!a || !b) {
        return;
    }
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool found = false;

        for (const char *q = b; *q;) {
            const char *qe = strchr(q, '\n');
            size_t ql = qe ? (size_t)(qe - q) : strlen(q);

            if (ql == len && memcmp(p, q, len) == 0) {
                found = true;
                break;
            }
            q += ql + (qe ? 1 : 0);
        }
        if (!found && len > 0) {
            size_t used = strlen(out);

            (void)snprintf(out + used,
                           cap - used,
                           "%s%.*s",
                           used ? ", " : " ",
                           (int)len,
                           p);
        }
        p += len + (e ? 1 : 0);
    }
}

/*
 * Cluster mode: every node must run the same subsystems (a change set is
 * applied through their callbacks on every node). The set -- registered
 * subsystems, and the content hash of each schema file and module -- is
 * recorded in etcd by the first node; a node whose set differs refuses to
 * start, naming the difference. @return 0 or an exit code.
 */
static int check_subsystem_set(const struct options *o)
{
    char **lines = NULL, *set = NULL, *theirs = NULL;
    struct cfs_entry *es = NULL;
    size_t n = 0, ne = 0, len = 0;
    int r = 0;

    if (!o->store_url || !o->store_url[0]) {
        return 0;
    }
    if (cfs_readdir("/", &es, &ne) == 0) {
        for (size_t i = 0; i < ne && r == 0; i++) {
            char **v = realloc(lines, (n + 1) * sizeof(*v));

            if (!v) {
                r = -ENOMEM;
                break;
            }
            lines = v;
            if (asprintf(&lines[n], "subsystem %s", es[i].name) < 0) {
                r = -ENOMEM;
                break;
            }
            n++;
        }
        cfs_entries_free(es, ne);
    }
    for (size_t i = 0; r == 0 && i < cfs_schema_set_count(schemas); i++) {
        const char *file = cfs_schema_file(cfs_schema_set_get(schemas, i));

        if (file) {
            r = set_line_file(&lines, &n, "schema", file);
        }
    }
    for (int i = 0; r == 0 && i < o->n_modules; i++) {
        r = set_line_file(&lines, &n, "module", o->modules[i]);
    }
    if (r == 0) {
        if (n > 0) {
            qsort(lines, n, sizeof(*lines), cmp_str);
        }
        for (size_t i = 0; i < n; i++) {
            len += strlen(lines[i]) + 1;
        }
        set = calloc(1, len + 1);
        if (!set) {
            r = -ENOMEM;
        }
        len = 0;
        for (size_t i = 0; set && i < n; i++) {
            size_t l = strlen(lines[i]);

            memcpy(set + len, lines[i], l);
            set[len + l] = '\n';
            len += l + 1;
        }
    }
    if (r == 0) {
        r = cfs_store_cluster_subsystems(store, set, &theirs);
    }
    if (r == -EEXIST) {
        char here[2048] = "", there[2048] = "";

        set_missing(set, theirs, here, sizeof(here));
        set_missing(theirs, set, there, sizeof(there));
        cfs_log(CFS_LOG_ERROR,
                "start",
                "this node's subsystems differ from the cluster's; only "
                "here:%s; only in the cluster:%s (run the same schemas, "
                "modules and samples on every node)",
                here[0] ? here : " none",
                there[0] ? there : " none");
    } else if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to compare the subsystems with the cluster's: %s",
                strerror(-r));
    }
    for (size_t i = 0; i < n; i++) {
        free(lines[i]);
    }
    free(lines);
    free(set);
    free(theirs);
    return r < 0 ? 1 : 0;
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

/* Cluster mode, --forward-writes: follow the writer's role, and say where
 * the other nodes send their writes when this node is the writer
 * (docs/cluster.md). */
static void advertise(const struct options *o, struct cfs_http_server *srv)
{
    char url[420];
    size_t host = strcspn(o->listen, ":"), len;
    int r;

    if (o->advertise_url && o->advertise_url[0]) {
        (void)snprintf(url, sizeof(url), "%s", o->advertise_url);
    } else if (strncmp(o->listen, "0.0.0.0:", 8) == 0) {
        cfs_log_notice("start",
                       "no --advertise-url, listening on 0.0.0.0: this node "
                       "never appends for the others");
        (void)cfs_store_advertise(store, NULL);
        return;
    } else {
        (void)snprintf(url,
                       sizeof(url),
                       "%s://%.*s:%u",
                       tls_cert ? "https" : "http",
                       (int)host,
                       o->listen,
                       cfs_http_server_port(srv));
    }
    for (len = strlen(url); len > 0 && url[len - 1] == '/'; len--) {
        url[len - 1] = '\0';
    }
    r = cfs_store_advertise(store, url);
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "--advertise-url '%s': %s",
                url,
                r == -EINVAL ? "over 400 bytes, or with a space"
                             : strerror(-r));
        (void)cfs_store_advertise(store, NULL); /* forwards all the same */
    }
}

/* Start-up checks of the options, in order, with what each refusal
 * says; the tokens and TLS files read. @return 0, or the exit status
 * (what was opened is torn down). */
static int check_options(struct options *o)
{
    int r;

    cfs_log_set_level(o->level);
    if (o->log_file) {
        r = cfs_log_open_file(o->log_file);
        if (r < 0) {
            (void)fprintf(stderr,
                          "configfsd: cannot open log file %s: %s\n",
                          o->log_file,
                          strerror(-r));
            return 1;
        }
    }
    if (!o->tls_cert != !o->tls_key) {
        (void)fprintf(stderr,
                      "configfsd: --tls-cert and --tls-key go together\n");
        return 2;
    }
    r = cfs_http_listen_check(o->listen,
                              o->tokens != NULL || o->insecure_listen);
    if (r == -EPERM) {
        (void)fprintf(stderr,
                      "configfsd: refusing to listen on %s without --tokens; "
                      "bind a loopback address, give --tokens, or (for a "
                      "demo) --insecure-listen\n",
                      o->listen);
        return 2;
    }
    if (r < 0) {
        (void)fprintf(stderr,
                      "configfsd: --listen wants IPV4:PORT or localhost:PORT, "
                      "not %s\n",
                      o->listen);
        return 2;
    }
    if (o->tokens) {
        char why[512];

        r = cfs_http_tokens_load(o->tokens, &tokens, why, sizeof(why));
        if (r < 0) {
            (void)fprintf(stderr, "configfsd: bad --tokens file: %s\n", why);
            tokens_hint(r);
            return 1;
        }
    }
    if (o->tls_cert && (read_pem(o->tls_cert, "--tls-cert", &tls_cert) < 0 ||
                        read_pem(o->tls_key, "--tls-key", &tls_key) < 0)) {
        teardown();
        return 1;
    }
    if (!tokens && cfs_http_listen_check(o->listen, false) == -EPERM) {
        cfs_log(CFS_LOG_WARNING,
                "insecure",
                "--insecure-listen: serving %s WITHOUT AUTHENTICATION; anyone "
                "who reaches it can read, change and delete everything. For "
                "demos only: give --tokens",
                o->listen);
    }
    if (tokens && !tls_cert && cfs_http_listen_check(o->listen, false) < 0) {
        cfs_log(CFS_LOG_WARNING,
                "start",
                "tokens travel in clear text to %s: give --tls-cert and "
                "--tls-key",
                o->listen);
    }
    if (!is_dir(o->static_dir)) {
        if (o->static_dir_given) {
            (void)fprintf(stderr,
                          "configfsd: cannot use --static-dir %s: %s\n",
                          o->static_dir,
                          strerror(errno));
            teardown();
            return 1;
        }
        cfs_log(CFS_LOG_WARNING,
                "start",
                "no %s directory: the web UI is not served",
                o->static_dir);
        o->static_dir = NULL;
    }
    return 0;
}

/* Stored changes that replay could not make: one warning each (kept). */
static void log_replay_problems(void)
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

/* The HTTP server on the options, the store and the schemas, started and
 * announced. @return 0, or -errno (logged; what was opened stays). */
static int serve(const struct options *o, struct cfs_http_server **ret_srv)
{
    struct cfs_http_options hopts;
    struct cfs_http_server *srv = NULL;
    int r;

    memset(&hopts, 0, sizeof(hopts));
    hopts.listen = o->listen;
    hopts.threads = o->threads;
    hopts.body_limit = o->body_limit;
    hopts.header_limit = o->header_limit;
    hopts.max_connections = o->max_connections;
    hopts.per_ip_connections = o->per_ip_connections;
    hopts.timeout_s = o->timeout_s;
    hopts.auth_fail_burst = o->auth_fail_burst;
    hopts.auth_fail_window_s = o->auth_fail_window;
    hopts.schemas = schemas;
    hopts.store = store;
    hopts.tokens = tokens;
    hopts.insecure_listen = o->insecure_listen;
    hopts.static_dir = o->static_dir;
    hopts.tls_cert_pem = tls_cert;
    hopts.tls_key_pem = tls_key;
    hopts.peer_cacert = o->peer_cacert;
    hopts.forward_writes = o->store_url && o->store_url[0] && o->forward_writes;
    /* Another node's change set applied while the server starts must
     * reach its event stream: the stream begins at the revision the tree
     * has when it is made, and the change sets applied after wait here
     * (remote_applied()) until the server is there to take them. Before,
     * the ones applied until it was announced were lost, and the stream
     * held back everything after them, then skipped them. */
    pthread_mutex_lock(&g_srv_lock);
    r = cfs_http_server_start(&hopts, &srv);
    if (r == 0) {
        g_srv = srv;
    }
    pthread_mutex_unlock(&g_srv_lock);
    free_pem(&tls_key); /* GnuTLS holds its own copy now */
    if (r < 0) {
        cfs_log(CFS_LOG_ERROR,
                "start",
                "Failed to serve on %s: %s",
                o->listen,
                r == -EIO ? "libmicrohttpd said why, above" : strerror(-r));
        return r;
    }
    cfs_log_notice("start",
                   "configfsd %s listening on %s://%s (port %u)",
                   CFS_VERSION,
                   tls_cert ? "https" : "http",
                   o->listen,
                   cfs_http_server_port(srv));
    if (hopts.forward_writes) {
        advertise(o, srv);
    }
    *ret_srv = srv;
    return 0;
}

/* Until SIGTERM or SIGINT (of @set, blocked): one signal at a time, in
 * the order they came, so a SIGTERM right after a SIGHUP is never lost
 * to it. SIGHUP reopens the log file and reloads the tokens. */
static void wait_for_stop(const struct options *o,
                          struct cfs_http_server *srv,
                          sigset_t *set)
{
    int sig;

    while (sigwait(set, &sig) == 0 && sig == SIGHUP) {
        int r = cfs_log_reopen(); /* a no-op when logging to stderr */

        if (r < 0) {
            cfs_log(CFS_LOG_ERROR,
                    "signal",
                    "Failed to reopen %s: %s",
                    o->log_file,
                    strerror(-r));
        }
        if (tokens) { /* without --tokens there is nothing to reload */
            reload_tokens(srv, o->tokens);
        }
    }
}

/* The stop, bounded by a watchdog: the mount, the server (requests in
 * flight finish), the store; then the exit status, or the same program
 * again when the node fell behind the cluster's log. */
static int stop(struct cfs_http_server *srv, void *mount, sigset_t *set)
{
    pthread_t watchdog;
    /* first, before anything that may block (the log's own write) */
    bool watching = pthread_create(&watchdog, NULL, stop_watchdog, set) == 0;

    cfs_log_notice("stop", "stopping");
    /* a restart tells a service manager it reloads: the same process is
     * ready again (READY=1) once the new program serves */
    (void)cfs_notify(atomic_load(&restart_wanted) ? "RELOADING=1"
                                                  : "STOPPING=1");
    stop_mount(mount); /* before the commits it needs go */
    pthread_mutex_lock(&g_srv_lock);
    g_srv = NULL;
    pthread_mutex_unlock(&g_srv_lock);
    cfs_http_server_free(srv); /* requests in flight finish */
    teardown();
    if (atomic_load(&restart_wanted)) {
        if (watching) { /* the new program has a stop of its own */
            pthread_cancel(watchdog);
            pthread_join(watchdog, NULL);
        }
        cfs_log_notice("stop", "restarting (the same program and arguments)");
        cfs_log_close();
        pthread_sigmask(SIG_UNBLOCK, set, NULL);
        execv("/proc/self/exe", restart_args);
        (void)fprintf(stderr,
                      "configfsd: cannot restart /proc/self/exe: %s\n",
                      strerror(errno));
        return 1;
    }
    cfs_log_close();
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    struct cfs_http_server *srv = NULL;
    void *mount = NULL;
    sigset_t set;
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
    restart_args = calloc((size_t)argc + 1, sizeof(*restart_args));
    if (!restart_args) {
        return 1;
    }
    memcpy(restart_args, argv, (size_t)argc * sizeof(*restart_args));
    r = parse_options(argc, argv, &o);
    if (r) {
        return r;
    }
    r = check_options(&o);
    if (r) {
        return r;
    }
    /* Blocked before any thread exists (libmicrohttpd's, a module's), so
     * that every thread inherits the mask and only sigwait() takes them. */
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
    r = check_subsystem_set(&o);
    if (r) {
        teardown();
        return r;
    }
    log_replay_problems();
    if (serve(&o, &srv) < 0) {
        teardown();
        return 1;
    }
    if (o.mount && o.mount[0] && start_mount(&o, srv, &mount) < 0) {
        pthread_mutex_lock(&g_srv_lock);
        g_srv = NULL; /* no change set reaches a server that is gone */
        pthread_mutex_unlock(&g_srv_lock);
        cfs_http_server_free(srv);
        teardown();
        return 1;
    }
    notify_manager(srv);
    wait_for_stop(&o, srv, &set);
    return stop(srv, mount, &set);
}
