// SPDX-License-Identifier: MIT
/*
 * harness.c - see harness.h.
 *
 * With CFS_RESPONSE_LOG=FILE in the environment, every exchange is also
 * appended to FILE as one JSON line (request method, path and headers;
 * response status, headers and body), which scripts/validate-responses.mjs
 * checks against api/openapi.yaml.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>
#include <configfs/store.h>

#include "harness.h"
#include "http.h"
#include "samples.h"

extern char **environ;

static struct cfs_http_server *srv;
static struct cfs_schema_set *schemas;
static struct cfs_store *store;
static bool registered;
static uint16_t target_port;  /* 0: srv */
static const char *target_ca; /* NULL: plain HTTP */

uint16_t harness_port(void)
{
    return target_port ? target_port : cfs_http_server_port(srv);
}

struct cfs_http_server *harness_server(void)
{
    return srv;
}

void harness_target(uint16_t port, const char *cafile)
{
    target_port = port;
    target_ca = cafile;
}

int harness_restart_with(const struct cfs_http_options *opts)
{
    struct cfs_http_options o = *opts;

    cfs_http_server_free(srv);
    srv = NULL;
    if (!o.schemas) {
        o.schemas = schemas;
    }
    if (!o.store) {
        o.store = store;
    }
    return cfs_http_server_start(&o, &srv);
}

const char *harness_store_vfs;

/* The store at @db (NULL: none), the samples and the shipped schemas, then
 * the server with @opts. */
static int start(const char *db, const struct cfs_http_options *opts)
{
    (void)signal(SIGPIPE, SIG_IGN); /* raw sockets the server has closed */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        return -EIO;
    }
    if (db) {
        struct cfs_store_options so = {.path = db, .vfs = harness_store_vfs};

        if (cfs_store_open(&so, &store) < 0) {
            return -EIO;
        }
    }
    if (cfs_samples_register() < 0) {
        return -EIO;
    }
    registered = true;
    if (cfs_schema_load_dir(CFS_SOURCE_ROOT "/schemas", &schemas, NULL) < 0 ||
        cfs_schema_set_register(schemas, NULL) < 0) {
        return -EIO;
    }
    return harness_restart_with(opts);
}

int harness_start_with(const struct cfs_http_options *opts)
{
    return start(NULL, opts);
}

int harness_start_db(const char *db)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};

    return start(db, &o) < 0 ? -1 : 0;
}

int harness_start(void **state)
{
    (void)state;
    return harness_start_db(NULL);
}

void harness_stop_server(void)
{
    cfs_http_server_free(srv);
    srv = NULL;
}

int harness_stop(void **state)
{
    (void)state;
    cfs_http_server_free(srv);
    srv = NULL;
    cfs_schema_set_free(schemas);
    schemas = NULL;
    if (registered) {
        cfs_samples_unregister();
        registered = false;
    }
    cfs_store_close(store);
    store = NULL;
    harness_target(0, NULL);
    curl_global_cleanup();
    return 0;
}

struct buf {
    char *p;
    size_t len;
};

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    char *np = realloc(b->p, b->len + size * n + 1);

    if (!np) {
        return 0;
    }
    memcpy(np + b->len, data, size * n);
    b->p = np;
    b->len += size * n;
    b->p[b->len] = '\0';
    return size * n;
}

/* "Name: value" -> obj["name"] = "value" (names lower-cased; a header
 * sent twice keeps its last value). */
