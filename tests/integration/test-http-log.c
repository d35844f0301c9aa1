// SPDX-License-Identifier: MIT
/*
 * test-http-log.c - the log: logfmt lines with escaped client bytes, the
 * same as JSON objects (--log-format json), level filtering, the access line of
 * each request, --log-file and its reopen on SIGHUP (log rotation), and
 * libmicrohttpd's start-up errors.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "http.h"

static char *dir, *path, *rotated;

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = false};

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&path, "%s/log", dir) < 0 ||
        asprintf(&rotated, "%s/log.1", dir) < 0) {
        return -1;
    }
    return harness_start_with(&o) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    cfs_log_close();
    cfs_log_set_level(CFS_LOG_INFO);
    harness_stop(state);
    harness_rmtree(dir);
    free(path);
    free(rotated);
    free(dir);
    return 0;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;

    for (const char *p = text; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

/* Wait (bounded) until @file holds @needle; return its text (new). */
static char *wait_for(const char *file, const char *needle)
{
    for (int i = 0; i < 500; i++) {
        char *text = harness_read_file(file);

        if (text && strstr(text, needle)) {
            return text;
        }
        free(text);
        usleep(10 * 1000);
    }
    (void)fprintf(stderr, "%s never had '%s'\n", file, needle);
    fail();
    return NULL;
}

/* One line per event, keys in a fixed order, client bytes escaped so a
 * path can neither end a line nor forge a key. */
static void test_log_line_format(void **state)
{
    char *text;

    (void)state;
    unlink(path);
    assert_int_equal(cfs_log_open_file(path), 0);
    cfs_log_access(
        "GET", "/a b\n\"x\x1b\\ level=error\xff", 200, 15, 42, "alice");
    cfs_log(CFS_LOG_ERROR, "start", "Failed to %s", "start");
    cfs_log_access("PUT", "/plain", 503, 0, 7, NULL);
    text = harness_read_file(path);
    assert_non_null(text);
    assert_int_equal(count_lines(text), 3);
    assert_true(strncmp(text, "ts=", 3) == 0);
    assert_non_null(strstr(text,
                           " level=info event=access method=GET "
                           "path=\"/a b\\x0a\\\"x\\x1b\\\\ level=error\\xff\" "
                           "status=200 bytes=15 us=42 principal=alice\n"));
    assert_non_null(strstr(text,
                           " level=error event=start msg=\"Failed to "
                           "start\"\n"));
    assert_non_null(strstr(text,
                           " level=error event=access method=PUT "
                           "path=/plain status=503 bytes=0 us=7 "
                           "principal=-\n"));
    free(text);
    cfs_log_close();
}

/* --log-format json: one object per line, the same keys, numbers as
 * numbers, client bytes escaped (\u00NN), and a line cut at the size limit
 * still an object, marked truncated. */
static void test_log_json_format(void **state)
{
    enum cfs_log_format format;
    char long_path[6000];
    json_t *line[4];
    json_error_t err;
    char *text, *p;
    size_t n = 0;

    (void)state;
    assert_int_equal(cfs_log_format_parse("json", &format), 0);
    assert_int_equal(format, CFS_LOG_FORMAT_JSON);
    assert_int_equal(cfs_log_format_parse("yaml", &format), -EINVAL);
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[0] = '/';
    long_path[sizeof(long_path) - 1] = '\0';
    unlink(path);
    assert_int_equal(cfs_log_open_file(path), 0);
    cfs_log_set_format(CFS_LOG_FORMAT_JSON);
    cfs_log_access(
        "GET", "/a b\n\"x\x1b\\ level=error\xff", 200, 15, 42, "alice");
    cfs_log(CFS_LOG_ERROR, "start", "Failed to %s", "start");
    cfs_log_access("PUT", long_path, 503, 0, 7, NULL);
    cfs_log_set_format(CFS_LOG_FORMAT_LOGFMT);
    text = harness_read_file(path);
    assert_non_null(text);
    assert_int_equal(count_lines(text), 3);
    for (p = strtok(text, "\n"); p && n < 4; p = strtok(NULL, "\n")) {
        assert_true(strlen(p) < 4096);
        line[n] = json_loads(p, 0, &err);
        if (!line[n]) {
            (void)fprintf(stderr, "not JSON (%s): %.200s\n", err.text, p);
        }
        assert_non_null(line[n]);
        assert_true(json_is_string(json_object_get(line[n], "ts")));
        n++;
    }
    assert_int_equal(n, 3);
    assert_string_equal(json_string_value(json_object_get(line[0], "level")),
                        "info");
    assert_string_equal(json_string_value(json_object_get(line[0], "event")),
                        "access");
    /* \xff was written \u00ff: U+00FF once decoded, never a raw byte */
    assert_string_equal(json_string_value(json_object_get(line[0], "path")),
                        "/a b\n\"x\x1b\\ level=error\xc3\xbf");
    assert_int_equal(json_integer_value(json_object_get(line[0], "status")),
                     200);
    assert_int_equal(json_integer_value(json_object_get(line[0], "bytes")), 15);
    assert_int_equal(json_integer_value(json_object_get(line[0], "us")), 42);
    assert_string_equal(
        json_string_value(json_object_get(line[0], "principal")), "alice");
    assert_string_equal(json_string_value(json_object_get(line[1], "msg")),
                        "Failed to start");
    assert_string_equal(json_string_value(json_object_get(line[2], "level")),
                        "error");
    assert_true(json_is_true(json_object_get(line[2], "truncated")));
    assert_true(strncmp(json_string_value(json_object_get(line[2], "path")),
                        "/aaaa",
                        5) == 0);
    for (size_t i = 0; i < n; i++) {
        json_decref(line[i]);
    }
    free(text);
    cfs_log_close();
}

