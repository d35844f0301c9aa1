// SPDX-License-Identifier: MIT
/*
 * test-http-import.c - backup and restore (docs/API.md, "Export and
 * import") with a database:
 *  - other clients' writes are answered while a dry run and a real import
 *    of a 12 000-item export run, and the import's result is right (the
 *    waiting time is the benchmark's: bench/import);
 *  - every attribute kind (text of any bytes, binary with every byte
 *    value, empty, at the size limit, write-only, never written) round
 *    trips: an unchanged tree plans nothing, keeps its revision, and the
 *    dry run's "changed" agrees with its plan;
 *  - replace restores attributes written after the export, never-written
 *    ones included;
 *  - an import planned from the live tree plans under the mutation lock: a
 *    writer that comes while it plans lands before or after it, not in
 *    between;
 *  - a property: random trees over the samples, the shipped schemas (links
 *    included) and the byte-exact test subsystem: export A, import A onto
 *    A plans nothing; empty the tree, import A: the export is A, byte for
 *    byte.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>
#include <configfs/schema.h>

#include "http.h"
#include "harness.h"

static char db[128];
static const char *const json_hdr[] = {"Content-Type: application/json", NULL};

/* ---- /kinds: every kind of attribute ------------------------------------
 * /kinds/I/text  any bytes (0644)     /kinds/I/dflt  "7\n" until written
 * /kinds/I/ro    read-only            /kinds/I/wo    write-only
 * /kinds/I/blob  binary, up to BLOB_MAX bytes
 */
enum { BLOB_MAX = 4096 };

struct kind_item {
    struct config_item item;
    char text[4096];
    size_t text_len;
    char dflt[4096];
    size_t dflt_len;
    char blob[BLOB_MAX];
    size_t blob_len;
};

static struct kind_item *to_kind(struct config_item *item)
{
    return container_of(item, struct kind_item, item);
}

static ssize_t kind_text_show(struct config_item *item, char *page)
{
    memcpy(page, to_kind(item)->text, to_kind(item)->text_len);
    return (ssize_t)to_kind(item)->text_len;
}

static ssize_t
kind_text_store(struct config_item *item, const char *page, size_t count)
{
    memcpy(to_kind(item)->text, page, count);
    to_kind(item)->text_len = count;
    return (ssize_t)count;
}

static ssize_t kind_dflt_show(struct config_item *item, char *page)
{
    memcpy(page, to_kind(item)->dflt, to_kind(item)->dflt_len);
    return (ssize_t)to_kind(item)->dflt_len;
}

static ssize_t
kind_dflt_store(struct config_item *item, const char *page, size_t count)
{
    memcpy(to_kind(item)->dflt, page, count);
    to_kind(item)->dflt_len = count;
    return (ssize_t)count;
}

static ssize_t kind_ro_show(struct config_item *item, char *page)
{
    return sprintf(page, "%s\n", config_item_name(item));
}

static ssize_t
kind_wo_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    (void)page;
    return (ssize_t)count;
}

static ssize_t kind_blob_read(struct config_item *item, void *buf, size_t size)
{
    struct kind_item *k = to_kind(item);

    if (buf && size >= k->blob_len) {
        memcpy(buf, k->blob, k->blob_len);
    }
    return (ssize_t)k->blob_len;
}

static ssize_t
kind_blob_write(struct config_item *item, const void *buf, size_t size)
{
    memcpy(to_kind(item)->blob, buf, size);
    to_kind(item)->blob_len = size;
    return (ssize_t)size;
}

CONFIGFS_ATTR(kind_, text);
CONFIGFS_ATTR(kind_, dflt);
CONFIGFS_ATTR_RO(kind_, ro);
CONFIGFS_ATTR_WO(kind_, wo);
CONFIGFS_BIN_ATTR(kind_, blob, NULL, BLOB_MAX);

static struct configfs_attribute *kind_attrs[] = {
    &kind_attr_text, &kind_attr_dflt, &kind_attr_ro, &kind_attr_wo, NULL};
static struct configfs_bin_attribute *kind_bin_attrs[] = {&kind_attr_blob,
                                                          NULL};

static void kind_release(struct config_item *item)
{
    free(to_kind(item));
}

static struct configfs_item_operations kind_item_ops = {
    .release = kind_release,
};

static const struct config_item_type kind_item_type = {
    .ct_name = "kind",
    .ct_item_ops = &kind_item_ops,
    .ct_attrs = kind_attrs,
    .ct_bin_attrs = kind_bin_attrs,
};