static void header_line(json_t *obj, const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    char name[128];
    size_t n;
    const char *v;

    if (!colon || (size_t)(colon - line) >= sizeof(name)) {
        return;
    }
    n = (size_t)(colon - line);
    for (size_t i = 0; i < n; i++) {
        char c = line[i];

        name[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    name[n] = '\0';
    v = colon + 1;
    while (v < line + len && (*v == ' ' || *v == '\t')) {
        v++;
    }
    json_object_set_new(obj, name, json_stringn(v, (size_t)(line + len - v)));
}

static void log_response(const char *method,
                         const char *path,
                         const char *const *headers,
                         const struct http_resp *r)
{
    const char *file = getenv("CFS_RESPONSE_LOG");
    json_t *line, *reqh, *resph, *body;
    char *text;
    FILE *f;

    if (!file || !*file) {
        return;
    }
    line = json_object();
    reqh = json_object();
    resph = json_object();
    for (size_t i = 0; headers && headers[i]; i++) {
        header_line(reqh, headers[i], strlen(headers[i]));
    }
    /* The last header block: the final response, after any 1xx. */
    for (const char *p = r->headers; *p;) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);

        if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
            json_object_clear(resph);
        } else {
            header_line(resph, p, len);
        }
        p += len + (eol ? 2 : 0);
    }
    body = json_stringn(r->body, r->len); /* NULL if not UTF-8 */
    json_object_set_new(
        line, "test", json_string(program_invocation_short_name));
    json_object_set_new(line, "method", json_string(method));
    json_object_set_new(line, "path", json_stringn(path, strlen(path)));
    json_object_set_new(line, "request_headers", reqh);
    json_object_set_new(line, "status", json_integer(r->status));
    json_object_set_new(line, "headers", resph);
    json_object_set_new(line, "body", body ? body : json_null());
    json_object_set_new(line, "body_bytes", json_integer((json_int_t)r->len));
    text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    assert_non_null(text);
    f = fopen(file, "a");
    if (!f) {
        (void)fprintf(
            stderr, "CFS_RESPONSE_LOG %s: %s\n", file, strerror(errno));
    }
    assert_non_null(f);
    /* One write per line (the buffer holds it): O_APPEND keeps lines whole
     * even if two processes share the file. */
    assert_true(fprintf(f, "%s\n", text) > 0);
    assert_int_equal(fclose(f), 0);
    free(text);
}

static size_t discard_body(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

int http_put_own(const char *url,
                 const char *body,
                 long timeout_s,
                 long *ret_status)
{
    CURL *c = curl_easy_init();
    CURLcode rc;

    *ret_status = 0;
    if (!c) {
        return CURLE_OUT_OF_MEMORY;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
    curl_easy_cleanup(c);
    return (int)rc;
}

int http_try(struct http_resp *r,
             const char *method,
             const char *path,
             const char *body,
             size_t body_len,
             const char *const *headers)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hl = NULL;
    struct buf bb = {0}, hb = {0};
    char *url;
    const char *ct;
    CURLcode rc;
    size_t url_len = strlen(path) + 64;

    assert_non_null(c);
    memset(r, 0, sizeof(*r));
    url = malloc(url_len);
    assert_non_null(url);
    (void)snprintf(url,
                   url_len,
                   "%s://127.0.0.1:%u%s",
                   target_ca ? "https" : "http",
                   harness_port(),
                   path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (target_ca) {
        curl_easy_setopt(c, CURLOPT_CAINFO, target_ca);
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    }
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
    }
    hl = curl_slist_append(hl, "Expect:");
    for (size_t i = 0; headers && headers[i]; i++) {
        hl = curl_slist_append(hl, headers[i]);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &bb);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    rc = curl_easy_perform(c);
    free(url);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = bb.p ? bb.p : strdup("");
    r->len = bb.len;
    r->headers = hb.p ? hb.p : strdup("");
    ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    if (rc == CURLE_OK && ct && strstr(ct, "json") &&
        strcmp(method, "HEAD") != 0) {
        r->json = json_loadb(r->body, r->len, JSON_ALLOW_NUL, NULL);
        assert_non_null(r->json); /* a JSON content type carries JSON */
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (rc == CURLE_OK) {
        log_response(method, path, headers, r);
    }
    return (int)rc;
}

void http(struct http_resp *r,
          const char *method,
          const char *path,
          const char *body,
          size_t body_len,
          const char *const *headers)
{
    int rc = http_try(r, method, path, body, body_len, headers);

    if (rc != CURLE_OK) {
        (void)fprintf(stderr,
                      "%s %s: %s\n",
                      method,
                      path,
                      curl_easy_strerror((CURLcode)rc));
    }
    assert_int_equal(rc, CURLE_OK);
}

void http_resp_done(struct http_resp *r)
{
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

char *http_header(const struct http_resp *r, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = r->headers; p && *p;) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);

        if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;

            while (*v == ' ') {
                v++;
            }
            return strndup(v, len - (size_t)(v - p));
        }
        p += len + (eol ? 2 : 0);
    }
    return NULL;
}

