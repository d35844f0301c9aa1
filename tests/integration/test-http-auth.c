// SPDX-License-Identifier: MIT
/*
 * test-http-auth.c - bearer tokens (docs/DESIGN.md §7): the tokens file, its
 * hashes, each role against read, write and admin routes, the 401 and 403
 * problems, the open routes, and configfsd's refusal to listen beyond
 * loopback without tokens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

/* sha256sum of each token, computed outside the project. */
#define READER_TOKEN "reader-token-0123456789"
#define READER_HASH                                                            \
    "b3057e05d75e8cdca4bd6ddd527af736913e8464a7a3d47d7a09389eaa8e1eb4"
#define WRITER_TOKEN "writer-token-0123456789"
#define WRITER_HASH                                                            \
    "1caf5ddb6778770019772a6363b8cc194d1e3c145d8de3fc2570091710c3771e"
#define ADMIN_TOKEN "admin-token-01234567890"
#define ADMIN_HASH                                                             \
    "10212fafdd9f5d82accd96937285434f2272cbc39110addf2f20d284e9678dc0"

static const char tokens_text[] = "# configfsd tokens: NAME ROLE sha256:HEX\n"
                                  "\n"
                                  "alice reader sha256:" READER_HASH "\n"
                                  "  bob\twriter   sha256:" WRITER_HASH "\r\n"
                                  "root admin sha256:" ADMIN_HASH "\n";

static char *dir;
static char *tokens_path;
static struct cfs_http_tokens *tokens;

static int setup(void **state)
{
    /* These tests send wrong tokens on purpose, many of them: the limit
     * on those has its own test (test-http-throttle.c). */
    struct cfs_http_options o = {.listen = "127.0.0.1:0",
                                 .threads = 2,
                                 .quiet = true,
                                 .auth_fail_burst = 100000};

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&tokens_path, "%s/tokens", dir) < 0) {
        return -1;
    }
    harness_write_file(tokens_path, tokens_text, strlen(tokens_text));
    if (cfs_http_tokens_load(tokens_path, &tokens, NULL, 0) < 0) {
        return -1;
    }
    o.tokens = tokens;
    return harness_start_with(&o) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    cfs_http_tokens_unref(tokens);
    harness_rmtree(dir);
    free(tokens_path);
    free(dir);
    return 0;
}

/* METHOD PATH as the holder of @token (NULL: no Authorization header). */
static void as(struct http_resp *r,
               const char *token,
               const char *method,
               const char *path,
               const char *body)
{
    char auth[600];
    const char *hdrs[3] = {"Content-Type: application/json", NULL, NULL};

    if (token) {
        (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hdrs[1] = auth;
    }
    http(r, method, path, body, body ? strlen(body) : 0, hdrs);
}

/* A 401 problem with WWW-Authenticate: Bearer (and error=invalid_token
 * when a token was sent). */
static void expect_401(const struct http_resp *r, bool invalid)
{
    char *wa = http_header(r, "WWW-Authenticate");

    expect_problem(r, 401, "EACCES");
    assert_non_null(wa);
    assert_true(strncmp(wa, "Bearer ", 7) == 0);
    assert_true((strstr(wa, "error=\"invalid_token\"") != NULL) == invalid);
    free(wa);
}

/* The SHA-256 of the tokens file: FIPS 180-2 vectors. */
static void test_auth_sha256_vectors(void **state)
{
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"",
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc",
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {READER_TOKEN, READER_HASH},
    };
    char hex[65];

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        cfs_http_token_hash(v[i].in, strlen(v[i].in), hex);
        assert_string_equal(hex, v[i].hex);
    }
}

/* A good file: comments, blank lines, tabs, CRLF, upper-case hex; lookups
 * by token give name and role, unknown and malformed tokens nothing. */
