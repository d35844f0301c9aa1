// SPDX-License-Identifier: MIT
/*
 * test-http-scope.c - tokens limited to subtrees (docs/security.md,
 * "Scoped tokens"): the tokens-file format, and every route with a scoped
 * token: reads and listings filtered to the subtrees and the paths that
 * lead to them, writes, links, renames and batches refused when any path
 * they name is outside (403 EACCES, whether it exists or not), events and
 * history filtered, export filtered and import refused when its plan
 * reaches outside, /api/v1 and schemas of the visible subsystems only,
 * /api/v1/whoami naming each token's role and subtrees, and a reload that
 * changes a token's subtrees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

#define ROOT_TOKEN "tok-root-0123456789"
#define RD_TOKEN   "tok-rd-01234567890" /* reader of /02-simple-children/a */
#define G1_TOKEN   "tok-g1-01234567890" /* writer of /usb_gadget/g1 */
#define SA_TOKEN   "tok-sa-01234567890" /* admin of /02-simple-children/a */
#define CM_TOKEN   "tok-cm-01234567890" /* writer of .../pending */
#define GA_TOKEN   "tok-ga-01234567890" /* admin of /usb_gadget/g1 */
/* admin of /usb_gadget/g1/os_desc and /usb_gadget/g1/configs/c.8/strings:
 * a link in os_desc to c.8 leads to an ancestor of one of its subtrees */
#define AN_TOKEN "tok-an-01234567890"

static char *dir;
static char *db;
static char *tokens_path;
static struct cfs_http_tokens *tokens;

static void write_tokens(const char *rd_scope)
{
    static const struct {
        const char *name, *role, *token, *scope;
    } t[] = {
        {"root", "admin", ROOT_TOKEN, ""},
        {"rd", "reader", RD_TOKEN, NULL},
        /* spelled loosely: normalized on load */
        {"g1", "writer", G1_TOKEN, "//usb_gadget/g1/"},
        {"sa", "admin", SA_TOKEN, "/02-simple-children/a"},
        {"cm", "writer", CM_TOKEN, "/04-committable-children/pending"},
        {"ga", "admin", GA_TOKEN, "/usb_gadget/g1"},
        {"an",
         "admin",
         AN_TOKEN,
         "/usb_gadget/g1/os_desc /usb_gadget/g1/configs/c.8/strings"},
    };
    char text[4096];
    size_t o = 0;

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char hex[65];

        cfs_http_token_hash(t[i].token, strlen(t[i].token), hex);
        o += (size_t)snprintf(text + o,
                              sizeof(text) - o,
                              "%s %s sha256:%s %s\n",
                              t[i].name,
                              t[i].role,
                              hex,
                              t[i].scope ? t[i].scope : rd_scope);
    }
    harness_write_file(tokens_path, text, o);
}

static void as(struct http_resp *r,
               const char *token,
               const char *method,
               const char *path,
               const char *body)
{
    char auth[128];
    const char *hdrs[] = {"Content-Type: application/json", auth, NULL};

    (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    http(r, method, path, body, body ? strlen(body) : 0, hdrs);
}

static void as_ok(const char *token,
                  const char *method,
                  const char *path,
                  const char *body,
                  long status)
{
    struct http_resp r;

    as(&r, token, method, path, body);
    if (r.status != status) {
        print_error("%s %s: %ld %s\n", method, path, r.status, r.body);
    }
    assert_int_equal(r.status, status);
    http_resp_done(&r);
}

/* 403 EACCES with the challenge of a token that does not reach so far. */
static void expect_scope_refusal(const struct http_resp *r)
{
    expect_problem(r, 403, "EACCES");
    expect_header(r,
                  "WWW-Authenticate",
                  "Bearer realm=\"configfsd\", error=\"insufficient_scope\"");
}

static void as_denied(const char *token,
                      const char *method,
                      const char *path,
                      const char *body)
{
    struct http_resp r;
    const char *detail;

    as(&r, token, method, path, body);
    if (r.status != 403) {
        print_error("%s %s: %ld %s\n", method, path, r.status, r.body);
    }
    expect_scope_refusal(&r);
    /* the refusal names no path (but the request's own, as "instance") */
    detail = json_string_value(json_object_get(r.json, "detail"));
    assert_non_null(detail);
    assert_null(strstr(detail, "simple-children"));
    assert_null(strstr(detail, "usb_gadget"));
    http_resp_done(&r);
}

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&tokens_path, "%s/tokens", dir) < 0 ||
        asprintf(&db, "%s/db", dir) < 0) {
        return -1;
    }
    write_tokens("/02-simple-children/a");
    if (cfs_http_tokens_load(tokens_path, &tokens, NULL, 0) < 0 ||
        harness_start_db(db) < 0) {
        return -1;
    }
    o.tokens = tokens;
    if (harness_restart_with(&o) < 0) {
        return -1;
    }
    /* the tree the tests look at, made with the unscoped token */
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/02-simple-children",
          "{\"name\":\"a\",\"attributes\":{\"storeme\":\"1\"}}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/02-simple-children",
          "{\"name\":\"a_b\",\"attributes\":{\"storeme\":\"2\"}}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget",
          "{\"name\":\"g1\"}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget",
          "{\"name\":\"g2\"}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g2/functions",
          "{\"name\":\"ncm.usb0\"}",
          201);
    return 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    cfs_http_tokens_unref(tokens);
    harness_rmtree(dir);
    free(tokens_path);
    free(db);
    free(dir);
    return 0;
}

