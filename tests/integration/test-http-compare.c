// SPDX-License-Identifier: MIT
/*
 * test-http-compare.c - a batch's "compare" op and its "else" branch
 * (docs/API.md, "Conditional batches"): etcd's txn compare on a value.
 *  - a compare that holds lets the batch run; one that does not fails it
 *    412 ESTALE (problem+json) with its op_index, and nothing changed;
 *  - a compare reads the tree as the batch's earlier ops left it; a text
 *    value compares without one trailing newline (as a store takes it),
 *    a binary one byte for byte, NUL bytes and all (base64);
 *  - a write-only attribute, a folder or a missing path cannot be
 *    compared: a clear error with the op_index, nothing changed;
 *  - "else" runs instead of "ops" when a leading compare fails, under the
 *    same transaction ("succeeded" says which ran), whichever of several
 *    leading compares it is;
 *  - compare-and-set: writers that each read a counter and add one with
 *    [compare OLD, store OLD+1], retrying on 412, lose no increment.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <configfs/configfs.h>

#include "http.h"
#include "harness.h"

/* ---- /cmp: one item type with a text, a write-only and a binary one ----
 * /cmp/I/text  any bytes (0644)   /cmp/I/wo  write-only
 * /cmp/I/blob  binary, up to 64 bytes
 */
struct cmp_item {
    struct config_item item;
    char text[4096];
    size_t text_len;
    char blob[64];
    size_t blob_len;
};

/* show() runs beside store() (no configfs lock is held for it, as in the
 * kernel): the module keeps its own values under its own lock. */
static pthread_mutex_t cmp_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cmp_item *to_cmp(struct config_item *item)
{
    return container_of(item, struct cmp_item, item);
}

static ssize_t cmp_text_show(struct config_item *item, char *page)
{
    ssize_t n;

    pthread_mutex_lock(&cmp_lock);
    memcpy(page, to_cmp(item)->text, to_cmp(item)->text_len);
    n = (ssize_t)to_cmp(item)->text_len;
    pthread_mutex_unlock(&cmp_lock);
    return n;
}

static ssize_t
cmp_text_store(struct config_item *item, const char *page, size_t count)
{
    pthread_mutex_lock(&cmp_lock);
    memcpy(to_cmp(item)->text, page, count);
    to_cmp(item)->text_len = count;
    pthread_mutex_unlock(&cmp_lock);
    return (ssize_t)count;
}

static ssize_t
cmp_wo_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    (void)page;
    return (ssize_t)count;
}

static ssize_t cmp_blob_read(struct config_item *item, void *buf, size_t size)
{
    struct cmp_item *k = to_cmp(item);

    if (buf && size >= k->blob_len) {
        memcpy(buf, k->blob, k->blob_len);
    }
    return (ssize_t)k->blob_len;
}

static ssize_t
cmp_blob_write(struct config_item *item, const void *buf, size_t size)
{
    memcpy(to_cmp(item)->blob, buf, size);
    to_cmp(item)->blob_len = size;
    return (ssize_t)size;
}

CONFIGFS_ATTR(cmp_, text);
CONFIGFS_ATTR_WO(cmp_, wo);
CONFIGFS_BIN_ATTR(cmp_, blob, NULL, 64);

static struct configfs_attribute *cmp_attrs[] = {
    &cmp_attr_text, &cmp_attr_wo, NULL};
static struct configfs_bin_attribute *cmp_bin_attrs[] = {&cmp_attr_blob, NULL};

static void cmp_release(struct config_item *item)
{
    free(to_cmp(item));
}

static struct configfs_item_operations cmp_item_ops = {
    .release = cmp_release,
};

static const struct config_item_type cmp_item_type = {
    .ct_name = "cmp",
    .ct_item_ops = &cmp_item_ops,
    .ct_attrs = cmp_attrs,
    .ct_bin_attrs = cmp_bin_attrs,
};

static struct config_item *cmp_make(struct config_group *group,
                                    const char *name)
{
    struct cmp_item *k = calloc(1, sizeof(*k));

    (void)group;
    if (!k) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(&k->item, name, &cmp_item_type);
    return &k->item;
}

