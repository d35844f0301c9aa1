// SPDX-License-Identifier: MIT
/*
 * test-http-scope-graph.c - a property test of scoped tokens and links
 * (docs/security.md, "Links and scopes"): an admin builds random link
 * graphs across gadgets (configs linking to functions of their own gadget
 * and of others), and tokens scoped to one gadget, or to its configs only,
 * send random requests at, through and to those links: reads, listings,
 * stores, new links, unlinks, batches. For every answer: no path outside
 * the token's subtrees is named in it, no value of a function outside is
 * read, and every change it made (the root's journal since) is inside; a
 * request through a link whose target is inside is answered (nothing is
 * hidden that should not be). CFS_SCOPE_GRAPH_ROUNDS (default 1000) and
 * CFS_SCOPE_GRAPH_SEED set the rounds and the seed; a failure prints the
 * seed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "http.h"
#include "scope.h"

#define NG      3 /* gadgets */
#define NF      2 /* functions per gadget */
#define NC      2 /* configs per gadget */
#define NL      3 /* link names per config */
#define ROOT_TK "tok-root-graph-0123456789"

static char *dir;
static struct cfs_http_tokens *tokens;
static unsigned seed;

/* The scoped tokens: one per gadget for its whole subtree, one for its
 * configs only (to which even its own functions are outside). */
struct who {
    char token[64];
    char sub[64];
    struct cfs_http_scope scope;
    char *paths[1];
};
static struct who whos[2 * NG];

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

static long root(const char *method, const char *path, const char *body)
{
    struct http_resp r;
    long st;

    as(&r, ROOT_TK, method, path, body);
    st = r.status;
    http_resp_done(&r);
    return st;
}

static uint64_t revision_now(void)
{
    struct http_resp r;
    uint64_t rev;

    as(&r, ROOT_TK, "GET", "/api/v1", NULL);
    assert_int_equal(r.status, 200);
    rev = (uint64_t)json_integer_value(json_object_get(r.json, "revision"));
    http_resp_done(&r);
    return rev;
}

/* The value function f of gadget g holds: unique to it. */
static int marker(int g, int f)
{
    return 100 + g * NF + f;
}

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    char text[4096], hex[65], path[256], body[128];
    size_t n = 0;
    char *tpath = NULL;
    char *db = NULL;
    const char *env = getenv("CFS_SCOPE_GRAPH_SEED");

    (void)state;
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    dir = harness_tmpdir();
    if (asprintf(&tpath, "%s/tokens", dir) < 0 ||
        asprintf(&db, "%s/db", dir) < 0) {
        return -1;
    }
    cfs_http_token_hash(ROOT_TK, strlen(ROOT_TK), hex);
    n += (size_t)snprintf(
        text + n, sizeof(text) - n, "root admin sha256:%s\n", hex);
    for (int i = 0; i < 2 * NG; i++) {
        struct who *w = &whos[i];

        (void)snprintf(
            w->token, sizeof(w->token), "tok-graph-%02d-0123456789", i);
        (void)snprintf(w->sub,
                       sizeof(w->sub),
                       "/usb_gadget/g%d%s",
                       i % NG,
                       i < NG ? "" : "/configs");
        w->paths[0] = w->sub;
        w->scope.n = 1;
        w->scope.paths = w->paths;
        cfs_http_token_hash(w->token, strlen(w->token), hex);
        n += (size_t)snprintf(text + n,
                              sizeof(text) - n,
                              "w%d admin sha256:%s %s\n",
                              i,
                              hex,
                              w->sub);
    }
    harness_write_file(tpath, text, n);
    if (cfs_http_tokens_load(tpath, &tokens, NULL, 0) < 0 ||
        harness_start_db(db) < 0) {
        free(tpath);
        free(db);
        return -1;
    }
    free(tpath);
    free(db);
    o.tokens = tokens;
    if (harness_restart_with(&o) < 0) {
        return -1;
    }
    for (int g = 0; g < NG; g++) {
        (void)snprintf(body, sizeof(body), "{\"name\":\"g%d\"}", g);
        assert_int_equal(root("POST", "/api/v1/config/usb_gadget", body), 201);
        for (int f = 0; f < NF; f++) {
            (void)snprintf(path,
                           sizeof(path),
                           "/api/v1/config/usb_gadget/g%d/functions",
                           g);
            (void)snprintf(body, sizeof(body), "{\"name\":\"ncm.f%d\"}", f);
            assert_int_equal(root("POST", path, body), 201);
            (void)snprintf(path,
                           sizeof(path),
                           "/api/v1/value/usb_gadget/g%d/functions/ncm.f%d/"
                           "qmult",
                           g,
                           f);
            (void)snprintf(
                body, sizeof(body), "{\"value\":\"%d\"}", marker(g, f));
            assert_int_equal(root("PUT", path, body), 200);
        }
        for (int c = 0; c < NC; c++) {
            (void)snprintf(
                path, sizeof(path), "/api/v1/config/usb_gadget/g%d/configs", g);
            (void)snprintf(body, sizeof(body), "{\"name\":\"c.%d\"}", c);
            assert_int_equal(root("POST", path, body), 201);
        }
    }
    return 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    cfs_http_tokens_unref(tokens);
    harness_rmtree(dir);
    free(dir);
    return 0;
}