/* The names of the array @key of @obj's "children", joined by ','. */
static void names_of(json_t *obj, const char *key, char *out, size_t cap)
{
    json_t *arr = json_object_get(obj, key), *v;
    size_t i, o = 0;

    out[0] = '\0';
    json_array_foreach(arr, i, v) {
        const char *n = json_is_string(v)
                            ? json_string_value(v)
                            : json_string_value(json_object_get(v, "name"));

        o += (size_t)snprintf(
            out + o, cap - o, "%s%s", o ? "," : "", n ? n : "?");
    }
}

/* The file format: subtrees after the hash, normalized; a bad one names
 * its line; hash-token prints them. */
static void test_scope_tokens_file(void **state)
{
    static const char *const bad[] = {
        "relative/path",
        "/a/../b",
        "/a/./b",
    };
    char *path = NULL, *out = NULL, *err = NULL;
    struct cfs_http_tokens *t = NULL;
    char hex[65], text[256], msg[256];

    (void)state;
    cfs_http_token_hash("whatever-token-123", 18, hex);
    assert_true(asprintf(&path, "%s/bad", dir) > 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int n = snprintf(
            text, sizeof(text), "x reader sha256:%s %s\n", hex, bad[i]);

        harness_write_file(path, text, (size_t)n);
        assert_int_equal(cfs_http_tokens_load(path, &t, msg, sizeof(msg)),
                         -EINVAL);
        assert_non_null(strstr(msg, ":1: "));
        assert_non_null(strstr(msg, "subtree"));
    }
    /* the old three-field format stays valid */
    (void)snprintf(text, sizeof(text), "x reader sha256:%s\n", hex);
    harness_write_file(path, text, strlen(text));
    assert_int_equal(cfs_http_tokens_load(path, &t, NULL, 0), 0);
    cfs_http_tokens_unref(t);

    {
        const char *args[] = {
            "hash-token", "ops", "writer", "/usb_gadget//g1/", "/target", NULL};

        assert_int_equal(
            harness_run(args, NULL, "whatever-token-123\n", &out, &err, 10), 0);
        (void)snprintf(text,
                       sizeof(text),
                       "ops writer sha256:%s /usb_gadget/g1 /target\n",
                       hex);
        assert_string_equal(out, text);
        free(out);
        free(err);
    }
    {
        const char *args[] = {"hash-token", "ops", "writer", "usb", NULL};

        assert_int_equal(
            harness_run(args, NULL, "whatever-token-123\n", &out, &err, 10), 2);
        assert_non_null(strstr(err, "absolute"));
        free(out);
        free(err);
    }
    free(path);
}

/* Reads: a listing shows only the paths that lead to the subtrees and,
 * above them, no attribute; /a is not /a_b; anything else is 403 whether
 * it exists or not. */
static void test_scope_reads(void **state)
{
    struct http_resp r;
    char names[512];

    (void)state;
    as(&r, RD_TOKEN, "GET", "/api/v1/config/", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "02-simple-children");
    http_resp_done(&r);

    as(&r, RD_TOKEN, "GET", "/api/v1/config/02-simple-children", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "a");
    assert_int_equal(json_array_size(json_object_get(r.json, "attributes")), 0);
    http_resp_done(&r);

    as(&r, RD_TOKEN, "GET", "/api/v1/config/?depth=5", NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "a_b"));
    assert_null(strstr(r.body, "usb_gadget"));
    assert_non_null(strstr(r.body, "\"/02-simple-children/a\""));
    http_resp_done(&r);

    as(&r, RD_TOKEN, "GET", "/api/v1/config/02-simple-children/a", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "attributes", names, sizeof(names));
    assert_non_null(strstr(names, "storeme"));
    http_resp_done(&r);
    as_ok(RD_TOKEN,
          "GET",
          "/api/v1/config/02-simple-children/a/storeme",
          NULL,
          200);
    as_ok(RD_TOKEN, "HEAD", "/api/v1/config/02-simple-children/a", NULL, 200);

    /* a sibling whose name starts alike; one that does not exist; one in
     * another subsystem: the same answer */
    as_denied(RD_TOKEN, "GET", "/api/v1/config/02-simple-children/a_b", NULL);
    as_denied(
        RD_TOKEN, "GET", "/api/v1/config/02-simple-children/a_b/storeme", NULL);
    as_denied(RD_TOKEN, "GET", "/api/v1/config/02-simple-children/zz", NULL);
    as_denied(RD_TOKEN, "GET", "/api/v1/config/usb_gadget", NULL);
    as(&r, RD_TOKEN, "HEAD", "/api/v1/config/usb_gadget/g1", NULL);
    assert_int_equal(r.status, 403);
    http_resp_done(&r);

    /* the service document and schemas: the visible subsystems only */
    as(&r, RD_TOKEN, "GET", "/api/v1", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "subsystems", names, sizeof(names));
    assert_string_equal(names, "02-simple-children");
    names_of(r.json, "described", names, sizeof(names));
    assert_string_equal(names, "");
    http_resp_done(&r);
    as(&r, G1_TOKEN, "GET", "/api/v1", NULL);
    names_of(r.json, "described", names, sizeof(names));
    assert_string_equal(names, "usb_gadget");
    http_resp_done(&r);
    as_ok(G1_TOKEN, "GET", "/api/v1/schema/usb_gadget", NULL, 200);
    as_denied(G1_TOKEN, "GET", "/api/v1/schema/fakenbd", NULL);
    as_denied(RD_TOKEN, "GET", "/api/v1/schema/usb_gadget", NULL);

    /* the unscoped token sees everything */
    as(&r, ROOT_TOKEN, "GET", "/api/v1/config/02-simple-children", NULL);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "a,a_b");
    http_resp_done(&r);
}

/* Writes: inside the subtree as the role allows; above or outside it
 * 403, and nothing changes. */