void expect_header(const struct http_resp *r,
                   const char *name,
                   const char *value)
{
    char *v = http_header(r, name);

    if (!v || strcmp(v, value) != 0) {
        (void)fprintf(stderr, "%s: '%s', not '%s'\n", name, v ? v : "", value);
    }
    assert_non_null(v);
    assert_string_equal(v, value);
    free(v);
}

const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

void http_json(struct http_resp *r,
               const char *method,
               const char *path,
               const char *json_body)
{
    static const char *const hdrs[] = {"Content-Type: application/json", NULL};

    http(r, method, path, json_body, json_body ? strlen(json_body) : 0, hdrs);
}

void expect_problem(const struct http_resp *r, long status, const char *err)
{
    char *ct = http_header(r, "Content-Type");

    if (r->status != status) {
        (void)fprintf(
            stderr, "expected %ld, got %ld: %s\n", status, r->status, r->body);
    }
    assert_int_equal(r->status, status);
    assert_non_null(ct);
    assert_string_equal(ct, "application/problem+json");
    free(ct);
    assert_non_null(r->json);
    assert_int_equal(json_integer_value(json_object_get(r->json, "status")),
                     status);
    assert_string_equal(json_string_value(json_object_get(r->json, "errno")),
                        err);
    assert_non_null(json_object_get(r->json, "title"));
    assert_non_null(json_object_get(r->json, "instance"));
}

void expect_healthy(void)
{
    struct http_resp r;

    http(&r, "GET", "/healthz", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
}

long long http_revision(void)
{
    struct http_resp r;
    long long rev;

    http(&r, "GET", "/api/v1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    rev = (long long)json_integer_value(json_object_get(r.json, "revision"));
    http_resp_done(&r);
    return rev;
}

char *http_etag(const char *path)
{
    struct http_resp r;
    char *etag;

    http(&r, "GET", path, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    etag = http_header(&r, "ETag");
    assert_non_null(etag);
    assert_true(etag[0] == '"'); /* strong: the tag the server compares */
    http_resp_done(&r);
    return etag;
}

/* ---- raw sockets ------------------------------------------------------- */

int raw_connect(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    sa.sin_port = htons(harness_port());
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

void raw_send(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return; /* closed by the server: what it answered still counts */
        }
        p += n;
        len -= (size_t)n;
    }
}

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Read into @buf until @stop says enough, EOF, or the deadline.
 * @return bytes read, or -1 on timeout before anything useful. */
static ssize_t read_until(int fd,
                          char *buf,
                          size_t cap,
                          int timeout_ms,
                          bool (*stop)(const char *, size_t),
                          bool *ret_eof)
{
    struct timespec t0;
    size_t len = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    *ret_eof = false;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        long left = timeout_ms - elapsed_ms(&t0);
        ssize_t n;
        char scratch[4096];

        if (left <= 0) {
            return -1;
        }
        if (poll(&pfd, 1, (int)left) <= 0) {
            continue;
        }
        if (len + 1 < cap) {
            n = recv(fd, buf + len, cap - 1 - len, 0);
        } else {
            n = recv(fd, scratch, sizeof(scratch), 0); /* drop the rest */
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) { /* EOF or reset: closed */
            *ret_eof = true;
            buf[len] = '\0';
            return (ssize_t)len;
        }
        if (len + 1 < cap) {
            len += (size_t)n;
            buf[len] = '\0';
            if (stop && stop(buf, len)) {
                return (ssize_t)len;
            }
        }
    }
}

static bool have_status_line(const char *buf, size_t len)
{
    (void)len;
    return strstr(buf, "\r\n") != NULL;
}

long raw_status(int fd, int timeout_ms)
{
    char buf[1024];
    bool eof;
    ssize_t n =
        read_until(fd, buf, sizeof(buf), timeout_ms, have_status_line, &eof);
    const char *sp;
    char *end;
    long status = 0;

    if (n < 0) {
        return -1;
    }
    if (n == 0) {
        return 0;
    }
    sp = strncmp(buf, "HTTP/", 5) == 0 ? strchr(buf, ' ') : NULL;
    if (sp) {
        status = strtol(sp + 1, &end, 10);
    }
    if (!sp || end != sp + 4 || status < 100 || status > 599) {
        (void)fprintf(stderr, "not an HTTP response: %.40s\n", buf);
        return 0;
    }
    return status;
}

static _Thread_local const char *wanted;

static bool have_wanted(const char *buf, size_t len)
{
    (void)len;
    return strstr(buf, wanted) != NULL;
}

ssize_t raw_read_for(int fd,
                     char *buf,
                     size_t cap,
                     const char *needle,
                     int timeout_ms,
                     bool *ret_eof)
{
    wanted = needle;
    buf[0] = '\0';
    return read_until(fd, buf, cap, timeout_ms, have_wanted, ret_eof);
}

bool raw_closed_within(int fd, int timeout_ms)
{
    char buf[256];
    bool eof;

    return read_until(fd, buf, sizeof(buf), timeout_ms, NULL, &eof) >= 0 && eof;
}

/* ---- files ------------------------------------------------------------- */

char *harness_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path;

    if (!base || !*base) {
        base = "/tmp";
    }
    assert_true(asprintf(&path, "%s/cfs-test-XXXXXX", base) > 0);
    assert_non_null(mkdtemp(path));
    return path;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP) {
        chmod(path, 0700);
        (void)rmdir(path);
        return 0;
    }
    (void)unlink(path);
    return 0;
}

