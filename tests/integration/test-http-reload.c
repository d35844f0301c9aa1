// SPDX-License-Identifier: MIT
/*
 * test-http-reload.c - replacing the tokens table while serving: in-process
 * through cfs_http_server_set_tokens() (a request authorized before the
 * swap completes with its principal, in the journal and the access log),
 * and configfsd re-reading --tokens on SIGHUP (a good file replaces the
 * tokens, a bad or missing one is logged and keeps them); event streams
 * end with their token.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

/* sha256sum of each token, computed outside the project (as in
 * test-http-auth.c). */
#define WRITER_TOKEN "writer-token-0123456789"
#define WRITER_HASH                                                            \
    "1caf5ddb6778770019772a6363b8cc194d1e3c145d8de3fc2570091710c3771e"
#define ADMIN_TOKEN "admin-token-01234567890"
#define ADMIN_HASH                                                             \
    "10212fafdd9f5d82accd96937285434f2272cbc39110addf2f20d284e9678dc0"

static const char file_a[] = "alice writer sha256:" WRITER_HASH "\n";
static const char file_ab[] = "alice writer sha256:" WRITER_HASH "\n"
                              "root admin sha256:" ADMIN_HASH "\n";
static const char file_b[] =
    "# alice is gone\nroot admin sha256:" ADMIN_HASH "\n";

static char *dir, *tokens_path, *log_path;

static int setup(void **state)
{
    char *db;
    int r;

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&tokens_path, "%s/tokens", dir) < 0 ||
        asprintf(&log_path, "%s/log", dir) < 0 ||
        asprintf(&db, "%s/db", dir) < 0) {
        return -1;
    }
    r = harness_start_db(db); /* without tokens; each test restarts */
    free(db);
    return r;
}

static int teardown(void **state)
{
    cfs_log_close();
    harness_stop(state);
    harness_rmtree(dir);
    free(tokens_path);
    free(log_path);
    free(dir);
    return 0;
}

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait (at most 5 s) until @file holds @needle @times times; return its
 * text (new). */
static char *wait_for(const char *file, const char *needle, int times)
{
    struct timespec t0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        char *text = harness_read_file(file);
        int n = 0;

        for (const char *p = text; p && (p = strstr(p, needle)); p++) {
            n++;
        }
        if (n >= times) {
            return text;
        }
        free(text);
        usleep(10 * 1000);
    } while (elapsed_ms(&t0) < 5000);
    (void)fprintf(stderr, "%s never had '%s' %d times\n", file, needle, times);
    fail();
    return NULL;
}