static struct config_item *kind_make(struct config_group *group,
                                     const char *name)
{
    struct kind_item *k = calloc(1, sizeof(*k));

    (void)group;
    if (!k) {
        return ERR_PTR(-ENOMEM);
    }
    k->dflt_len = (size_t)snprintf(k->dflt, sizeof(k->dflt), "7\n");
    config_item_init_type_name(&k->item, name, &kind_item_type);
    return &k->item;
}

static struct configfs_group_operations kind_group_ops = {
    .make_item = kind_make,
};

static const struct config_item_type kinds_type = {
    .ct_name = "kinds",
    .ct_group_ops = &kind_group_ops,
};

static struct configfs_subsystem kinds_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "kinds", .ci_type = &kinds_type}},
};

/* ---- /fmtrt: formatted integers (docs/schemas.md, "format") ------------
 * Their never-written values are exported as shown ("10" for 16 of "%x"),
 * and an import stores that text back: it must read as the same value. */
static const char fmt_json[] =
    "{\"subsystem\": \"fmtrt\", \"root\": \"r\", \"types\": {"
    " \"r\": {\"creates\": {\"kind\": \"item\", \"type\": \"i\"}},"
    " \"i\": {\"attributes\": {"
    "  \"hex\": {\"kind\": \"uint\", \"format\": \"%x\", "
    "\"default\": \"0x10\"},"
    "  \"dx\": {\"kind\": \"uint\", \"format\": \"0x%d\", \"default\": "
    "\"42\"},"
    "  \"w5\": {\"kind\": \"int\", \"format\": \"%5d\", \"default\": "
    "\"-9\"},"
    "  \"idx\": {\"kind\": \"uint\", \"format\": \"id %x\", "
    "\"default\": \"255\"},"
    "  \"big\": {\"kind\": \"uint\", \"format\": \"%016X h\"}"
    " }}}}";
static struct cfs_schema *fmt_schema;
/* ---- /race: items of the kind above, and the attribute /race/gate -------
 * Nothing is stored under /race until test_import_plan_under_lock writes
 * there, so an import at /race has no snapshot to plan from: it plans from
 * the live tree, whose reading calls gate's show(). Armed, that show()
 * sends a writer at what the import is to change, in a thread of its own,
 * and returns once the writer cannot come between the plan and the
 * import's change any more than it can come into a transaction: at once
 * when the planning thread holds the mutation lock (the writer waits for
 * the import to end), else when the writer was answered (it came in
 * between). */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_armed;
static int gate_writer; /* 0: not sent; 1: sent; 2: answered */
static bool gate_under_lock;
static pthread_t gate_thread;
static struct http_resp gate_resp;

static void *gate_write(void *arg)
{
    static const char body[] = "{\"name\":\"a\"}";
    struct http_resp r;

    (void)arg;
    (void)http_try(
        &r, "POST", "/api/v1/config/race", body, sizeof(body) - 1, json_hdr);
    pthread_mutex_lock(&gate_lock);
    gate_resp = r;
    gate_writer = 2;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    return NULL;
}

static ssize_t race_gate_show(struct config_item *item, char *page)
{
    (void)item;
    pthread_mutex_lock(&gate_lock);
    if (gate_armed) {
        struct timespec until;

        gate_armed = false;
        gate_under_lock = cfs_mutation_lock_held();
        if (pthread_create(&gate_thread, NULL, gate_write, NULL) == 0) {
            gate_writer = 1;
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 30; /* bounded: the writer's own timeout */
        while (!gate_under_lock && gate_writer == 1 &&
               pthread_cond_timedwait(&gate_cond, &gate_lock, &until) == 0) {
        }
    }
    pthread_mutex_unlock(&gate_lock);
    return sprintf(page, "open\n");
}

static ssize_t
race_gate_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    (void)page;
    return (ssize_t)count;
}

/* read-write: an export (and so a plan) reads only what an import could
 * write */
CONFIGFS_ATTR(race_, gate);

static struct configfs_attribute *race_attrs[] = {&race_attr_gate, NULL};

static const struct config_item_type race_type = {
    .ct_name = "race",
    .ct_group_ops = &kind_group_ops,
    .ct_attrs = race_attrs,
};

static struct configfs_subsystem race_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "race", .ci_type = &race_type}},
};