void harness_rmtree(const char *path)
{
    if (path) {
        (void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

void harness_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "we");

    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

char *harness_read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t len = 0;

    if (!f) {
        return NULL;
    }
    for (;;) {
        char *nb = realloc(buf, len + 4097);
        size_t n;

        assert_non_null(nb);
        buf = nb;
        n = fread(buf + len, 1, 4096, f);
        len += n;
        if (n == 0) {
            break;
        }
    }
    buf[len] = '\0';
    (void)fclose(f);
    return buf;
}

/* ---- the configfsd executable ------------------------------------------ */

/* argv: configfsd, then @args. envp: ours, then @env. New arrays of
 * borrowed strings. */
static void build_argv_envp(const char *const *args,
                            const char *const *env,
                            char ***ret_argv,
                            char ***ret_envp)
{
    size_t na = 0, ne = 0, no = 0;
    char **argv, **envp;

    while (args && args[na]) {
        na++;
    }
    while (env && env[ne]) {
        ne++;
    }
    while (environ[no]) {
        no++;
    }
    argv = calloc(na + 2, sizeof(*argv));
    envp = calloc(no + ne + 1, sizeof(*envp));
    assert_non_null(argv);
    assert_non_null(envp);
    argv[0] = (char *)CFS_CONFIGFSD;
    for (size_t i = 0; i < na; i++) {
        argv[i + 1] = (char *)args[i];
    }
    for (size_t i = 0; i < no; i++) {
        envp[i] = environ[i];
    }
    for (size_t i = 0; i < ne; i++) {
        envp[no + i] = (char *)env[i];
    }
    *ret_argv = argv;
    *ret_envp = envp;
}

static int wait_bounded(pid_t pid, int timeout_ms)
{
    struct timespec t0;
    int status;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);

        if (w == pid) {
            break;
        }
        if (elapsed_ms(&t0) > timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            (void)fprintf(stderr, "configfsd did not exit in time: killed\n");
            break;
        }
        usleep(10 * 1000);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void append(struct buf *b, int fd, bool *open_)
{
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof(chunk));

    if (n <= 0) {
        *open_ = false;
        return;
    }
    assert_int_equal(collect(chunk, 1, (size_t)n, b), (size_t)n);
}