static void test_scope_writes_and_links(void **state)
{
    static const char link_in[] =
        "{\"target\":\"/usb_gadget/g1/functions/ncm.usb0\"}";
    static const char link_out[] =
        "{\"target\":\"/usb_gadget/g2/functions/ncm.usb0\"}";
    struct http_resp r;

    (void)state;
    /* above the subtree: may read, may not make a sibling */
    as_ok(G1_TOKEN, "GET", "/api/v1/config/usb_gadget", NULL, 200);
    as_denied(
        G1_TOKEN, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"g3\"}");
    as_denied(
        G1_TOKEN, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"g1x\"}");
    as_denied(G1_TOKEN, "DELETE", "/api/v1/config/usb_gadget/g2", NULL);
    as_denied(G1_TOKEN,
              "POST",
              "/api/v1/config/usb_gadget/g2/functions",
              "{\"name\":\"ncm.x\"}");
    as_denied(G1_TOKEN,
              "PUT",
              "/api/v1/config/usb_gadget/g2/idVendor",
              "{\"value\":\"0x1d6b\"}");
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config/usb_gadget/g2", NULL, 200);
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config/usb_gadget/g3", NULL, 404);

    /* inside */
    as_ok(G1_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/functions",
          "{\"name\":\"ncm.usb0\"}",
          201);
    as_ok(G1_TOKEN,
          "PUT",
          "/api/v1/config/usb_gadget/g1/idVendor",
          "{\"value\":\"0x1d6b\"}",
          200);
    as_ok(G1_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/configs",
          "{\"name\":\"c.1\"}",
          201);
    /* a link: its path and its target both inside */
    as_denied(G1_TOKEN,
              "PUT",
              "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
              link_out);
    as_ok(ROOT_TOKEN,
          "GET",
          "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
          NULL,
          404);
    as_ok(G1_TOKEN,
          "PUT",
          "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
          link_in,
          201);
    as(&r, G1_TOKEN, "GET", "/api/v1/config/usb_gadget/g1/configs/c.1", NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "links")), 1);
    http_resp_done(&r);
    as_ok(G1_TOKEN,
          "DELETE",
          "/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0",
          NULL,
          204);
}

/* The typed routes (/api/v1/node, /value, /link), paged listings, used_by
 * and the blockers of a refused rmdir keep to the token's subtrees too. */
static void test_scope_typed_and_paged(void **state)
{
    static const char link_in[] =
        "{\"target\":\"/usb_gadget/g1/functions/ncm.t\"}";
    static const char link_out[] =
        "{\"target\":\"/usb_gadget/g2/functions/ncm.usb0\"}";
    struct http_resp r;
    char names[512];

    (void)state;
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/functions",
          "{\"name\":\"ncm.t\"}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/configs",
          "{\"name\":\"c.7\"}",
          201);
    /* node: above the subtree a path only; outside 403 */
    as(&r, G1_TOKEN, "GET", "/api/v1/node/usb_gadget", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "g1");
    http_resp_done(&r);
    as_denied(G1_TOKEN, "GET", "/api/v1/node/usb_gadget/g2", NULL);
    as_denied(G1_TOKEN, "GET", "/api/v1/node/usb_gadget%2Fg2", NULL);
    /* paged: the total counts only what the token sees */
    as(&r, G1_TOKEN, "GET", "/api/v1/config/usb_gadget?limit=10", NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "g1");
    assert_int_equal(
        json_integer_value(json_object_get(r.json, "children_total")), 1);
    http_resp_done(&r);
    as(&r, G1_TOKEN, "GET", "/api/v1/config/usb_gadget?name_contains=g", NULL);
    names_of(r.json, "children", names, sizeof(names));
    assert_string_equal(names, "g1");
    http_resp_done(&r);
    /* value: read and store inside only */
    as_ok(G1_TOKEN, "GET", "/api/v1/value/usb_gadget/g1/idVendor", NULL, 200);
    as_denied(G1_TOKEN, "GET", "/api/v1/value/usb_gadget/g2/idVendor", NULL);
    as_denied(G1_TOKEN,
              "PUT",
              "/api/v1/value/usb_gadget/g2/idVendor",
              "{\"value\":\"0x1234\"}");
    as(&r, ROOT_TOKEN, "GET", "/api/v1/value/usb_gadget/g2/idVendor", NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "0x1234"));
    http_resp_done(&r);
    /* link: both ends inside */
    as_denied(G1_TOKEN,
              "PUT",
              "/api/v1/link/usb_gadget/g1/configs/c.7/ncm.o",
              link_out);
    as_ok(ROOT_TOKEN,
          "GET",
          "/api/v1/config/usb_gadget/g1/configs/c.7/ncm.o",
          NULL,
          404);
    as_ok(G1_TOKEN,
          "PUT",
          "/api/v1/link/usb_gadget/g1/configs/c.7/ncm.t",
          link_in,
          201);
    as_ok(G1_TOKEN,
          "GET",
          "/api/v1/link/usb_gadget/g1/configs/c.7/ncm.t",
          NULL,
          200);
    /* a link made by another token from outside into the subtree: not in
     * used_by, not named among the blockers of a refused rmdir */
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g2/configs",
          "{\"name\":\"c.8\"}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config/usb_gadget/g2/configs/c.8/ncm.t",
          link_in,
          201);
    as(&r,
       G1_TOKEN,
       "GET",
       "/api/v1/config/usb_gadget/g1/functions/ncm.t?used_by=1",
       NULL);
    assert_int_equal(r.status, 200);
    names_of(r.json, "used_by", names, sizeof(names));
    assert_string_equal(names, "/usb_gadget/g1/configs/c.7/ncm.t");
    http_resp_done(&r);
    as(&r,
       G1_TOKEN,
       "DELETE",
       "/api/v1/config/usb_gadget/g1/functions/ncm.t",
       NULL);
    expect_problem(&r, 409, "EBUSY");
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    assert_non_null(strstr(r.body, "/usb_gadget/g1/configs/c.7/ncm.t"));
    http_resp_done(&r);
    as_ok(ROOT_TOKEN,
          "DELETE",
          "/api/v1/config/usb_gadget/g2/configs/c.8/ncm.t",
          NULL,
          204);
    as_ok(G1_TOKEN,
          "DELETE",
          "/api/v1/config/usb_gadget/g1/configs/c.7/ncm.t",
          NULL,
          204);
}

