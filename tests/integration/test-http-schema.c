// SPDX-License-Identifier: MIT
/*
 * test-http-schema.c - declarative subsystems over HTTP: the FakeNBD tree
 * built the way its documentation does (mkdir in pending/, set target and
 * device, commit by rename), refusals that name the rule, and the
 * machine-readable description of the types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_schema_description_served(void **state)
{
    struct http_resp r;
    json_t *types;

    (void)state;
    http(&r, "GET", "/api/v1/schema/fakenbd", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    types = json_object_get(r.json, "types");
    assert_non_null(json_object_get(types, "disk"));
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/schema/no-such-subsystem", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    /* a C subsystem has no declarative description */
    http(&r, "GET", "/api/v1/schema/01-childless", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
}

static void test_schema_fakenbd_commit_flow(void **state)
{
    struct http_resp r;

    (void)state;
    http_json(
        &r, "POST", "/api/v1/config/fakenbd/pending", "{\"name\":\"disk1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);

    /* a refused store names the rule it broke */
    http(&r,
         "PUT",
         "/api/v1/config/fakenbd/pending/disk1/device",
         "sda",
         3,
         NULL);
    expect_problem(&r, 422, "EINVAL");
    assert_non_null(strstr(jstr(r.json, "detail"), "^/dev/"));
    http_resp_done(&r);

    /* commit refused until target and device are set */
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/fakenbd/pending/disk1\","
              "\"to\":\"/fakenbd/live/disk1\"}");
    expect_problem(&r, 422, "EINVAL");
    assert_non_null(strstr(jstr(r.json, "detail"), "target"));
    http_resp_done(&r);

    http(&r,
         "PUT",
         "/api/v1/config/fakenbd/pending/disk1/target",
         "10.0.0.1\n",
         9,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "10.0.0.1");
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/fakenbd/pending/disk1/device",
         "/dev/sda\n",
         9,
         NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/fakenbd/pending/disk1\","
              "\"to\":\"/fakenbd/live/disk1\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "type"), "disk");
    http_resp_done(&r);

    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/fakenbd/live/disk1\","
              "\"to\":\"/fakenbd/pending/disk1\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/fakenbd/pending/disk1", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_description_served),
        cmocka_unit_test(test_schema_fakenbd_commit_flow),
    };

    return cmocka_run_group_tests_name(
        "http-schema", tests, harness_start, harness_stop);
}