static void test_auth_tokens_file_parsed(void **state)
{
    const char *name = NULL;
    char *path, *upper;
    struct cfs_http_tokens *t = NULL;

    (void)state;
    assert_int_equal(cfs_http_tokens_count(tokens), 3);
    assert_int_equal(
        cfs_http_tokens_find(tokens, WRITER_TOKEN, strlen(WRITER_TOKEN), &name),
        CFS_ROLE_WRITER);
    assert_string_equal(name, "bob");
    assert_int_equal(
        cfs_http_tokens_find(tokens, ADMIN_TOKEN, strlen(ADMIN_TOKEN), &name),
        CFS_ROLE_ADMIN);
    assert_string_equal(name, "root");
    assert_int_equal(cfs_http_tokens_find(tokens, "nope", 4, NULL),
                     CFS_ROLE_NONE);
    /* a prefix of a valid token is not that token */
    assert_int_equal(cfs_http_tokens_find(tokens, READER_TOKEN, 10, NULL),
                     CFS_ROLE_NONE);
    assert_int_equal(cfs_http_tokens_find(tokens, "a b", 3, NULL),
                     CFS_ROLE_NONE);

    assert_true(asprintf(&path, "%s/upper", dir) > 0);
    upper = strdup("x reader sha256:" READER_HASH "\n");
    for (char *p = strstr(upper, "sha256:") + 7; *p != '\n'; p++) {
        *p = (char)(*p >= 'a' && *p <= 'f' ? *p - 32 : *p);
    }
    harness_write_file(path, upper, strlen(upper));
    assert_int_equal(cfs_http_tokens_load(path, &t, NULL, 0), 0);
    assert_int_equal(
        cfs_http_tokens_find(t, READER_TOKEN, strlen(READER_TOKEN), NULL),
        CFS_ROLE_READER);
    cfs_http_tokens_unref(t);
    free(upper);
    free(path);
}

/* Each wrong file is refused with the line and the reason. */
static void test_auth_tokens_file_errors(void **state)
{
    static const struct {
        const char *text;
        int err;
        const char *says;
    } bad[] = {
        {"alice reader " READER_TOKEN "\n", -EINVAL, ":1: the third field"},
        {"alice reader sha256:abc\n", -EINVAL, ":1: the third field"},
        {"alice reader sha256:" READER_HASH "00\n", -EINVAL, ":1:"},
        {"alice reader sha256:" READER_HASH "\n"
         "carol root sha256:" ADMIN_HASH "\n",
         -EINVAL,
         ":2: a role is"},
        /* a name with a space: "ice" is read as its role */
        {"al ice reader sha256:" READER_HASH "\n", -EINVAL, ":1: a role is"},
        {"alice reader\n", -EINVAL, ":1: expected"},
        {"alice\n", -EINVAL, ":1: expected"},
        {"al/ice reader sha256:" READER_HASH "\n", -EINVAL, ":1: a name"},
        {"# one\nalice reader sha256:" READER_HASH "\n"
         "alice admin sha256:" ADMIN_HASH "\n",
         -EINVAL,
         ":3: the name is given twice"},
        {"alice reader sha256:" READER_HASH "\n"
         "bob admin sha256:" READER_HASH "\n",
         -EINVAL,
         ":2: the same token"},
        {"# nothing but comments\n\n", -EINVAL, "no tokens"},
        {"", -EINVAL, "no tokens"},
    };
    struct cfs_http_tokens *t = NULL;
    char *path, err[512];

    (void)state;
    assert_true(asprintf(&path, "%s/bad", dir) > 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        harness_write_file(path, bad[i].text, strlen(bad[i].text));
        err[0] = '\0';
        assert_int_equal(cfs_http_tokens_load(path, &t, err, sizeof(err)),
                         bad[i].err);
        if (!strstr(err, bad[i].says)) {
            (void)fprintf(stderr, "case %zu: '%s'\n", i, err);
        }
        assert_non_null(strstr(err, bad[i].says));
        assert_non_null(strstr(err, path));
    }
    assert_int_equal(cfs_http_tokens_load(dir, &t, err, sizeof(err)),
                     -EINVAL); /* a directory */
    unlink(path);
    assert_int_equal(cfs_http_tokens_load(path, &t, err, sizeof(err)), -ENOENT);
    free(path);
}

