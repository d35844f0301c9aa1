// SPDX-License-Identifier: MIT
/*
 * test-http-store.c - a server with a database: a restart keeps the tree
 * (replayed through the callbacks), history answers newest first, export
 * reproduces the written state, and readiness reports no problems; a
 * server stopped under durable writes keeps every write it acknowledged.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include <configfs/configfs.h>

#include "harness.h"

static char db[128];

/* /bytes/raw: an attribute that takes any bytes, NUL included, as a
 * driver's binary-safe text attribute would. */
static char raw_page[4096];
static size_t raw_len;

static ssize_t bytes_raw_show(struct config_item *item, char *page)
{
    (void)item;
    memcpy(page, raw_page, raw_len);
    return (ssize_t)raw_len;
}

static ssize_t
bytes_raw_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    memcpy(raw_page, page, count);
    raw_len = count;
    return (ssize_t)count;
}

CONFIGFS_ATTR(bytes_, raw);

static struct configfs_attribute *bytes_attrs[] = {&bytes_attr_raw, NULL};

static const struct config_item_type bytes_type = {
    .ct_name = "bytes",
    .ct_attrs = bytes_attrs,
};

static struct configfs_subsystem bytes_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "bytes", .ci_type = &bytes_type}},
};

static int setup(void **state)
{
    (void)state;
    if (harness_tmpdb("store", "t.db", db, sizeof(db)) < 0) {
        return -1;
    }
    config_group_init(&bytes_subsys.su_group);
    if (harness_start_db(db) < 0 ||
        configfs_register_subsystem(&bytes_subsys) < 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    configfs_unregister_subsystem(&bytes_subsys);
    harness_stop(state);
    return harness_tmpdb_remove();
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

/* A query value that does not decode (a bad percent escape, or a NUL) is
 * refused with 400, not read as if it were absent: "dry_run=1%" must not
 * run the import for real, nor "limit=5%00" list a whole group. */
static void test_store_import_bad_query_changes_nothing(void **state)
{
    static const char *const json_hdr[] = {"Content-Type: application/json",
                                           NULL};
    static const char *const bad[] = {
        "/api/v1/import?mode=replace&dry_run=1%",
        "/api/v1/import?mode=replace&dry_run=%zz",
        "/api/v1/import?mode=replace&dry_run=1%00",
        "/api/v1/import?mode=replace%&dry_run=1",
    };
    struct http_resp ex, r;
    char *doc;

    (void)state;
    http(&ex, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_int_equal(ex.status, 200);
    doc = json_dumps(ex.json, JSON_COMPACT);
    http_resp_done(&ex);
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"after-export\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        http(&r, "POST", bad[i], doc, strlen(doc), json_hdr);
        expect_problem(&r, 400, "EINVAL");
        http_resp_done(&r);
        http(&r,
             "GET",
             "/api/v1/config/02-simple-children/after-export",
             NULL,
             0,
             NULL);
        assert_int_equal(r.status, 200); /* not replaced away */
        http_resp_done(&r);
    }
    http(&r,
         "GET",
         "/api/v1/config/02-simple-children?limit=1%00",
         NULL,
         0,
         NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http(&r,
         "DELETE",
         "/api/v1/config/02-simple-children/after-export",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    free(doc);
}

/* A value holding NUL bytes survives export -> import: export writes it
 * as \u0000 (valid JSON), and import takes the document back. */
static void test_store_export_import_nul_bytes(void **state)
{
    struct http_resp ex, r, now;
    char *doc;
    static const char *const json_hdr[] = {"Content-Type: application/json",
                                           NULL};
    static const char *const raw_hdr[] = {
        "Content-Type: application/octet-stream", NULL};
    const char *path = "/api/v1/config/bytes/raw";

    (void)state;
    http(&r, "PUT", path, "a\0b", 3, raw_hdr);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    http(&ex, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_int_equal(ex.status, 200);
    assert_non_null(strstr(ex.body, "\"a\\u0000b\""));
    doc = json_dumps(ex.json, JSON_COMPACT);
    assert_non_null(doc);

    /* the value changes, the backup brings it back */
    http(&r, "PUT", path, "other", 5, raw_hdr);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r, "POST", "/api/v1/import?mode=replace", doc, strlen(doc), json_hdr);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&now, "GET", "/api/v1/export", NULL, 0, NULL);
    json_object_del(now.json, "revision");
    json_object_del(ex.json, "revision");
    assert_true(json_equal(now.json, ex.json));
    assert_int_equal(raw_len, 3);
    assert_memory_equal(raw_page, "a\0b", 3);
    http_resp_done(&now);
    http_resp_done(&ex);
    free(doc);

    /* the same as a JSON value in a PUT and in a batch */
    http_json(&r, "PUT", path, "{\"value\":\"c\\u0000d\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    assert_int_equal(raw_len, 3);
    assert_memory_equal(raw_page, "c\0d", 3);
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"store\",\"path\":\"/bytes/raw\","
              "\"value\":\"e\\u0000\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    assert_int_equal(raw_len, 2);
    /* never in a name, a path, or base64 text */
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"x\\u0000y\"}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http_json(&r,
              "PUT",
              path,
              "{\"value\":\"QUJD\\u0000QUJD\",\"encoding\":\"base64\"}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    assert_int_equal(raw_len, 2);
}

/* An import with If-Match plans and applies only against the revision it
 * names (the ETag of the export it came from): a stale one is 412, dry run
 * or not, and changes nothing. */
static void test_store_import_if_match(void **state)
{
    char stale_hdr[64], fresh_hdr[64];
    const char *stale[] = {"Content-Type: application/json", stale_hdr, NULL};
    const char *fresh[] = {"Content-Type: application/json", fresh_hdr, NULL};
    struct http_resp ex, r;
    char *doc, *etag;

    (void)state;
    http(&ex, "GET", "/api/v1/export", NULL, 0, NULL);
    assert_int_equal(ex.status, 200);
    etag = http_header(&ex, "ETag");
    assert_non_null(etag);
    doc = json_dumps(ex.json, JSON_COMPACT);
    (void)snprintf(stale_hdr, sizeof(stale_hdr), "If-Match: %s", etag);
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"since-export\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);

    http(&r, "POST", "/api/v1/import?mode=replace", doc, strlen(doc), stale);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    http(&r,
         "POST",
         "/api/v1/import?mode=replace&dry_run=1",
         doc,
         strlen(doc),
         stale);
    expect_problem(&r, 412, "ESTALE");
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/since-export",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200); /* still there */
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/export", NULL, 0, NULL);
    free(etag);
    etag = http_header(&r, "ETag");
    http_resp_done(&r);
    (void)snprintf(fresh_hdr, sizeof(fresh_hdr), "If-Match: %s", etag);
    http(&r, "POST", "/api/v1/import?mode=replace", doc, strlen(doc), fresh);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/since-export",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 404); /* replaced by the export */
    http_resp_done(&r);
    free(etag);
    free(doc);
    http_resp_done(&ex);
}

/* Where @op on @path is in an import plan (the "ops" of its answer), or
 * -1. */
static json_int_t plan_index(json_t *ops, const char *op, const char *path)
{
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *o = json_array_get(ops, i);

        if (strcmp(jstr(o, "op"), op) == 0 &&
            strcmp(jstr(o, "path"), path) == 0) {
            return (json_int_t)i;
        }
    }
    return -1;
}

/* An import whose plan fails half-way is answered with the failing op's
 * problem and its op_index in the plan, and changes nothing: here a value
 * the item takes is planned before one the other refuses, and a new item
 * after it. */
static void test_store_import_refused_changes_nothing(void **state)
{
    static const char *const json_hdr[] = {"Content-Type: application/json",
                                           NULL};
#define ITEM(name, value)                                                      \
    "{\"name\":\"" name "\",\"path\":\"/02-simple-children/" name "\","        \
    "\"created\":true,\"committed\":false,\"values\":[{\"name\":"              \
    "\"storeme\",\"value\":\"" value "\"}],\"links\":[],\"children\":[]}"
    static const char doc[] =
        "{\"format\":1,\"root\":{\"name\":\"02-simple-children\","
        "\"path\":\"/02-simple-children\",\"created\":false,"
        "\"committed\":false,\"values\":[],\"links\":[],\"children\":[" ITEM(
            "ia", "6") "," ITEM("ix", "not a number") "," ITEM("iy", "1") "]}}";
#undef ITEM
    json_int_t ok_at, bad_at, new_at;
    struct http_resp r;

    (void)state;
    for (int i = 0; i < 2; i++) {
        http_json(&r,
                  "POST",
                  "/api/v1/config/02-simple-children",
                  i ? "{\"name\":\"ix\",\"attributes\":{\"storeme\":\"5\"}}"
                    : "{\"name\":\"ia\",\"attributes\":{\"storeme\":\"5\"}}");
        assert_int_equal(r.status, 201);
        http_resp_done(&r);
    }
    http(&r,
         "POST",
         "/api/v1/import?mode=merge&dry_run=1",
         doc,
         strlen(doc),
         json_hdr);
    assert_int_equal(r.status, 200);
    ok_at = plan_index(json_object_get(r.json, "ops"),
                       "store",
                       "/02-simple-children/ia/storeme");
    bad_at = plan_index(json_object_get(r.json, "ops"),
                        "store",
                        "/02-simple-children/ix/storeme");
    new_at = plan_index(
        json_object_get(r.json, "ops"), "mkdir", "/02-simple-children/iy");
    http_resp_done(&r);
    assert_true(ok_at >= 0 && bad_at > ok_at && new_at > bad_at);

    http(&r, "POST", "/api/v1/import?mode=merge", doc, strlen(doc), json_hdr);
    expect_problem(&r, 422, "EINVAL");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     bad_at);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/02-simple-children/ia/storeme",
         NULL,
         0,
         NULL);
    assert_string_equal(r.body, "5\n"); /* applied before, undone */
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/02-simple-children/iy", NULL, 0, NULL);
    assert_int_equal(r.status, 404); /* never reached */
    http_resp_done(&r);
}

/* One writer: stores 1, 2, 3, ... into its own item's attribute, each on
 * a new connection, until the server is gone (or a bound is reached). */
struct writer {
    pthread_t thread;
    char url[128];
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    long acked;     /* the last value answered 200, under *lock */
    long attempted; /* the last value sent */
    long odd;       /* an answer other than 200, or 0 */
    int gone;       /* the libcurl error that ended it, or 0 */
};

enum { WRITE_BOUND = 100000 };

/* Its own libcurl calls: the harness's globals change while it stops. */
static void *write_until_gone(void *arg)
{
    struct writer *w = arg;

    for (long v = 1; v <= WRITE_BOUND; v++) {
        char body[24];
        long status = 0;
        int rc;

        (void)snprintf(body, sizeof(body), "%ld", v);
        w->attempted = v;
        rc = http_put_own(w->url, body, 30L, &status);
        if (rc != CURLE_OK) {
            pthread_mutex_lock(w->lock);
            w->gone = rc;
            pthread_cond_broadcast(w->cond);
            pthread_mutex_unlock(w->lock);
            break; /* refused, or closed without an answer: gone */
        }
        pthread_mutex_lock(w->lock);
        if (status == 200) {
            w->acked = v;
        } else {
            w->odd = status;
        }
        pthread_cond_broadcast(w->cond);
        pthread_mutex_unlock(w->lock);
        if (status != 200) {
            break;
        }
    }
    return NULL;
}

/* Stopping the server while durable writes are in flight: the waiting
 * answers go out (or their connections close), nothing hangs, and after a
 * restart every attribute holds at least the last value it was answered
 * 200 for (a later one if that commit made it to disk unanswered). */
static void test_store_stop_under_writes_keeps_acknowledged(void **state)
{
    enum { N = 4 };
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    struct writer w[N];
    struct http_resp r;

    for (int i = 0; i < N; i++) {
        char body[64];

        (void)snprintf(body, sizeof(body), "{\"name\":\"w%d\"}", i);
        http_json(&r, "POST", "/api/v1/config/02-simple-children", body);
        assert_int_equal(r.status, 201);
        http_resp_done(&r);
        memset(&w[i], 0, sizeof(w[i]));
        (void)snprintf(w[i].url,
                       sizeof(w[i].url),
                       "http://127.0.0.1:%u/api/v1/config/"
                       "02-simple-children/w%d/storeme",
                       harness_port(),
                       i);
        w[i].lock = &lock;
        w[i].cond = &cond;
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(
            pthread_create(&w[i].thread, NULL, write_until_gone, &w[i]), 0);
    }
    /* Stop once every writer is well under way. */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < N; i++) {
        while (w[i].acked < 20 && !w[i].odd && !w[i].gone &&
               w[i].attempted < WRITE_BOUND) {
            pthread_cond_wait(&cond, &lock);
        }
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(w[i].gone, 0); /* answered until now */
    }
    pthread_mutex_unlock(&lock);
    harness_stop_server();
    for (int i = 0; i < N; i++) {
        pthread_join(w[i].thread, NULL);
    }
    assert_int_equal(harness_stop(state), 0);
    assert_int_equal(harness_start_db(db), 0);
    for (int i = 0; i < N; i++) {
        long kept;

        assert_int_equal(w[i].odd, 0);
        assert_true(w[i].acked >= 20);
        http(&r, "GET", strstr(w[i].url, "/api/"), NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        kept = strtol(r.body, NULL, 10);
        assert_true(kept >= w[i].acked);
        assert_true(kept <= w[i].attempted);
        http_resp_done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_restart_keeps_tree),
        cmocka_unit_test(test_store_history_newest_first),
        cmocka_unit_test(test_store_export_import_round_trip),
        cmocka_unit_test(test_store_import_if_match),
        cmocka_unit_test(test_store_import_bad_query_changes_nothing),
        cmocka_unit_test(test_store_export_import_nul_bytes),
        cmocka_unit_test(test_store_import_refused_changes_nothing),
        cmocka_unit_test(test_store_stop_under_writes_keeps_acknowledged),
    };

    return cmocka_run_group_tests_name("http-store", tests, setup, teardown);
}
