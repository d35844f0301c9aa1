// SPDX-License-Identifier: MIT
/*
 * test-http-tls.c - HTTPS through libmicrohttpd's GnuTLS: a throwaway
 * self-signed certificate made at test time with openssl, libcurl
 * verifying it, plain HTTP and garbage on the TLS port, and configfsd's
 * start-up refusals for missing, unreadable, non-PEM and mismatched files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "harness.h"
#include "http.h"

static char *dir;
static char *cert, *key;             /* the server's pair */
static char *other_cert, *other_key; /* a second, unrelated pair */
static char *cert_pem, *key_pem;

/* A self-signed P-256 certificate for 127.0.0.1, valid for a day. */
static int make_pair(const char *name, char **ret_cert, char **ret_key)
{
    char *cmd;
    int r;

    if (asprintf(ret_cert, "%s/%s.crt", dir, name) < 0 ||
        asprintf(ret_key, "%s/%s.key", dir, name) < 0 ||
        asprintf(&cmd,
                 "openssl req -x509 -newkey ec -pkeyopt "
                 "ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "
                 "/CN=localhost -addext "
                 "subjectAltName=IP:127.0.0.1,DNS:localhost -keyout %s "
                 "-out %s >/dev/null 2>&1",
                 *ret_key,
                 *ret_cert) < 0) {
        return -1;
    }
    r = system(cmd);
    free(cmd);
    if (r != 0) {
        (void)fprintf(stderr, "openssl failed (scripts/deps.sh installs it)\n");
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};

    (void)state;
    dir = harness_tmpdir();
    if (make_pair("server", &cert, &key) < 0 ||
        make_pair("other", &other_cert, &other_key) < 0) {
        return -1;
    }
    cert_pem = harness_read_file(cert);
    key_pem = harness_read_file(key);
    if (!cert_pem || !key_pem) {
        return -1;
    }
    o.tls_cert_pem = cert_pem;
    o.tls_key_pem = key_pem;
    if (harness_start_with(&o) < 0) {
        return -1;
    }
    harness_target(0, cert);
    return 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    harness_rmtree(dir);
    free(dir);
    free(cert);
    free(key);
    free(other_cert);
    free(other_key);
    free(cert_pem);
    free(key_pem);
    return 0;
}

/* HTTPS verified against the certificate: health and the API. */
static void test_tls_https_requests(void **state)
{
    struct http_resp r;

    (void)state;
    expect_healthy();
    http(&r, "GET", "/api/v1/config/01-childless", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "path")),
                        "/01-childless");
    http_resp_done(&r);
    http(&r, "PUT", "/api/v1/config/01-childless/storeme", "5", 1, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
}

/* A client that trusts another certificate refuses this server. */
static void test_tls_untrusted_certificate_refused(void **state)
{
    struct http_resp r;

    (void)state;
    harness_target(0, other_cert);
    assert_int_equal(http_try(&r, "GET", "/healthz", NULL, 0, NULL),
                     CURLE_PEER_FAILED_VERIFICATION);
    http_resp_done(&r);
    harness_target(0, cert);
    expect_healthy();
}

/* Plain HTTP, random bytes and a truncated handshake on the TLS port get
 * no HTTP answer, and the server keeps serving HTTPS. */