int harness_run(const char *const *args,
                const char *const *env,
                const char *input,
                char **ret_out,
                char **ret_err,
                int timeout_s)
{
    posix_spawn_file_actions_t fa;
    int in[2], out[2], err[2];
    struct buf ob = {0}, eb = {0};
    bool out_open = true, err_open = true;
    char **argv, **envp;
    struct timespec t0;
    pid_t pid;
    int status;

    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    build_argv_envp(args, env, &argv, &envp);
    assert_int_equal(posix_spawn(&pid, CFS_CONFIGFSD, &fa, NULL, argv, envp),
                     0);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    free(envp);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (input) { /* small: fits the pipe; EPIPE if it exited unread */
        (void)!write(in[1], input, strlen(input));
    }
    close(in[1]);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while ((out_open || err_open) && elapsed_ms(&t0) < timeout_s * 1000L) {
        struct pollfd p[2] = {{.fd = out_open ? out[0] : -1, .events = POLLIN},
                              {.fd = err_open ? err[0] : -1, .events = POLLIN}};

        if (poll(p, 2, 100) <= 0) {
            continue;
        }
        if (p[0].revents) {
            append(&ob, out[0], &out_open);
        }
        if (p[1].revents) {
            append(&eb, err[0], &err_open);
        }
    }
    close(out[0]);
    close(err[0]);
    status = wait_bounded(pid, 1000);
    if (ret_out) {
        *ret_out = ob.p ? ob.p : strdup("");
    } else {
        free(ob.p);
    }
    if (ret_err) {
        *ret_err = eb.p ? eb.p : strdup("");
    } else {
        free(eb.p);
    }
    return status;
}

int harness_spawn(const char *const *args,
                  const char *const *env,
                  const char *log_file,
                  struct harness_proc *ret)
{
    posix_spawn_file_actions_t fa;
    char **argv, **envp;
    struct timespec t0;
    int status;

    memset(ret, 0, sizeof(*ret));
    ret->dir = harness_tmpdir();
    assert_true(asprintf(&ret->err, "%s/stderr", ret->dir) > 0);
    ret->log = strdup(log_file ? log_file : ret->err);
    assert_non_null(ret->log);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(
        &fa, 2, ret->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    build_argv_envp(args, env, &argv, &envp);
    assert_int_equal(
        posix_spawn(&ret->pid, CFS_CONFIGFSD, &fa, NULL, argv, envp), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    free(envp);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed_ms(&t0) < 10000) {
        char *text = harness_read_file(ret->log);
        const char *p = text ? strstr(text, "(port ") : NULL;
        char *end = NULL;
        unsigned long port = p ? strtoul(p + 6, &end, 10) : 0;

        if (p && *end == ')' && port > 0 && port <= 65535) {
            ret->port = (uint16_t)port;
            free(text);
            return 0;
        }
        free(text);
        if (waitpid(ret->pid, &status, WNOHANG) == ret->pid) {
            ret->pid = 0;
            return -1;
        }
        usleep(10 * 1000);
    }
    kill(ret->pid, SIGKILL);
    waitpid(ret->pid, &status, 0);
    ret->pid = 0;
    return -1;
}

int harness_reap(struct harness_proc *p)
{
    int status = 0;

    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        status = wait_bounded(p->pid, 10000);
        p->pid = 0;
    }
    if (status != 0 && p->err) {
        char *text = harness_read_file(p->err);

        (void)fprintf(
            stderr, "configfsd exited %d:\n%s", status, text ? text : "");
        free(text);
    }
    harness_rmtree(p->dir);
    free(p->dir);
    free(p->err);
    free(p->log);
    memset(p, 0, sizeof(*p));
    return status;
}

static char tmpdb_dir[64];

int harness_tmpdb(const char *tag, const char *file, char *ret_db, size_t size)
{
    int n;

    n = snprintf(tmpdb_dir, sizeof(tmpdb_dir), "/tmp/cfs-http-%s-XXXXXX", tag);
    if (n < 0 || (size_t)n >= sizeof(tmpdb_dir) || !mkdtemp(tmpdb_dir)) {
        tmpdb_dir[0] = '\0';
        return -1;
    }
    n = snprintf(ret_db, size, "%s/%s", tmpdb_dir, file);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

int harness_tmpdb_remove(void)
{
    char cmd[sizeof(tmpdb_dir) + 16];

    if (!tmpdb_dir[0]) {
        return 0;
    }
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdb_dir);
    tmpdb_dir[0] = '\0';
    return system(cmd) == 0 ? 0 : -1;
}
