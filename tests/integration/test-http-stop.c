// SPDX-License-Identifier: MIT
/*
 * test-http-stop.c - how the server stops (what SIGTERM runs,
 * cfs_http_server_free()): a request whose body is still arriving is
 * answered, an idle keep-alive connection is closed, new connections are
 * refused, and a stop while clients send malformed requests never
 * crashes (libmicrohttpd 0.9.75 answered a malformed header line after
 * its stop flag was set with a response it had not kept: server/drain.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

#define RAW(s) s, sizeof(s) - 1

/* A server again, after a stop. */
static int restart(void)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};

    return harness_restart_with(&o);
}

/* The stop, in a thread of its own, so that a client can go on meanwhile. */
static void *stop_thread(void *arg)
{
    atomic_bool *done = arg;

    harness_stop_server();
    atomic_store(done, true);
    return NULL;
}

/* A connection to @port, or -1 (the server may be gone). */
static int connect_port(uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -1;
    }
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

/* Whether a new connection to @port is refused or closed unanswered. */
static bool refuses_new(uint16_t port)
{
    int fd = connect_port(port);
    bool closed;

    if (fd < 0) {
        return true;
    }
    raw_send(fd, RAW("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    closed = raw_status(fd, 5000) == 0;
    close(fd);
    return closed;
}

/* A PUT whose body is half sent when the stop begins is still answered,
 * and only then is its connection closed; meanwhile new connections are
 * refused. */
static void test_stop_answers_request_in_flight(void **state)
{
    uint16_t port = harness_port();
    int fd = raw_connect();
    atomic_bool done = false;
    pthread_t t;
    struct http_resp r = {0};

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"stop1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    raw_send(fd,
             RAW("PUT /api/v1/config/02-simple-children/stop1/storeme "
                 "HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n12"));
    /* the request has reached the handler before the stop begins */
    expect_healthy();
    assert_int_equal(pthread_create(&t, NULL, stop_thread, &done), 0);
    /* the stop has begun: new connections are turned away */
    for (int i = 0; i < 1000 && !refuses_new(port); i++) {
    }
    assert_true(refuses_new(port));
    assert_false(atomic_load(&done)); /* it waits for the answer */
    raw_send(fd, RAW("34"));
    assert_int_equal(raw_status(fd, 10000), 200);
    assert_true(raw_closed_within(fd, 10000));
    close(fd);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(atomic_load(&done));
    /* the answered change is in the tree */
    assert_int_equal(restart(), 0);
    http(&r,
         "GET",
         "/api/v1/value/02-simple-children/stop1/storeme",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "1234");
    http_resp_done(&r);
    http(
        &r, "DELETE", "/api/v1/config/02-simple-children/stop1", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

/* An idle keep-alive connection does not hold the stop: it is closed. */
static void test_stop_closes_idle_connection(void **state)
{
    int fd = raw_connect();
    atomic_bool done = false;
    pthread_t t;
    char buf[4096];
    bool eof = false;

    (void)state;
    raw_send(fd, RAW("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert_true(raw_read_for(fd, buf, sizeof(buf), "\r\n\r\n", 5000, &eof) > 0);
    assert_true(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    assert_false(eof); /* kept for the next request */
    assert_int_equal(pthread_create(&t, NULL, stop_thread, &done), 0);
    assert_true(raw_closed_within(fd, 10000));
    close(fd);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(restart(), 0);
}

/* ---- stops while clients send malformed requests ------------------------ */

#define CLIENTS 3
#define ROUNDS  25
#define SENT    40 /* requests sent in a round before its stop */

struct client {
    uint16_t port;
    atomic_bool *stop;
    atomic_int *sent;
    atomic_int *ended;
};

/* Requests libmicrohttpd refuses itself (400) and ones it passes on. */
static const char *const shapes[] = {
    "GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
    "GET /healthz HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\nno colon\r\n\r\n",
    "GET /api/v1/config/demo HTTP/1.1\r\nHost: x\r\n\r\n",
    ("PUT /api/v1/value/02-simple-children%2Fx%2Fstoreme HTTP/1.1\r\n"
     "Host: x\r\nContent-Length: 2\r\n\r\n12"),
    "GET /healthz HTTP/1.1\r\nHost: x\r\nbroken\r\n",
};

static void *client_thread(void *arg)
{
    struct client *c = arg;
    /* bounded: a round ends with the stop, a client after this many */
    for (int i = 0; i < 20000 && !atomic_load(c->stop); i++) {
        const char *s = shapes[i % (sizeof(shapes) / sizeof(*shapes))];
        int fd = connect_port(c->port);
        struct pollfd p;
        char buf[512];

        if (fd < 0) {
            break; /* the server is gone */
        }
        raw_send(fd, s, strlen(s));
        atomic_fetch_add(c->sent, 1);
        /* read a little of the answer, if any, then leave */
        p = (struct pollfd){.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1) > 0) {
            (void)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        }
        close(fd);
    }
    atomic_fetch_add(c->ended, 1);
    return NULL;
}

static void test_stop_under_malformed_requests(void **state)
{
    (void)state;
    for (int round = 0; round < ROUNDS; round++) {
        struct client c[CLIENTS];
        pthread_t t[CLIENTS];
        atomic_bool stop = false;
        atomic_int sent = 0;
        atomic_int ended = 0;

        for (int i = 0; i < CLIENTS; i++) {
            c[i] = (struct client){harness_port(), &stop, &sent, &ended};
            assert_int_equal(pthread_create(&t[i], NULL, client_thread, &c[i]),
                             0);
        }
        /* stop in the middle of the traffic, not before it */
        while (atomic_load(&sent) < SENT && atomic_load(&ended) < CLIENTS) {
            struct pollfd none = {.fd = -1};

            (void)poll(&none, 1, 1); /* a client thread needs the core */
        }
        assert_true(atomic_load(&sent) >= SENT);
        harness_stop_server(); /* crashed here, now and then, before */
        atomic_store(&stop, true);
        for (int i = 0; i < CLIENTS; i++) {
            assert_int_equal(pthread_join(t[i], NULL), 0);
        }
        assert_int_equal(restart(), 0);
    }
    expect_healthy();
}

static int setup(void **state)
{
    (void)state;
    return harness_start_db(NULL);
}

/* Each test begins with a server, even after one that failed half-way. */
static int running(void **state)
{
    (void)state;
    return harness_server() ? 0 : restart();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_stop_answers_request_in_flight, running),
        cmocka_unit_test_setup(test_stop_closes_idle_connection, running),
        cmocka_unit_test_setup(test_stop_under_malformed_requests, running),
    };

    return cmocka_run_group_tests_name("http-stop", tests, setup, harness_stop);
}
