// SPDX-License-Identifier: MIT
/*
 * test-http-config.c - the configuration routes of docs/DESIGN.md §4 over
 * real HTTP: each route, each error status, If-Match and batch atomicity,
 * against the built-in samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static json_t *find_named(json_t *array, const char *name)
{
    size_t i;
    json_t *v;

    json_array_foreach(array, i, v) {
        if (strcmp(jstr(v, "name"), name) == 0) {
            return v;
        }
    }
    return NULL;
}

/* GET /api/v1/config/ is the root node: the subsystems as children. */
static void test_config_root_lists_subsystems(void **state)
{
    struct http_resp r;

    (void)state;
    http(&r, "GET", "/api/v1/config/", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "root");
    assert_string_equal(jstr(r.json, "path"), "/");
    assert_non_null(
        find_named(json_object_get(r.json, "children"), "02-simple-children"));
    assert_int_equal(json_array_size(json_object_get(r.json, "attributes")), 0);
    http_resp_done(&r);
}

/* mkdir -> POST; echo > -> PUT; cat -> GET; rmdir -> DELETE. */
static void test_config_item_life_cycle(void **state)
{
    struct http_resp r;
    char *loc, *etag;
    json_t *attr;

    (void)state;
    http_json(
        &r, "POST", "/api/v1/config/02-simple-children", "{\"name\":\"life\"}");
    assert_int_equal(r.status, 201);
    loc = http_header(&r, "Location");
    assert_string_equal(loc, "/api/v1/config/02-simple-children/life");
    free(loc);
    assert_string_equal(jstr(r.json, "kind"), "item");
    assert_string_equal(jstr(r.json, "path"), "/02-simple-children/life");
    attr = find_named(json_object_get(r.json, "attributes"), "storeme");
    assert_non_null(attr);
    assert_string_equal(jstr(attr, "mode"), "0644");
    http_resp_done(&r);

    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/life/storeme",
         "42\n",
         3,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "42");
    etag = http_header(&r, "ETag");
    assert_non_null(etag);
    http_resp_done(&r);

    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/life/storeme",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "42\n"); /* raw show() output */
    {
        char *e2 = http_header(&r, "ETag");

        assert_string_equal(e2, etag);
        free(e2);
    }
    http_resp_done(&r);
    free(etag);

    http(&r, "DELETE", "/api/v1/config/02-simple-children/life", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/02-simple-children/life", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
}

