// SPDX-License-Identifier: MIT
/*
 * test-http-fault.c - a commit that fails under a request (the disk fails
 * the log's fsync, injected below SQLite by the fault VFS): the client gets
 * 503 problem+json with the errno, the change is undone in the tree, kept
 * out of the history, counted in /metrics, and the next request works.
 * And the promise of committed reads (docs/DESIGN.md): while such a commit
 * is held open, no reader - a GET of the attribute, its value, its node,
 * a listing, the event stream - sees the change or an ETag naming it.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../unit/fault-vfs.h"
#include "harness.h"

static int setup(void **state)
{
    static char db[128];

    (void)state;
    if (harness_tmpdb("fault", "db", db, sizeof(db)) < 0) {
        return -1;
    }
    fault_vfs_register();
    fault_vfs_clear();
    harness_store_vfs = FAULT_VFS_NAME;
    return harness_start_db(db);
}

static int teardown(void **state)
{
    fault_vfs_clear();
    harness_stop(state);
    return harness_tmpdb_remove();
}

static void put_value(const char *path, const char *value, long want)
{
    struct http_resp r;

    http(&r, "PUT", path, value, strlen(value), NULL);
    assert_int_equal(r.status, want);
    http_resp_done(&r);
}

static void expect_body(const char *path, const char *want)
{
    struct http_resp r;

    http(&r, "GET", path, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, want);
    http_resp_done(&r);
}

static long metric(const char *name)
{
    struct http_resp r;
    const char *p;
    long v = -1;

    http(&r, "GET", "/metrics", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    p = strstr(r.body, name);
    while (p && p > r.body && p[-1] != '\n') {
        p = strstr(p + 1, name); /* skip the HELP and TYPE lines */
    }
    assert_non_null(p);
    v = strtol(p + strlen(name), NULL, 10);
    http_resp_done(&r);
    return v;
}

#define STOREME "/api/v1/config/01-childless/storeme"

/* echo > fails on the disk: 503 EIO, the old value stays, nothing in the
 * history, the failure counted; the next write is stored. */
static void test_fault_put_answers_503_and_undoes(void **state)
{
    struct http_resp r;
    long failures = metric("configfsd_commit_failures_total ");

    (void)state;
    put_value(STOREME, "5", 200);
    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, 0);
    http(&r, "PUT", STOREME, "6", 1, NULL);
    expect_problem(&r, 503, "EIO");
    assert_non_null(
        strstr(json_string_value(json_object_get(r.json, "detail")), "undone"));
    http_resp_done(&r);
    assert_int_equal(fault_vfs_hits(), 1);
    expect_body(STOREME, "5\n");

    http(&r,
         "GET",
         "/api/v1/history?path=/01-childless/storeme&limit=1",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(r.json, "entries"), 0), "value")),
        "5");
    http_resp_done(&r);
    assert_int_equal(metric("configfsd_commit_failures_total "), failures + 1);

    put_value(STOREME, "7", 200);
    expect_body(STOREME, "7\n");
}

/* A mkdir with attributes (one batch) fails on the disk: nothing of it is
 * left, and the same request then succeeds. */
static void test_fault_post_batch_undone(void **state)
{
    static const char body[] =
        "{\"name\":\"f\",\"attributes\":{\"storeme\":\"9\"}}";
    struct http_resp r;

    (void)state;
    fault_vfs_fail_write(0, SQLITE_FULL, false);
    http_json(&r, "POST", "/api/v1/config/02-simple-children", body);
    expect_problem(&r, 503, "ENOSPC");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/02-simple-children/f", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);

    http_json(&r, "POST", "/api/v1/config/02-simple-children", body);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    expect_body("/api/v1/config/02-simple-children/f/storeme", "9\n");
    http(&r, "DELETE", "/api/v1/config/02-simple-children/f", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* ---- committed reads ------------------------------------------------------
 */

struct reader {
    pthread_t thread;
    const char *path;
    int rc;
    struct http_resp r;
};

static void *read_one(void *arg)
{
    struct reader *rd = arg;

    rd->rc = http_try(&rd->r, "GET", rd->path, NULL, 0, NULL);
    return NULL;
}

static struct http_resp held_put;
static void *post_held(void *arg)
{
    const char *body = arg;

    (void)http_try(
        &held_put,
        "POST",
        "/api/v1/config/02-simple-children",
        body,
        strlen(body),
        (const char *const[]){"Content-Type: application/json", NULL});
    return NULL;
}

static void *put_held(void *arg)
{
    const char *const *pv = arg;

    (void)http_try(&held_put, "PUT", pv[0], pv[1], strlen(pv[1]), NULL);
    return NULL;
}

/* Wait (bounded) until @name's sample is @want. */
static void wait_metric(const char *name, long want)
{
    for (int i = 0; i < 3000 && metric(name) != want; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    assert_int_equal(metric(name), want);
}

/* Until the held sync is reached: the change is in the tree, not on disk. */
static void wait_fault_hit(int before)
{
    for (int i = 0; i < 3000 && fault_vfs_hits() == before; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    assert_int_equal(fault_vfs_hits(), before + 1);
}

/* Hold the commit of the write @writer(@arg) makes open (the fault VFS),
 * send the @n reads of @rd meanwhile, see each held, then fail the commit:
 * the write is 503 EIO and each read answered (its result in @rd). */
static void hold_write_and_read(void *(*writer)(void *),
                                void *arg,
                                struct reader *rd,
                                size_t n)
{
    pthread_t put;
    int hits = fault_vfs_hits();

    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, FAULT_VFS_HOLD);
    assert_int_equal(pthread_create(&put, NULL, writer, arg), 0);
    wait_fault_hit(hits);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pthread_create(&rd[i].thread, NULL, read_one, &rd[i]),
                         0);
    }
    /* every read is in, its answer held */
    wait_metric("configfsd_reads_held ", (long)n);
    fault_vfs_release();
    assert_int_equal(pthread_join(put, NULL), 0);
    expect_problem(&held_put, 503, "EIO");
    http_resp_done(&held_put);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pthread_join(rd[i].thread, NULL), 0);
        assert_int_equal(rd[i].rc, 0);
    }
}