static int setup(void **state)
{
    struct cfs_http_options o = {.listen = "127.0.0.1:0",
                                 .threads = 4,
                                 .quiet = true,
                                 .body_limit = 64u << 20};

    (void)state;
    if (harness_tmpdb("import", "t.db", db, sizeof(db)) < 0) {
        return -1;
    }
    config_group_init(&kinds_subsys.su_group);
    config_group_init(&race_subsys.su_group);
    if (harness_start_db(db) < 0 ||
        configfs_register_subsystem(&kinds_subsys) < 0 ||
        cfs_schema_load_buffer(
            fmt_json, strlen(fmt_json), "fmtrt.json", &fmt_schema, NULL) < 0 ||
        cfs_schema_register(fmt_schema) < 0 ||
        configfs_register_subsystem(&race_subsys) < 0 ||
        harness_restart_with(&o) < 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    cfs_schema_free(fmt_schema);
    configfs_unregister_subsystem(&race_subsys);
    configfs_unregister_subsystem(&kinds_subsys);
    harness_stop(state);
    return harness_tmpdb_remove();
}

/* ---- helpers ----------------------------------------------------------- */

/* POST /api/v1/import?QUERY with @doc; the answer must be 200. */
static void import(struct http_resp *r, const char *query, const char *doc)
{
    char url[128];

    (void)snprintf(url, sizeof(url), "/api/v1/import?%s", query);
    http(r, "POST", url, doc, strlen(doc), json_hdr);
    if (r->status != 200) {
        fail_msg("%s: %ld %s", url, r->status, r->body);
    }
}

static size_t plan_len(const struct http_resp *r)
{
    return json_array_size(json_object_get(r->json, "ops"));
}

/* "changed" agrees with the plan. */
static void expect_consistent(const struct http_resp *r)
{
    assert_true(json_is_boolean(json_object_get(r->json, "changed")));
    assert_int_equal(json_is_true(json_object_get(r->json, "changed")),
                     plan_len(r) > 0);
}

/* GET /api/v1/export[?path=]: the body, new string. */
static char *export_doc(const char *path)
{
    struct http_resp r;
    char url[256];
    char *doc;

    (void)snprintf(url,
                   sizeof(url),
                   "/api/v1/export%s%s",
                   path ? "?path=" : "",
                   path ? path : "");
    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    doc = strdup(r.body);
    assert_non_null(doc);
    http_resp_done(&r);
    return doc;
}

/* An export without its revision: from "root" on. */
static const char *root_of(const char *doc)
{
    const char *p = strstr(doc, "\"root\"");

    assert_non_null(p);
    return p;
}

/* Remove every directory made by mkdir, and every link. */
static void empty_tree(void)
{
    struct http_resp r;

    import(&r,
           "mode=replace",
           "{\"format\":1,\"root\":{\"name\":\"\",\"path\":\"/\","
           "\"values\":[],\"links\":[],\"children\":[]}}");
    http_resp_done(&r);
}

static void put(const char *path, const void *value, size_t len)
{
    struct http_resp r;
    char url[512];

    (void)snprintf(url, sizeof(url), "/api/v1/config%s", path);
    http(&r, "PUT", url, value, len, NULL);
    if (r.status != 200 && r.status != 204) {
        fail_msg("PUT %s: %ld %s", path, r.status, r.body);
    }
    http_resp_done(&r);
}

static void batch(json_t *ops)
{
    struct http_resp r;
    json_t *b = json_pack("{so}", "ops", ops);
    char *s = json_dumps(b, JSON_COMPACT);

    http(&r, "POST", "/api/v1/batch", s, strlen(s), json_hdr);
    if (r.status != 200) {
        fail_msg("batch: %ld %s", r.status, r.body);
    }
    http_resp_done(&r);
    free(s);
    json_decref(b);
}

static void expect_shown(const char *path, const void *value, size_t len)
{
    struct http_resp r;
    char url[512];

    (void)snprintf(url, sizeof(url), "/api/v1/config%s", path);
    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    if (r.len != len || memcmp(r.body, value, len) != 0) {
        fail_msg("%s: %zu bytes, not the %zu expected", path, r.len, len);
    }
    http_resp_done(&r);
}

/* ---- a writer on another connection ------------------------------------ */

struct writer {
    pthread_t thread;
    char url[256];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;  /* under lock */
    long acked; /* answered 200/204, under lock */
    long odd;   /* an answer other than 200/204, or a libcurl error */
};

enum { WRITE_BOUND = 1000000 };

static void *write_loop(void *arg)
{
    struct writer *w = arg;

    for (long v = 1; v <= WRITE_BOUND; v++) {
        char body[24];
        long status = 0;
        int rc;
        bool stop;

        (void)snprintf(body, sizeof(body), "%ld", v);
        rc = http_put_own(w->url, body, 120L, &status);
        pthread_mutex_lock(&w->lock);
        if (rc != CURLE_OK || (status != 200 && status != 204)) {
            w->odd = rc != CURLE_OK ? -(long)rc : status;
        } else {
            w->acked = v;
        }
        pthread_cond_broadcast(&w->cond);
        stop = w->stop || w->odd;
        pthread_mutex_unlock(&w->lock);
        if (stop) {
            break;
        }
    }
    return NULL;
}

/* Start writing @path; returns once a first write was answered. */
static void writer_start(struct writer *w, const char *path)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    (void)snprintf(w->url,
                   sizeof(w->url),
                   "http://127.0.0.1:%u/api/v1/config%s",
                   harness_port(),
                   path);
    assert_int_equal(pthread_create(&w->thread, NULL, write_loop, w), 0);
    pthread_mutex_lock(&w->lock);
    while (w->acked == 0 && !w->odd) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
}

