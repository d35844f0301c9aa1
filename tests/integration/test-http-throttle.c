// SPDX-License-Identifier: MIT
/*
 * test-http-throttle.c - failed authentications rate-limited per address
 * (docs/security.md, "Wrong tokens: the rate limit"): after the burst of
 * wrong tokens, an address is answered 429 with Retry-After without its
 * token being read, a right token included; another address is not; a
 * missing token is no guess and does not count; the address is heard
 * again once the window lets it; /metrics counts both.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

#define GOOD_TOKEN "throttle-token-0123456789"
#define BAD_TOKEN  "not-a-token-of-this-server"
#define BURST      3
#define WINDOW_S   9 /* one failure drains every 3 s */

static char *dir;
static struct cfs_http_tokens *tokens;

static int setup(void **state)
{
    struct cfs_http_options o = {.listen = "127.0.0.1:0",
                                 .threads = 2,
                                 .quiet = true,
                                 .auth_fail_burst = BURST,
                                 .auth_fail_window_s = WINDOW_S};
    char hex[65], line[128], *path = NULL;
    int n;

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&path, "%s/tokens", dir) < 0) {
        return -1;
    }
    cfs_http_token_hash(GOOD_TOKEN, strlen(GOOD_TOKEN), hex);
    n = snprintf(line, sizeof(line), "ops reader sha256:%s\n", hex);
    harness_write_file(path, line, (size_t)n);
    n = cfs_http_tokens_load(path, &tokens, NULL, 0);
    free(path);
    if (n < 0) {
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
    free(dir);
    return 0;
}

static long get(const char *token, const char *path, struct http_resp *r)
{
    char auth[128];
    const char *hdrs[] = {auth, NULL};

    if (token) {
        (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    }
    http(r, "GET", path, NULL, 0, token ? hdrs : NULL);
    return r->status;
}

static long status_of(const char *token, const char *path)
{
    struct http_resp r;
    long s = get(token, path, &r);

    http_resp_done(&r);
    return s;
}

/* A counter of /metrics (read with the right token). */
static unsigned long long metric(const char *name)
{
    struct http_resp r;
    unsigned long long v = 0;
    const char *p;
    char key[96];

    assert_int_equal(get(GOOD_TOKEN, "/metrics", &r), 200);
    (void)snprintf(key, sizeof(key), "\n%s ", name);
    p = strstr(r.body, key);
    assert_non_null(p);
    v = strtoull(p + strlen(key), NULL, 10);
    http_resp_done(&r);
    return v;
}

/* The status of GET /api/v1 with the right token, sent from @source
 * (another loopback address) on a socket of our own. */
static long status_from(const char *source)
{
    struct sockaddr_in src = {.sin_family = AF_INET};
    struct sockaddr_in dst = {.sin_family = AF_INET,
                              .sin_port = htons(harness_port())};
    char req[256];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    long st;
    int n;

    assert_true(fd >= 0);
    assert_int_equal(inet_pton(AF_INET, source, &src.sin_addr), 1);
    assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
    n = snprintf(req,
                 sizeof(req),
                 "GET /api/v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                 "%s\r\nConnection: close\r\n\r\n",
                 GOOD_TOKEN);
    raw_send(fd, req, (size_t)n);
    st = raw_status(fd, 5000);
    close(fd);
    return st;
}

/* Wait (bounded) until the right token is heard again. */
static void wait_heard(void)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (status_of(GOOD_TOKEN, "/api/v1") == 200) {
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        assert_true(t.tv_sec - t0.tv_sec < (time_t)3 * WINDOW_S);
        (void)poll(NULL, 0, 100); /* between two polls of the condition */
    }
}

static void test_throttle_wrong_tokens(void **state)
{
    unsigned long long failed0 = metric("configfsd_auth_failures_total");
    unsigned long long throttled0 = metric("configfsd_auth_throttled_total");
    struct http_resp r;
    char *ra;

    (void)state;
    for (int i = 0; i < BURST; i++) {
        assert_int_equal(status_of(BAD_TOKEN, "/api/v1/config/"), 401);
    }
    /* the next one is not even looked at */
    assert_int_equal(get(BAD_TOKEN, "/api/v1/config/", &r), 429);
    expect_problem(&r, 429, "EAGAIN");
    ra = http_header(&r, "Retry-After");
    assert_non_null(ra);
    {
        char *end = NULL;
        long secs = strtol(ra, &end, 10);

        assert_true(*ra && *end == '\0');
        assert_true(secs >= 1 && secs <= WINDOW_S / BURST);
    }
    free(ra);
    http_resp_done(&r);
    /* nor is a right one from the same address */
    assert_int_equal(status_of(GOOD_TOKEN, "/api/v1"), 429);
    /* what needs no token is served */
    assert_int_equal(status_of(NULL, "/healthz"), 200);
    /* another address is heard */
    assert_int_equal(status_from("127.0.0.2"), 200);

    wait_heard();
    assert_int_equal(metric("configfsd_auth_failures_total") - failed0, BURST);
    assert_true(metric("configfsd_auth_throttled_total") - throttled0 >= 2);
}

/* No token at all is a 401, never counted: a browser that has not been
 * given one yet is not an attacker. */
static void test_throttle_missing_token_not_counted(void **state)
{
    unsigned long long failed0;

    (void)state;
    wait_heard();
    failed0 = metric("configfsd_auth_failures_total");
    for (int i = 0; i < 4 * BURST; i++) {
        assert_int_equal(status_of(NULL, "/api/v1/config/"), 401);
    }
    assert_int_equal(status_of(GOOD_TOKEN, "/api/v1"), 200);
    assert_int_equal(metric("configfsd_auth_failures_total"), failed0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throttle_wrong_tokens),
        cmocka_unit_test(test_throttle_missing_token_not_counted),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