static struct configfs_group_operations cmp_group_ops = {
    .make_item = cmp_make,
};

static const struct config_item_type cmps_type = {
    .ct_name = "cmps",
    .ct_group_ops = &cmp_group_ops,
};

static struct configfs_subsystem cmp_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "cmp", .ci_type = &cmps_type}},
};

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 4, .quiet = true};

    config_group_init(&cmp_subsys.su_group);
    if (harness_start(state) < 0 ||
        configfs_register_subsystem(&cmp_subsys) < 0 ||
        harness_restart_with(&o) < 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    configfs_unregister_subsystem(&cmp_subsys);
    return harness_stop(state);
}

/* ---- helpers ----------------------------------------------------------- */

/* POST /api/v1/batch @doc. */
static void batch(struct http_resp *r, const char *doc)
{
    http_json(r, "POST", "/api/v1/batch", doc);
}

/* The tree under /cmp, values included (new reference). */
static json_t *snapshot(void)
{
    struct http_resp r;
    json_t *j;

    http(&r, "GET", "/api/v1/config/cmp?depth=3&values=1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    j = json_incref(r.json);
    http_resp_done(&r);
    return j;
}

/* A failed batch: @status, @err, @op_index, a problem+json document, and
 * the tree and the revision as before (@before, @rev). */
static void expect_refused(const char *doc,
                           long status,
                           const char *err,
                           long long op_index)
{
    json_t *before = snapshot();
    long long rev = http_revision();
    struct http_resp r;
    char *ct;
    json_t *after;

    batch(&r, doc);
    expect_problem(&r, status, err);
    ct = http_header(&r, "Content-Type");
    assert_non_null(ct);
    assert_non_null(strstr(ct, "application/problem+json"));
    free(ct);
    assert_true(json_is_integer(json_object_get(r.json, "op_index")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     op_index);
    http_resp_done(&r);
    after = snapshot();
    assert_true(json_equal(before, after));
    assert_int_equal(http_revision(), rev);
    json_decref(before);
    json_decref(after);
}

/* The raw value of the attribute at @path (new string). */
static char *value_of(const char *path, size_t *ret_len)
{
    struct http_resp r;
    char url[256];
    char *v;

    (void)snprintf(url, sizeof(url), "/api/v1/config%s", path);
    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    v = malloc(r.len + 1);
    assert_non_null(v);
    memcpy(v, r.body, r.len);
    v[r.len] = '\0';
    *ret_len = r.len;
    http_resp_done(&r);
    return v;
}

/* The text attribute at @path holds @want. */
static void expect_text(const char *path, const char *want)
{
    size_t len;
    char *v = value_of(path, &len);

    assert_string_equal(v, want);
    free(v);
}

static void mkitem(const char *name)
{
    struct http_resp r;
    char body[128];

    (void)snprintf(body, sizeof(body), "{\"name\":\"%s\"}", name);
    http_json(&r, "POST", "/api/v1/config/cmp", body);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
}

/* ---- the compare op ----------------------------------------------------- */

static void test_compare_holds_or_fails_the_batch(void **state)
{
    struct http_resp r;

    (void)state;
    mkitem("a");
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/a/text\","
          "\"value\":\"on\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    /* holds: the store after it runs; results name the compare */
    batch(&r,
          "{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/a/text\","
          "\"value\":\"on\"},{\"op\":\"store\",\"path\":\"/cmp/a/text\","
          "\"value\":\"off\"}]}");
    assert_int_equal(r.status, 200);
    assert_null(json_object_get(r.json, "succeeded")); /* no else */
    assert_int_equal(json_array_size(json_object_get(r.json, "results")), 2);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "results"), 0), "op"),
        "compare");
    http_resp_done(&r);
    expect_text("/cmp/a/text", "off");

    /* does not hold: 412, op_index 1, the mkdir before it undone */
    expect_refused(
        "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/cmp/b\"},"
        "{\"op\":\"compare\",\"path\":\"/cmp/a/text\",\"value\":\"on\"},"
        "{\"op\":\"store\",\"path\":\"/cmp/a/text\",\"value\":\"x\"}]}",
        412,
        "ESTALE",
        1);

    /* a compare sees the batch's earlier ops */
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/a/text\","
          "\"value\":\"mid\"},{\"op\":\"compare\",\"path\":\"/cmp/a/text\","
          "\"value\":\"mid\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    expect_refused(
        "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/a/text\","
        "\"value\":\"new\"},{\"op\":\"compare\",\"path\":\"/cmp/a/text\","
        "\"value\":\"mid\"}]}",
        412,
        "ESTALE",
        1);
    expect_text("/cmp/a/text", "mid"); /* the store before it undone */
}