/* The status of GET @path as the holder of @token. */
static long get_as(const char *token, const char *path)
{
    char auth[128];
    const char *hdrs[] = {auth, NULL};
    struct http_resp r;
    long status;

    (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    http(&r, "GET", path, NULL, 0, hdrs);
    status = r.status;
    http_resp_done(&r);
    return status;
}

static struct cfs_http_tokens *load(const char *text)
{
    struct cfs_http_tokens *t = NULL;
    char err[512];

    harness_write_file(tokens_path, text, strlen(text));
    if (cfs_http_tokens_load(tokens_path, &t, err, sizeof(err)) < 0) {
        (void)fprintf(stderr, "%s\n", err);
    }
    assert_non_null(t);
    return t;
}

/* A PUT authorized with alice's token, whose body comes only after the
 * table without alice replaced it and the test let go of the old one:
 * the request still commits as alice (journal, access log), and only then
 * is the old table freed (ASan would see a use after free, LSan a leak). */
static void test_reload_request_in_flight_keeps_its_principal(void **state)
{
    static const char body[] = "{\"value\":\"7\"}";
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = false};
    struct cfs_http_tokens *ta = load(file_a), *tb = load(file_b);
    struct http_resp r;
    char head[512], *text;
    const char *principal;
    int fd;

    (void)state;
    o.tokens = ta;
    assert_int_equal(harness_restart_with(&o), 0);
    unlink(log_path);
    assert_int_equal(cfs_log_open_file(log_path), 0);

    /* the headers only: "100 Continue" says the handler has run, so the
     * request is authorized (with alice's table) and waits for its body */
    fd = raw_connect();
    (void)snprintf(head,
                   sizeof(head),
                   "PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n"
                   "Host: 127.0.0.1\r\n"
                   "Authorization: Bearer " WRITER_TOKEN "\r\n"
                   "Content-Type: application/json\r\n"
                   "Content-Length: %zu\r\n"
                   "Expect: 100-continue\r\n\r\n",
                   strlen(body));
    raw_send(fd, head, strlen(head));
    assert_int_equal(raw_status(fd, 5000), 100);

    assert_int_equal(cfs_http_server_set_tokens(harness_server(), tb), 0);
    cfs_http_tokens_unref(ta); /* only the request holds alice's table now */
    cfs_http_tokens_unref(tb); /* the server holds its own reference */
    assert_int_equal(get_as(WRITER_TOKEN, "/api/v1/config/"), 401);

    raw_send(fd, body, strlen(body));
    assert_int_equal(raw_status(fd, 5000), 200);
    close(fd);

    text = wait_for(log_path, "method=PUT", 1);
    assert_non_null(strstr(text,
                           "method=PUT path=/api/v1/config/01-childless/"
                           "storeme status=200"));
    assert_non_null(strstr(strstr(text, "method=PUT"), "principal=alice\n"));
    free(text);

    {
        const char *hdrs[] = {"Authorization: Bearer " ADMIN_TOKEN, NULL};

        http(&r,
             "GET",
             "/api/v1/history?path=/01-childless/storeme&limit=1",
             NULL,
             0,
             hdrs);
    }
    assert_int_equal(r.status, 200);
    principal = json_string_value(json_object_get(
        json_array_get(json_object_get(r.json, "entries"), 0), "principal"));
    assert_non_null(principal);
    assert_string_equal(principal, "alice");
    http_resp_done(&r);
    cfs_log_close();
}

/* An event stream opened with @token, once the server says it is on. */
static int open_stream(const char *token, char *buf, size_t cap)
{
    char head[256];
    int fd = raw_connect();
    bool eof;

    (void)snprintf(head,
                   sizeof(head),
                   "GET /api/v1/events HTTP/1.1\r\n"
                   "Host: 127.0.0.1\r\n"
                   "Authorization: Bearer %s\r\n\r\n",
                   token);
    raw_send(fd, head, strlen(head));
    assert_true(raw_read_for(fd, buf, cap, ": connected\n\n", 5000, &eof) > 0);
    assert_non_null(strstr(buf, ": connected\n\n"));
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    return fd;
}

/* A reload that removes a token ends the event streams opened with it,
 * and only those: alice's stream ends (the last chunk of the chunked body,
 * or the connection closes) without the next event; root's, whose token
 * the new table still has, gets that event. Without the check, alice
 * would go on reading every change. */
