// SPDX-License-Identifier: MIT
/*
 * test-http-forward.c - POST /api/v1/forward (server/fwd-batch.h), the
 * route through which a cluster node sends the writer many forwarded
 * writes in one exchange. Each request of a batch is answered as if it had
 * come alone: its own status, headers, body and the revision its change
 * made durable, in order; its own token decides (a batch is no way around
 * authorization); what no node forwards (a read, an unknown route) is
 * refused inside the batch; and a malformed batch is 400 EINVAL as a
 * whole and changes nothing. On a server with a store, so that every
 * request of the batch waits for its durable commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "http.h"

#define KIDS  "/api/v1/config/02-simple-children"
#define CTYPE "Content-Type: application/x-configfsd-forward"

static char db[512];

static int setup(void **state)
{
    (void)state;
    if (harness_tmpdb("forward", "t.db", db, sizeof(db)) < 0) {
        return -1;
    }
    return harness_start_db(db) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    return harness_tmpdb_remove();
}

/* ---- building a batch, reading its answer ----------------------------- */

struct buf {
    char *p;
    size_t len;
};

static void put(struct buf *b, const void *p, size_t n)
{
    char len[24];
    int k = snprintf(len, sizeof(len), "%zu:", n);

    b->p = realloc(b->p, b->len + (size_t)k + n + 2);
    assert_non_null(b->p);
    memcpy(b->p + b->len, len, (size_t)k);
    memcpy(b->p + b->len + k, p, n);
    b->p[b->len + (size_t)k + n] = ',';
    b->len += (size_t)k + n + 1;
    b->p[b->len] = '\0';
}