/* Batches are checked op by op before anything runs: one op outside
 * refuses the whole batch with its op_index; renames need both ends. */
static void test_scope_batch_and_rename(void **state)
{
    struct http_resp r;

    (void)state;
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/g1/functions/"
       "acm.b\"},{\"op\":\"mkdir\",\"path\":\"/usb_gadget/g2/functions/"
       "acm.b\"}]}");
    expect_scope_refusal(&r);
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     1);
    http_resp_done(&r);
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"symlink\",\"path\":\"/usb_gadget/g1/configs/c.1/"
       "l\",\"target\":\"/usb_gadget/g2/functions/ncm.usb0\"}]}");
    expect_scope_refusal(&r);
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     0);
    http_resp_done(&r);
    /* a loosely spelled path is the same path */
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget//g2/functions/"
       "acm.c\"}]}");
    expect_scope_refusal(&r);
    http_resp_done(&r);
    as_ok(ROOT_TOKEN,
          "GET",
          "/api/v1/config/usb_gadget/g1/functions/acm.b",
          NULL,
          404);
    as_ok(G1_TOKEN,
          "POST",
          "/api/v1/batch",
          "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/g1/functions/"
          "acm.b\"},{\"op\":\"rmdir\",\"path\":\"/usb_gadget/g1/functions/"
          "acm.b\"}]}",
          200);

    /* rename: the destination is outside the subtree */
    as_ok(CM_TOKEN,
          "POST",
          "/api/v1/config/04-committable-children/pending",
          "{\"name\":\"c1\"}",
          201);
    as_denied(CM_TOKEN,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/c1\","
              "\"to\":\"/04-committable-children/live/c1\"}");
    as_denied(G1_TOKEN,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/c1\","
              "\"to\":\"/usb_gadget/g1/x\"}");
    as_ok(ROOT_TOKEN,
          "GET",
          "/api/v1/config/04-committable-children/pending/c1",
          NULL,
          200);
    as_ok(CM_TOKEN,
          "DELETE",
          "/api/v1/config/04-committable-children/pending/c1",
          NULL,
          204);
}

/* Events: a scoped stream gets only the records inside its subtrees;
 * ?path= outside them is 403. */
static void test_scope_events(void **state)
{
    static const char head[] = "GET /api/v1/events HTTP/1.1\r\n"
                               "Host: x\r\n"
                               "Authorization: Bearer " RD_TOKEN "\r\n\r\n";
    char buf[16384];
    bool eof = false;
    int fd;

    (void)state;
    as_denied(RD_TOKEN, "GET", "/api/v1/events?path=/usb_gadget", NULL);
    fd = raw_connect();
    raw_send(fd, head, strlen(head));
    assert_true(raw_read_for(fd, buf, sizeof(buf), ": connected", 5000, &eof) >
                0);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config/02-simple-children/a_b/storeme",
          "{\"value\":\"20\"}",
          200);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g2/functions",
          "{\"name\":\"acm.e\"}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config/02-simple-children/a/storeme",
          "{\"value\":\"10\"}",
          200);
    /* in revision order: what came before a's change was filtered out */
    assert_true(raw_read_for(fd,
                             buf,
                             sizeof(buf),
                             "\"path\":\"/02-simple-children/a/storeme\"",
                             5000,
                             &eof) > 0);
    assert_null(strstr(buf, "a_b"));
    assert_null(strstr(buf, "usb_gadget"));
    close(fd);
}

/* History: only rows inside the subtrees, a page filled with them. */
static void test_scope_history(void **state)
{
    struct http_resp r;
    json_t *e;
    size_t i;

    (void)state;
    as(&r, RD_TOKEN, "GET", "/api/v1/history?limit=2", NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "entries")), 2);
    json_array_foreach(json_object_get(r.json, "entries"), i, e) {
        const char *p = json_string_value(json_object_get(e, "path"));

        assert_true(strncmp(p, "/02-simple-children/a", 21) == 0 &&
                    (p[21] == '\0' || p[21] == '/'));
    }
    assert_true(json_is_integer(json_object_get(r.json, "next_before")));
    http_resp_done(&r);
    as(&r, RD_TOKEN, "GET", "/api/v1/history?limit=1000", NULL);
    assert_null(strstr(r.body, "a_b"));
    assert_null(strstr(r.body, "usb_gadget"));
    assert_true(json_is_null(json_object_get(r.json, "next_before")));
    http_resp_done(&r);
    as_denied(
        RD_TOKEN, "GET", "/api/v1/history?path=/02-simple-children/a_b", NULL);
    as_ok(RD_TOKEN,
          "GET",
          "/api/v1/history?path=/02-simple-children/a",
          NULL,
          200);
}

/* Export shows what the token may see; an import whose plan changes
 * anything outside the subtrees is refused whole, even as a dry run; the
 * token's own export goes back in. */
