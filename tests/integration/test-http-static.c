// SPDX-License-Identifier: MIT
/*
 * test-http-static.c - the web UI's files from --static-dir: MIME types,
 * caching and security headers, conditional requests, and every way out
 * of the folder a request path might try (dot segments, encoded dots and
 * slashes, backslashes, NUL, dotfiles, symlinks in and out, a FIFO, a
 * directory without index.html), none of which may serve a byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

#define SECRET "TOP-SECRET-OUTSIDE-THE-FOLDER"

static char *dir, *root;

static const struct {
    const char *name;
    const char *type;
} files[] = {
    {"index.html", "text/html; charset=utf-8"},
    {"UPPER.HTML", "text/html; charset=utf-8"},
    {"app.js", "text/javascript; charset=utf-8"},
    {"mod.mjs", "text/javascript; charset=utf-8"},
    {"style.css", "text/css; charset=utf-8"},
    {"data.json", "application/json"},
    {"app.js.map", "application/json"},
    {"icon.svg", "image/svg+xml"},
    {"img.png", "image/png"},
    {"favicon.ico", "image/vnd.microsoft.icon"},
    {"font.woff2", "font/woff2"},
    {"notes.txt", "text/plain; charset=utf-8"},
    {"blob.bin", "application/octet-stream"},
    {"noext", "application/octet-stream"},
    {"a b.txt", "text/plain; charset=utf-8"},
    {"sub/index.html", "text/html; charset=utf-8"},
    {"sub/deep/file.txt", "text/plain; charset=utf-8"},
};

/* A file's body: its name, as a JSON array where the type is JSON (the
 * harness parses JSON bodies). */
static void content_of(size_t i, char *buf, size_t size)
{
    if (strstr(files[i].type, "json")) {
        (void)snprintf(buf, size, "[\"%s\"]", files[i].name);
    } else {
        (void)snprintf(buf, size, "%s", files[i].name);
    }
}