static void put_s(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void raw(struct buf *b, const char *s)
{
    size_t n = strlen(s);

    b->p = realloc(b->p, b->len + n + 1);
    assert_non_null(b->p);
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* One request: @hdrs is NULL or a NULL-terminated list of name, value. */
static void add_req(struct buf *b,
                    const char *method,
                    const char *path,
                    const char *query,
                    const char *const *hdrs,
                    const char *body)
{
    size_t n = 0;
    char num[24];

    while (hdrs && hdrs[2 * n]) {
        n++;
    }
    put_s(b, method);
    put_s(b, path);
    put_s(b, query);
    (void)snprintf(num, sizeof(num), "%zu", n);
    put_s(b, num);
    for (size_t i = 0; i < 2 * n; i++) {
        put_s(b, hdrs[i]);
    }
    put_s(b, body);
}

struct sub_answer {
    long status;
    unsigned long long revision;
    char headers[2048]; /* "Name: value\n" ... */
    json_t *json;       /* the body, when JSON */
};

/* The next field of the answer at *@p. */
static char *field(char **p, size_t *ret_len)
{
    char *colon;
    size_t n = strtoul(*p, &colon, 10);
    char *v;

    assert_true(*colon == ':');
    v = colon + 1;
    assert_true(v[n] == ',');
    *ret_len = n;
    *p = v + n + 1;
    return v;
}

static unsigned long long num_field(char **p)
{
    size_t n;
    char *v = field(p, &n), tmp[24];

    assert_true(n > 0 && n < sizeof(tmp));
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    return strtoull(tmp, NULL, 10);
}

/* Send @b; expect 200 and @n answers, read into @a. */
static void send_batch(struct buf *b, struct sub_answer *a, size_t n)
{
    const char *hdrs[] = {CTYPE, NULL};
    struct http_resp r;
    char *p, *end;

    http(&r, "POST", "/api/v1/forward", b->p, b->len, hdrs);
    if (r.status != 200) {
        print_error("%.*s\n", (int)r.len, r.body);
    }
    assert_int_equal(r.status, 200);
    assert_true(r.len >= 6 && memcmp(r.body, "CFSA1\n", 6) == 0);
    p = r.body + 6;
    end = r.body + r.len;
    for (size_t i = 0; i < n; i++) {
        unsigned long long nh;
        size_t len, o = 0;
        char *body;

        a[i].status = (long)num_field(&p);
        a[i].revision = num_field(&p);
        nh = num_field(&p);
        a[i].headers[0] = '\0';
        for (unsigned long long h = 0; h < nh; h++) {
            size_t nl, vl;
            char *name = field(&p, &nl), *value = field(&p, &vl);

            o += (size_t)snprintf(a[i].headers + o,
                                  sizeof(a[i].headers) - o,
                                  "%.*s: %.*s\n",
                                  (int)nl,
                                  name,
                                  (int)vl,
                                  value);
            assert_true(o < sizeof(a[i].headers));
        }
        body = field(&p, &len);
        a[i].json = json_loadb(body, len, 0, NULL);
    }
    assert_ptr_equal(p, end); /* exactly @n answers */
    http_resp_done(&r);
    free(b->p);
    b->p = NULL;
    b->len = 0;
}

static const char *errno_of(const struct sub_answer *a)
{
    return json_string_value(json_object_get(a->json, "errno"));
}

static char *value_of(const char *path)
{
    struct http_resp r;
    char *v;

    http(&r, "GET", path, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    v = strndup(r.body, r.len); /* the value as text */
    http_resp_done(&r);
    return v;
}

/* ---- the tests ---------------------------------------------------------- */

/* Every request of a batch is answered as alone, in order: a mkdir, a
 * store into what it made, the same mkdir again (EEXIST, rule-cited in
 * test-http-config.c), a stale If-Match, a query that waits for a
 * revision, a DELETE; the successes carry the revision they made
 * durable, in order, the refusals none. */
static void test_forward_answers_each(void **state)
{
    static const char *const json[] = {
        "Content-Type", "application/json", NULL};
    static const char *const stale[] = {"If-Match", "\"999999\"", NULL};
    struct buf b = {0};
    struct sub_answer a[6];
    long long before = http_revision();
    char *v;

    (void)state;
    raw(&b, "CFSF1\n");
    add_req(&b, "POST", KIDS, "", json, "{\"name\":\"fw1\"}");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", NULL, "11");
    add_req(&b, "POST", KIDS, "", json, "{\"name\":\"fw1\"}");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", stale, "12");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "min_revision=1", NULL, "13");
    add_req(&b, "POST", KIDS, "", json, "{\"name\":\"fw2\"}");
    send_batch(&b, a, 6);

    assert_int_equal(a[0].status, 201);
    assert_non_null(strstr(a[0].headers, "ETag: \""));
    assert_int_equal(a[0].revision, before + 1);
    assert_int_equal(a[1].status, 200);
    assert_int_equal(a[1].revision, before + 2);
    assert_int_equal(a[2].status, 409);
    assert_string_equal(errno_of(&a[2]), "EEXIST");
    assert_non_null(strstr(a[2].headers, "application/problem+json"));
    assert_int_equal(a[2].revision, 0);
    assert_int_equal(a[3].status, 412);
    assert_string_equal(errno_of(&a[3]), "ESTALE");
    assert_int_equal(a[3].revision, 0);
    assert_int_equal(a[4].status, 200);
    assert_int_equal(a[4].revision, before + 3);
    assert_int_equal(a[5].status, 201);
    assert_int_equal(a[5].revision, before + 4);
    assert_int_equal(http_revision(), before + 4);
    v = value_of(KIDS "/fw1/storeme");
    assert_string_equal(v, "13\n");
    free(v);
    for (size_t i = 0; i < 6; i++) {
        json_decref(a[i].json);
    }
}

/* What no node forwards is refused inside the batch, and the rest runs. */
static void test_forward_only_writes(void **state)
{
    struct buf b = {0};
    struct sub_answer a[5];
    long long before = http_revision();

    (void)state;
    raw(&b, "CFSF1\n");
    add_req(&b, "GET", KIDS, "", NULL, "");
    add_req(&b, "PUT", "/api/v1/nowhere", "", NULL, "x");
    add_req(&b, "POST", "/api/v1/forward", "", NULL, "CFSF1\n");
    add_req(&b, "PATCH", KIDS "/fw1/storeme", "", NULL, "x");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", NULL, "14");
    send_batch(&b, a, 5);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(a[i].status, 400);
        assert_string_equal(errno_of(&a[i]), "EINVAL");
        assert_int_equal(a[i].revision, 0);
    }
    assert_int_equal(a[4].status, 200);
    assert_int_equal(http_revision(), before + 1);
    for (size_t i = 0; i < 5; i++) {
        json_decref(a[i].json);
    }
}

/* A batch that is not well formed is refused whole and changes nothing,
 * though its first requests are well formed. */
static void test_forward_malformed(void **state)
{
    static const char *const bad[] = {
        "",
        "CFSF1\n",                             /* no request */
        "CFSF2\n4:POST,",                      /* another format */
        "CFSF1\n3:PUT,",                       /* cut short */
        "CFSF1\n3:PUT,5:/api/,0:,1:0,1:x",     /* no ',' after the body */
        "CFSF1\n03:PUT,",                      /* a leading zero */
        "CFSF1\n99999999999999999999999:PUT,", /* a length past size_t */
        "CFSF1\n3:PUT,3:api,0:,1:0,0:,",       /* not an absolute path */
        "CFSF1\n3:PUT,1:/,0:,3:257,",          /* too many headers */
        "CFSF1\n3:PUT,1:/,0:,1:x,0:,",         /* not a number */
        "CFSF1\n3:PUT,1:/,0:,1:1,0:,1:v,0:,",  /* a header without name */
    };
    const char *hdrs[] = {CTYPE, NULL};
    long long before = http_revision();
    struct http_resp r;
    struct buf b = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        /* a good request first: it must not run either */
        struct buf g = {0};

        raw(&g, "CFSF1\n");
        add_req(&g, "PUT", KIDS "/fw1/storeme", "", NULL, "15");
        raw(&g, bad[i] + (strncmp(bad[i], "CFSF1\n", 6) == 0 ? 6 : 0));
        http(&r,
             "POST",
             "/api/v1/forward",
             i < 3 ? bad[i] : g.p,
             i < 3 ? strlen(bad[i]) : g.len,
             hdrs);
        expect_problem(&r, 400, "EINVAL");
        http_resp_done(&r);
        free(g.p);
    }
    /* a path with a NUL in it */
    raw(&b, "CFSF1\n");
    put_s(&b, "PUT");
    put(&b, "/api\0/v1", 8);
    raw(&b, "0:,0:,0:,");
    http(&r, "POST", "/api/v1/forward", b.p, b.len, hdrs);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    free(b.p);
    b = (struct buf){0};
    /* more requests than a batch may hold */
    raw(&b, "CFSF1\n");
    for (int i = 0; i < 257; i++) {
        add_req(&b, "PUT", KIDS "/fw1/storeme", "", NULL, "15");
    }
    http(&r, "POST", "/api/v1/forward", b.p, b.len, hdrs);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    free(b.p);
    /* not the batch's type */
    http(&r, "POST", "/api/v1/forward", "CFSF1\n", 6, NULL);
    expect_problem(&r, 415, "EINVAL");
    http_resp_done(&r);
    assert_int_equal(http_revision(), before);
    {
        char *v = value_of(KIDS "/fw1/storeme");

        assert_string_not_equal(v, "15\n");
        free(v);
    }
}

/* With tokens, each request is authorized on its own token; the batch
 * itself needs none (it carries other clients' requests). */
static void test_forward_each_token(void **state)
{
    static const char *const reader_tok = "reader-token-0123456789";
    static const char *const writer_tok = "writer-token-0123456789";
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    struct cfs_http_tokens *tokens = NULL;
    char *dir = harness_tmpdir(), *path = NULL, text[512], rh[80], wh[80];
    char hr[65], hw[65];
    const char *as_reader[] = {"Authorization", rh, NULL};
    const char *as_writer[] = {"Authorization", wh, NULL};
    const char *wrong[] = {"Authorization", "Bearer not-a-token-at-all", NULL};
    struct buf b = {0};
    struct sub_answer a[4];
    char *v;
    int n;

    (void)state;
    cfs_http_token_hash(reader_tok, strlen(reader_tok), hr);
    cfs_http_token_hash(writer_tok, strlen(writer_tok), hw);
    n = snprintf(text,
                 sizeof(text),
                 "alice reader sha256:%s\nbob writer sha256:%s\n",
                 hr,
                 hw);
    assert_true(asprintf(&path, "%s/tokens", dir) > 0);
    harness_write_file(path, text, (size_t)n);
    assert_true(cfs_http_tokens_load(path, &tokens, NULL, 0) >= 0);
    o.tokens = tokens;
    assert_int_equal(harness_restart_with(&o), 0);
    (void)snprintf(rh, sizeof(rh), "Bearer %s", reader_tok);
    (void)snprintf(wh, sizeof(wh), "Bearer %s", writer_tok);

    raw(&b, "CFSF1\n");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", NULL, "16");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", as_reader, "17");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", wrong, "18");
    add_req(&b, "PUT", KIDS "/fw1/storeme", "", as_writer, "19");
    send_batch(&b, a, 4);
    assert_int_equal(a[0].status, 401);
    assert_int_equal(a[1].status, 403);
    assert_string_equal(errno_of(&a[1]), "EACCES");
    assert_int_equal(a[2].status, 401);
    assert_non_null(strstr(a[2].headers, "WWW-Authenticate: Bearer"));
    assert_int_equal(a[3].status, 200);
    for (size_t i = 0; i < 4; i++) {
        assert_true(a[i].status == 200 || a[i].revision == 0);
        json_decref(a[i].json);
    }
    o.tokens = NULL;
    assert_int_equal(harness_restart_with(&o), 0);
    v = value_of(KIDS "/fw1/storeme");
    assert_string_equal(v, "19\n");
    free(v);
    cfs_http_tokens_unref(tokens);
    free(path);
    harness_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_answers_each),
        cmocka_unit_test(test_forward_only_writes),
        cmocka_unit_test(test_forward_malformed),
        cmocka_unit_test(test_forward_each_token),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