/* Stop; every write was answered with success. @return the last value. */
static long writer_stop(struct writer *w)
{
    long acked;

    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    assert_int_equal(w->odd, 0);
    acked = w->acked;
    assert_true(acked > 0);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    return acked;
}

/* ---- writers go on during a big import --------------------------------- */

enum { BIG = 12000 };

static void fill_big(void)
{
    for (int lo = 0; lo < BIG; lo += 500) {
        json_t *ops = json_array();

        for (int i = lo; i < lo + 500; i++) {
            char p[96], v[16];

            (void)snprintf(p, sizeof(p), "/02-simple-children/i%05d", i);
            json_array_append_new(
                ops, json_pack("{ssss}", "op", "mkdir", "path", p));
            (void)snprintf(
                p, sizeof(p), "/02-simple-children/i%05d/storeme", i);
            (void)snprintf(v, sizeof(v), "%d", i);
            json_array_append_new(
                ops,
                json_pack("{ssssss}", "op", "store", "path", p, "value", v));
        }
        batch(ops);
    }
}

static void test_import_writers_go_on(void **state)
{
    struct writer w;
    struct http_resp r;
    char *doc, *after;
    long last;
    char expect[24];

    (void)state;
    empty_tree();
    fill_big();
    doc = export_doc("/02-simple-children");

    /* a dry run of the unchanged export, another client writing */
    writer_start(&w, "/01-childless/storeme");
    import(&r, "mode=replace&dry_run=1", doc);
    last = writer_stop(&w);
    assert_int_equal(plan_len(&r), 0);
    expect_consistent(&r);
    http_resp_done(&r);
    (void)snprintf(expect, sizeof(expect), "%ld\n", last);
    expect_shown("/01-childless/storeme", expect, strlen(expect));

    /* change the tree; a real import puts it back while the other client
     * writes outside the imported subtree, which the import leaves alone */
    {
        json_t *ops = json_array();

        for (int i = 0; i < 200; i++) {
            char p[96];

            (void)snprintf(
                p, sizeof(p), "/02-simple-children/i%05d/storeme", i);
            json_array_append_new(
                ops,
                json_pack(
                    "{ssssss}", "op", "store", "path", p, "value", "424242"));
        }
        json_array_append_new(
            ops,
            json_pack(
                "{ssss}", "op", "mkdir", "path", "/02-simple-children/extra"));
        json_array_append_new(
            ops,
            json_pack(
                "{ssss}", "op", "rmdir", "path", "/02-simple-children/i11999"));
        batch(ops);
    }
    writer_start(&w, "/01-childless/storeme");
    import(&r, "mode=replace", doc);
    last = writer_stop(&w);
    assert_int_equal(plan_len(&r), 200 + 3); /* stores, rmdir, mkdir + store */
    expect_consistent(&r);
    http_resp_done(&r);
    after = export_doc("/02-simple-children");
    assert_string_equal(root_of(after), root_of(doc));
    free(after);
    (void)snprintf(expect, sizeof(expect), "%ld\n", last);
    expect_shown("/01-childless/storeme", expect, strlen(expect));

    /* a writer inside the imported subtree: the snapshot is overtaken and
     * the import plans again; it still reaches the document */
    {
        json_t *ops = json_array();

        json_array_append_new(
            ops,
            json_pack(
                "{ssss}", "op", "mkdir", "path", "/02-simple-children/extra"));
        batch(ops);
    }
    writer_start(&w, "/02-simple-children/extra/storeme");
    import(&r, "mode=merge", doc);
    (void)writer_stop(&w);
    expect_consistent(&r);
    http_resp_done(&r);
    import(&r, "mode=replace", doc);
    http_resp_done(&r);
    after = export_doc("/02-simple-children");
    assert_string_equal(root_of(after), root_of(doc));
    free(after);
    free(doc);
    empty_tree();
}

