// SPDX-License-Identifier: MIT
/*
 * test-http-fault.c - a commit that fails under a request (the disk fails
 * the log's fsync, injected below SQLite by the fault VFS): the client gets
 * 503 problem+json with the errno, the change is undone in the tree, kept
 * out of the history, counted in /metrics, and the next request works.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_put_answers_503_and_undoes),
        cmocka_unit_test(test_fault_post_batch_undone),
    };

    return cmocka_run_group_tests_name("http-fault", tests, setup, teardown);
}