static void test_scope_export_import(void **state)
{
    struct http_resp r;
    char *doc;

    (void)state;
    as(&r, SA_TOKEN, "GET", "/api/v1/export", NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "a_b"));
    assert_null(strstr(r.body, "usb_gadget"));
    assert_non_null(strstr(r.body, "\"/02-simple-children/a\""));
    doc = strdup(r.body);
    http_resp_done(&r);
    as_denied(SA_TOKEN, "GET", "/api/v1/export?path=/usb_gadget", NULL);

    as(&r, SA_TOKEN, "POST", "/api/v1/import?mode=merge", doc);
    if (r.status != 200) {
        print_error("%s\n", r.body);
    }
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    /* replace would remove what the token does not see */
    as(&r, SA_TOKEN, "POST", "/api/v1/import?mode=replace&dry_run=1", doc);
    expect_scope_refusal(&r);
    assert_true(json_is_integer(json_object_get(r.json, "op_index")));
    assert_null(strstr(r.body, "usb_gadget"));
    http_resp_done(&r);
    as(&r, SA_TOKEN, "POST", "/api/v1/import?mode=replace", doc);
    expect_scope_refusal(&r);
    http_resp_done(&r);
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config/usb_gadget/g2", NULL, 200);
    free(doc);

    /* a document that reaches outside */
    as_denied(SA_TOKEN,
              "POST",
              "/api/v1/import?mode=merge",
              "{\"format\":1,\"root\":{\"name\":\"02-simple-children\","
              "\"path\":\"/02-simple-children\",\"values\":[],\"links\":[],"
              "\"children\":[{\"name\":\"zz\",\"path\":\"/02-simple-children/"
              "zz\",\"created\":true,\"values\":[],\"links\":[],"
              "\"children\":[]}]}}");
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config/02-simple-children/zz", NULL, 404);
    /* and one inside */
    as_ok(SA_TOKEN,
          "POST",
          "/api/v1/import?mode=merge",
          "{\"format\":1,\"root\":{\"name\":\"a\",\"path\":\"/02-simple-"
          "children/a\",\"created\":true,\"values\":[{\"name\":\"storeme\","
          "\"value\":\"77\"}],\"links\":[],\"children\":[]}}",
          200);
    as(&r,
       ROOT_TOKEN,
       "GET",
       "/api/v1/config/02-simple-children/a/storeme",
       NULL);
    assert_string_equal(r.body, "77\n");
    http_resp_done(&r);
}

/* 404 ENOENT: the answer of a path that does not exist, naming nothing
 * outside the token's subtrees. */
static void as_missing(const char *token,
                       const char *method,
                       const char *path,
                       const char *body)
{
    struct http_resp r;

    as(&r, token, method, path, body);
    if (r.status != 404) {
        print_error("%s %s: %ld %s\n", method, path, r.status, r.body);
    }
    expect_problem(&r, 404, "ENOENT");
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    http_resp_done(&r);
}

/* The same request by @token on @hidden (at or through a hidden link,
 * named @hname: "/xl") and on @missing (the same place, with the name
 * @mname of the same length that does not exist): one answer but for the
 * name in it. */
static void token_like_missing(const char *token,
                               const char *method,
                               const char *hidden,
                               const char *missing,
                               const char *body,
                               const char *hname,
                               const char *mname)
{
    struct http_resp a, b;
    const char *da, *dm;
    char want[512];
    size_t n = strlen(mname);

    assert_int_equal(strlen(hname), n);
    assert_non_null(strstr(hidden, hname));
    assert_non_null(strstr(missing, mname));
    as_missing(token, method, hidden, body);
    as(&a, token, method, hidden, body);
    as(&b, token, method, missing, body);
    assert_int_equal(a.status, b.status);
    da = json_string_value(json_object_get(a.json, "detail"));
    dm = json_string_value(json_object_get(b.json, "detail"));
    assert_non_null(da);
    assert_non_null(dm);
    /* the detail of the missing one, with its name swapped */
    (void)snprintf(want, sizeof(want), "%s", dm);
    for (char *w = strstr(want, mname); w; w = strstr(w + n, mname)) {
        memcpy(w, hname, n);
    }
    assert_string_equal(da, want);
    http_resp_done(&a);
    http_resp_done(&b);
}

static void as_like_missing(const char *method,
                            const char *hidden,
                            const char *missing,
                            const char *body)
{
    token_like_missing(G1_TOKEN, method, hidden, missing, body, "/xl", "/nx");
}

/* A link whose target is outside the token's subtrees is hidden from it
 * (docs/security.md, "Links and scopes"): a path through it or at it is
 * judged as resolved and answers as a missing path on every route, for
 * reads and writes; it cannot be removed; a new link cannot lead outside
 * through it; events and history are filtered on the resolved path. */