/* Every "/usb_gadget..." string in @body is one @w sees. */
static void check_named(const struct who *w, const char *what, const char *body)
{
    for (const char *p = strstr(body, "/usb_gadget"); p;
         p = strstr(p + 1, "/usb_gadget")) {
        char path[256];
        size_t n = strcspn(p, "\"?# \n");

        if (n >= sizeof(path)) {
            n = sizeof(path) - 1;
        }
        memcpy(path, p, n);
        path[n] = '\0';
        if (!cfs_http_scope_sees(&w->scope, path)) {
            fail_msg("seed %u: %s as a token scoped to %s names %s: %s",
                     seed,
                     what,
                     w->sub,
                     path,
                     body);
        }
    }
}

/* No marker of a function outside @w's subtree in @body. */
static void
check_values(const struct who *w, const char *what, const char *body)
{
    for (int g = 0; g < NG; g++) {
        for (int f = 0; f < NF; f++) {
            char fn[96], m[16];

            (void)snprintf(
                fn, sizeof(fn), "/usb_gadget/g%d/functions/ncm.f%d", g, f);
            (void)snprintf(m, sizeof(m), "\"%d", marker(g, f));
            if (!cfs_http_scope_covers(&w->scope, fn) && strstr(body, m)) {
                fail_msg("seed %u: %s as a token scoped to %s reads the value "
                         "of %s: %s",
                         seed,
                         what,
                         w->sub,
                         fn,
                         body);
            }
        }
    }
}

/* Every change since @rev (the root's journal) is inside @w's subtree. */
static void check_changes(const struct who *w, const char *what, uint64_t rev)
{
    struct http_resp r;
    json_t *e;
    size_t i;

    as(&r, ROOT_TK, "GET", "/api/v1/history?limit=50", NULL);
    assert_int_equal(r.status, 200);
    json_array_foreach(json_object_get(r.json, "entries"), i, e) {
        const char *keys[] = {"path", "target", "to"};

        if ((uint64_t)json_integer_value(json_object_get(e, "revision")) <=
            rev) {
            continue;
        }
        for (size_t k = 0; k < 3; k++) {
            const char *p = json_string_value(json_object_get(e, keys[k]));

            if (p && !cfs_http_scope_covers(&w->scope, p)) {
                fail_msg("seed %u: %s as a token scoped to %s changed %s",
                         seed,
                         what,
                         w->sub,
                         p);
            }
        }
    }
    http_resp_done(&r);
}

/* The target of the link at @path as the root reads it (new), or NULL. */
static char *target_of(const char *path)
{
    struct http_resp r;
    char url[320];
    char *t = NULL;

    (void)snprintf(url, sizeof(url), "/api/v1/link%s", path);
    as(&r, ROOT_TK, "GET", url, NULL);
    if (r.status == 200) {
        t = strdup(json_string_value(json_object_get(r.json, "target")));
    }
    http_resp_done(&r);
    return t;
}

