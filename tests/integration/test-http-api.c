// SPDX-License-Identifier: MIT
/*
 * test-http-api.c - the served contract and the response shapes the other
 * integration tests do not reach: /api/v1/openapi.yaml is the file of the
 * source tree, and one request for each documented shape of the routes that
 * exist (attribute JSON, links, depth, values=0, HEAD, 405s), so that
 * integration.openapi-responses checks each of them against the spec; and
 * the route table (server/router.h) kept by what the server answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/configfs.h>

#include "harness.h"
#include "router.h"

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
    {
        /* "described": the declarative subsystems, each one that
         * /api/v1/schema/ answers; no C sample */
        json_t *d = json_object_get(r.json, "described"), *v;
        size_t i, fakenbd = 0;

        assert_true(json_array_size(d) >= 4);
        json_array_foreach(d, i, v) {
            char url[128];
            struct http_resp s;

            assert_null(strstr(json_string_value(v), "childless"));
            fakenbd += strcmp(json_string_value(v), "fakenbd") == 0;
            (void)snprintf(
                url, sizeof(url), "/api/v1/schema/%s", json_string_value(v));
            http(&s, "GET", url, NULL, 0, NULL);
            assert_int_equal(s.status, 200);
            http_resp_done(&s);
        }
        assert_int_equal(fakenbd, 1);
    }
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    /* who am I, without tokens: loopback only, everyone is trusted */
    http(&r, "GET", "/api/v1/whoami", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_true(json_is_null(json_object_get(r.json, "name")));
    assert_string_equal(jstr(r.json, "role"), "admin");
    assert_true(json_is_false(json_object_get(r.json, "tokens")));
    assert_true(json_is_true(json_object_get(r.json, "whole_tree")));
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(r.json, "subtrees"), 0)),
                        "/");
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

/* cat as JSON, echo > as JSON and as base64, and the 405s of docs/DESIGN.md §8.
 */
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

/* ---- rawecho: an attribute that shows back the bytes stored in it ------ */

static char raw_page[4096];
static size_t raw_len;

static ssize_t rawecho_raw_show(struct config_item *item, char *page)
{
    (void)item;
    memcpy(page, raw_page, raw_len);
    return (ssize_t)raw_len;
}

static ssize_t
rawecho_raw_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    memcpy(raw_page, page, count);
    raw_len = count;
    return (ssize_t)count;
}

CONFIGFS_ATTR(rawecho_, raw);

static struct configfs_attribute *rawecho_attrs[] = {
    &rawecho_attr_raw,
    NULL,
};

static const struct config_item_type rawecho_type = {
    .ct_name = "rawecho",
    .ct_attrs = rawecho_attrs,
};

static struct configfs_subsystem rawecho_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "rawecho",
                             .ci_type = &rawecho_type}},
};

/* A value in the node JSON (GET of the item) is the same JSON as in the
 * attribute's own JSON answer: escapes, non-ASCII, NUL, and base64 with
 * "encoding" for bytes that are not UTF-8 (overlong forms, surrogates,
 * truncated sequences, code points beyond U+10FFFF). */