/* An import planned from the live tree (nothing stored at its path: no
 * snapshot) plans under the mutation lock: a writer that comes while it
 * plans, at what it is to change, is in the tree before the plan is read
 * or after the import, never in between. Here the writer makes /race/a
 * while the import, planning to make /race/a, reads /race: the import
 * makes it, and the writer finds it there (409), not the other way round
 * with the import failing on a plan made before the writer came. */
static void test_import_plan_under_lock(void **state)
{
    static const char doc[] =
        "{\"format\":1,\"root\":{\"name\":\"race\",\"path\":\"/race\","
        "\"values\":[],\"links\":[],\"children\":[{\"name\":\"a\","
        "\"path\":\"/race/a\",\"created\":true,\"values\":[{\"name\":"
        "\"text\",\"value\":\"imported\"}],\"links\":[],"
        "\"children\":[]}]}}";
    struct http_resp r;
    int writer;

    (void)state;
    pthread_mutex_lock(&gate_lock);
    gate_armed = true;
    gate_writer = 0;
    pthread_mutex_unlock(&gate_lock);
    http(&r, "POST", "/api/v1/import?mode=merge", doc, strlen(doc), json_hdr);
    pthread_mutex_lock(&gate_lock);
    writer = gate_writer;
    gate_armed = false;
    pthread_mutex_unlock(&gate_lock);
    {
        struct http_resp e;
        http(&e, "GET", "/api/v1/export?path=/race", NULL, 0, NULL);
        http_resp_done(&e);
    }
    assert_int_not_equal(writer, 0); /* the plan read /race */
    assert_int_equal(pthread_join(gate_thread, NULL), 0);
    if (r.status != 200) {
        print_error("import: %ld %s\n", r.status, r.body);
    }
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "changed")));
    http_resp_done(&r);
    if (gate_resp.status != 409) {
        print_error("writer: %ld %s\n", gate_resp.status, gate_resp.body);
    }
    expect_problem(&gate_resp, 409, "EEXIST");
    http_resp_done(&gate_resp);
    expect_shown("/race/a/text", "imported", 8);
}

/* ---- every attribute kind round trips ---------------------------------- */

static void make_kinds(void)
{
    char all[256], big[4095], blob[BLOB_MAX];
    struct http_resp r;

    for (int i = 0; i < 256; i++) {
        all[i] = (char)i;
    }
    memset(big, 'x', sizeof(big));
    for (size_t i = 0; i < sizeof(blob); i++) {
        blob[i] = (char)(i * 7);
    }
    for (const char *const *n = (const char *const[]){"a", "b", "c", NULL}; *n;
         n++) {
        char body[64];

        (void)snprintf(body, sizeof(body), "{\"name\":\"%s\"}", *n);
        http_json(&r, "POST", "/api/v1/config/kinds", body);
        assert_int_equal(r.status, 201);
        http_resp_done(&r);
    }
    put("/kinds/a/text", all + 1, 255); /* a text value: no NUL */
    put("/kinds/a/blob", all, 256);     /* every byte value */
    put("/kinds/a/wo", "secret", 6);
    put("/kinds/b/text", "", 0);
    put("/kinds/b/blob", "", 0);
    put("/kinds/c/text", big, sizeof(big));   /* the largest text value */
    put("/kinds/c/blob", blob, sizeof(blob)); /* cb_max_size */
}