/* "/" + name, with spaces as %20. */
static void url_of(const char *name, char *buf, size_t size)
{
    size_t o = 0;

    buf[o++] = '/';
    for (const char *p = name; *p && o + 4 < size; p++) {
        if (*p == ' ') {
            memcpy(buf + o, "%20", 3);
            o += 3;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = '\0';
}

static char *at(const char *base, const char *name)
{
    char *p;

    assert_true(asprintf(&p, "%s/%s", base, name) > 0);
    return p;
}

static void put_file(const char *base, const char *name, const char *data)
{
    char *p = at(base, name);

    harness_write_file(p, data, strlen(data));
    free(p);
}

static void make_dir(const char *base, const char *name)
{
    char *p = at(base, name);

    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

static void make_link(const char *target, const char *name)
{
    char *p = at(root, name);

    assert_int_equal(symlink(target, p), 0);
    free(p);
}

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    char *fifo;

    (void)state;
    dir = harness_tmpdir();
    root = at(dir, "static");
    put_file(dir, "secret.txt", SECRET);
    make_dir(dir, "static");
    make_dir(root, "sub");
    make_dir(root, "sub/deep");
    make_dir(root, "empty");
    make_dir(root, ".git");
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char body[128];

        content_of(i, body, sizeof(body));
        put_file(root, files[i].name, body);
    }
    put_file(root, ".hidden", SECRET);
    put_file(root, ".git/config", SECRET);
    put_file(root, "empty/listing-would-show-this", SECRET);
    make_link("../secret.txt", "link-out");
    make_link("/etc/passwd", "abs-link");
    make_link("index.html", "link-in");
    make_link("..", "dirlink");
    make_link("../../secret.txt", "sub/uplink");
    make_link("sub", "sublink");
    fifo = at(root, "fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    free(fifo);
    o.static_dir = root;
    return harness_start_with(&o) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    harness_rmtree(dir);
    free(root);
    free(dir);
    return 0;
}

/* The security headers every static response carries, errors included. */
static void expect_page_headers(const struct http_resp *r)
{
    char *csp = http_header(r, "Content-Security-Policy");

    assert_non_null(csp);
    assert_true(strncmp(csp, "default-src 'self'", 18) == 0);
    assert_non_null(strstr(csp, "frame-ancestors 'none'"));
    assert_non_null(strstr(csp, "object-src 'none'"));
    assert_null(strstr(csp, "unsafe")); /* no unsafe-inline, unsafe-eval */
    assert_null(strstr(csp, "*"));
    free(csp);
    expect_header(r, "X-Content-Type-Options", "nosniff");
    expect_header(r, "Referrer-Policy", "no-referrer");
}

/* Each extension of the table gets its type; the body is the file. */
static void test_static_mime_types(void **state)
{
    struct http_resp r;

    (void)state;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char url[128], body[128];

        url_of(files[i].name, url, sizeof(url));
        content_of(i, body, sizeof(body));
        http(&r, "GET", url, NULL, 0, NULL);
        if (r.status != 200) {
            (void)fprintf(stderr, "%s: %ld\n", url, r.status);
        }
        assert_int_equal(r.status, 200);
        expect_header(&r, "Content-Type", files[i].type);
        assert_int_equal(r.len, strlen(body));
        assert_memory_equal(r.body, body, r.len);
        expect_page_headers(&r);
        http_resp_done(&r);
    }
}

/* "/" and a directory give their index.html; HEAD has the length and no
 * body; other methods are 405 with Allow. */
static void test_static_index_head_methods(void **state)
{
    static const char *const dirs[] = {"/", "/sub/", "/sub", "//sub//"};
    static const char *const methods[] = {"POST", "PUT", "DELETE"};
    struct http_resp r;
    char *cl;

    (void)state;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        http(&r, "GET", dirs[i], NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        expect_header(&r, "Content-Type", "text/html; charset=utf-8");
        assert_string_equal(r.body, i == 0 ? "index.html" : "sub/index.html");
        http_resp_done(&r);
    }
    http(&r, "HEAD", "/app.js", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    cl = http_header(&r, "Content-Length");
    assert_string_equal(cl, "6");
    free(cl);
    expect_header(&r, "Content-Type", "text/javascript; charset=utf-8");
    http_resp_done(&r);
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        http(&r, methods[i], "/index.html", "x", 1, NULL);
        expect_problem(&r, 405, "EOPNOTSUPP");
        expect_header(&r, "Allow", "GET, HEAD");
        http_resp_done(&r);
    }
}

/* ETag and Last-Modified with Cache-Control: no-cache; If-None-Match and
 * If-Modified-Since give 304; a changed file has a new ETag. */
static void test_static_caching(void **state)
{
    const char *hdrs[2] = {NULL, NULL};
    struct http_resp r;
    char *etag, *lm, *etag2, line[256];
    char *path = at(root, "notes.txt");
    struct timeval tv[2] = {{1000000000, 0}, {1000000000, 0}};

    (void)state;
    http(&r, "GET", "/notes.txt", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Cache-Control", "no-cache");
    etag = http_header(&r, "ETag");
    lm = http_header(&r, "Last-Modified");
    assert_non_null(etag);
    assert_non_null(lm);
    assert_true(etag[0] == '"' && etag[strlen(etag) - 1] == '"');
    assert_non_null(strstr(lm, " GMT"));
    http_resp_done(&r);

    (void)snprintf(line, sizeof(line), "If-None-Match: %s", etag);
    hdrs[0] = line;
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.len, 0);
    etag2 = http_header(&r, "ETag");
    assert_string_equal(etag2, etag);
    free(etag2);
    http_resp_done(&r);
    (void)snprintf(line, sizeof(line), "If-None-Match: \"x\", W/%s", etag);
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 304);
    http_resp_done(&r);
    hdrs[0] = "If-None-Match: \"other\"";
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    hdrs[0] = "If-None-Match: *";
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 304);
    http_resp_done(&r);

    (void)snprintf(line, sizeof(line), "If-Modified-Since: %s", lm);
    hdrs[0] = line;
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 304);
    http_resp_done(&r);
    hdrs[0] = "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT";
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    hdrs[0] = "If-Modified-Since: yesterday";
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    /* changed: new validators, old ones no longer match */
    harness_write_file(path, "changed", 7);
    assert_int_equal(utimes(path, tv), 0);
    (void)snprintf(line, sizeof(line), "If-None-Match: %s", etag);
    hdrs[0] = line;
    http(&r, "GET", "/notes.txt", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "changed");
    etag2 = http_header(&r, "ETag");
    assert_string_not_equal(etag2, etag);
    free(etag2);
    expect_header(&r, "Last-Modified", "Sun, 09 Sep 2001 01:46:40 GMT");
    http_resp_done(&r);
    harness_write_file(path, "notes.txt", 9);
    free(etag);
    free(lm);
    free(path);
}

/* No way out of the folder, no hidden file, no symlink, no listing, no
 * FIFO: 404 (400 for a bad escape), never a byte of what is there. */