static void test_scope_through_links(void **state)
{
#define C9 "/usb_gadget/g1/configs/c.9"
    static const char *const reads[] = {
        "/api/v1/config" C9 "/xl/qmult",
        "/api/v1/config" C9 "/xl",
        "/api/v1/config" C9 "/xl?depth=2",
        "/api/v1/node" C9 "/xl",
        "/api/v1/node" C9 "/xl/",
        "/api/v1/value" C9 "/xl/qmult",
        "/api/v1/link" C9 "/xl",
    };
    struct http_resp r;
    char missing[256];

    (void)state;
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/configs",
          "{\"name\":\"c.9\"}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/functions",
          "{\"name\":\"ncm.in\"}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config" C9 "/xl",
          "{\"target\":\"/usb_gadget/g2/functions/ncm.usb0\"}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config" C9 "/il",
          "{\"target\":\"/usb_gadget/g1/functions/ncm.in\"}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/value/usb_gadget/g2/functions/ncm.usb0/qmult",
          "{\"value\":\"7\"}",
          200);

    /* reads at and through it: as missing, on every path route */
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        char *nx = strstr(strcpy(missing, reads[i]), "/xl");

        memcpy(nx, "/nx", 3);
        as_like_missing("GET", reads[i], missing, NULL);
    }
    /* writes through it */
    as_like_missing("PUT",
                    "/api/v1/config" C9 "/xl/qmult",
                    "/api/v1/config" C9 "/nx/qmult",
                    "{\"value\":\"9\"}");
    as_like_missing("PUT",
                    "/api/v1/value" C9 "/xl/qmult",
                    "/api/v1/value" C9 "/nx/qmult",
                    "{\"value\":\"9\"}");
    as_like_missing("POST",
                    "/api/v1/config" C9 "/xl",
                    "/api/v1/config" C9 "/nx",
                    "{\"name\":\"x\"}");
    /* and the link itself: not removed */
    as_like_missing(
        "DELETE", "/api/v1/config" C9 "/xl", "/api/v1/config" C9 "/nx", NULL);
    as_ok(ROOT_TOKEN, "GET", "/api/v1/link" C9 "/xl", NULL, 200);
    as(&r,
       ROOT_TOKEN,
       "GET",
       "/api/v1/value/usb_gadget/g2/functions/ncm.usb0/qmult",
       NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"7\""));
    http_resp_done(&r);

    /* a batch through it, at it, or with a target through it: op 0 as if
     * missing, nothing done */
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"store\",\"path\":\"" C9 "/xl/qmult\","
       "\"value\":\"9\"}]}");
    expect_problem(&r, 404, "ENOENT");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     0);
    http_resp_done(&r);
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"unlink\",\"path\":\"" C9 "/xl\"}]}");
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    as(&r,
       G1_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"symlink\",\"path\":\"" C9 "/zl\","
       "\"target\":\"" C9 "/xl\"}]}");
    expect_problem(&r, 404, "ENOENT");
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    http_resp_done(&r);
    /* a compare through it, in "ops" or leading with "else": as missing,
     * the same whether the value given is the one outside (7) or not, so
     * the token cannot probe a value outside by 200 against 412 */
    {
        static const char *const heads[] = {
            "{\"ops\":[{\"op\":\"compare\",\"path\":\"" C9,
            "{\"else\":[{\"op\":\"mkdir\",\"path\":"
            "\"/usb_gadget/g1/functions/ncm.else\"}],"
            "\"ops\":[{\"op\":\"compare\",\"path\":\"" C9,
        };
        static const char *const values[] = {"7", "6"};

        for (size_t h = 0; h < 2; h++) {
            for (size_t v = 0; v < 2; v++) {
                char hidden[512], absent[512];

                (void)snprintf(hidden,
                               sizeof(hidden),
                               "%s/xl/qmult\",\"value\":\"%s\"}]}",
                               heads[h],
                               values[v]);
                (void)snprintf(absent,
                               sizeof(absent),
                               "%s/nx/qmult\",\"value\":\"%s\"}]}",
                               heads[h],
                               values[v]);
                as(&r, G1_TOKEN, "POST", "/api/v1/batch", hidden);
                if (r.status != 404) {
                    print_error(
                        "compare %s: %ld %s\n", values[v], r.status, r.body);
                }
                expect_problem(&r, 404, "ENOENT");
                assert_int_equal(
                    json_integer_value(json_object_get(r.json, "op_index")), 0);
                assert_null(strstr(r.body, "/usb_gadget/g2"));
                http_resp_done(&r);
                as(&r, G1_TOKEN, "POST", "/api/v1/batch", absent);
                expect_problem(&r, 404, "ENOENT");
                http_resp_done(&r);
            }
        }
        as_ok(ROOT_TOKEN,
              "GET",
              "/api/v1/config/usb_gadget/g1/functions/ncm.else",
              NULL,
              404);
    }
    /* a new link whose target is the hidden link: not made */
    as_missing(G1_TOKEN,
               "PUT",
               "/api/v1/config" C9 "/zl",
               "{\"target\":\"" C9 "/xl\"}");
    as_missing(
        G1_TOKEN, "PUT", "/api/v1/link" C9 "/zl", "{\"target\":\"" C9 "/xl\"}");
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config" C9 "/zl", NULL, 404);
    /* rename through it */
    as_missing(G1_TOKEN,
               "POST",
               "/api/v1/rename",
               "{\"from\":\"" C9 "/xl/x\",\"to\":\"" C9 "/y\"}");
    /* export at it; of its folder, without it; an import of a link to
     * it, or through it, or to outside */
    as_missing(GA_TOKEN, "GET", "/api/v1/export?path=" C9 "/xl", NULL);
    as(&r, GA_TOKEN, "GET", "/api/v1/export?path=" C9, NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "\"xl\""));
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    assert_non_null(strstr(r.body, "\"il\""));
    http_resp_done(&r);
    as_denied(GA_TOKEN,
              "POST",
              "/api/v1/import?mode=merge",
              "{\"format\":1,\"root\":{\"name\":\"c.9\",\"path\":\"" C9 "\","
              "\"values\":[],\"links\":[{\"name\":\"ol\",\"target\":"
              "\"/usb_gadget/g2/functions/ncm.usb0\"}],\"children\":[]}}");
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config" C9 "/ol", NULL, 404);
    as_denied(GA_TOKEN,
              "POST",
              "/api/v1/import?mode=merge",
              "{\"format\":1,\"root\":{\"name\":\"c.9\",\"path\":\"" C9 "\","
              "\"values\":[],\"links\":[{\"name\":\"zl\",\"target\":\"" C9
              "/xl\"}],\"children\":[]}}");
    as_missing(GA_TOKEN,
               "POST",
               "/api/v1/import?mode=merge",
               "{\"format\":1,\"root\":{\"name\":\"xl\",\"path\":\"" C9 "/xl\","
               "\"values\":[{\"name\":\"qmult\",\"value\":\"9\"}],"
               "\"links\":[],\"children\":[]}}");
    as(&r,
       ROOT_TOKEN,
       "GET",
       "/api/v1/value/usb_gadget/g2/functions/ncm.usb0/qmult",
       NULL);
    assert_non_null(strstr(r.body, "\"7\""));
    http_resp_done(&r);
    as_ok(ROOT_TOKEN, "GET", "/api/v1/config" C9 "/zl", NULL, 404);

    /* not listed either */
    as(&r, G1_TOKEN, "GET", "/api/v1/config" C9, NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "xl"));
    assert_non_null(strstr(r.body, "\"il\""));
    http_resp_done(&r);

    /* a link whose target is inside: followed, both ways, and a link made
     * through it */
    as_ok(G1_TOKEN, "GET", "/api/v1/config" C9 "/il/qmult", NULL, 200);
    as_ok(G1_TOKEN,
          "PUT",
          "/api/v1/value" C9 "/il/qmult",
          "{\"value\":\"6\"}",
          200);
    as_ok(G1_TOKEN,
          "PUT",
          "/api/v1/config" C9 "/zl",
          "{\"target\":\"" C9 "/il\"}",
          201);
    as(&r, G1_TOKEN, "GET", "/api/v1/link" C9 "/zl", NULL);
    assert_non_null(strstr(r.body, "/usb_gadget/g1/functions/ncm.in"));
    http_resp_done(&r);

    /* events: a write through the link is published where it landed,
     * and filtered there; one through a link inside is seen */
    {
        static const char head[] = "GET /api/v1/events HTTP/1.1\r\nHost: x\r\n"
                                   "Authorization: Bearer " G1_TOKEN "\r\n\r\n";
        char buf[16384];
        bool eof = false;
        int fd = raw_connect();

        raw_send(fd, head, strlen(head));
        assert_true(
            raw_read_for(fd, buf, sizeof(buf), ": connected", 5000, &eof) > 0);
        as_ok(ROOT_TOKEN,
              "PUT",
              "/api/v1/value" C9 "/xl/qmult",
              "{\"value\":\"9\"}",
              200);
        as_ok(ROOT_TOKEN,
              "PUT",
              "/api/v1/value" C9 "/il/qmult",
              "{\"value\":\"4\"}",
              200);
        assert_true(raw_read_for(fd,
                                 buf,
                                 sizeof(buf),
                                 "\"path\":\"/usb_gadget/g1/functions/"
                                 "ncm.in/qmult\"",
                                 5000,
                                 &eof) > 0);
        assert_null(strstr(buf, "/usb_gadget/g2"));
        assert_null(strstr(buf, "xl"));
        close(fd);
    }

    /* history: a write through the link is journaled where it landed, and
     * filtered there */
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/value" C9 "/xl/qmult",
          "{\"value\":\"8\"}",
          200);
    as(&r, ROOT_TOKEN, "GET", "/api/v1/history?limit=1", NULL);
    assert_non_null(
        strstr(r.body, "\"/usb_gadget/g2/functions/ncm.usb0/qmult\""));
    http_resp_done(&r);
    as(&r, G1_TOKEN, "GET", "/api/v1/history?limit=1000", NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    assert_null(strstr(r.body, "c.9/xl"));
    http_resp_done(&r);
    as(&r, G1_TOKEN, "GET", "/api/v1/history?path=" C9 "/xl", NULL);
    assert_null(strstr(r.body, "/usb_gadget/g2"));
    http_resp_done(&r);
#undef C9
}

