// SPDX-License-Identifier: MIT
/*
 * test-http-ifmatch.c - If-Match on the creating routes and in every form
 * the API documents (api/openapi.yaml, parameter IfMatch): POST
 * /config/{path} (mkdir) and a symlink PUT compare it with the parent's
 * revision; a stale tag is 412 ESTALE and creates nothing, the current one
 * is accepted; W/"N", a list of tags and * are accepted too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *const json_ct = "Content-Type: application/json";

static long status_of(const char *path)
{
    struct http_resp r;
    long s;

    http(&r, "GET", path, NULL, 0, NULL);
    s = r.status;
    http_resp_done(&r);
    return s;
}

/* @method @path with @body and "If-Match: @im". */
static void send_if(struct http_resp *r,
                    const char *method,
                    const char *path,
                    const char *body,
                    const char *im)
{
    char hdr[320];
    const char *hdrs[] = {json_ct, hdr, NULL};

    (void)snprintf(hdr, sizeof(hdr), "If-Match: %s", im);
    http(r, method, path, body, body ? strlen(body) : 0, hdrs);
}

/* A stale tag on @method @path is 412 ESTALE, and nothing changed: the
 * revision is the same and @created is not there. */
static void expect_stale_refused(const char *method,
                                 const char *path,
                                 const char *body,
                                 const char *im,
                                 const char *created)
{
    long long rev = http_revision();
    struct http_resp r;

    send_if(&r, method, path, body, im);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    assert_int_equal(http_revision(), rev);
    assert_int_equal(status_of(created), 404);
}

/* mkdir: If-Match is the parent's revision. A tag that was current before
 * another child was made is stale: 412, and the child is not made. */
static void test_mkdir_if_match(void **state)
{
    static const char parent[] = "/api/v1/config/02-simple-children";
    struct http_resp r;
    char *old, *cur;

    (void)state;
    old = http_etag(parent);
    http_json(&r, "POST", parent, "{\"name\":\"im-other\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    cur = http_etag(parent);
    assert_string_not_equal(old, cur);

    expect_stale_refused("POST",
                         parent,
                         "{\"name\":\"im-new\"}",
                         old,
                         "/api/v1/config/02-simple-children/im-new");
    /* the values of a mkdir with attributes are not stored either */
    expect_stale_refused(
        "POST",
        parent,
        "{\"name\":\"im-new\",\"attributes\":{\"storeme\":\"3\"}}",
        old,
        "/api/v1/config/02-simple-children/im-new");

    send_if(&r, "POST", parent, "{\"name\":\"im-new\"}", cur);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    assert_int_equal(status_of("/api/v1/config/02-simple-children/im-new"),
                     200);
    free(old);
    free(cur);
}

/* A symlink PUT: If-Match is the revision of the directory the link goes
 * in. Stale: 412 and no link; current: the link is made. */
static void test_symlink_if_match(void **state)
{
    static const char cfg[] = "/api/v1/config/usb_gadget/gim/configs/c.1";
    static const char link[] =
        "/api/v1/config/usb_gadget/gim/configs/c.1/ncm.im";
    static const char target[] =
        "{\"target\":\"/usb_gadget/gim/functions/ncm.im\"}";
    struct http_resp r;
    char *old, *cur;

    (void)state;
    http_json(&r, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"gim\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/gim/functions",
              "{\"name\":\"ncm.im\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/gim/configs",
              "{\"name\":\"c.1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    old = http_etag(cfg);
    http(&r,
         "PUT",
         "/api/v1/config/usb_gadget/gim/configs/c.1/MaxPower",
         "100",
         3,
         NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    cur = http_etag(cfg);
    assert_string_not_equal(old, cur);

    expect_stale_refused("PUT", link, target, old, link);

    send_if(&r, "PUT", link, target, cur);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r, "GET", link, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "target")),
                        "/usb_gadget/gim/functions/ncm.im");
    http_resp_done(&r);
    free(old);
    free(cur);
}

/* W/"N" is "N" for If-Match, and a list matches when one of its tags
 * does (and * always): accepted on a store and on a mkdir; a list of
 * stale tags only, weak or strong, is 412. */
static void test_weak_and_listed_tags(void **state)
{
    static const char attr[] =
        "/api/v1/config/02-simple-children/im-new/storeme";
    static const char parent[] = "/api/v1/config/02-simple-children";
    struct http_resp r;
    char im[256];
    char *old, *cur;
    long long rev;

    (void)state;
    old = http_etag(attr);

    /* a store: W/"cur" */
    http(&r, "PUT", attr, "1", 1, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    cur = http_etag(attr);
    (void)snprintf(im, sizeof(im), "W/%s", cur);
    send_if(&r, "PUT", attr, "{\"value\":\"2\"}", im);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    free(cur);

    /* a list with the current tag last, as "1", "3" */
    cur = http_etag(attr);
    (void)snprintf(im, sizeof(im), "%s, W/%s, %s", old, old, cur);
    send_if(&r, "PUT", attr, "{\"value\":\"3\"}", im);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    free(cur);

    /* stale tags only, in a list, weak and strong: 412, the value stays */
    rev = http_revision();
    (void)snprintf(im, sizeof(im), "%s,W/%s", old, old);
    send_if(&r, "PUT", attr, "{\"value\":\"4\"}", im);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    assert_int_equal(http_revision(), rev);
    http(&r, "GET", attr, NULL, 0, NULL);
    assert_string_equal(r.body, "3\n");
    http_resp_done(&r);
    free(old);

    /* a mkdir: W/"cur", a list, * */
    cur = http_etag(parent);
    (void)snprintf(im, sizeof(im), "W/%s", cur);
    send_if(&r, "POST", parent, "{\"name\":\"im-weak\"}", im);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    (void)snprintf(im, sizeof(im), "\"1\", %s", cur); /* cur is stale now */
    send_if(&r, "POST", parent, "{\"name\":\"im-list\"}", im);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    free(cur);
    cur = http_etag(parent);
    (void)snprintf(im, sizeof(im), "\"1\", %s", cur);
    send_if(&r, "POST", parent, "{\"name\":\"im-list\"}", im);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    send_if(&r, "POST", parent, "{\"name\":\"im-star\"}", "*");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    free(cur);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_if_match),
        cmocka_unit_test(test_symlink_if_match),
        /* after test_mkdir_if_match: it made im-new */
        cmocka_unit_test(test_weak_and_listed_tags),
    };

    return cmocka_run_group_tests_name(
        "http-ifmatch", tests, harness_start, harness_stop);
}