enum want {
    WANT_2XX,     /* 2xx */
    WANT_401,     /* no token */
    WANT_401_BAD, /* a token, not valid */
    WANT_403,
    WANT_ALLOWED, /* anything but 401 and 403 (a route still to come) */
};

static void check(const struct http_resp *r, enum want want, const char *what)
{
    if ((want == WANT_2XX && (r->status < 200 || r->status > 299)) ||
        (want == WANT_ALLOWED && (r->status == 401 || r->status == 403))) {
        (void)fprintf(stderr, "%s: got %ld %s\n", what, r->status, r->body);
    }
    switch (want) {
    case WANT_2XX:
        assert_in_range(r->status, 200, 299);
        break;
    case WANT_401:
        expect_401(r, false);
        break;
    case WANT_401_BAD:
        expect_401(r, true);
        break;
    case WANT_403:
        expect_problem(r, 403, "EACCES");
        break;
    case WANT_ALLOWED:
        assert_true(r->status != 401 && r->status != 403);
        break;
    }
}

/* Each role against each kind of route: reader reads, writer also writes,
 * admin also exports and imports; no or a bad token gets 401 on all of
 * them; /healthz and the static files need nothing. A refused write
 * changes nothing. */
static void test_auth_roles_matrix(void **state)
{
    static const struct {
        const char *who, *token;
        enum want read, write, admin;
    } roles[] = {
        {"none", NULL, WANT_401, WANT_401, WANT_401},
        {"bad",
         "not-a-token-of-this-server",
         WANT_401_BAD,
         WANT_401_BAD,
         WANT_401_BAD},
        {"reader", READER_TOKEN, WANT_2XX, WANT_403, WANT_403},
        {"writer", WRITER_TOKEN, WANT_2XX, WANT_2XX, WANT_403},
        {"admin", ADMIN_TOKEN, WANT_2XX, WANT_2XX, WANT_ALLOWED},
    };
    struct http_resp r;

    (void)state;
    for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
        const char *tok = roles[i].token;
        char item[128], attr[160], body[64];

        (void)snprintf(item,
                       sizeof(item),
                       "/api/v1/config/02-simple-children/auth-%s",
                       roles[i].who);
        (void)snprintf(attr, sizeof(attr), "%s/storeme", item);
        (void)snprintf(
            body, sizeof(body), "{\"name\":\"auth-%s\"}", roles[i].who);

        as(&r, tok, "GET", "/api/v1/config/", NULL);
        check(&r, roles[i].read, "GET config");
        http_resp_done(&r);
        as(&r, tok, "HEAD", "/api/v1/config/01-childless", NULL);
        assert_int_equal(r.status, roles[i].read == WANT_2XX ? 200 : 401);
        http_resp_done(&r);
        as(&r, tok, "GET", "/api/v1", NULL);
        check(&r, roles[i].read, "GET /api/v1");
        http_resp_done(&r);
        as(&r, tok, "GET", "/api/v1/schema/fakenbd", NULL);
        check(&r, roles[i].read, "GET schema");
        http_resp_done(&r);
        as(&r, tok, "GET", "/api/v1/node/02-simple-children", NULL);
        check(&r, roles[i].read, "GET node");
        http_resp_done(&r);
        as(&r, tok, "GET", "/api/v1/value/01-childless%2Fstoreme", NULL);
        check(&r, roles[i].read, "GET value");
        http_resp_done(&r);
        as(&r,
           tok,
           "PUT",
           "/api/v1/value/01-childless%2Fstoreme",
           "{\"value\":\"3\"}");
        check(&r, roles[i].write, "PUT value");
        http_resp_done(&r);

        as(&r, tok, "POST", "/api/v1/config/02-simple-children", body);
        check(&r, roles[i].write, "POST mkdir");
        http_resp_done(&r);
        as(&r, tok, "PUT", attr, "{\"value\":\"7\"}");
        check(&r, roles[i].write, "PUT store");
        http_resp_done(&r);
        as(&r, ADMIN_TOKEN, "GET", item, NULL); /* what actually happened */
        assert_int_equal(r.status, roles[i].write == WANT_2XX ? 200 : 404);
        http_resp_done(&r);
        as(&r, tok, "DELETE", item, NULL);
        check(&r, roles[i].write, "DELETE rmdir");
        http_resp_done(&r);
        as(&r, tok, "POST", "/api/v1/rename", "{}");
        if (roles[i].write != WANT_2XX) {
            check(&r, roles[i].write, "POST rename");
        } else {
            assert_int_equal(r.status, 400); /* allowed, and malformed */
        }
        http_resp_done(&r);

        as(&r, tok, "GET", "/api/v1/export", NULL);
        check(&r, roles[i].admin, "GET export");
        http_resp_done(&r);
        as(&r, tok, "POST", "/api/v1/import?mode=merge&dry_run=1", "{}");
        check(&r, roles[i].admin, "POST import");
        http_resp_done(&r);

        as(&r, tok, "GET", "/healthz", NULL);
        assert_int_equal(r.status, 200);
        http_resp_done(&r);
        as(&r, tok, "GET", "/index.html", NULL); /* no --static-dir here */
        expect_problem(&r, 404, "ENOENT");
        http_resp_done(&r);
    }
}