static void test_api_node_values_encoded(void **state)
{
    static const char *const json_accept[] = {"Accept: application/json", NULL};
    static const struct {
        const char *bytes;
        size_t len;
        const char *want; /* "value", @len bytes; NULL: base64 expected */
    } cases[] = {
        {"plain", 5, "plain"},
        {"q\"b\\s/", 6, "q\"b\\s/"},
        {"\b\f\n\r\t\x01\x1f\x7f", 8, "\b\f\n\r\t\x01\x1f\x7f"},
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
         9,
         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
        {"a\0b", 3, "a\0b"},
        {"\xff", 1, NULL},
        {"\xc0\x80", 2, NULL},
        {"\xed\xa0\x80", 3, NULL},
        {"\xe2\x82", 2, NULL},
        {"\xf4\x90\x80\x80", 4, NULL},
        {"", 0, ""},
    };
    struct http_resp r, a;
    json_t *node, *aj;

    (void)state;
    config_group_init(&rawecho_subsys.su_group);
    assert_int_equal(configfs_register_subsystem(&rawecho_subsys), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *attr, *v;

        http(&r,
             "PUT",
             "/api/v1/config/rawecho/raw",
             cases[i].bytes,
             cases[i].len,
             NULL);
        assert_int_equal(r.status, 200);
        http_resp_done(&r);

        http(&r, "GET", "/api/v1/config/rawecho", NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        node = r.json; /* the writer's output parses */
        assert_non_null(node);
        attr = json_array_get(json_object_get(node, "attributes"), 0);
        assert_string_equal(jstr(attr, "name"), "raw");
        http(&a, "GET", "/api/v1/config/rawecho/raw", NULL, 0, json_accept);
        assert_int_equal(a.status, 200);
        aj = a.json;
        assert_non_null(aj);
        v = json_object_get(attr, "value");
        assert_true(json_equal(v, json_object_get(aj, "value")));
        assert_string_equal(
            jstr(attr, "encoding") ? jstr(attr, "encoding") : "none",
            jstr(aj, "encoding") ? jstr(aj, "encoding") : "none");
        if (cases[i].want) {
            assert_null(json_object_get(attr, "encoding"));
            assert_int_equal(json_string_length(v), cases[i].len);
            assert_memory_equal(
                json_string_value(v), cases[i].want, cases[i].len);
        } else {
            static const char *const json_ct[] = {
                "Content-Type: application/json", NULL};
            json_t *back;
            char *doc;
            struct http_resp w, b;

            assert_string_equal(jstr(attr, "encoding"), "base64");
            /* the base64 is of the bytes: stored back as it was shown,
             * the attribute holds them again */
            back = json_pack("{s:O,s:s}", "value", v, "encoding", "base64");
            doc = json_dumps(back, JSON_COMPACT);
            json_decref(back);
            assert_non_null(doc);
            http(&w, "PUT", "/api/v1/config/rawecho/raw", "", 0, NULL);
            http_resp_done(&w);
            http(&w,
                 "PUT",
                 "/api/v1/config/rawecho/raw",
                 doc,
                 strlen(doc),
                 json_ct);
            assert_int_equal(w.status, 200);
            http_resp_done(&w);
            http(&b, "GET", "/api/v1/config/rawecho/raw", NULL, 0, NULL);
            assert_int_equal(b.len, cases[i].len);
            assert_memory_equal(b.body, cases[i].bytes, cases[i].len);
            http_resp_done(&b);
            free(doc);
        }
        http_resp_done(&a);
        http_resp_done(&r);
    }
    configfs_unregister_subsystem(&rawecho_subsys);
}

/* Every route of the table answers a method it does not list with 405,
 * and Allow names exactly the methods it lists: the table is what the
 * server does, not a second description of it. */
static void test_api_routes_405_from_table(void **state)
{
    static const struct {
        enum cfs_http_method m;
        const char *name;
    } methods[] = {
        {CFS_M_GET, "GET"},
        {CFS_M_HEAD, "HEAD"},
        {CFS_M_POST, "POST"},
        {CFS_M_PUT, "PUT"},
        {CFS_M_DELETE, "DELETE"},
    };
    size_t n = 0;
    const struct cfs_http_route *rt = cfs_http_routes(&n);
    unsigned refused = 0;

    (void)state;
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++) {
        char allow[64] = "", url[128];
        size_t o = 0;

        assert_non_null(rt[i].handle);
        assert_true(rt[i].path[0] == '/');
        for (size_t k = 0; k < 5; k++) {
            if (rt[i].methods & CFS_M(methods[k].m)) {
                o += (size_t)snprintf(allow + o,
                                      sizeof(allow) - o,
                                      "%s%s",
                                      o ? ", " : "",
                                      methods[k].name);
            }
        }
        (void)snprintf(
            url, sizeof(url), "%s%s", rt[i].path, rt[i].prefix ? "x" : "");
        for (size_t k = 0; k < 5; k++) {
            struct http_resp r;

            /* HEAD is not tried: the spec reads it as GET */
            if ((rt[i].methods & CFS_M(methods[k].m)) ||
                methods[k].m == CFS_M_HEAD) {
                continue;
            }
            http(&r, methods[k].name, url, "{}", 2, NULL);
            expect_problem(&r, 405, "EOPNOTSUPP");
            expect_header(&r, "Allow", allow);
            http_resp_done(&r);
            refused++;
        }
    }
    assert_true(refused > 20);
}