static void test_tls_plain_and_garbage_survived(void **state)
{
    static const char plain[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    static const unsigned char hello[] = {
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};
    unsigned char junk[2048];
    struct http_resp r;
    int fd;

    (void)state;
    harness_target(0, NULL);
    assert_true(http_try(&r, "GET", "/healthz", NULL, 0, NULL) != CURLE_OK ||
                r.status != 200);
    http_resp_done(&r);

    fd = raw_connect();
    raw_send(fd, plain, sizeof(plain) - 1);
    assert_true(raw_status(fd, 5000) <= 0); /* never an HTTP answer */
    close(fd);

    srand(4);
    for (size_t i = 0; i < sizeof(junk); i++) {
        junk[i] = (unsigned char)rand();
    }
    fd = raw_connect();
    raw_send(fd, junk, sizeof(junk));
    assert_true(raw_closed_within(fd, 5000));
    close(fd);

    fd = raw_connect();
    raw_send(fd, hello, sizeof(hello)); /* then silence */
    close(fd);

    harness_target(0, cert);
    expect_healthy();
}

/* Half a pair is refused by the server start. */
static void test_tls_half_pair_refused(void **state)
{
    struct cfs_http_options o = {.listen = "127.0.0.1:0", .quiet = true};
    struct cfs_http_server *s = NULL;

    (void)state;
    o.tls_cert_pem = cert_pem;
    assert_int_equal(cfs_http_server_start(&o, &s), -EINVAL);
    o.tls_cert_pem = NULL;
    o.tls_key_pem = key_pem;
    assert_int_equal(cfs_http_server_start(&o, &s), -EINVAL);
    assert_null(s);
}

/* configfsd stops at start-up, saying which flag, which file and why. */
static void test_tls_configfsd_start_errors(void **state)
{
    char *missing, *text, *err;
    const char *args[] = {"--listen",
                          "127.0.0.1:0",
                          "--no-samples",
                          "--tls-cert",
                          NULL,
                          "--tls-key",
                          NULL,
                          NULL};
    static const char *const half[] = {"--tls-cert", "x.crt", NULL};

    (void)state;
    assert_true(asprintf(&missing, "%s/missing.crt", dir) > 0);
    assert_true(asprintf(&text, "%s/text.crt", dir) > 0);
    harness_write_file(text, "not a certificate\n", 18);

    args[4] = missing;
    args[6] = key;
    assert_int_equal(harness_run(args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "--tls-cert"));
    assert_non_null(strstr(err, missing));
    assert_non_null(strstr(err, "No such file"));
    free(err);

    args[4] = cert;
    args[6] = dir; /* a directory: not readable as a file */
    assert_int_equal(harness_run(args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "--tls-key"));
    free(err);

    args[4] = text;
    args[6] = key;
    assert_int_equal(harness_run(args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "not PEM"));
    free(err);

    args[4] = cert;
    args[6] = other_key; /* not this certificate's key */
    assert_int_equal(harness_run(args, NULL, NULL, NULL, &err, 10), 1);
    assert_non_null(strstr(err, "do not match"));
    free(err);

    assert_int_equal(harness_run(half, NULL, NULL, NULL, &err, 10), 2);
    assert_non_null(strstr(err, "go together"));
    free(err);
    free(missing);
    free(text);
}

/* configfsd from its environment twins, with tokens: HTTPS, 401 without
 * the token, 200 with it. */
static void test_tls_configfsd_env_twins(void **state)
{
    static const char *const hash[] = {"hash-token", "ops", "reader", NULL};
    static const char token[] = "tls-token-0123456789abcdef";
    const char *hdrs[] = {"Authorization: Bearer tls-token-0123456789abcdef",
                          NULL};
    char *tokens, *line, *line2, *env_cert, *env_key, *env_tokens;
    const char *args[] = {"--listen", "127.0.0.1:0", "--no-samples", NULL};
    const char *env[4];
    struct harness_proc p;
    struct http_resp r;

    (void)state;
    assert_int_equal(harness_run(hash, NULL, token, &line, NULL, 10), 0);
    assert_true(asprintf(&tokens, "%s/tokens", dir) > 0);
    harness_write_file(tokens, line, strlen(line));
    assert_true(asprintf(&env_cert, "CONFIGFSD_TLS_CERT=%s", cert) > 0);
    assert_true(asprintf(&env_key, "CONFIGFSD_TLS_KEY=%s", key) > 0);
    assert_true(asprintf(&env_tokens, "CONFIGFSD_TOKENS=%s", tokens) > 0);
    env[0] = env_cert;
    env[1] = env_key;
    env[2] = env_tokens;
    env[3] = NULL;
    assert_int_equal(harness_spawn(args, env, NULL, &p), 0);
    line2 = harness_read_file(p.log);
    assert_non_null(strstr(line2, "listening on https://127.0.0.1:0"));
    free(line2);
    harness_target(p.port, cert);
    http(&r, "GET", "/api/v1/config/", NULL, 0, NULL);
    assert_int_equal(r.status, 401);
    http_resp_done(&r);
    http(&r, "GET", "/api/v1/config/", NULL, 0, hdrs);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    harness_target(0, cert);
    assert_int_equal(harness_reap(&p), 0);
    free(line);
    free(tokens);
    free(env_cert);
    free(env_key);
    free(env_tokens);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_https_requests),
        cmocka_unit_test(test_tls_untrusted_certificate_refused),
        cmocka_unit_test(test_tls_plain_and_garbage_survived),
        cmocka_unit_test(test_tls_half_pair_refused),
        cmocka_unit_test(test_tls_configfsd_start_errors),
        cmocka_unit_test(test_tls_configfsd_env_twins),
    };

    return cmocka_run_group_tests_name("http-tls", tests, setup, teardown);
}