/* Lines above the level are dropped; a 5xx access line is an error. */
static void test_log_level_filter(void **state)
{
    enum cfs_log_level level;
    char *text;

    (void)state;
    assert_int_equal(cfs_log_level_parse("warning", &level), 0);
    assert_int_equal(level, CFS_LOG_WARNING);
    assert_int_equal(cfs_log_level_parse("verbose", &level), -EINVAL);
    unlink(path);
    assert_int_equal(cfs_log_open_file(path), 0);
    cfs_log_set_level(CFS_LOG_WARNING);
    cfs_log_access("GET", "/ok", 200, 1, 1, "a");
    cfs_log(CFS_LOG_INFO, "x", "dropped");
    cfs_log(CFS_LOG_DEBUG, "x", "dropped");
    cfs_log(CFS_LOG_WARNING, "x", "kept");
    cfs_log_access("GET", "/broken", 500, 1, 1, "a");
    cfs_log_set_level(CFS_LOG_INFO);
    text = harness_read_file(path);
    assert_int_equal(count_lines(text), 2);
    assert_null(strstr(text, "dropped"));
    assert_null(strstr(text, "/ok"));
    assert_non_null(strstr(text, "level=warning event=x msg=kept"));
    assert_non_null(strstr(text,
                           "level=error event=access method=GET "
                           "path=/broken status=500"));
    free(text);
    cfs_log_close();
}

/* A rotated file is let go on reopen; the next line starts a new one. */
static void test_log_reopen(void **state)
{
    char *old, *new;

    (void)state;
    unlink(path);
    unlink(rotated);
    assert_int_equal(cfs_log_reopen(), 0); /* stderr: nothing to do */
    assert_int_equal(cfs_log_open_file(path), 0);
    cfs_log(CFS_LOG_INFO, "test", "before");
    assert_int_equal(rename(path, rotated), 0);
    cfs_log(CFS_LOG_INFO, "test", "between"); /* still the old file */
    assert_int_equal(cfs_log_reopen(), 0);
    cfs_log(CFS_LOG_INFO, "test", "after");
    old = harness_read_file(rotated);
    new = harness_read_file(path);
    assert_non_null(strstr(old, "msg=before"));
    assert_non_null(strstr(old, "msg=between"));
    assert_null(strstr(old, "msg=after"));
    assert_non_null(strstr(new, "msg=after"));
    assert_int_equal(count_lines(new), 1);
    free(old);
    free(new);
    cfs_log_close();
    assert_int_equal(cfs_log_open_file("/nonexistent/dir/log"), -ENOENT);
}

/* Each request leaves one access line: method, path as sent, status,
 * bytes, microseconds, principal. */