/* Text compares as a store takes it: one trailing newline of either side
 * does not count, a second one does; bytes with NUL through base64. */
static void test_compare_text_newline_and_nul(void **state)
{
    struct http_resp r;

    (void)state;
    mkitem("t");
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/t/text\","
          "\"value\":\"abc\\n\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    /* the driver keeps the bytes: it shows "abc\n" */
    batch(&r,
          "{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
          "\"value\":\"abc\"},{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
          "\"value\":\"abc\\n\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
                   "\"value\":\"abc\\n\\n\"}]}",
                   412,
                   "ESTALE",
                   0);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
                   "\"value\":\"ab\"}]}",
                   412,
                   "ESTALE",
                   0);

    /* "a\0b" (YQBi): equal only to itself, not to its prefix "a" */
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/t/text\","
          "\"value\":\"YQBi\",\"encoding\":\"base64\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    batch(&r,
          "{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
          "\"value\":\"YQBi\",\"encoding\":\"base64\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
                   "\"value\":\"a\"}]}",
                   412,
                   "ESTALE",
                   0);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/t/text\","
                   "\"value\":\"YQBi\",\"encoding\":\"nope\"}]}",
                   400,
                   "EINVAL",
                   0);
}

/* A binary attribute compares byte for byte: its trailing newline counts. */
static void test_compare_binary_exact(void **state)
{
    struct http_resp r;

    (void)state;
    mkitem("bin");
    /* 00 ff 0a */
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/bin/blob\","
          "\"value\":\"AP8K\",\"encoding\":\"base64\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    batch(&r,
          "{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/bin/blob\","
          "\"value\":\"AP8K\",\"encoding\":\"base64\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    /* 00 ff without the newline */
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/bin/blob\","
                   "\"value\":\"AP8=\",\"encoding\":\"base64\"}]}",
                   412,
                   "ESTALE",
                   0);
}

/* No value to compare: a clear error with the op_index, nothing changed. */
static void test_compare_without_a_value(void **state)
{
    struct http_resp r;

    (void)state;
    mkitem("w");
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/cmp/w2\"},"
              "{\"op\":\"compare\",\"path\":\"/cmp/w/wo\",\"value\":\"\"}]}");
    expect_problem(&r, 403, "EACCES");
    assert_non_null(strstr(jstr(r.json, "detail"), "write-only"));
    assert_non_null(strstr(jstr(r.json, "detail"), "op 1 (compare /cmp/w/wo)"));
    http_resp_done(&r);
    expect_refused("{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/cmp/w2\"},"
                   "{\"op\":\"compare\",\"path\":\"/cmp/w/wo\","
                   "\"value\":\"\"}]}",
                   403,
                   "EACCES",
                   1);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/w/nope\","
                   "\"value\":\"\"}]}",
                   404,
                   "ENOENT",
                   0);
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/w\","
                   "\"value\":\"\"}]}",
                   409,
                   "EISDIR",
                   0);
    /* checked before anything runs: a compare without a value */
    expect_refused("{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/cmp/w3\"},"
                   "{\"op\":\"compare\",\"path\":\"/cmp/w/text\"}]}",
                   400,
                   "EINVAL",
                   1);
}

/* ---- else --------------------------------------------------------------- */