static void test_import_every_kind_round_trips(void **state)
{
    static const char *const modes[] = {"mode=merge&dry_run=1",
                                        "mode=replace&dry_run=1",
                                        "mode=merge",
                                        "mode=replace"};
    struct http_resp r;
    char *doc, *again;
    long long rev;

    (void)state;
    empty_tree();
    make_kinds();
    doc = export_doc("/kinds");
    /* never written: listed as a default, that can be put back */
    assert_non_null(
        strstr(doc, "{\"name\":\"dflt\",\"value\":\"7\\n\",\"default\":true}"));
    assert_null(strstr(doc, "\"ro\""));
    rev = http_revision();
    for (size_t i = 0; i < sizeof(modes) / sizeof(*modes); i++) {
        import(&r, modes[i], doc);
        if (plan_len(&r) != 0) {
            fail_msg("%s of an unchanged tree: %s", modes[i], r.body);
        }
        expect_consistent(&r);
        assert_int_equal(
            json_integer_value(json_object_get(r.json, "revision")), rev);
        http_resp_done(&r);
    }
    assert_int_equal(http_revision(), rev);

    /* into an empty tree: the export again, byte for byte */
    empty_tree();
    import(&r, "mode=replace", doc);
    expect_consistent(&r);
    http_resp_done(&r);
    again = export_doc("/kinds");
    assert_string_equal(root_of(again), root_of(doc));
    free(again);
    free(doc);
    empty_tree();
}

/* ---- restore means restore --------------------------------------------- */

static void test_import_replace_restores_defaults(void **state)
{
    char all[256];
    struct http_resp r;
    char *doc;

    (void)state;
    for (int i = 0; i < 256; i++) {
        all[i] = (char)(255 - i);
    }
    empty_tree();
    make_kinds();
    doc = export_doc("/kinds");
    put("/kinds/a/dflt", "9", 1);   /* never written when exported */
    put("/kinds/a/blob", all, 256); /* written, now otherwise */
    put("/kinds/b/text", "later", 5);
    import(&r, "mode=replace&dry_run=1", doc);
    assert_int_equal(plan_len(&r), 3);
    expect_consistent(&r);
    http_resp_done(&r);
    import(&r, "mode=replace", doc);
    assert_int_equal(plan_len(&r), 3);
    expect_consistent(&r);
    http_resp_done(&r);
    expect_shown("/kinds/a/dflt", "7\n", 2);
    expect_shown("/kinds/b/text", "", 0);
    for (int i = 0; i < 256; i++) {
        all[i] = (char)i;
    }
    expect_shown("/kinds/a/blob", all, 256);
    /* merge means the same for the values it carries */
    put("/kinds/a/dflt", "10", 2);
    import(&r, "mode=merge", doc);
    assert_int_equal(plan_len(&r), 1);
    http_resp_done(&r);
    expect_shown("/kinds/a/dflt", "7\n", 2);
    free(doc);
    empty_tree();
}

/* An export carries a never-written formatted value as shown, and the
 * import stores that text back: the value must be the one exported (issue
 * 37 (1): "10" of "%x" came back as ten, "0x42" of "0x%d" as 66, and
 * "    9" of "%5d" was refused). Written values, whatever form they were
 * written in, come back as the same values too. */
