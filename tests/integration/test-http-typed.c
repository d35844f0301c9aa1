// SPDX-License-Identifier: MIT
/*
 * test-http-typed.c - what generated clients rely on (docs/DESIGN.md §9,
 * api/openapi.yaml): "%2F" in a config path separates names like '/' (a
 * generator percent-encodes a path parameter whole), while ".", ".." and
 * control bytes stay refused however they are spelled; the typed routes
 * /api/v1/node, /api/v1/value and /api/v1/link with one media type each
 * way; and the Allow of a 405 names only methods the resource takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *const json_ct[] = {"Content-Type: application/json", NULL};

static void put_json(struct http_resp *r, const char *url, const char *body)
{
    http(r, "PUT", url, body, strlen(body), json_ct);
}

/* The raw value of an attribute, as `cat` shows it. */
static void expect_raw(const char *url, const char *want)
{
    struct http_resp r;

    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, strlen(want));
    assert_memory_equal(r.body, want, r.len);
    http_resp_done(&r);
}

/* "%2F" and "%2f" are separators on every route and method, exactly like
 * '/', and empty names between them are skipped as "a//b" is. */
static void test_typed_encoded_slash_separates(void **state)
{
    struct http_resp r;
    char *loc;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children%2F",
              "{\"name\":\"enc\"}");
    assert_int_equal(r.status, 201);
    assert_string_equal(jstr(r.json, "path"), "/02-simple-children/enc");
    loc = http_header(&r, "Location");
    assert_string_equal(loc, "/api/v1/config/02-simple-children/enc");
    free(loc);
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/config/02-simple-children%2Fenc", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "path"), "/02-simple-children/enc");
    http_resp_done(&r);

    /* a store through the shell form, lower case, a doubled separator */
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children%2f%2Fenc%2Fstoreme",
         "17",
         2,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "path"),
                        "/02-simple-children/enc/storeme");
    http_resp_done(&r);
    expect_raw("/api/v1/config/02-simple-children/enc/storeme", "17\n");

    /* the typed forms, as a generator sends them */
    put_json(&r,
             "/api/v1/value/02-simple-children%2Fenc%2Fstoreme",
             "{\"value\":\"18\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/value/02-simple-children%2Fenc%2Fstoreme",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "18");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/node/02-simple-children%2Fenc", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "item");
    http_resp_done(&r);

    http(
        &r, "DELETE", "/api/v1/config/02-simple-children%2Fenc", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/02-simple-children/enc", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);

    /* decoded once: a name that holds the text "%2F" is "%252F" in a URL,
     * and stays one name */
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"p%2Fq\"}");
    assert_int_equal(r.status, 201);
    loc = http_header(&r, "Location");
    assert_string_equal(loc, "/api/v1/config/02-simple-children/p%252Fq");
    free(loc);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/node/02-simple-children%2Fp%252Fq", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), "p%2Fq");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/node/02-simple-children%2Fp%2Fq", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT"); /* /02-simple-children/p/q */
    http_resp_done(&r);
    http(&r,
         "DELETE",
         "/api/v1/config/02-simple-children/p%252Fq",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* ".", ".." and control bytes are refused with 400 however they are
 * spelled, on every route and method, and nothing changes: a ".." can
 * never climb to a parent or a sibling. */
static void test_typed_dot_and_control_refused(void **state)
{
    static const char *const rests[] = {
        "02-simple-children/dots/..",
        "02-simple-children/dots/%2E%2E",
        "02-simple-children/dots/%2e%2e",
        "02-simple-children/dots%2F..",
        "02-simple-children/dots%2F%2E%2E%2Fstoreme",
        "02-simple-children%2F.%2Fdots",
        "02-simple-children/%2E",
        "02-simple-children/dots/storeme%2F..",
        "02-simple-children/dots%00",
        "02-simple-children/dots%2F%00",
        "02-simple-children/do%01ts",
        "02-simple-children/do%7Fts",
        "02-simple-children/do%1fts/storeme",
    };
    static const char *const prefixes[] = {
        "/api/v1/config/", "/api/v1/node/", "/api/v1/value/", "/api/v1/link/"};
    static const char *const methods[] = {"GET", "PUT", "DELETE", "POST"};
    struct http_resp r;
    char url[256];

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"dots\",\"attributes\":{\"storeme\":\"5\"}}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    for (size_t i = 0; i < sizeof(rests) / sizeof(rests[0]); i++) {
        for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
            for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
                const char *body =
                    strcmp(methods[m], "PUT") == 0    ? "{\"value\":\"6\"}"
                    : strcmp(methods[m], "POST") == 0 ? "{\"name\":\"x\"}"
                                                      : NULL;

                if (p > 0 && strcmp(methods[m], "GET") != 0 &&
                    (p == 1 || strcmp(methods[m], "PUT") != 0)) {
                    continue; /* 405 before the path: the route has no such
                               * method */
                }
                (void)snprintf(url, sizeof(url), "%s%s", prefixes[p], rests[i]);
                http(&r,
                     methods[m],
                     url,
                     body,
                     body ? strlen(body) : 0,
                     body ? json_ct : NULL);
                if (r.status != 400) {
                    fprintf(stderr, "%s %s: %ld\n", methods[m], url, r.status);
                }
                expect_problem(&r, 400, "EINVAL");
                http_resp_done(&r);
            }
        }
    }
    /* the item and its value are as they were, nothing made beside it */
    expect_raw("/api/v1/config/02-simple-children/dots/storeme", "5\n");
    http(&r, "GET", "/api/v1/node/02-simple-children", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "children")), 1);
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/02-simple-children/dots", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* A path of more than CFS_DEPTH_MAX names is refused before the tree
 * (400 ENAMETOOLONG) whichever separator spells it. */