static void test_compare_else_branch(void **state)
{
    struct http_resp r;
    const char *cas =
        "{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/e/text\","
        "\"value\":\"idle\"},{\"op\":\"store\",\"path\":\"/cmp/e/text\","
        "\"value\":\"busy\"}],"
        "\"else\":[{\"op\":\"mkdir\",\"path\":\"/cmp/e-was-busy\"}]}";

    (void)state;
    mkitem("e");
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/e/text\","
          "\"value\":\"idle\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    batch(&r, cas); /* idle: ops run */
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "succeeded")));
    assert_int_equal(json_array_size(json_object_get(r.json, "results")), 2);
    http_resp_done(&r);
    expect_text("/cmp/e/text", "busy");

    batch(&r, cas); /* busy: else runs, ops do not */
    assert_int_equal(r.status, 200);
    assert_true(json_is_false(json_object_get(r.json, "succeeded")));
    assert_int_equal(json_array_size(json_object_get(r.json, "results")), 1);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "results"), 0), "path"),
        "/cmp/e-was-busy");
    http_resp_done(&r);
    expect_text("/cmp/e/text", "busy");
    http(&r, "GET", "/api/v1/config/cmp/e-was-busy", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    /* an else op that fails: numbered after ops, nothing changed */
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/e/text\","
                   "\"value\":\"idle\"}],"
                   "\"else\":[{\"op\":\"mkdir\",\"path\":\"/cmp/e2\"},"
                   "{\"op\":\"mkdir\",\"path\":\"/cmp/e2\"}]}",
                   409,
                   "EEXIST",
                   2);
    /* with else, the compares lead: one after a change is refused */
    expect_refused(
        "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/cmp/e3\"},"
        "{\"op\":\"compare\",\"path\":\"/cmp/e/text\",\"value\":\"x\"}],"
        "\"else\":[]}",
        400,
        "EINVAL",
        1);
    /* a compare without a value to compare is an error, not the else */
    expect_refused("{\"ops\":[{\"op\":\"compare\",\"path\":\"/cmp/e/wo\","
                   "\"value\":\"x\"}],"
                   "\"else\":[{\"op\":\"mkdir\",\"path\":\"/cmp/e4\"}]}",
                   403,
                   "EACCES",
                   0);
    http_json(&r, "POST", "/api/v1/batch", "{\"ops\":[],\"else\":{}}");
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
}

/* With "else", every leading compare decides: the batch in which only the
 * first, the second or the third of three fails runs "else", as does one
 * in which all fail; only the one in which all hold runs "ops". */
static void test_compare_else_every_leading_compare(void **state)
{
    struct http_resp r;

    (void)state;
    for (int k = 0; k < 3; k++) {
        char item[16], doc[256];

        (void)snprintf(item, sizeof(item), "k%d", k);
        mkitem(item);
        (void)snprintf(doc,
                       sizeof(doc),
                       "{\"ops\":[{\"op\":\"store\",\"path\":"
                       "\"/cmp/k%d/text\",\"value\":\"v%d\"}]}",
                       k,
                       k);
        batch(&r, doc);
        assert_int_equal(r.status, 200);
        http_resp_done(&r);
    }
    /* bad: the compare that fails (-1 none, 3 all) */
    for (int bad = -1; bad <= 3; bad++) {
        char doc[1024], url[64];
        size_t o = 0;
        bool holds = bad < 0;

        o += (size_t)snprintf(doc + o, sizeof(doc) - o, "{\"ops\":[");
        for (int k = 0; k < 3; k++) {
            o += (size_t)snprintf(doc + o,
                                  sizeof(doc) - o,
                                  "{\"op\":\"compare\",\"path\":"
                                  "\"/cmp/k%d/text\",\"value\":\"%s%d\"},",
                                  k,
                                  bad == k || bad == 3 ? "not-v" : "v",
                                  k);
        }
        o += (size_t)snprintf(doc + o,
                              sizeof(doc) - o,
                              "{\"op\":\"mkdir\",\"path\":\"/cmp/ops%d\"}],"
                              "\"else\":[{\"op\":\"mkdir\",\"path\":"
                              "\"/cmp/else%d\"}]}",
                              bad + 1,
                              bad + 1);
        assert_true(o < sizeof(doc));
        batch(&r, doc);
        if (r.status != 200) {
            print_error("compare %d fails: %ld %s\n", bad, r.status, r.body);
        }
        assert_int_equal(r.status, 200);
        assert_int_equal(json_is_true(json_object_get(r.json, "succeeded")),
                         holds);
        assert_int_equal(json_array_size(json_object_get(r.json, "results")),
                         holds ? 4 : 1);
        http_resp_done(&r);
        /* the branch that ran made its folder, the other did not */
        (void)snprintf(url, sizeof(url), "/api/v1/config/cmp/ops%d", bad + 1);
        http(&r, "GET", url, NULL, 0, NULL);
        assert_int_equal(r.status, holds ? 200 : 404);
        http_resp_done(&r);
        (void)snprintf(url, sizeof(url), "/api/v1/config/cmp/else%d", bad + 1);
        http(&r, "GET", url, NULL, 0, NULL);
        assert_int_equal(r.status, holds ? 404 : 200);
        http_resp_done(&r);
    }
}