static void test_static_no_escape(void **state)
{
    static const char *const paths[] = {
        "/../secret.txt",
        "/../../../../../../etc/passwd",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/sub/../../secret.txt",
        "/sub/%2e%2e/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/sub%2f..%2f..%2fsecret.txt",
        "/%252e%252e/secret.txt",
        "/..\\secret.txt",
        "/sub\\..\\..\\secret.txt",
        "/%5c..%5csecret.txt",
        "/./index.html",
        "/.hidden",
        "/%2ehidden",
        "/.git/config",
        "/.git/",
        "/link-out",
        "/abs-link",
        "/link-in",
        "/dirlink/secret.txt",
        "/dirlink/static/index.html",
        "/sub/uplink",
        "/sublink/index.html",
        "/sublink/",
        "/fifo",
        "/empty/",
        "/empty",
        "/index.html%00.txt",
        "/%00",
        "/index.html/",
        "/index.html/x",
        "/nothing-here",
        "/sub/deep/",
        "/%01",
        "/sub/%0a",
        "//etc/passwd",
        "/etc/passwd",
    };
    static const char *const bad[] = {"/%zz", "/%2", "/sub/%g0/x"};
    struct http_resp r;

    (void)state;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        http(&r, "GET", paths[i], NULL, 0, NULL);
        if (r.status != 404) {
            (void)fprintf(stderr, "%s: %ld %s\n", paths[i], r.status, r.body);
        }
        expect_problem(&r, 404, "ENOENT");
        assert_null(strstr(r.body, SECRET));
        assert_null(strstr(r.body, "root:"));
        assert_null(strstr(r.body, "listing-would-show-this"));
        expect_page_headers(&r);
        http_resp_done(&r);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        http(&r, "GET", bad[i], NULL, 0, NULL);
        expect_problem(&r, 400, "EINVAL");
        http_resp_done(&r);
    }
    expect_healthy();
}

/* The API's namespace is never served from files, and API responses do
 * not take the page headers (but do say nosniff). */
static void test_static_api_is_not_static(void **state)
{
    struct http_resp r;
    char *csp;

    (void)state;
    http(&r, "GET", "/api/v1/nothing", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    http(&r, "GET", "/api", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    expect_header(&r, "X-Content-Type-Options", "nosniff");
    csp = http_header(&r, "Content-Security-Policy");
    assert_null(csp);
    http_resp_done(&r);
}

/* The shipped editor's files, and a server without --static-dir. */
static void test_static_shipped_and_none(void **state)
{
    static const struct {
        const char *url, *type;
    } shipped[] = {
        {"/js/main.js", "text/javascript; charset=utf-8"},
        {"/js/api.js", "text/javascript; charset=utf-8"},
        {"/app.css", "text/css; charset=utf-8"},
        {"/favicon.svg", "image/svg+xml"},
    };
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};
    struct http_resp r;
    const char *script;

    (void)state;
    o.static_dir = CFS_SOURCE_ROOT "/web/static";
    assert_int_equal(harness_restart_with(&o), 0);
    http(&r, "GET", "/", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Type", "text/html; charset=utf-8");
    /* one script, a module from a file: the CSP blocks anything inline */
    script = strstr(r.body, "<script");
    assert_non_null(script);
    assert_int_equal(
        strncmp(script,
                "<script type=\"module\" src=\"js/main.js\"></script>",
                strlen("<script type=\"module\" src=\"js/main.js\"></script>")),
        0);
    assert_null(strstr(script + 1, "<script"));
    assert_null(strstr(r.body, "style="));
    assert_null(strstr(r.body, "<style"));
    expect_page_headers(&r);
    http_resp_done(&r);
    for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
        http(&r, "GET", shipped[i].url, NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        expect_header(&r, "Content-Type", shipped[i].type);
        expect_page_headers(&r);
        http_resp_done(&r);
    }

    o.static_dir = NULL;
    assert_int_equal(harness_restart_with(&o), 0);
    http(&r, "GET", "/", NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);

    o.static_dir = "/nonexistent/static";
    assert_true(harness_restart_with(&o) < 0);
    o.static_dir = root;
    assert_int_equal(harness_restart_with(&o), 0);
    expect_healthy();
}

/* configfsd: --static-dir that does not exist stops start-up; its
 * environment twin serves the folder. */
static void test_static_configfsd_flag(void **state)
{
    static const char *const missing[] = {
        "--listen", "127.0.0.1:0", "--static-dir", "/nonexistent", NULL};
    static const char *const args[] = {
        "--listen", "127.0.0.1:0", "--no-samples", NULL};
    char *env_dir;
    const char *env[] = {NULL, NULL};
    struct harness_proc p;
    struct http_resp r;
    char *err;

    (void)state;
    assert_int_equal(harness_run(missing, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "--static-dir /nonexistent"));
    free(err);
    assert_true(asprintf(&env_dir, "CONFIGFSD_STATIC_DIR=%s", root) > 0);
    env[0] = env_dir;
    assert_int_equal(harness_spawn(args, env, NULL, &p), 0);
    harness_target(p.port, NULL);
    http(&r, "GET", "/data.json", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);
    free(env_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_mime_types),
        cmocka_unit_test(test_static_index_head_methods),
        cmocka_unit_test(test_static_caching),
        cmocka_unit_test(test_static_no_escape),
        cmocka_unit_test(test_static_api_is_not_static),
        cmocka_unit_test(test_static_shipped_and_none),
        cmocka_unit_test(test_static_configfsd_flag),
    };

    return cmocka_run_group_tests_name("http-static", tests, setup, teardown);
}