static void test_typed_depth_counts_encoded_slashes(void **state)
{
    char url[1024];
    size_t o;
    struct http_resp r;

    (void)state;
    o = (size_t)snprintf(url, sizeof(url), "/api/v1/node/a");
    for (int i = 1; i < 70; i++) {
        o += (size_t)snprintf(url + o, sizeof(url) - o, "%%2Fa");
    }
    http(&r, "GET", url, NULL, 0, NULL);
    expect_problem(&r, 400, "ENAMETOOLONG");
    http_resp_done(&r);
}

/* GET /api/v1/node: a directory's JSON and nothing else. */
static void test_typed_node(void **state)
{
    struct http_resp r;
    char *etag;

    (void)state;
    http(&r, "GET", "/api/v1/node/02-simple-children?depth=1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "subsystem");
    etag = http_header(&r, "ETag");
    assert_non_null(etag);
    free(etag);
    http_resp_done(&r);
    http(&r, "HEAD", "/api/v1/node/02-simple-children", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/node/01-childless/storeme", NULL, 0, NULL);
    expect_problem(&r, 409, "ENOTDIR");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/node/01-childless/nothing", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/node/02-simple-children?depth=x", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    put_json(&r, "/api/v1/node/01-childless/storeme", "{\"value\":\"1\"}");
    expect_problem(&r, 405, "EOPNOTSUPP");
    expect_header(&r, "Allow", "GET, HEAD");
    http_resp_done(&r);
}

/* GET and PUT /api/v1/value: JSON both ways, the value's text as sent. */
static void test_typed_value(void **state)
{
    static const char *const text[] = {"Content-Type: text/plain", NULL};
    struct http_resp r;
    char *etag;
    char im[64];
    const char *ifm[] = {im, "Content-Type: application/json", NULL};

    (void)state;
    put_json(&r, "/api/v1/value/01-childless/storeme", "{\"value\":\"43\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "kind"), "attribute");
    assert_string_equal(jstr(r.json, "value"), "43");
    etag = http_header(&r, "ETag");
    assert_non_null(etag);
    http_resp_done(&r);
    /* stored as the text, never as the JSON that carried it */
    expect_raw("/api/v1/config/01-childless/storeme", "43\n");

    http(&r, "GET", "/api/v1/value/01-childless/storeme", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Type", "application/json");
    assert_string_equal(jstr(r.json, "value"), "43"); /* a string, always */
    expect_header(&r, "ETag", etag);
    http_resp_done(&r);

    /* a stale If-Match changes nothing */
    put_json(&r, "/api/v1/value/01-childless/storeme", "{\"value\":44}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    (void)snprintf(im, sizeof(im), "If-Match: %s", etag);
    http(&r,
         "PUT",
         "/api/v1/value/01-childless/storeme",
         "{\"value\":\"45\"}",
         14,
         ifm);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    expect_raw("/api/v1/config/01-childless/storeme", "44\n");
    free(etag);

    /* one media type in: text is 415, not stored */
    http(&r, "PUT", "/api/v1/value/01-childless/storeme", "46", 2, text);
    expect_problem(&r, 415, "EINVAL");
    http_resp_done(&r);
    put_json(&r,
             "/api/v1/value/01-childless/storeme",
             "{\"target\":\"/01-childless\"}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    put_json(&r, "/api/v1/value/01-childless/storeme", "{}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    expect_raw("/api/v1/config/01-childless/storeme", "44\n");

    /* a directory has no value */
    http(&r, "GET", "/api/v1/value/01-childless", NULL, 0, NULL);
    expect_problem(&r, 409, "EISDIR");
    http_resp_done(&r);
    put_json(&r, "/api/v1/value/01-childless", "{\"value\":\"1\"}");
    expect_problem(&r, 409, "EISDIR");
    http_resp_done(&r);
    http_json(&r, "POST", "/api/v1/value/01-childless", "{\"name\":\"x\"}");
    expect_problem(&r, 405, "EOPNOTSUPP");
    expect_header(&r, "Allow", "GET, HEAD, PUT");
    http_resp_done(&r);
}

/* PUT and GET /api/v1/link: a link made and read as JSON. */
static void test_typed_link(void **state)
{
    struct http_resp r;
    char *loc;

    (void)state;
    http_json(&r, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"t1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/t1/functions",
              "{\"name\":\"ncm.usb0\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/t1/configs",
              "{\"name\":\"c.1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);

    put_json(&r,
             "/api/v1/link/usb_gadget%2Ft1%2Fconfigs%2Fc.1%2Fncm.usb0",
             "{\"target\":\"/usb_gadget/t1/functions/ncm.usb0\"}");
    assert_int_equal(r.status, 201);
    assert_string_equal(jstr(r.json, "kind"), "link");
    assert_string_equal(jstr(r.json, "target"),
                        "/usb_gadget/t1/functions/ncm.usb0");
    loc = http_header(&r, "Location");
    assert_string_equal(loc,
                        "/api/v1/config/usb_gadget/t1/configs/c.1/ncm.usb0");
    free(loc);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/link/usb_gadget/t1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "path"),
                        "/usb_gadget/t1/configs/c.1/ncm.usb0");
    http_resp_done(&r);

    /* the same name again, a value body, something that is not a link */
    put_json(&r,
             "/api/v1/link/usb_gadget/t1/configs/c.1/ncm.usb0",
             "{\"target\":\"/usb_gadget/t1/functions/ncm.usb0\"}");
    expect_problem(&r, 409, "EEXIST");
    http_resp_done(&r);
    put_json(&r, "/api/v1/link/usb_gadget/t1/configs/c.1/x", "{\"value\":1}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/link/usb_gadget/t1/configs/c.1", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/value/usb_gadget/t1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    expect_problem(&r, 409, "EISDIR");
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/node/usb_gadget/t1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    expect_problem(&r, 409, "ENOTDIR");
    http_resp_done(&r);
    http(&r,
         "DELETE",
         "/api/v1/link/usb_gadget/t1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    expect_problem(&r, 405, "EOPNOTSUPP");
    expect_header(&r, "Allow", "GET, HEAD, PUT");
    http_resp_done(&r);

    /* taken down through the shell form */
    http(&r,
         "DELETE",
         "/api/v1/config/usb_gadget/t1/configs/c.1/ncm.usb0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* A method no resource takes (OPTIONS, PATCH) is 405 with the Allow of
 * that resource: the root takes no PUT, an attribute no POST. */
static void test_typed_allow_is_the_resources(void **state)
{
    static const struct {
        const char *method, *url, *allow;
    } cases[] = {
        {"OPTIONS", "/api/v1/config/", "GET, HEAD, POST, DELETE"},
        {"OPTIONS", "/api/v1/config", "GET, HEAD, POST, DELETE"},
        {"OPTIONS", "/api/v1/config/01-childless", "GET, HEAD, POST, DELETE"},
        {"PATCH", "/api/v1/config/01-childless/storeme", "GET, HEAD, PUT"},
        {"OPTIONS", "/api/v1/node/01-childless", "GET, HEAD"},
        {"OPTIONS", "/api/v1/batch", "POST"},
        {"OPTIONS", "/readyz", "GET, HEAD"},
        {"POST", "/readyz", "GET, HEAD"},
        {"POST", "/metrics", "GET, HEAD"},
        {"OPTIONS", "/api/v1/openapi.yaml", "GET, HEAD"},
    };
    struct http_resp r;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        http(&r, cases[i].method, cases[i].url, NULL, 0, NULL);
        expect_problem(&r, 405, "EOPNOTSUPP");
        expect_header(&r, "Allow", cases[i].allow);
        http_resp_done(&r);
    }
    /* what the root's Allow names is answered, if refused (F2, RM3) */
    http_json(&r, "POST", "/api/v1/config/", "{\"name\":\"x\"}");
    expect_problem(&r, 403, "EPERM");
    http_resp_done(&r);
    http(&r, "OPTIONS", "/api/v1/config/nothing", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typed_encoded_slash_separates),
        cmocka_unit_test(test_typed_dot_and_control_refused),
        cmocka_unit_test(test_typed_depth_counts_encoded_slashes),
        cmocka_unit_test(test_typed_node),
        cmocka_unit_test(test_typed_value),
        cmocka_unit_test(test_typed_link),
        cmocka_unit_test(test_typed_allow_is_the_resources),
    };

    return cmocka_run_group_tests_name(
        "http-typed", tests, harness_start, harness_stop);
}