/* The role each request needs with tokens (docs/security.md): from its
 * route, and for a URL below a route that is no route, the higher of that
 * route's and the method's. */
static void test_api_route_roles(void **state)
{
    static const struct {
        const char *url;
        enum cfs_http_method m;
        enum cfs_http_role need;
    } cases[] = {
        {"/api/v1/config/a/b", CFS_M_GET, CFS_ROLE_READER},
        {"/api/v1/config/a/b", CFS_M_PUT, CFS_ROLE_WRITER},
        {"/api/v1/config", CFS_M_DELETE, CFS_ROLE_WRITER},
        {"/api/v1/node/a%2Fb", CFS_M_GET, CFS_ROLE_READER},
        {"/api/v1/value/a%2Fb", CFS_M_GET, CFS_ROLE_READER},
        {"/api/v1/value/a%2Fb", CFS_M_PUT, CFS_ROLE_WRITER},
        {"/api/v1/link/a/b", CFS_M_HEAD, CFS_ROLE_READER},
        {"/api/v1/link/a/b", CFS_M_PUT, CFS_ROLE_WRITER},
        {"/api/v1/batch", CFS_M_POST, CFS_ROLE_WRITER},
        {"/api/v1/batch", CFS_M_GET, CFS_ROLE_READER},
        {"/api/v1/export", CFS_M_GET, CFS_ROLE_ADMIN},
        {"/api/v1/export/x", CFS_M_GET, CFS_ROLE_ADMIN},
        {"/api/v1/import", CFS_M_POST, CFS_ROLE_ADMIN},
        {"/api/v1/openapi.yaml", CFS_M_GET, CFS_ROLE_NONE},
        {"/api/v1/openapi.yaml", CFS_M_DELETE, CFS_ROLE_NONE},
        {"/api/v1/openapi.yaml/x", CFS_M_GET, CFS_ROLE_READER},
        {"/api/v1/nothing", CFS_M_POST, CFS_ROLE_WRITER},
        {"/api", CFS_M_OTHER, CFS_ROLE_READER},
        {"/healthz", CFS_M_GET, CFS_ROLE_NONE},
        {"/readyz", CFS_M_POST, CFS_ROLE_NONE},
        {"/metrics", CFS_M_GET, CFS_ROLE_READER},
        {"/metrics/x", CFS_M_PUT, CFS_ROLE_WRITER},
        {"/metricsx", CFS_M_PUT, CFS_ROLE_NONE},
        {"/index.html", CFS_M_DELETE, CFS_ROLE_NONE},
        {"/apix", CFS_M_GET, CFS_ROLE_NONE},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *rest;
        const struct cfs_http_route *rt =
            cfs_http_route_find(cases[i].url, &rest);

        if (cfs_http_route_role(rt, cases[i].url, cases[i].m) !=
            cases[i].need) {
            fail_msg("%s needs role %d", cases[i].url, (int)cases[i].need);
        }
    }
}

/* A value given as base64 (a store, a batch op, an import) is strict RFC
 * 4648 base64 or refused whole with 400: never half-decoded, the attribute
 * untouched. Canonical forms of 1, 2 and 3 bytes are taken. */