static void test_scope_graph(void **state)
{
    const char *env = getenv("CFS_SCOPE_GRAPH_ROUNDS");
    int rounds = env ? atoi(env) : 1000;
    unsigned answered_inside = 0;

    (void)state;
    srand(seed);
    print_message("# seed %u, %d rounds\n", seed, rounds);
    for (int round = 0; round < rounds; round++) {
        int ga = rand() % NG, ca = rand() % NC, la = rand() % NL;
        char link[128], url[512], body[512], what[700];
        /* half the time the token of the link's own gadget, so that links
         * leading inside are met often, not by luck */
        struct who *w = rand() % 2 ? &whos[ga] : &whos[rand() % (2 * NG)];
        struct http_resp r;
        uint64_t rev;
        char *target;
        int kind = rand() % 9;

        (void)snprintf(
            link, sizeof(link), "/usb_gadget/g%d/configs/c.%d/l%d", ga, ca, la);
        /* the admin: a link made, or one removed */
        if (rand() % 3 == 0) {
            (void)snprintf(url, sizeof(url), "/api/v1/config%s", link);
            if (rand() % 2) {
                (void)snprintf(body,
                               sizeof(body),
                               "{\"target\":\"/usb_gadget/g%d/functions/"
                               "ncm.f%d\"}",
                               rand() % 2 ? ga : rand() % NG,
                               rand() % NF);
                (void)root("PUT", url, body);
            } else {
                (void)root("DELETE", url, NULL);
            }
        }
        target = target_of(link);
        body[0] = '\0';
        switch (kind) {
        case 0:
            (void)snprintf(url, sizeof(url), "/api/v1/config%s/qmult", link);
            break;
        case 1:
            (void)snprintf(url,
                           sizeof(url),
                           "/api/v1/config/usb_gadget/g%d/configs/c.%d?depth=2",
                           ga,
                           ca);
            break;
        case 2:
            (void)snprintf(url, sizeof(url), "/api/v1/link%s", link);
            break;
        case 3:
            (void)snprintf(url, sizeof(url), "/api/v1/node%s/", link);
            break;
        case 4:
            (void)snprintf(url, sizeof(url), "/api/v1/value%s/qmult", link);
            (void)snprintf(
                body, sizeof(body), "{\"value\":\"%d\"}", 1 + rand() % 50);
            break;
        case 5: /* a new link whose target is this one */
            (void)snprintf(url,
                           sizeof(url),
                           "/api/v1/config/usb_gadget/g%d/configs/c.%d/n%d",
                           ga,
                           (ca + 1) % NC,
                           round);
            (void)snprintf(body, sizeof(body), "{\"target\":\"%s\"}", link);
            break;
        case 6:
            (void)snprintf(url, sizeof(url), "/api/v1/config%s", link);
            break;
        case 7:
            (void)snprintf(url, sizeof(url), "/api/v1/batch");
            (void)snprintf(body,
                           sizeof(body),
                           "{\"ops\":[{\"op\":\"store\",\"path\":\"%s/qmult\","
                           "\"value\":\"%d\"}]}",
                           link,
                           1 + rand() % 50);
            break;
        default:
            (void)snprintf(url, sizeof(url), "/api/v1/export?path=%s", link);
            break;
        }
        {
            const char *method = kind == 5 || kind == 4 ? "PUT"
                                 : kind == 6            ? "DELETE"
                                 : kind == 7            ? "POST"
                                                        : "GET";

            (void)snprintf(what, sizeof(what), "%s %s %s", method, url, body);
            rev = revision_now();
            as(&r, w->token, method, url, body[0] ? body : NULL);
        }
        if (r.json && json_object_get(r.json, "instance")) {
            /* a problem names the request's own URL: it is the token's */
            char *rest;

            json_object_del(r.json, "instance");
            rest = json_dumps(r.json, 0);
            assert_non_null(rest);
            check_named(w, what, rest);
            free(rest);
        } else {
            check_named(w, what, r.body);
        }
        check_named(w, what, r.headers ? r.headers : "");
        check_values(w, what, r.body);
        check_changes(w, what, rev);
        /* a link whose target is inside is followed: nothing hidden that
         * should not be */
        if (kind == 0 && target && cfs_http_scope_covers(&w->scope, link) &&
            cfs_http_scope_covers(&w->scope, target)) {
            if (r.status != 200) {
                fail_msg("seed %u: %s as a token scoped to %s: %ld, though "
                         "the link leads to %s: %s",
                         seed,
                         what,
                         w->sub,
                         r.status,
                         target,
                         r.body);
            }
            answered_inside++;
        }
        if (kind == 0 && target && !cfs_http_scope_covers(&w->scope, target) &&
            cfs_http_scope_covers(&w->scope, link) && r.status != 404) {
            fail_msg("seed %u: %s as a token scoped to %s: %ld, not as a "
                     "missing path: %s",
                     seed,
                     what,
                     w->sub,
                     r.status,
                     r.body);
        }
        http_resp_done(&r);
        free(target);
    }
    print_message("# %u reads through a link leading inside\n",
                  answered_inside);
    if (rounds >= 200) {
        assert_true(answered_inside > 0); /* the property was exercised */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_graph),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