static void test_log_access_lines(void **state)
{
    struct http_resp r;
    char *text;

    (void)state;
    unlink(path);
    assert_int_equal(cfs_log_open_file(path), 0);
    expect_healthy();
    http(&r, "GET", "/api/v1/config/a%20b/..", NULL, 0, NULL);
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/nope", NULL, 0, NULL);
    http_resp_done(&r);
    /* A request's line is written when libmicrohttpd reports it
     * completed, which may come after the client has its answer and a
     * later request on another worker has been logged: wait for each. */
    free(wait_for(path,
                  "event=access method=GET path=/healthz "
                  "status=200 bytes=15 us="));
    free(wait_for(path, "path=/api/v1/config/a%20b/.. status=400"));
    text = wait_for(path,
                    "method=DELETE path=/api/v1/config/nope "
                    "status=404");
    assert_non_null(strstr(text, "principal=anonymous\n"));
    assert_int_equal(count_lines(text), 3);
    free(text);
    cfs_log_close();
}

/* configfsd --log-file: SIGHUP reopens it, so a rotated file is let go;
 * without --log-file SIGHUP changes nothing. */
static void test_log_configfsd_sighup(void **state)
{
    const char *args[] = {
        "--listen", "127.0.0.1:0", "--no-samples", "--log-file", path, NULL};
    static const char *const plain[] = {
        "--listen", "127.0.0.1:0", "--no-samples", NULL};
    struct harness_proc p;
    struct http_resp r;
    char *text;

    (void)state;
    unlink(path);
    unlink(rotated);
    assert_int_equal(harness_spawn(args, NULL, path, &p), 0);
    harness_target(p.port, NULL);
    expect_healthy();
    free(wait_for(path, "path=/healthz"));
    assert_int_equal(rename(path, rotated), 0);
    assert_int_equal(kill(p.pid, SIGHUP), 0);
    for (int i = 0; i < 500 && access(path, F_OK) != 0; i++) {
        usleep(10 * 1000);
    }
    http(&r, "GET", "/api/v1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    text = wait_for(path, "path=/api/v1 ");
    assert_null(strstr(text, "path=/healthz"));
    free(text);
    text = harness_read_file(rotated);
    assert_non_null(strstr(text, "listening on http://127.0.0.1:0"));
    assert_null(strstr(text, "path=/api/v1 "));
    free(text);
    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);

    assert_int_equal(harness_spawn(plain, NULL, NULL, &p), 0);
    assert_int_equal(kill(p.pid, SIGHUP), 0);
    harness_target(p.port, NULL);
    expect_healthy();
    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);

    /* SIGTERM right behind SIGHUP still stops it */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(harness_spawn(plain, NULL, NULL, &p), 0);
        assert_int_equal(kill(p.pid, SIGHUP), 0);
        assert_int_equal(harness_reap(&p), 0);
    }
}

/* A start-up failure inside libmicrohttpd (the port is taken) is logged
 * as an error in its own words, naming the address and port asked for
 * (not the "port 0" libmicrohttpd was handed), and configfsd exits 1. */
static void test_log_start_failure(void **state)
{
    char listen[32], *err;
    const char *args[] = {"--listen", listen, "--no-samples", NULL};
    const char *json_args[] = {
        "--listen", listen, "--no-samples", "--log-format", "json", NULL};
    static const char *const bad[] = {"--log-format", "yaml", NULL};

    (void)state;
    (void)snprintf(listen, sizeof(listen), "127.0.0.1:%u", harness_port());
    assert_int_equal(harness_run(args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "level=error event=mhd msg=\"Failed to bind"));
    assert_non_null(strstr(err, listen));
    {
        char want[96];

        (void)snprintf(want, sizeof(want), "Failed to bind to %s: ", listen);
        assert_non_null(strstr(err, want));
    }
    assert_null(strstr(err, "port 0"));
    assert_non_null(strstr(err,
                           "level=error event=start msg=\"Failed to "
                           "serve on"));
    free(err);
    assert_int_equal(harness_run(json_args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err,
                           "\"level\":\"error\",\"event\":\"start\","
                           "\"msg\":\"Failed to serve on"));
    free(err);
    assert_int_equal(harness_run(bad, NULL, NULL, NULL, &err, 10), 2);
    assert_non_null(strstr(err, "--log-format is logfmt or json"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_line_format),
        cmocka_unit_test(test_log_json_format),
        cmocka_unit_test(test_log_level_filter),
        cmocka_unit_test(test_log_reopen),
        cmocka_unit_test(test_log_access_lines),
        cmocka_unit_test(test_log_configfsd_sighup),
        cmocka_unit_test(test_log_start_failure),
    };

    return cmocka_run_group_tests_name("http-log", tests, setup, teardown);
}
