// SPDX-License-Identifier: MIT
/*
 * test-http-limits.c - the request limits of server/include/http.h: body
 * size (with and without Content-Length), header and URI size, path depth,
 * connections, and the idle timeout that drops slow clients while others
 * are served. Each test is bounded in time; the server's timeout is 2 s.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <configfs/limits.h>

#include "harness.h"
#include "http.h"

#define TIMEOUT_S 2

static const struct cfs_http_options group_opts = {
    .listen = "127.0.0.1:0",
    .threads = 2,
    .quiet = true,
    .timeout_s = TIMEOUT_S,
    .max_connections = 64,
};

static int setup(void **state)
{
    (void)state;
    return harness_start_with(&group_opts) < 0 ? -1 : 0;
}

static long now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One more byte than CFS_BODY_MAX is 413 EFBIG; exactly CFS_BODY_MAX is
 * read and handled. */
static void test_limits_body(void **state)
{
    char *body = malloc(CFS_BODY_MAX + 1);
    static const char json[] = "{\"name\":\"big\"}";
    struct http_resp r;
    const char *hdrs[] = {"Content-Type: application/json", NULL};

    (void)state;
    assert_non_null(body);
    memset(body, '1', CFS_BODY_MAX + 1);
    http(&r,
         "PUT",
         "/api/v1/config/01-childless/storeme",
         body,
         CFS_BODY_MAX + 1,
         NULL);
    expect_problem(&r, 413, "EFBIG");
    http_resp_done(&r);

    memset(body, ' ', CFS_BODY_MAX); /* JSON padded to the limit */
    memcpy(body, json, sizeof(json) - 1);
    http(&r,
         "POST",
         "/api/v1/config/02-simple-children",
         body,
         CFS_BODY_MAX,
         hdrs);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r, "DELETE", "/api/v1/config/02-simple-children/big", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
    free(body);
}

/* A chunked body has no Content-Length to refuse up front: it is counted
 * as it comes, and 413 all the same. */
static void test_limits_chunked_body(void **state)
{
    static const char head[] = "PUT /api/v1/config/01-childless/storeme "
                               "HTTP/1.1\r\nHost: x\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    size_t chunk = (size_t)64 * 1024;
    char *data = malloc(chunk);
    char size_line[32];
    int fd = raw_connect();

    (void)state;
    assert_non_null(data);
    memset(data, '2', chunk);
    raw_send(fd, head, sizeof(head) - 1);
    for (size_t sent = 0; sent <= CFS_BODY_MAX; sent += chunk) {
        int n = snprintf(size_line, sizeof(size_line), "%zx\r\n", chunk);

        raw_send(fd, size_line, (size_t)n);
        raw_send(fd, data, chunk);
        raw_send(fd, "\r\n", 2);
    }
    raw_send(fd, "0\r\n\r\n", 5);
    assert_int_equal(raw_status(fd, 10000), 413);
    close(fd);
    free(data);
    expect_healthy();
}

/* A request line or header block over the connection's memory: 414 or
 * 431 from libmicrohttpd, and the server goes on. */