static void test_import_formatted_values_round_trip(void **state)
{
    struct http_resp r;
    char *doc, *again;

    (void)state;
    empty_tree();
    http_json(&r, "POST", "/api/v1/config/fmtrt", "{\"name\": \"a\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    put("/fmtrt/a/big", "+255", 4);
    doc = export_doc("/fmtrt");
    assert_non_null(
        strstr(doc, "{\"name\":\"hex\",\"value\":\"10\\n\",\"default\":true}"));
    assert_non_null(strstr(doc, "\"value\":\"0x42\\n\",\"default\":true}"));
    assert_non_null(strstr(doc, "\"value\":\"   -9\\n\",\"default\":true}"));
    assert_non_null(strstr(doc, "\"value\":\"id ff\\n\",\"default\":true}"));
    /* the tree moves on; a restore puts every value back */
    put("/fmtrt/a/hex", "0x20", 4);
    put("/fmtrt/a/dx", "7", 1);
    put("/fmtrt/a/w5", "12345", 5);
    put("/fmtrt/a/idx", "id 1", 4);
    put("/fmtrt/a/big", "0", 1);
    import(&r, "mode=replace", doc);
    assert_int_equal(plan_len(&r), 5);
    http_resp_done(&r);
    expect_shown("/fmtrt/a/hex", "10\n", 3);
    expect_shown("/fmtrt/a/dx", "0x42\n", 5);
    expect_shown("/fmtrt/a/w5", "   -9\n", 6);
    expect_shown("/fmtrt/a/idx", "id ff\n", 6);
    expect_shown("/fmtrt/a/big", "00000000000000FF h\n", 19);
    /* restored, the tree is the export: importing it again plans nothing */
    import(&r, "mode=replace&dry_run=1", doc);
    assert_int_equal(plan_len(&r), 0);
    http_resp_done(&r);
    /* into an empty tree: the export again, byte for byte */
    empty_tree();
    import(&r, "mode=replace", doc);
    http_resp_done(&r);
    again = export_doc("/fmtrt");
    assert_string_equal(root_of(again), root_of(doc));
    free(again);
    free(doc);
    empty_tree();
}

/* ---- the property: random trees ---------------------------------------- */

static unsigned rnd(unsigned *seed, unsigned n)
{
    return (unsigned)rand_r(seed) % n;
}

static void op_mkdir(json_t *ops, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void op_store(json_t *ops, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void op_mkdir(json_t *ops, const char *fmt, ...)
{
    char p[256];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(p, sizeof(p), fmt, ap);
    va_end(ap);
    json_array_append_new(ops, json_pack("{ssss}", "op", "mkdir", "path", p));
}

static void op_store(json_t *ops, const char *value, const char *fmt, ...)
{
    char p[256];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(p, sizeof(p), fmt, ap);
    va_end(ap);
    json_array_append_new(
        ops, json_pack("{ssssss}", "op", "store", "path", p, "value", value));
}

/* A random tree: the samples (plain, nested and committable items), FakeNBD
 * (declarative, committable), USB gadgets (declarative, with links), and
 * /kinds with random bytes. */
static void random_tree(unsigned seed)
{
    json_t *ops = json_array();
    char v[64];

    for (unsigned i = 0, n = rnd(&seed, 6); i < n; i++) {
        op_mkdir(ops, "/02-simple-children/s%u", i);
        if (rnd(&seed, 2)) {
            (void)snprintf(v, sizeof(v), "%u", rnd(&seed, 100000));
            op_store(ops, v, "/02-simple-children/s%u/storeme", i);
        }
    }
    for (unsigned g = 0, n = rnd(&seed, 3); g < n; g++) {
        op_mkdir(ops, "/03-group-children/g%u", g);
        for (unsigned i = 0, m = rnd(&seed, 3); i < m; i++) {
            op_mkdir(ops, "/03-group-children/g%u/c%u", g, i);
            (void)snprintf(v, sizeof(v), "%u", rnd(&seed, 1000));
            op_store(ops, v, "/03-group-children/g%u/c%u/storeme", g, i);
        }
    }
    batch(ops);
    ops = json_array();
    for (unsigned i = 0, n = rnd(&seed, 5); i < n; i++) {
        op_mkdir(ops, "/04-committable-children/pending/p%u", i);
        (void)snprintf(v, sizeof(v), "%u", rnd(&seed, 1000));
        op_store(ops, v, "/04-committable-children/pending/p%u/storeme", i);
        if (rnd(&seed, 2)) {
            char from[96], to[96];

            (void)snprintf(
                from, sizeof(from), "/04-committable-children/pending/p%u", i);
            (void)snprintf(
                to, sizeof(to), "/04-committable-children/live/p%u", i);
            json_array_append_new(
                ops,
                json_pack("{ssssss}", "op", "rename", "from", from, "to", to));
        }
    }
    for (unsigned i = 0, n = rnd(&seed, 4); i < n; i++) {
        op_mkdir(ops, "/fakenbd/pending/d%u", i);
        (void)snprintf(
            v, sizeof(v), "10.0.%u.%u", rnd(&seed, 256), rnd(&seed, 256));
        op_store(ops, v, "/fakenbd/pending/d%u/target", i);
        op_store(ops, "/dev/sda", "/fakenbd/pending/d%u/device", i);
        if (rnd(&seed, 2)) {
            op_store(
                ops, rnd(&seed, 2) ? "1" : "0", "/fakenbd/pending/d%u/rw", i);
        }
        if (rnd(&seed, 2)) {
            char from[96], to[96];

            (void)snprintf(from, sizeof(from), "/fakenbd/pending/d%u", i);
            (void)snprintf(to, sizeof(to), "/fakenbd/live/d%u", i);
            json_array_append_new(
                ops,
                json_pack("{ssssss}", "op", "rename", "from", from, "to", to));
        }
    }
    for (unsigned g = 0, n = rnd(&seed, 3); g < n; g++) {
        unsigned nf = rnd(&seed, 3);

        op_mkdir(ops, "/usb_gadget/g%u", g);
        if (rnd(&seed, 2)) {
            (void)snprintf(v, sizeof(v), "%u", rnd(&seed, 65536));
            op_store(ops, v, "/usb_gadget/g%u/idVendor", g);
        }
        for (unsigned f = 0; f < nf; f++) {
            op_mkdir(ops, "/usb_gadget/g%u/functions/ncm.u%u", g, f);
            if (rnd(&seed, 2)) {
                (void)snprintf(v, sizeof(v), "%u", 1 + rnd(&seed, 255));
                op_store(
                    ops, v, "/usb_gadget/g%u/functions/ncm.u%u/qmult", g, f);
            }
        }
        op_mkdir(ops, "/usb_gadget/g%u/configs/c.1", g);
        for (unsigned f = 0; f < nf; f++) {
            char l[128], t[128];

            if (!rnd(&seed, 2)) {
                continue;
            }
            (void)snprintf(
                l, sizeof(l), "/usb_gadget/g%u/configs/c.1/ncm.u%u", g, f);
            (void)snprintf(
                t, sizeof(t), "/usb_gadget/g%u/functions/ncm.u%u", g, f);
            json_array_append_new(
                ops,
                json_pack("{ssssss}", "op", "symlink", "path", l, "target", t));
        }
    }
    batch(ops);
    for (unsigned i = 0, n = rnd(&seed, 4); i < n; i++) {
        char name[16], path[64], bytes[BLOB_MAX];
        size_t len;
        struct http_resp r;
        char body[64];

        (void)snprintf(name, sizeof(name), "k%u", i);
        (void)snprintf(body, sizeof(body), "{\"name\":\"%s\"}", name);
        http_json(&r, "POST", "/api/v1/config/kinds", body);
        assert_int_equal(r.status, 201);
        http_resp_done(&r);
        if (rnd(&seed, 2)) {
            len = rnd(&seed, 4096);
            for (size_t k = 0; k < len; k++) {
                bytes[k] = (char)(1 + rnd(&seed, 255));
            }
            (void)snprintf(path, sizeof(path), "/kinds/%s/text", name);
            put(path, bytes, len);
        }
        if (rnd(&seed, 2)) {
            len = rnd(&seed, BLOB_MAX + 1);
            for (size_t k = 0; k < len; k++) {
                bytes[k] = (char)rnd(&seed, 256);
            }
            (void)snprintf(path, sizeof(path), "/kinds/%s/blob", name);
            put(path, bytes, len);
        }
        if (rnd(&seed, 3) == 0) {
            (void)snprintf(path, sizeof(path), "/kinds/%s/dflt", name);
            put(path, "7\n", 2); /* written, with the default's bytes */
        }
    }
}

static void test_import_property_random_trees(void **state)
{
    /* the seeds cover what the property is about */
    bool link = false, committed = false, base64 = false, dflt = false;

    (void)state;
    for (unsigned seed = 1; seed <= 12; seed++) {
        struct http_resp r;
        char *a, *b;

        empty_tree();
        random_tree(seed);
        a = export_doc(NULL);
        link |= strstr(a, "\"target\":\"/usb_gadget/") != NULL;
        committed |= strstr(a, "\"committed\":true") != NULL;
        base64 |= strstr(a, "\"encoding\":\"base64\"") != NULL;
        dflt |= strstr(a, "\"default\":true") != NULL;
        /* A onto A: nothing */
        import(&r, "mode=replace&dry_run=1", a);
        if (plan_len(&r) != 0) {
            fail_msg("seed %u: A onto A plans %s", seed, r.body);
        }
        expect_consistent(&r);
        http_resp_done(&r);
        import(&r, "mode=merge&dry_run=1", a);
        assert_int_equal(plan_len(&r), 0);
        http_resp_done(&r);
        /* A into an empty tree: A again */
        empty_tree();
        import(&r, "mode=replace", a);
        expect_consistent(&r);
        http_resp_done(&r);
        b = export_doc(NULL);
        if (strcmp(root_of(a), root_of(b)) != 0) {
            fail_msg("seed %u: export differs after import into an empty "
                     "tree:\n%s\n%s",
                     seed,
                     root_of(a),
                     root_of(b));
        }
        free(a);
        free(b);
    }
    assert_true(link && committed && base64 && dflt);
    empty_tree();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_every_kind_round_trips),
        cmocka_unit_test(test_import_replace_restores_defaults),
        cmocka_unit_test(test_import_formatted_values_round_trip),
        cmocka_unit_test(test_import_property_random_trees),
        cmocka_unit_test(test_import_writers_go_on),
        cmocka_unit_test(test_import_plan_under_lock),
    };

    return cmocka_run_group_tests_name("http-import", tests, setup, teardown);
}
