// SPDX-License-Identifier: MIT
/*
 * test-http-api.c - the served contract and the response shapes the other
 * integration tests do not reach: /api/v1/openapi.yaml is the file of the
 * source tree, and one request for each documented shape of the routes that
 * exist (attribute JSON, links, depth, values=0, HEAD, 405s), so that
 * integration.openapi-responses checks each of them against the spec.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void
expect_header(const struct http_resp *r, const char *name, const char *value)
{
    char *v = http_header(r, name);

    assert_non_null(v);
    assert_string_equal(v, value);
    free(v);
}

/* The served file is byte for byte the one in the source tree. */
static void test_api_openapi_served(void **state)
{
    struct http_resp r;
    FILE *f = fopen(CFS_SOURCE_ROOT "/api/openapi.yaml", "rb");
    char *file;
    long len;

    (void)state;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    file = malloc((size_t)len);
    assert_non_null(file);
    assert_int_equal(fread(file, 1, (size_t)len, f), (size_t)len);
    assert_int_equal(fclose(f), 0);

    http(&r, "GET", "/api/v1/openapi.yaml", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Type", "application/yaml");
    assert_int_equal(r.len, (size_t)len);
    assert_memory_equal(r.body, file, (size_t)len);
    assert_non_null(strstr(r.body, "\nopenapi: 3.1."));
    http_resp_done(&r);
    free(file);

    http(&r, "HEAD", "/api/v1/openapi.yaml", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    http_resp_done(&r);

    http(&r, "PUT", "/api/v1/openapi.yaml", "x", 1, NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    expect_header(&r, "Allow", "GET, HEAD");
    http_resp_done(&r);
}

static void test_api_service_routes(void **state)
{
    struct http_resp r;

    (void)state;
    http(&r, "GET", "/api/v1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), "configfsd");
    assert_true(json_is_array(json_object_get(r.json, "subsystems")));
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1", NULL, 0, NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    http_resp_done(&r);
    http(&r, "GET", "/healthz", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config", NULL, 0, NULL); /* the root, too */
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "root");
    http_resp_done(&r);
    http(&r, "PATCH", "/api/v1/config/", NULL, 0, NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/schema/bad%2Fname", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http(&r, "POST", "/api/v1/schema/fakenbd", NULL, 0, NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    http_resp_done(&r);
}

/* ls -R, ls without reading, HEAD, and bad query values. */
static void test_api_node_shapes(void **state)
{
    struct http_resp r;
    json_t *pending;

    (void)state;
    http(&r,
         "GET",
         "/api/v1/config/04-committable-children?depth=2",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    pending = json_array_get(json_object_get(r.json, "children"), 0);
    assert_string_equal(jstr(pending, "name"), "pending");
    assert_non_null(json_object_get(pending, "attributes")); /* a whole node */
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/config/01-childless?values=0", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_null(json_object_get(
        json_array_get(json_object_get(r.json, "attributes"), 0), "value"));
    http_resp_done(&r);

    http(&r, "HEAD", "/api/v1/config/01-childless", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/config/01-childless?depth=65", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/01-childless?values=2", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
}

/* cat as JSON, echo > as JSON and as base64, and the 405s of DESIGN 8. */
static void test_api_attribute_shapes(void **state)
{
    static const char *const json_accept[] = {"Accept: application/json", NULL};
    static const char *const json_ct[] = {"Content-Type: application/json",
                                          NULL};
    struct http_resp r;

    (void)state;
    http(
        &r, "GET", "/api/v1/config/01-childless/storeme", NULL, 0, json_accept);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "attribute");
    http_resp_done(&r);

    http(&r,
         "PUT",
         "/api/v1/config/01-childless/storeme",
         "{\"value\":7}",
         11,
         json_ct);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "7");
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/01-childless/storeme",
         "{\"value\":\"OA==\",\"encoding\":\"base64\"}",
         36,
         json_ct);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "8");
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/01-childless/storeme",
         "{\"value\":1,\"target\":\"/01-childless\"}",
         36,
         json_ct);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/config/01-childless/showme", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    http_json(&r, "POST", "/api/v1/config/01-childless/storeme", "{}");
    expect_problem(&r, 405, "EOPNOTSUPP");
    expect_header(&r, "Allow", "GET, HEAD, PUT");
    http_resp_done(&r);
    http(&r, "PUT", "/api/v1/config/01-childless", "1", 1, NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    http_resp_done(&r);
}

/* ln -s, readlink, rm: a USB configuration linking a function. */
static void test_api_link_shapes(void **state)
{
    static const char *const json_ct[] = {"Content-Type: application/json",
                                          NULL};
    static const char target[] =
        "{\"target\":\"/usb_gadget/g1/functions/ncm.usb0\"}";
    struct http_resp r;
    char *loc;

    (void)state;
    http_json(&r, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"g1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/g1/functions",
              "{\"name\":\"ncm.usb0\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/g1/configs",
              "{\"name\":\"c.1\",\"attributes\":{\"MaxPower\":120}}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);

    http(&r,
         "PUT",
         "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
         target,
         strlen(target),
         json_ct);
    assert_int_equal(r.status, 201);
    assert_string_equal(jstr(r.json, "kind"), "link");
    loc = http_header(&r, "Location");
    assert_string_equal(loc,
                        "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0");
    free(loc);
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
         target,
         strlen(target),
         json_ct);
    expect_problem(&r, 409, "EEXIST");
    http_resp_done(&r);

    http(&r,
         "GET",
         "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "target"),
                        "/usb_gadget/g1/functions/ncm.usb0");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/usb_gadget/g1/configs/c.1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "links")), 1);
    http_resp_done(&r);
    /* the function is linked: rmdir is EBUSY (RM6) */
    http(&r,
         "DELETE",
         "/api/v1/config/usb_gadget/g1/functions/ncm.usb0",
         NULL,
         0,
         NULL);
    expect_problem(&r, 409, "EBUSY");
    http_resp_done(&r);

    http(&r,
         "DELETE",
         "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    http_json(
        &r,
        "POST",
        "/api/v1/batch",
        "{\"ops\":["
        "{\"op\":\"rmdir\",\"path\":\"/usb_gadget/g1/configs/c.1\"},"
        "{\"op\":\"rmdir\",\"path\":\"/usb_gadget/g1/functions/ncm.usb0\"},"
        "{\"op\":\"rmdir\",\"path\":\"/usb_gadget/g1\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_openapi_served),
        cmocka_unit_test(test_api_service_routes),
        cmocka_unit_test(test_api_node_shapes),
        cmocka_unit_test(test_api_attribute_shapes),
        cmocka_unit_test(test_api_link_shapes),
    };

    return cmocka_run_group_tests_name(
        "http-api", tests, harness_start, harness_stop);
}