/* The Authorization header: the scheme is case-insensitive, anything but
 * a bearer token of RFC 6750 syntax is 401, so is an over-long token. */
static void test_auth_header_forms(void **state)
{
    static const struct {
        const char *header;
        long status;
    } forms[] = {
        {"Authorization: Bearer " READER_TOKEN, 200},
        {"Authorization: bearer " READER_TOKEN, 200},
        {"Authorization: BEARER   " READER_TOKEN "  ", 200},
        {"Authorization: Basic " READER_TOKEN, 401},
        {"Authorization: Bearer", 401},
        {"Authorization: Bearer ", 401},
        {"Authorization: Bearer " READER_TOKEN "x", 401},
        {"Authorization: Bearer " READER_TOKEN " x", 401},
        {"Authorization: Bearer \"" READER_TOKEN "\"", 401},
        {"Authorization: " READER_TOKEN, 401},
        {"X-Token: " READER_TOKEN, 401},
    };
    struct http_resp r;
    char *longer;
    const char *hdrs[2] = {NULL, NULL};

    (void)state;
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        hdrs[0] = forms[i].header;
        http(&r, "GET", "/api/v1/config/", NULL, 0, hdrs);
        if (r.status != forms[i].status) {
            (void)fprintf(stderr, "'%s': %ld\n", forms[i].header, r.status);
        }
        assert_int_equal(r.status, forms[i].status);
        http_resp_done(&r);
    }
    longer = malloc(8200);
    assert_non_null(longer);
    (void)snprintf(longer, 8200, "Authorization: Bearer ");
    memset(longer + 22, 'a', 8000);
    longer[22 + 8000] = '\0';
    hdrs[0] = longer;
    http(&r, "GET", "/api/v1/config/", NULL, 0, hdrs);
    expect_401(&r, true);
    http_resp_done(&r);
    free(longer);
}

/* A refused request's body is dropped, not kept: a body over the limit
 * from a client without a token is 401, not 413. */
static void test_auth_refused_body_dropped(void **state)
{
    size_t len = (size_t)2 * 1024 * 1024;
    char *body = malloc(len);
    const char *hdrs[] = {"Authorization: Bearer " READER_TOKEN, NULL};
    struct http_resp r;

    (void)state;
    assert_non_null(body);
    memset(body, 'x', len);
    http(&r, "PUT", "/api/v1/config/01-childless/storeme", body, len, NULL);
    expect_401(&r, false);
    http_resp_done(&r);
    http(&r, "PUT", "/api/v1/config/01-childless/storeme", body, len, hdrs);
    expect_problem(&r, 403, "EACCES");
    http_resp_done(&r);
    free(body);
    expect_healthy();
}

