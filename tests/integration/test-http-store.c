// SPDX-License-Identifier: MIT
/*
 * test-http-store.c - a server with a database: a restart keeps the tree
 * (replayed through the callbacks), history answers newest first, export
 * reproduces the written state, and readiness reports no problems.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char dir[] = "/tmp/cfs-http-store-XXXXXX";
static char db[128];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir)) {
        return -1;
    }
    (void)snprintf(db, sizeof(db), "%s/t.db", dir);
    return harness_start_db(db);
}

static int teardown(void **state)
{
    char cmd[256];

    harness_stop(state);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void test_store_restart_keeps_tree(void **state)
{
    struct http_resp r, before, after;

    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"kept\",\"attributes\":{\"storeme\":\"31\"}}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/04-committable-children/pending",
              "{\"name\":\"c\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/c\","
              "\"to\":\"/04-committable-children/live/c\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&before, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_int_equal(before.status, 200);

    assert_int_equal(harness_stop(state), 0);
    assert_int_equal(harness_start_db(db), 0);

    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/kept/storeme",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "31\n"); /* replayed through store() */
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/04-committable-children/live/c/committed",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "1\n"); /* commit_item ran again */
    http_resp_done(&r);
    http(&after, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_true(json_equal(before.json, after.json));
    http_resp_done(&before);
    http_resp_done(&after);
    http(&r, "GET", "/readyz", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
}

static void test_store_history_newest_first(void **state)
{
    struct http_resp r;
    json_t *entries;

    (void)state;
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/kept/storeme",
         "32",
         2,
         NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/history?path=/02-simple-children/kept&limit=2",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    entries = json_object_get(r.json, "entries");
    assert_int_equal(json_array_size(entries), 2);
    assert_string_equal(jstr(json_array_get(entries, 0), "value"), "32");
    assert_string_equal(jstr(json_array_get(entries, 0), "old"), "31");
    assert_true(json_integer_value(
                    json_object_get(json_array_get(entries, 0), "revision")) >
                json_integer_value(
                    json_object_get(json_array_get(entries, 1), "revision")));
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/history?limit=0", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
}

/* export -> change -> import restores the export; a no-op import adds
 * no revision; dry_run changes nothing. */
static void test_store_export_import_round_trip(void **state)
{
    struct http_resp ex, r, now;
    char *doc;
    json_int_t rev;
    static const char *const json_hdr[] = {"Content-Type: application/json",
                                           NULL};

    (void)state;
    http(&ex, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_int_equal(ex.status, 200);
    doc = json_dumps(ex.json, JSON_COMPACT);

    /* unchanged tree: empty plan, no new revision */
    rev = json_integer_value(json_object_get(ex.json, "revision"));
    http(&r, "POST", "/api/v1/import?mode=replace", doc, strlen(doc), json_hdr);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "ops")), 0);
    assert_int_equal(json_integer_value(json_object_get(r.json, "revision")),
                     rev);
    http_resp_done(&r);

    /* change the tree, then a dry run plans without changing */
    http(&r, "DELETE", "/api/v1/config/02-simple-children/kept", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"extra\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r,
         "POST",
         "/api/v1/import?mode=replace&dry_run=1",
         doc,
         strlen(doc),
         json_hdr);
    assert_int_equal(r.status, 200);
    assert_true(json_array_size(json_object_get(r.json, "ops")) >= 3);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/02-simple-children/extra", NULL, 0, NULL);
    assert_int_equal(r.status, 200); /* still there */
    http_resp_done(&r);

    /* replace: back to the export, as one revision */
    http(&r, "POST", "/api/v1/import?mode=replace", doc, strlen(doc), json_hdr);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&now, "GET", "/api/v1/export", NULL, 0, NULL);
    json_object_del(now.json, "revision");
    json_object_del(ex.json, "revision");
    assert_true(json_equal(now.json, ex.json));
    http_resp_done(&now);
    http_resp_done(&ex);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_restart_keeps_tree),
        cmocka_unit_test(test_store_history_newest_first),
        cmocka_unit_test(test_store_export_import_round_trip),
    };

    return cmocka_run_group_tests_name("http-store", tests, setup, teardown);
}