/* A link to an ancestor of one of the token's subtrees (its target is
 * above the subtree, not in it) is hidden as any link leading outside: not
 * listed, not followed, not read, and a path through it back into the
 * subtree answers as a missing one (docs/security.md, "Links and
 * scopes"): a token sees its subtrees by their own paths only. */
static void test_scope_link_to_ancestor(void **state)
{
#define C8 "/usb_gadget/g1/configs/c.8"
#define OD "/usb_gadget/g1/os_desc"
    struct http_resp r;

    (void)state;
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config/usb_gadget/g1/configs",
          "{\"name\":\"c.8\"}",
          201);
    as_ok(ROOT_TOKEN,
          "POST",
          "/api/v1/config" C8 "/strings",
          "{\"name\":\"0x409\",\"attributes\":{\"configuration\":"
          "\"eight\"}}",
          201);
    as_ok(ROOT_TOKEN,
          "PUT",
          "/api/v1/config" OD "/c8",
          "{\"target\":\"" C8 "\"}",
          201);
    /* the subtree by its own path: inside */
    as_ok(AN_TOKEN,
          "GET",
          "/api/v1/config" C8 "/strings/0x409/configuration",
          NULL,
          200);

    /* the link itself, reads and writes through it: as missing */
    token_like_missing(AN_TOKEN,
                       "GET",
                       "/api/v1/link" OD "/c8",
                       "/api/v1/link" OD "/nx",
                       NULL,
                       "/c8",
                       "/nx");
    token_like_missing(AN_TOKEN,
                       "GET",
                       "/api/v1/config" OD "/c8/strings/0x409/configuration",
                       "/api/v1/config" OD "/nx/strings/0x409/configuration",
                       NULL,
                       "/c8",
                       "/nx");
    token_like_missing(AN_TOKEN,
                       "GET",
                       "/api/v1/config" OD "/c8/strings",
                       "/api/v1/config" OD "/nx/strings",
                       NULL,
                       "/c8",
                       "/nx");
    token_like_missing(AN_TOKEN,
                       "PUT",
                       "/api/v1/value" OD "/c8/strings/0x409/configuration",
                       "/api/v1/value" OD "/nx/strings/0x409/configuration",
                       "{\"value\":\"via\"}",
                       "/c8",
                       "/nx");
    as(&r,
       AN_TOKEN,
       "POST",
       "/api/v1/batch",
       "{\"ops\":[{\"op\":\"store\",\"path\":\"" OD
       "/c8/strings/0x409/configuration\",\"value\":\"via\"}]}");
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    as_missing(AN_TOKEN, "DELETE", "/api/v1/config" OD "/c8", NULL);

    /* not listed in its folder, nor its target named */
    as(&r, AN_TOKEN, "GET", "/api/v1/config" OD "?depth=2", NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "c8"));
    assert_null(strstr(r.body, C8 "\""));
    http_resp_done(&r);
    as(&r, AN_TOKEN, "GET", "/api/v1/export?path=" OD, NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "c8"));
    http_resp_done(&r);

    /* nothing changed through it; the admin still sees it */
    as(&r,
       ROOT_TOKEN,
       "GET",
       "/api/v1/value" C8 "/strings/0x409/configuration",
       NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"eight\""));
    http_resp_done(&r);
    as_ok(ROOT_TOKEN, "GET", "/api/v1/link" OD "/c8", NULL, 200);
    as_ok(ROOT_TOKEN, "DELETE", "/api/v1/config" OD "/c8", NULL, 204);