/* Beyond loopback needs tokens; the server start checks it too, before
 * binding anything. */
static void test_auth_listen_check(void **state)
{
    struct cfs_http_options o = {.listen = "0.0.0.0:0", .quiet = true};
    struct cfs_http_server *s = NULL;

    (void)state;
    assert_int_equal(cfs_http_listen_check("127.0.0.1:8080", false), 0);
    assert_int_equal(cfs_http_listen_check("127.3.2.1:0", false), 0);
    assert_int_equal(cfs_http_listen_check("localhost:80", false), 0);
    assert_int_equal(cfs_http_listen_check("0.0.0.0:8080", false), -EPERM);
    assert_int_equal(cfs_http_listen_check("10.1.2.3:8080", false), -EPERM);
    assert_int_equal(cfs_http_listen_check("128.0.0.1:8080", false), -EPERM);
    assert_int_equal(cfs_http_listen_check("0.0.0.0:8080", true), 0);
    assert_int_equal(cfs_http_listen_check("10.1.2.3:8080", true), 0);
    assert_int_equal(cfs_http_listen_check("nowhere", false), -EINVAL);
    assert_int_equal(cfs_http_listen_check("1.2.3.4:99999", true), -EINVAL);
    assert_int_equal(cfs_http_server_start(&o, &s), -EPERM);
    assert_null(s);
}

/* configfsd itself: refuses 0.0.0.0 without tokens, from the flag and
 * from its environment twin, before binding anything. */
static void test_auth_configfsd_refuses_exposed_listen(void **state)
{
    static const char *const flag[] = {"--listen", "0.0.0.0:0", NULL};
    static const char *const env[] = {"CONFIGFSD_LISTEN=0.0.0.0:0", NULL};
    char *err;

    (void)state;
    assert_int_equal(harness_run(flag, NULL, NULL, NULL, &err, 10), 2);
    assert_non_null(strstr(err, "refusing to listen on 0.0.0.0:0"));
    assert_non_null(strstr(err, "--tokens"));
    free(err);
    assert_int_equal(harness_run(NULL, env, NULL, NULL, &err, 10), 2);
    assert_non_null(strstr(err, "refusing"));
    free(err);
}

/* --insecure-listen (or its twin): 0.0.0.0 served without tokens, and a
 * warning in the log that says so; on loopback the flag changes nothing
 * and says nothing. */
static void test_auth_configfsd_insecure_listen(void **state)
{
    static const char *const flag[] = {
        "--listen", "0.0.0.0:0", "--no-samples", "--insecure-listen", NULL};
    static const char *const exposed[] = {
        "--listen", "0.0.0.0:0", "--no-samples", NULL};
    static const char *const env[] = {"CONFIGFSD_INSECURE_LISTEN=1", NULL};
    static const char *const loopback[] = {
        "--listen", "127.0.0.1:0", "--no-samples", "--insecure-listen", NULL};
    struct harness_proc p;
    struct http_resp r;
    char *log;

    (void)state;
    assert_int_equal(harness_run(exposed, NULL, NULL, NULL, &log, 10), 2);
    assert_non_null(strstr(log, "--insecure-listen"));
    free(log);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            harness_spawn(
                i == 0 ? flag : exposed, i == 0 ? NULL : env, NULL, &p),
            0);
        harness_target(p.port, NULL);
        http(&r, "GET", "/api/v1/config/", NULL, 0, NULL);
        assert_int_equal(r.status, 200); /* no token asked */
        http_resp_done(&r);
        harness_target(0, NULL);
        log = harness_read_file(p.err);
        assert_non_null(log);
        assert_non_null(strstr(log, "level=warning event=insecure"));
        assert_non_null(strstr(log, "WITHOUT AUTHENTICATION"));
        free(log);
        assert_int_equal(harness_reap(&p), 0);
    }
    assert_int_equal(harness_spawn(loopback, NULL, NULL, &p), 0);
    log = harness_read_file(p.err);
    assert_non_null(log);
    assert_null(strstr(log, "event=insecure"));
    free(log);
    assert_int_equal(harness_reap(&p), 0);
}