static void test_config_errors(void **state)
{
    struct http_resp r;
    char *allow;
    static const char *const text[] = {"Content-Type: text/plain", NULL};

    (void)state;
    /* 400: "..", however spelled (docs/DESIGN.md §9: "%2F" separates
     * names, and each decoded name is checked) */
    http(
        &r, "GET", "/api/v1/config/02-simple-children%2F%2E%2E", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    /* 400: a bad name in the body */
    http_json(
        &r, "POST", "/api/v1/config/02-simple-children", "{\"name\":\"..\"}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    /* 400: malformed JSON */
    http_json(&r, "POST", "/api/v1/config/02-simple-children", "{\"name\":");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    /* 415: mkdir needs JSON */
    http(&r, "POST", "/api/v1/config/02-simple-children", "x", 1, text);
    expect_problem(&r, 415, "EINVAL");
    http_resp_done(&r);
    /* 409: EEXIST */
    http_json(
        &r, "POST", "/api/v1/config/02-simple-children", "{\"name\":\"dup\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(
        &r, "POST", "/api/v1/config/02-simple-children", "{\"name\":\"dup\"}");
    expect_problem(&r, 409, "EEXIST");
    http_resp_done(&r);
    /* 403: mkdir in an item (MK4) */
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children/dup",
              "{\"name\":\"x\"}");
    expect_problem(&r, 403, "EPERM");
    http_resp_done(&r);
    /* 405 with Allow: DELETE on an attribute */
    http(&r,
         "DELETE",
         "/api/v1/config/02-simple-children/dup/storeme",
         NULL,
         0,
         NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    allow = http_header(&r, "Allow");
    assert_string_equal(allow, "GET, HEAD, PUT");
    free(allow);
    http_resp_done(&r);
    /* 403: rmdir of a subsystem, and of the root */
    http(&r, "DELETE", "/api/v1/config/02-simple-children", NULL, 0, NULL);
    expect_problem(&r, 403, "EPERM");
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/", NULL, 0, NULL);
    expect_problem(&r, 403, "EPERM");
    http_resp_done(&r);
    /* 403: writing a read-only attribute (RD1) */
    http(&r, "PUT", "/api/v1/config/01-childless/description", "x", 1, NULL);
    expect_problem(&r, 403, "EACCES");
    http_resp_done(&r);
    /* 413: a value of 4096 bytes (WR3) */
    {
        char big[4096];

        memset(big, '1', sizeof(big));
        http(&r,
             "PUT",
             "/api/v1/config/02-simple-children/dup/storeme",
             big,
             sizeof(big),
             NULL);
        expect_problem(&r, 413, "EFBIG");
        http_resp_done(&r);
    }
    /* 422: store() refuses the value */
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/dup/storeme",
         "abc",
         3,
         NULL);
    assert_true(r.status == 422);
    http_resp_done(&r);
    /* 404 */
    http(&r, "GET", "/api/v1/nothing", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/02-simple-children/dup", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

static void test_config_if_match(void **state)
{
    struct http_resp r;
    static const char *const stale[] = {"If-Match: \"1\"", NULL};
    char hdr[64];
    const char *fresh[] = {hdr, NULL};
    char *etag;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"im\",\"attributes\":{\"storeme\":\"5\"}}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/im/storeme",
         NULL,
         0,
         NULL);
    assert_string_equal(r.body, "5\n");
    etag = http_header(&r, "ETag");
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/im/storeme",
         "6",
         1,
         stale);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    (void)snprintf(hdr, sizeof(hdr), "If-Match: %s", etag);
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/im/storeme",
         "6",
         1,
         fresh);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    free(etag);
    http(&r, "DELETE", "/api/v1/config/02-simple-children/im", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* A failed batch leaves the tree exactly as it was. */
static void test_config_batch_all_or_nothing(void **state)
{
    struct http_resp before, after, r;

    (void)state;
    http(&before,
         "GET",
         "/api/v1/config/02-simple-children?depth=2",
         NULL,
         0,
         NULL);
    assert_int_equal(before.status, 200);
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":["
              "{\"op\":\"mkdir\",\"path\":\"/02-simple-children/b1\"},"
              "{\"op\":\"store\",\"path\":\"/02-simple-children/b1/storeme\","
              "\"value\":\"7\"},"
              "{\"op\":\"mkdir\",\"path\":\"/02-simple-children/b1\"}]}");
    expect_problem(&r, 409, "EEXIST");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     2);
    http_resp_done(&r);
    http(&after,
         "GET",
         "/api/v1/config/02-simple-children?depth=2",
         NULL,
         0,
         NULL);
    assert_true(json_equal(before.json, after.json));
    http_resp_done(&before);
    http_resp_done(&after);

    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":["
              "{\"op\":\"mkdir\",\"path\":\"/02-simple-children/b1\"},"
              "{\"op\":\"store\",\"path\":\"/02-simple-children/b1/storeme\","
              "\"value\":\"7\"},"
              "{\"op\":\"rmdir\",\"path\":\"/02-simple-children/b1\"}]}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "results")), 3);
    assert_true(json_integer_value(json_object_get(r.json, "revision")) > 0);
    http_resp_done(&r);
}

/* rename commits an item: pending/ -> live/ (C8); the sample refuses
 * stores while committed. */
static void test_config_rename_commits(void **state)
{
    struct http_resp r;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/04-committable-children/pending",
              "{\"name\":\"c1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/c1\","
              "\"to\":\"/04-committable-children/live/c1\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "path"),
                        "/04-committable-children/live/c1");
    http_resp_done(&r);
    http(&r,
         "DELETE",
         "/api/v1/config/04-committable-children/live/c1",
         NULL,
         0,
         NULL);
    expect_problem(&r, 403, "EPERM"); /* C6 */
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/live/c1\","
              "\"to\":\"/04-committable-children/pending/c1\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r,
         "DELETE",
         "/api/v1/config/04-committable-children/pending/c1",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* POST @json to @path with If-Match: @etag (NULL: none). */