/* A store whose commit fails after it ran in the tree: every reader that
 * came while it was pending is answered with the committed value and its
 * ETag, never the undone one; so is the event stream. */
static void test_committed_read_never_sees_undone_store(void **state)
{
    static const char *const pv[] = {STOREME, "66"};
    static const char *const paths[] = {
        STOREME,
        "/api/v1/value/01-childless/storeme",
        "/api/v1/node/01-childless",
        "/api/v1/config/01-childless",
    };
    enum { N = sizeof(paths) / sizeof(paths[0]) };
    struct reader rd[N];
    char *old_etag, buf[8192];
    bool eof = false;
    int sse;
    static const char sse_req[] =
        "GET /api/v1/events HTTP/1.1\r\n"
        "Host: x\r\nAccept: text/event-stream\r\n\r\n";

    (void)state;
    put_value(STOREME, "5", 200);
    old_etag = http_etag(STOREME);
    sse = raw_connect();
    raw_send(sse, sse_req, sizeof(sse_req) - 1);
    assert_true(raw_read_for(sse, buf, sizeof(buf), "\r\n\r\n", 10000, &eof) >
                0);

    for (size_t i = 0; i < N; i++) {
        memset(&rd[i], 0, sizeof(rd[i]));
        rd[i].path = paths[i];
    }
    hold_write_and_read(put_held, (void *)pv, rd, N);
    for (size_t i = 0; i < N; i++) {
        char *e;

        assert_int_equal(rd[i].r.status, 200);
        assert_null(strstr(rd[i].r.body, "66"));
        e = http_header(&rd[i].r, "ETag");
        if (i < 2) {
            assert_non_null(strstr(rd[i].r.body, "5"));
            assert_non_null(e);
            assert_string_equal(e, old_etag);
        }
        free(e);
        http_resp_done(&rd[i].r);
    }
    assert_int_equal(metric("configfsd_reads_held "), 0);

    /* the stream: the next committed value, and never the undone one */
    put_value(STOREME, "77", 200);
    assert_true(raw_read_for(sse, buf, sizeof(buf), "77", 10000, &eof) > 0);
    assert_null(strstr(buf, "66"));
    close(sse);
    free(old_etag);
}

/* A mkdir whose commit fails: while it is pending, the parent's listing
 * does not show the child and the child is not found. */
static void test_committed_read_never_sees_undone_mkdir(void **state)
{
    static const char *const paths[] = {
        "/api/v1/config/02-simple-children",
        "/api/v1/config/02-simple-children/ghost",
        "/api/v1/node/02-simple-children",
    };
    enum { N = sizeof(paths) / sizeof(paths[0]) };
    struct reader rd[N];
    static const char body[] = "{\"name\":\"ghost\"}";

    (void)state;
    for (size_t i = 0; i < N; i++) {
        memset(&rd[i], 0, sizeof(rd[i]));
        rd[i].path = paths[i];
    }
    hold_write_and_read(post_held, (void *)body, rd, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(rd[i].r.status, i == 1 ? 404 : 200);
        if (i != 1) {
            assert_null(strstr(rd[i].r.body, "\"ghost\""));
        }
        http_resp_done(&rd[i].r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_put_answers_503_and_undoes),
        cmocka_unit_test(test_fault_post_batch_undone),
        cmocka_unit_test(test_committed_read_never_sees_undone_store),
        cmocka_unit_test(test_committed_read_never_sees_undone_mkdir),
    };

    return cmocka_run_group_tests_name("http-fault", tests, setup, teardown);
}