/* configfsd hash-token: the token on stdin, the line on stdout. */
static void test_auth_hash_token(void **state)
{
    static const char *const ok[] = {"hash-token", "alice", "reader", NULL};
    static const char *const role[] = {"hash-token", "alice", "root", NULL};
    static const char *const name[] = {"hash-token", "a b", "reader", NULL};
    char *out, *err;

    (void)state;
    assert_int_equal(harness_run(ok, NULL, READER_TOKEN "\n", &out, &err, 10),
                     0);
    assert_string_equal(out, "alice reader sha256:" READER_HASH "\n");
    free(out);
    free(err);
    assert_int_equal(harness_run(ok, NULL, "short\n", &out, &err, 10), 2);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "16"));
    free(out);
    free(err);
    assert_int_equal(harness_run(ok, NULL, NULL, NULL, NULL, 10), 2);
    assert_int_equal(harness_run(role, NULL, READER_TOKEN "\n", NULL, NULL, 10),
                     2);
    assert_int_equal(harness_run(name, NULL, READER_TOKEN "\n", NULL, NULL, 10),
                     2);
}

/* configfsd with CONFIGFSD_TOKENS, the file made by hash-token: 401
 * without, 200 with; a broken file stops it with the line. */
static void test_auth_configfsd_tokens_end_to_end(void **state)
{
    static const char *const hash[] = {"hash-token", "ops", "writer", NULL};
    const char *args[] = {
        "--listen", "127.0.0.1:0", "--no-samples", "--db", NULL, NULL};
    const char *hdrs[] = {"Authorization: Bearer " WRITER_TOKEN, NULL};
    char env_tokens[512], *line, *db, *err;
    const char *env[] = {env_tokens, NULL};
    struct harness_proc p;
    struct http_resp r;

    (void)state;
    assert_int_equal(
        harness_run(hash, NULL, WRITER_TOKEN "\n", &line, NULL, 10), 0);
    harness_write_file(tokens_path, line, strlen(line));
    free(line);
    assert_true(asprintf(&db, "%s/db", dir) > 0);
    args[4] = db;
    (void)snprintf(
        env_tokens, sizeof(env_tokens), "CONFIGFSD_TOKENS=%s", tokens_path);
    assert_int_equal(harness_spawn(args, env, NULL, &p), 0);
    harness_target(p.port, NULL);
    http(&r, "GET", "/api/v1/config/", NULL, 0, NULL);
    expect_401(&r, false);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    expect_healthy();
    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);

    line = "ops writer " WRITER_TOKEN "\n"; /* the token, not its hash */
    harness_write_file(tokens_path, line, strlen(line));
    assert_int_equal(harness_run(args, env, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, ":1: the third field"));
    free(err);
    harness_write_file(tokens_path, tokens_text, strlen(tokens_text));
    free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth_sha256_vectors),
        cmocka_unit_test(test_auth_tokens_file_parsed),
        cmocka_unit_test(test_auth_tokens_file_errors),
        cmocka_unit_test(test_auth_roles_matrix),
        cmocka_unit_test(test_auth_header_forms),
        cmocka_unit_test(test_auth_refused_body_dropped),
        cmocka_unit_test(test_auth_listen_check),
        cmocka_unit_test(test_auth_configfsd_refuses_exposed_listen),
        cmocka_unit_test(test_auth_configfsd_insecure_listen),
        cmocka_unit_test(test_auth_hash_token),
        cmocka_unit_test(test_auth_configfsd_tokens_end_to_end),
    };

    return cmocka_run_group_tests_name("http-auth", tests, setup, teardown);
}