static void test_api_base64_strict(void **state)
{
    static const char *const json_ct[] = {"Content-Type: application/json",
                                          NULL};
    static const char *const good[][2] = {
        {"OQ==", "9"}, {"MTA=", "10"}, {"MTIz", "123"}};
    static const char *const bad[] = {
        "OQ",       /* unpadded */
        "OQ=",      /* padding short */
        "OQ===",    /* padding over */
        "OR==",     /* bits left over by the padding are not zero */
        "O Q==",    /* whitespace inside */
        "OQ==\\n",  /* a newline after it */
        "OQ==OQ==", /* data after the padding */
        "=OQ=",     /* padding first */
        "OQ-_",     /* the URL-safe alphabet */
        "@@@@"      /* outside any alphabet */
    };
    struct http_resp r;
    char body[128];
    int n;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        n = snprintf(body,
                     sizeof(body),
                     "{\"value\":\"%s\",\"encoding\":\"base64\"}",
                     good[i][0]);
        http(&r,
             "PUT",
             "/api/v1/config/01-childless/storeme",
             body,
             (size_t)n,
             json_ct);
        assert_int_equal(r.status, 200);
        assert_string_equal(jstr(r.json, "value"), good[i][1]);
        http_resp_done(&r);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = snprintf(body,
                     sizeof(body),
                     "{\"value\":\"%s\",\"encoding\":\"base64\"}",
                     bad[i]);
        http(&r,
             "PUT",
             "/api/v1/config/01-childless/storeme",
             body,
             (size_t)n,
             json_ct);
        expect_problem(&r, 400, "EINVAL");
        assert_non_null(strstr(jstr(r.json, "detail"), "base64"));
        http_resp_done(&r);
        /* the last good value stands */
        http(&r, "GET", "/api/v1/config/01-childless/storeme", NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.len, 4);
        assert_memory_equal(r.body, "123\n", 4);
        http_resp_done(&r);
    }

    /* in a batch: 400 naming the op, and the op before it undone */
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"store\",\"path\":\"/01-childless/storeme\","
              "\"value\":\"5\"},{\"op\":\"store\",\"path\":"
              "\"/01-childless/storeme\",\"value\":\"OR==\",\"encoding\":"
              "\"base64\"}]}");
    expect_problem(&r, 400, "EINVAL");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     1);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/01-childless/storeme", NULL, 0, NULL);
    assert_memory_equal(r.body, "123\n", 4);
    http_resp_done(&r);
}

/*
 * ?min_revision=N on a single node: a revision already applied is read at
 * once; one that is not (no other node will bring it) is 504 ETIMEDOUT with
 * its own title; a malformed one is 400.
 */
static void test_api_min_revision(void **state)
{
    struct http_resp r;
    char *etag;
    char path[128];

    (void)state;
    http(&r, "PUT", "/api/v1/config/01-childless/storeme", "77", 2, NULL);
    assert_int_equal(r.status, 200);
    etag = http_header(&r, "ETag");
    assert_non_null(etag);
    http_resp_done(&r);
    (void)snprintf(path,
                   sizeof(path),
                   "/api/v1/config/01-childless/storeme?min_revision=%s",
                   etag + 1);
    path[strlen(path) - 1] = '\0'; /* the closing quote of the tag */
    free(etag);
    http(&r, "GET", path, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_memory_equal(r.body, "77\n", 3);
    http_resp_done(&r);

    http(
        &r,
        "GET",
        "/api/v1/config/01-childless/storeme?min_revision=18446744073709551615",
        NULL,
        0,
        NULL);
    expect_problem(&r, 504, "ETIMEDOUT");
    assert_string_equal(jstr(r.json, "title"), "Gateway Timeout");
    http_resp_done(&r);

    static const char *const bad[] = {
        "-1", "", "x", "1x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        (void)snprintf(path,
                       sizeof(path),
                       "/api/v1/config/01-childless/storeme?min_revision=%s",
                       bad[i]);
        http(&r, "GET", path, NULL, 0, NULL);
        expect_problem(&r, 400, "EINVAL");
        http_resp_done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_openapi_served),
        cmocka_unit_test(test_api_service_routes),
        cmocka_unit_test(test_api_node_shapes),
        cmocka_unit_test(test_api_attribute_shapes),
        cmocka_unit_test(test_api_link_shapes),
        cmocka_unit_test(test_api_node_values_encoded),
        cmocka_unit_test(test_api_routes_405_from_table),
        cmocka_unit_test(test_api_route_roles),
        cmocka_unit_test(test_api_base64_strict),
        cmocka_unit_test(test_api_min_revision),
    };

    return cmocka_run_group_tests_name(
        "http-api", tests, harness_start, harness_stop);
}