#undef OD
#undef C8
}

/* A reload that moves a token to another subtree applies to the next
 * request, and ends a stream opened with the old subtrees. */
/* GET /api/v1/whoami: each token's name, role and subtrees (normalized as
 * loaded), whatever its scope; without a valid token, 401 as every API
 * route. A client offers only what it may do from this answer. */
static void expect_whoami(const char *token,
                          const char *name,
                          const char *role,
                          const char *subtree)
{
    struct http_resp r;
    json_t *sub;

    as(&r, token, "GET", "/api/v1/whoami", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), name);
    assert_string_equal(jstr(r.json, "role"), role);
    assert_true(json_is_true(json_object_get(r.json, "tokens")));
    assert_int_equal(json_is_true(json_object_get(r.json, "whole_tree")),
                     strcmp(subtree, "/") == 0);
    sub = json_object_get(r.json, "subtrees");
    assert_int_equal(json_array_size(sub), 1);
    assert_string_equal(json_string_value(json_array_get(sub, 0)), subtree);
    http_resp_done(&r);
}

static void test_scope_whoami(void **state)
{
    struct http_resp r;

    (void)state;
    expect_whoami(ROOT_TOKEN, "root", "admin", "/");
    expect_whoami(RD_TOKEN, "rd", "reader", "/02-simple-children/a");
    expect_whoami(G1_TOKEN, "g1", "writer", "/usb_gadget/g1");
    expect_whoami(SA_TOKEN, "sa", "admin", "/02-simple-children/a");
    expect_whoami(CM_TOKEN, "cm", "writer", "/04-committable-children/pending");
    http(&r, "GET", "/api/v1/whoami", NULL, 0, NULL);
    expect_problem(&r, 401, "EACCES");
    http_resp_done(&r);
    as(&r, "not-a-token-0123456789", "GET", "/api/v1/whoami", NULL);
    expect_problem(&r, 401, "EACCES");
    http_resp_done(&r);
    /* it only reads: a write there is 405 for every role */
    as(&r, ROOT_TOKEN, "POST", "/api/v1/whoami", "{}");
    expect_problem(&r, 405, "EOPNOTSUPP");
    http_resp_done(&r);
}

static void test_scope_reload(void **state)
{
    static const char head[] = "GET /api/v1/events HTTP/1.1\r\n"
                               "Host: x\r\n"
                               "Authorization: Bearer " RD_TOKEN "\r\n\r\n";
    struct cfs_http_tokens *now = NULL;
    char buf[4096];
    bool eof = false;
    int fd;

    (void)state;
    fd = raw_connect();
    raw_send(fd, head, strlen(head));
    assert_true(raw_read_for(fd, buf, sizeof(buf), ": connected", 5000, &eof) >
                0);
    write_tokens("/02-simple-children/a_b");
    assert_int_equal(cfs_http_tokens_load(tokens_path, &now, NULL, 0), 0);
    assert_int_equal(cfs_http_server_set_tokens(harness_server(), now), 0);
    /* the last chunk of the chunked body, or the connection closed */
    assert_true(raw_read_for(fd, buf, sizeof(buf), "0\r\n\r\n", 5000, &eof) >=
                0);
    assert_true(eof || strncmp(buf, "0\r\n\r\n", 5) == 0);
    close(fd);
    as_ok(RD_TOKEN, "GET", "/api/v1/config/02-simple-children/a_b", NULL, 200);
    as_denied(RD_TOKEN, "GET", "/api/v1/config/02-simple-children/a", NULL);
    /* who it is follows the reload too */
    expect_whoami(RD_TOKEN, "rd", "reader", "/02-simple-children/a_b");
    cfs_http_tokens_unref(tokens);
    tokens = now;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_tokens_file),
        cmocka_unit_test(test_scope_reads),
        cmocka_unit_test(test_scope_writes_and_links),
        cmocka_unit_test(test_scope_typed_and_paged),
        cmocka_unit_test(test_scope_batch_and_rename),
        cmocka_unit_test(test_scope_events),
        cmocka_unit_test(test_scope_history),
        cmocka_unit_test(test_scope_export_import),
        cmocka_unit_test(test_scope_through_links),
        cmocka_unit_test(test_scope_link_to_ancestor),
        cmocka_unit_test(test_scope_whoami),
        cmocka_unit_test(test_scope_reload),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