static void test_limits_headers(void **state)
{
    static char buf[CFS_HEADER_MAX + 2048];
    size_t big = CFS_HEADER_MAX + 1024;
    size_t len;
    int fd;

    (void)state;
    /* one huge header */
    len = (size_t)sprintf(buf, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(buf + len, 'h', big);
    len += big;
    memcpy(buf + len, "\r\n\r\n", 5); /* and a NUL, not sent */
    fd = raw_connect();
    raw_send(fd, buf, len + 4);
    assert_int_equal(raw_status(fd, 5000), 431);
    close(fd);
    expect_healthy();

    /* many small headers */
    len = (size_t)sprintf(buf, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    while (len + 40 < big) {
        len +=
            (size_t)sprintf(buf + len, "X-H%06zu: 0123456789abcdef\r\n", len);
    }
    memcpy(buf + len, "\r\n", 3);
    fd = raw_connect();
    raw_send(fd, buf, len + 2);
    assert_int_equal(raw_status(fd, 5000), 431);
    close(fd);
    expect_healthy();

    /* a huge URI */
    len = (size_t)sprintf(buf, "GET /api/v1/config/");
    memset(buf + len, 'u', big);
    len += big;
    len += (size_t)sprintf(buf + len, " HTTP/1.1\r\nHost: x\r\n\r\n");
    fd = raw_connect();
    raw_send(fd, buf, len);
    assert_int_equal(raw_status(fd, 5000), 414);
    close(fd);
    expect_healthy();
}

/* Paths deeper than CFS_DEPTH_MAX are 400 before the tree sees them;
 * a POST counts the item it would make. */
static void test_limits_path_depth(void **state)
{
    char path[32 + 3 * (CFS_DEPTH_MAX + 2)];
    struct http_resp r;
    size_t len = (size_t)sprintf(path, "/api/v1/config");

    (void)state;
    for (int i = 0; i < CFS_DEPTH_MAX; i++) {
        len += (size_t)sprintf(path + len, "/d");
    }
    http(&r, "GET", path, NULL, 0, NULL);
    expect_problem(&r, 404, "ENOENT"); /* deep enough, and not there */
    http_resp_done(&r);
    http_json(&r, "POST", path, "{\"name\":\"x\"}");
    expect_problem(&r, 400, "ENAMETOOLONG");
    http_resp_done(&r);
    (void)sprintf(path + len, "/d");
    http(&r, "GET", path, NULL, 0, NULL);
    expect_problem(&r, 400, "ENAMETOOLONG");
    http_resp_done(&r);
    path[len - 2] = '\0'; /* CFS_DEPTH_MAX - 1 levels */
    http_json(&r, "POST", path, "{\"name\":\"x\"}");
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
}

/* Clients that stop half-way (in the headers, in the body, or before
 * sending anything) are dropped once SLOW_TIMEOUT_S passes without a byte,
 * and while they hang, other requests are served: each well before the
 * timeout a request stuck behind them would wait for (the bound is that
 * far from it so that a loaded machine does not fail the test). */
#define SLOW_TIMEOUT_S 5
#define SLOW_CLIENTS   24

static void test_limits_slow_clients_dropped(void **state)
{
    static const char *const partial[] = {
        "GET /healthz HTTP/1.1\r\nHost: x\r\n",
        "GET /heal",
        "PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 100\r\n\r\n12345",
        "POST /api/v1/batch HTTP/1.1\r\nHost: x\r\n"
        "Transfer-Encoding: chunked\r\n\r\n10\r\n{\"ops\"",
        "", /* connected, silent */
        "",
    };
    enum { KINDS = sizeof(partial) / sizeof(partial[0]) };
    struct cfs_http_options o = group_opts;
    int fds[SLOW_CLIENTS];
    long t0, served = 0;

    (void)state;
    o.timeout_s = SLOW_TIMEOUT_S;
    assert_int_equal(harness_restart_with(&o), 0);
    t0 = now_ms();
    for (size_t i = 0; i < SLOW_CLIENTS; i++) {
        fds[i] = raw_connect();
        raw_send(fds[i], partial[i % KINDS], strlen(partial[i % KINDS]));
    }
    while (now_ms() - t0 < 2000) {
        long t = now_ms();

        expect_healthy();
        assert_true(now_ms() - t < SLOW_TIMEOUT_S * 1000 / 2);
        served++;
    }
    assert_true(served >= 5);
    for (size_t i = 0; i < SLOW_CLIENTS; i++) {
        assert_true(raw_closed_within(fds[i], (SLOW_TIMEOUT_S + 3) * 1000));
        close(fds[i]);
    }
    /* dropped by the timeout, not at once */
    assert_true(now_ms() - t0 >= (SLOW_TIMEOUT_S - 1) * 1000L);
    assert_true(now_ms() - t0 <= (SLOW_TIMEOUT_S + 4) * 1000L);
    expect_healthy();
    assert_int_equal(harness_restart_with(&group_opts), 0);
}

/* At --max-connections, a new client waits in the backlog until an idle
 * connection times out, then is served; nothing is refused or crashes. */
static void test_limits_max_connections(void **state)
{
    struct cfs_http_options o = group_opts;
    int fds[4];
    long t0;

    (void)state;
    o.max_connections = 4;
    assert_int_equal(harness_restart_with(&o), 0);
    for (int i = 0; i < 4; i++) {
        fds[i] = raw_connect();
    }
    usleep(300 * 1000); /* accepted */
    t0 = now_ms();
    expect_healthy();
    assert_true(now_ms() - t0 >= 1000);
    assert_true(now_ms() - t0 <= (TIMEOUT_S + 4) * 1000L);
    for (int i = 0; i < 4; i++) {
        close(fds[i]);
    }
    assert_int_equal(harness_restart_with(&group_opts), 0);
    expect_healthy();
}

/* --per-ip-connections: one address holding its share of connections
 * gets the next one closed at once, while it keeps those it has; when it
 * lets one go, it may connect again. */
static void test_limits_per_ip_connections(void **state)
{
    struct cfs_http_options o = group_opts;
    int fds[3], extra;

    (void)state;
    o.per_ip_connections = 3;
    assert_int_equal(harness_restart_with(&o), 0);
    for (int i = 0; i < 3; i++) {
        fds[i] = raw_connect();
    }
    /* each of the three is served (and so was accepted) */
    for (int i = 0; i < 3; i++) {
        static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

        raw_send(fds[i], req, sizeof(req) - 1);
        assert_int_equal(raw_status(fds[i], 5000), 200);
    }
    extra = raw_connect();
    assert_true(raw_closed_within(extra, 5000));
    close(extra);
    close(fds[0]);
    /* a slot is free again once the server has seen that close */
    for (int tries = 0;; tries++) {
        struct http_resp r;
        int rc = http_try(&r, "GET", "/healthz", NULL, 0, NULL);
        long status = r.status;

        http_resp_done(&r);
        if (rc == 0 && status == 200) {
            break;
        }
        assert_true(tries < 100); /* 2 s */
        (void)poll(NULL, 0, 20);
    }
    for (int i = 1; i < 3; i++) {
        close(fds[i]);
    }
    assert_int_equal(harness_restart_with(&group_opts), 0);
    expect_healthy();
}

/* Clients that vanish mid-request, with a reset or a close, leave the
 * server serving. */
static void test_limits_abrupt_disconnects(void **state)
{
    static const char head[] = "PUT /api/v1/config/01-childless/storeme "
                               "HTTP/1.1\r\nHost: x\r\n"
                               "Content-Length: 1000000\r\n\r\nabc";
    struct linger reset = {.l_onoff = 1, .l_linger = 0};

    (void)state;
    for (int i = 0; i < 50; i++) {
        int fd = raw_connect();

        raw_send(fd, head, i % 2 ? sizeof(head) - 1 : 20);
        if (i % 3 == 0) {
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        }
        close(fd);
    }
    expect_healthy();
}

/* configfsd's limit flags: bad values are usage errors; good ones, from
 * the flag or the environment, take effect. */
static void test_limits_configfsd_flags(void **state)
{
    static const char *const bad[][3] = {
        {"--timeout", "0", NULL},
        {"--timeout", "x", NULL},
        {"--max-connections", "0", NULL},
        {"--per-ip-connections", "-1", NULL},
        {"--body-limit", "10", NULL},
        {"--header-limit", "100", NULL},
    };
    static const char *const bad_env[] = {"CONFIGFSD_TIMEOUT=-1", NULL};
    const char *args[] = {"--listen",
                          "127.0.0.1:0",
                          "--no-samples",
                          "--body-limit",
                          "4096",
                          "--header-limit",
                          "16384",
                          NULL};
    static const char *const env[] = {"CONFIGFSD_TIMEOUT=1", NULL};
    char body[5000], hdr[20000];
    size_t len;
    struct harness_proc p;
    struct http_resp r;
    long t0;
    int fd;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(harness_run(bad[i], NULL, NULL, NULL, NULL, 10), 2);
    }
    assert_int_equal(harness_run(NULL, bad_env, NULL, NULL, NULL, 10), 2);

    assert_int_equal(harness_spawn(args, env, NULL, &p), 0);
    harness_target(p.port, NULL);
    memset(body, 'b', sizeof(body));
    http(&r, "PUT", "/api/v1/config/x/y", body, sizeof(body), NULL);
    expect_problem(&r, 413, "EFBIG");
    http_resp_done(&r);
    len = (size_t)sprintf(hdr, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(hdr + len, 'h', 17000);
    memcpy(hdr + len + 17000, "\r\n\r\n", 5);
    fd = raw_connect(); /* --header-limit 16384 */
    raw_send(fd, hdr, len + 17004);
    assert_int_equal(raw_status(fd, 5000), 431);
    close(fd);
    fd = raw_connect(); /* CONFIGFSD_TIMEOUT=1 */
    t0 = now_ms();
    assert_true(raw_closed_within(fd, 5000));
    assert_true(now_ms() - t0 < 4000);
    close(fd);
    expect_healthy();
    harness_target(0, NULL);
    assert_int_equal(harness_reap(&p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_body),
        cmocka_unit_test(test_limits_chunked_body),
        cmocka_unit_test(test_limits_headers),
        cmocka_unit_test(test_limits_path_depth),
        cmocka_unit_test(test_limits_slow_clients_dropped),
        cmocka_unit_test(test_limits_max_connections),
        cmocka_unit_test(test_limits_per_ip_connections),
        cmocka_unit_test(test_limits_abrupt_disconnects),
        cmocka_unit_test(test_limits_configfsd_flags),
    };

    return cmocka_run_group_tests_name(
        "http-limits", tests, setup, harness_stop);
}