/* ---- compare-and-set under concurrent writers --------------------------- */

enum { WRITERS = 4, INCREMENTS = 25 };

struct got {
    char buf[512];
    size_t len;
};

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    struct got *g = ud;
    size_t k = size * n;

    if (g->len + k < sizeof(g->buf)) {
        memcpy(g->buf + g->len, data, k);
        g->len += k;
        g->buf[g->len] = '\0';
    }
    return k;
}

/* METHOD @url with @body (JSON) on a handle of its own: the status, the
 * answer in @g. */
static long
own(const char *method, const char *url, const char *body, struct got *g)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    long status = 0;

    g->len = 0;
    g->buf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, g);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (curl_easy_perform(c) == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

struct writer {
    pthread_t t;
    int done;   /* increments that stood */
    int failed; /* answers other than 200 and 412 */
};

static void *writer_run(void *arg)
{
    struct writer *w = arg;
    char url[128], burl[128], doc[512];
    struct got g;

    (void)snprintf(url,
                   sizeof(url),
                   "http://127.0.0.1:%u/api/v1/config/cmp/n/text",
                   harness_port());
    (void)snprintf(
        burl, sizeof(burl), "http://127.0.0.1:%u/api/v1/batch", harness_port());
    /* bounded: a writer gives up after this many tries */
    for (int tries = 0; w->done < INCREMENTS && tries < 5000; tries++) {
        long n, status;

        if (own("GET", url, NULL, &g) != 200) {
            w->failed++;
            break;
        }
        n = strtol(g.buf, NULL, 10);
        (void)snprintf(doc,
                       sizeof(doc),
                       "{\"ops\":[{\"op\":\"compare\",\"path\":"
                       "\"/cmp/n/text\",\"value\":\"%ld\"},{\"op\":\"store\","
                       "\"path\":\"/cmp/n/text\",\"value\":\"%ld\"}]}",
                       n,
                       n + 1);
        status = own("POST", burl, doc, &g);
        if (status == 200) {
            w->done++;
        } else if (status != 412) {
            w->failed++;
            break;
        }
    }
    return NULL;
}

static void test_compare_and_set_loses_nothing(void **state)
{
    struct writer w[WRITERS] = {0};
    struct http_resp r;
    int total = 0;
    size_t len;
    char *v;

    (void)state;
    mkitem("n");
    batch(&r,
          "{\"ops\":[{\"op\":\"store\",\"path\":\"/cmp/n/text\","
          "\"value\":\"0\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    for (int i = 0; i < WRITERS; i++) {
        assert_int_equal(pthread_create(&w[i].t, NULL, writer_run, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(w[i].t, NULL);
        assert_int_equal(w[i].failed, 0);
        total += w[i].done;
    }
    assert_int_equal(total, WRITERS * INCREMENTS);
    v = value_of("/cmp/n/text", &len);
    assert_int_equal(strtol(v, NULL, 10), WRITERS * INCREMENTS);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_holds_or_fails_the_batch),
        cmocka_unit_test(test_compare_text_newline_and_nul),
        cmocka_unit_test(test_compare_binary_exact),
        cmocka_unit_test(test_compare_without_a_value),
        cmocka_unit_test(test_compare_else_branch),
        cmocka_unit_test(test_compare_else_every_leading_compare),
        cmocka_unit_test(test_compare_and_set_loses_nothing),
    };

    return cmocka_run_group_tests_name("http-compare", tests, setup, teardown);
}