static void post_if(struct http_resp *r,
                    const char *path,
                    const char *json,
                    const char *etag)
{
    char im[64];
    const char *hdrs[] = {"Content-Type: application/json", im, NULL};

    (void)snprintf(im, sizeof(im), "If-Match: %s", etag ? etag : "*");
    http(r, "POST", path, json, strlen(json), hdrs);
}

/* The subtrees the refusals below could touch (the whole tree would not
 * do: 01-childless/showme counts its reads). */
static void snapshot(struct http_resp *r)
{
    struct http_resp a, b;

    http(&a, "GET", "/api/v1/config/02-simple-children?depth=2", NULL, 0, NULL);
    http(&b,
         "GET",
         "/api/v1/config/04-committable-children?depth=3",
         NULL,
         0,
         NULL);
    assert_int_equal(a.status, 200);
    assert_int_equal(b.status, 200);
    *r = a;
    r->json = json_pack("[OO]", a.json, b.json);
    json_decref(a.json);
    http_resp_done(&b);
}

/* The refusals of rename, batch and DELETE, each with its status and
 * errno, and the tree exactly as before every one of them. */
static void test_config_refusals_keep_tree(void **state)
{
    static const char *const stale[] = {"If-Match: \"999999\"", NULL};
    static const char move[] = "{\"from\":\"/04-committable-children/pending/"
                               "rf\",\"to\":\"/04-committable-children/"
                               "live/rf\"}";
    struct http_resp before, after, r;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/04-committable-children/pending",
              "{\"name\":\"rf\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    snapshot(&before);

    /* rename: no such source (404), a stale If-Match (412) */
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/none\","
              "\"to\":\"/04-committable-children/live/none\"}");
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    post_if(&r, "/api/v1/rename", move, "\"999999\"");
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);

    /* batch: an op on nothing (404), a value the attribute refuses after
     * a mkdir that must not stay (422), a stale If-Match (412) */
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"store\",\"path\":"
              "\"/02-simple-children/none/storeme\",\"value\":\"1\"}]}");
    expect_problem(&r, 404, "ENOENT");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     0);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":"
              "\"/02-simple-children/rf\"},{\"op\":\"store\",\"path\":"
              "\"/02-simple-children/rf/storeme\",\"value\":\"x\"}]}");
    expect_problem(&r, 422, "EINVAL");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     1);
    http_resp_done(&r);
    post_if(&r,
            "/api/v1/batch",
            "{\"ops\":[{\"op\":\"mkdir\",\"path\":"
            "\"/02-simple-children/rf\"}]}",
            "\"999999\"");
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);

    /* DELETE with a stale If-Match (412) */
    http(&r,
         "DELETE",
         "/api/v1/config/04-committable-children/pending/rf",
         NULL,
         0,
         stale);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);

    snapshot(&after);
    assert_true(json_equal(before.json, after.json));
    http_resp_done(&before);
    http_resp_done(&after);
    http(&r,
         "DELETE",
         "/api/v1/config/04-committable-children/pending/rf",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* /metrics: Prometheus text with the counters operators watch. */
static void test_config_metrics(void **state)
{
    struct http_resp r;

    (void)state;
    http(&r, "GET", "/metrics", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(
        strstr(r.body, "configfsd_http_requests_total{route=\"config\""));
    assert_non_null(
        strstr(r.body, "configfsd_http_request_duration_seconds_bucket"));
    assert_non_null(strstr(r.body, "configfsd_revision "));
    assert_non_null(strstr(r.body, "configfsd_tree_nodes "));
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_root_lists_subsystems),
        cmocka_unit_test(test_config_item_life_cycle),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_if_match),
        cmocka_unit_test(test_config_batch_all_or_nothing),
        cmocka_unit_test(test_config_rename_commits),
        cmocka_unit_test(test_config_refusals_keep_tree),
        cmocka_unit_test(test_config_metrics),
    };

    return cmocka_run_group_tests_name(
        "http-config", tests, harness_start, harness_stop);
}