static void test_reload_ends_streams_of_removed_tokens(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    struct cfs_http_tokens *tab = load(file_ab), *tb = load(file_b);
    const char *hdrs[] = {"Authorization: Bearer " ADMIN_TOKEN, NULL};
    static char a[8192], b[8192];
    struct http_resp r;
    bool eof = false;
    int fa, fb;

    (void)state;
    o.tokens = tab;
    assert_int_equal(harness_restart_with(&o), 0);
    fa = open_stream(WRITER_TOKEN, a, sizeof(a));
    fb = open_stream(ADMIN_TOKEN, b, sizeof(b));

    assert_int_equal(cfs_http_server_set_tokens(harness_server(), tb), 0);
    cfs_http_tokens_unref(tab); /* alice's stream holds its own reference */
    cfs_http_tokens_unref(tb);
    /* the last chunk (or a close), and nothing before it */
    assert_true(raw_read_for(fa, a, sizeof(a), "0\r\n\r\n", 5000, &eof) >= 0);
    assert_true(eof || strncmp(a, "0\r\n\r\n", 5) == 0);

    http(&r, "PUT", "/api/v1/config/01-childless/storeme", "41", 2, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    assert_true(
        raw_read_for(fb, b, sizeof(b), "01-childless/storeme", 5000, &eof) > 0);
    assert_non_null(strstr(b, "01-childless/storeme"));
    /* published to both at once: alice's would be there by now */
    (void)raw_read_for(fa, a, sizeof(a), "storeme", 200, &eof);
    assert_null(strstr(a, "storeme"));
    close(fa);
    close(fb);
}

/* The API refuses what would change whether requests need a token: no
 * table at all, or a table for a server started without one. */
static void test_reload_api_refusals(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    struct cfs_http_tokens *tb = load(file_b);
    struct http_resp r;

    (void)state;
    o.tokens = tb;
    assert_int_equal(harness_restart_with(&o), 0);
    assert_int_equal(cfs_http_server_set_tokens(harness_server(), NULL),
                     -EINVAL);
    assert_int_equal(get_as(ADMIN_TOKEN, "/api/v1/config/"), 200);

    o.tokens = NULL;
    assert_int_equal(harness_restart_with(&o), 0);
    assert_int_equal(cfs_http_server_set_tokens(harness_server(), tb), -EINVAL);
    http(&r, "GET", "/api/v1/config/", NULL, 0, NULL); /* still open */
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    cfs_http_tokens_unref(tb); /* the last reference: freed here */
}

/* configfsd --tokens: SIGHUP with a new file replaces alice (writer) by
 * root (admin); SIGHUP with a broken or missing file logs why and keeps
 * root. */
static void test_reload_configfsd_sighup(void **state)
{
    char db[512];
    const char *args[] = {"--listen",
                          "127.0.0.1:0",
                          "--no-samples",
                          "--db",
                          db,
                          "--tokens",
                          tokens_path,
                          NULL};
    static const char broken[] =
        "root admin sha256:" ADMIN_HASH "\n"
        "ops writer " WRITER_TOKEN "\n"; /* the token, not its hash */
    struct harness_proc p;
    struct timespec t0;
    char *text, *where;
    long status;

    (void)state;
    (void)snprintf(db, sizeof(db), "%s/spawned.db", dir);
    harness_write_file(tokens_path, file_a, strlen(file_a));
    assert_int_equal(harness_spawn(args, NULL, NULL, &p), 0);
    harness_target(p.port, NULL);
    assert_int_equal(get_as(WRITER_TOKEN, "/api/v1/config/"), 200);
    assert_int_equal(get_as(ADMIN_TOKEN, "/api/v1/config/"), 401);

    /* a good file: root replaces alice */
    harness_write_file(tokens_path, file_b, strlen(file_b));
    assert_int_equal(kill(p.pid, SIGHUP), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        status = get_as(ADMIN_TOKEN, "/api/v1/config/");
        if (status == 200) {
            break;
        }
        usleep(10 * 1000);
    } while (elapsed_ms(&t0) < 5000);
    assert_int_equal(status, 200);
    assert_int_equal(get_as(WRITER_TOKEN, "/api/v1/config/"), 401);
    assert_int_equal(get_as(ADMIN_TOKEN, "/api/v1/export"), 200);
    text = wait_for(p.log, "event=reload", 1);
    assert_non_null(strstr(text, "level=notice event=reload"));
    assert_non_null(strstr(text, ": 1 in use"));
    free(text);

    /* a broken file: an error naming file, line and reason; root stays */
    harness_write_file(tokens_path, broken, strlen(broken));
    assert_int_equal(kill(p.pid, SIGHUP), 0);
    text = wait_for(p.log, "level=error event=reload", 1);
    where = strstr(text, "level=error event=reload");
    assert_non_null(strstr(where, tokens_path));
    assert_non_null(strstr(where, ":2: the third field"));
    free(text);
    assert_int_equal(get_as(ADMIN_TOKEN, "/api/v1/config/"), 200);
    assert_int_equal(get_as(WRITER_TOKEN, "/api/v1/config/"), 401);

    /* a missing file: the same */
    assert_int_equal(unlink(tokens_path), 0);
    assert_int_equal(kill(p.pid, SIGHUP), 0);
    text = wait_for(p.log, "level=error event=reload", 2);
    assert_non_null(strstr(text, "No such file or directory"));
    free(text);
    assert_int_equal(get_as(ADMIN_TOKEN, "/api/v1/config/"), 200);

    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reload_request_in_flight_keeps_its_principal),
        cmocka_unit_test(test_reload_api_refusals),
        cmocka_unit_test(test_reload_ends_streams_of_removed_tokens),
        cmocka_unit_test(test_reload_configfsd_sighup),
    };

    return cmocka_run_group_tests_name("http-reload", tests, setup, teardown);
}
