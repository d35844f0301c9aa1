// SPDX-License-Identifier: MIT
/*
 * test-http-malformed.c - requests no good client sends, written to a raw
 * socket: bad request lines and versions, methods like TRACE and CONNECT,
 * bad percent escapes, NUL and control bytes, invalid UTF-8 in paths and
 * JSON, wrong and conflicting lengths, chunked garbage, smuggling shapes,
 * oversized headers, and random mutations of a good request. Each gets a
 * 4xx, or a closed connection where HTTP allows one, and after each the
 * server still answers GET /healthz. The idle timeout is 1 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "http.h"

enum want {
    WANT_4XX,          /* a 4xx response */
    WANT_4XX_OR_CLOSE, /* that, or the connection closed without one */
    WANT_VERSION,      /* 505 HTTP Version Not Supported, or a 4xx */
};

#define HOST "Host: x\r\n"
#define JSON "Content-Type: application/json\r\n"
/* a literal with its length, NUL bytes included */
#define RAW(s) s, sizeof(s) - 1

static const struct {
    const char *name;
    const char *data;
    size_t len;
    enum want want;
} corpus[] = {
    /* request lines */
    {"not HTTP", RAW("HELLO\r\n\r\n"), WANT_4XX_OR_CLOSE},
    {"no version", RAW("GET /healthz\r\n\r\n"), WANT_4XX_OR_CLOSE},
    {"version garbage", RAW("GET /healthz HTTP/1.x\r\n" HOST "\r\n"), WANT_4XX},
    {"HTTP/0.9", RAW("GET /healthz HTTP/0.9\r\n\r\n"), WANT_VERSION},
    {"HTTP/9.9", RAW("GET /healthz HTTP/9.9\r\n" HOST "\r\n"), WANT_VERSION},
    {"HTTP/2 preface", RAW("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), WANT_VERSION},
    {"space in URL",
     RAW("GET /a b HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX_OR_CLOSE},
    {"no Host", RAW("GET /healthz HTTP/1.1\r\n\r\n"), WANT_4XX},
    {"two Hosts",
     RAW("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
     WANT_4XX},
    {"absolute URI",
     RAW("GET http://x/api/v1/x HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"bare LF", RAW("GET /api/v1/x HTTP/1.1\nHost: x\n\n"), WANT_4XX},
    /* methods */
    {"TRACE", RAW("TRACE / HTTP/1.1\r\n" HOST "\r\n"), WANT_4XX},
    {"TRACE api",
     RAW("TRACE /api/v1/config/ HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"CONNECT", RAW("CONNECT 127.0.0.1:22 HTTP/1.1\r\n" HOST "\r\n"), WANT_4XX},
    {"OPTIONS *", RAW("OPTIONS * HTTP/1.1\r\n" HOST "\r\n"), WANT_4XX},
    {"PATCH",
     RAW("PATCH /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Content-Length: 1\r\n\r\n1"),
     WANT_4XX},
    {"lower-case get", RAW("get /healthz HTTP/1.1\r\n" HOST "\r\n"), WANT_4XX},
    /* paths */
    {"bad escape",
     RAW("GET /api/v1/config/%zz HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"cut escape",
     RAW("GET /api/v1/config/% HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"escaped slash",
     RAW("GET /api/v1/config/a%2Fb HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"escaped NUL",
     RAW("GET /api/v1/config/a%00b HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"escaped dots",
     RAW("GET /api/v1/config/%2e%2e HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"NUL in path",
     RAW("GET /api/v1/config/a\0b HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"control byte",
     RAW("GET /api/v1/config/a\001b HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"DEL byte",
     RAW("GET /api/v1/config/a%7fb HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"raw 0xff",
     RAW("GET /api/v1/config/\xff\xfe HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"escaped 0xff",
     RAW("GET /api/v1/config/%ff%fe HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"overlong UTF-8",
     RAW("GET /api/v1/config/%c0%af HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"UTF-16 surrogate",
     RAW("GET /api/v1/config/%ed%a0%80 HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"cut UTF-8",
     RAW("GET /api/v1/config/a%e2%82 HTTP/1.1\r\n" HOST "\r\n"),
     WANT_4XX},
    {"POST in missing parent",
     RAW("POST /api/v1/config/nope/deeper HTTP/1.1\r\n" HOST JSON
         "Content-Length: 12\r\n\r\n{\"name\":\"x\"}"),
     WANT_4XX},
    /* headers */
    {"NUL in field name",
     RAW("GET /api/v1/x HTTP/1.1\r\n" HOST "X-\0A: b\r\n\r\n"),
     WANT_4XX},
    {"no colon",
     RAW("GET /api/v1/x HTTP/1.1\r\n" HOST "Broken\r\n\r\n"),
     WANT_4XX},
    {"space before colon",
     RAW("GET /healthz HTTP/1.1\r\n" HOST
         "Transfer-Encoding : chunked\r\n\r\n"),
     WANT_4XX},
    {"obsolete line folding",
     RAW("GET /api/v1/x HTTP/1.1\r\n" HOST "X-A: b\r\n c\r\n\r\n"),
     WANT_4XX},
    {"only empty lines", RAW("\r\n\r\n\r\n"), WANT_4XX_OR_CLOSE},
    /* JSON bodies */
    {"invalid UTF-8 in JSON",
     RAW("POST /api/v1/config/02-simple-children HTTP/1.1\r\n" HOST JSON
         "Content-Length: 12\r\n\r\n{\"name\":\"\xff\"}"),
     WANT_4XX},
    {"invalid UTF-8 value",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST JSON
         "Content-Length: 13\r\n\r\n{\"value\":\"\xc0\"}"),
     WANT_4XX},
    {"NUL escape in name",
     RAW("POST /api/v1/config/02-simple-children HTTP/1.1\r\n" HOST JSON
         "Content-Length: 17\r\n\r\n{\"name\":\"a\\u0000\"}"),
     WANT_4XX},
    {"cut JSON",
     RAW("POST /api/v1/batch HTTP/1.1\r\n" HOST JSON
         "Content-Length: 8\r\n\r\n{\"ops\":["),
     WANT_4XX},
    {"JSON not an object",
     RAW("POST /api/v1/rename HTTP/1.1\r\n" HOST JSON
         "Content-Length: 2\r\n\r\n[]"),
     WANT_4XX},
    /* lengths and chunks */
    {"Content-Length too big",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Content-Length: 100\r\n\r\nabc"),
     WANT_4XX_OR_CLOSE},
    {"Content-Length too small",
     RAW("PUT /api/v1/config/nope HTTP/1.1\r\n" HOST
         "Content-Length: 1\r\n\r\n12345"),
     WANT_4XX},
    {"negative Content-Length",
     RAW("PUT /api/v1/config/nope HTTP/1.1\r\n" HOST
         "Content-Length: -1\r\n\r\n"),
     WANT_4XX},
    {"Content-Length not a number",
     RAW("PUT /api/v1/config/nope HTTP/1.1\r\n" HOST
         "Content-Length: abc\r\n\r\n"),
     WANT_4XX},
    {"Content-Length overflows",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Content-Length: 99999999999999999999999\r\n\r\n"),
     WANT_4XX},
    {"two Content-Lengths",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
     WANT_4XX},
    {"Content-Length and chunked",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
     WANT_4XX},
    {"Transfer-Encoding gzip",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Transfer-Encoding: gzip\r\n\r\nabc"),
     WANT_4XX},
    {"chunk size not hex",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
     WANT_4XX},
    {"chunk size overflows",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nabc\r\n"),
     WANT_4XX},
    {"negative chunk",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Transfer-Encoding: chunked\r\n\r\n-3\r\nabc\r\n0\r\n\r\n"),
     WANT_4XX},
    {"chunk without CRLF",
     RAW("PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\n" HOST
         "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n"),
     WANT_4XX},
    /* not HTTP at all */
    {"TLS ClientHello",
     RAW("\x16\x03\x01\x00\x50\x01\x00\x00\x4c\x03\x03"
         "0123456789abcdef0123456789abcdef"),
     WANT_4XX_OR_CLOSE},
};

static int setup(void **state)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true, .timeout_s = 1};

    (void)state;
    return harness_start_with(&o) < 0 ? -1 : 0;
}

static bool acceptable(long status, enum want want)
{
    switch (want) {
    case WANT_4XX:
        return status >= 400 && status <= 499;
    case WANT_4XX_OR_CLOSE:
        return status == 0 || (status >= 400 && status <= 499);
    case WANT_VERSION:
        return status == 505 || (status >= 400 && status <= 499);
    }
    return false;
}

/* Send @data on a new connection; the first response's status (0 when
 * closed without one) within 8 s, which covers the 1 s idle timeout. */
static long exchange(const char *data, size_t len)
{
    int fd = raw_connect();
    long status;

    raw_send(fd, data, len);
    status = raw_status(fd, 8000);
    close(fd);
    return status;
}

/* Each entry of the corpus: a 4xx or a close, then a healthy server. */
static void test_malformed_corpus(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
        long status = exchange(corpus[i].data, corpus[i].len);

        if (!acceptable(status, corpus[i].want)) {
            (void)fprintf(stderr, "%s: %ld\n", corpus[i].name, status);
        }
        assert_true(acceptable(status, corpus[i].want));
        expect_healthy();
    }
}

/* Corpus entries the server refuses itself answer in problem+json with
 * the errno; what libmicrohttpd refuses before configfsd sees it (no
 * Host, bad chunks) is its own page. */
static void test_malformed_problem_bodies(void **state)
{
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b"
                              "\r\nConnection: close\r\n\r\n";
    char buf[2048];
    size_t len = 0;
    ssize_t n;
    int fd = raw_connect();

    (void)state;
    raw_send(fd, req, sizeof(req) - 1);
    while (len + 1 < sizeof(buf) &&
           (n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
        len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd);
    assert_true(strncmp(buf, "HTTP/1.1 400 ", 13) == 0);
    assert_non_null(strstr(buf, "application/problem+json"));
    assert_non_null(strstr(buf, "\"errno\":\"EINVAL\""));
    assert_non_null(strstr(buf, "more than one Host"));
    assert_non_null(strstr(buf, "Connection: close"));
}

/* Oversized pieces made at run time: a JSON array nested 100000 deep, a
 * 20000-byte method, 64 KiB of header, a request line of NUL bytes. */
static void test_malformed_oversized(void **state)
{
    size_t depth = 100000;
    size_t cap = 2 * depth + 512;
    char *buf = malloc(cap);
    size_t len;

    (void)state;
    assert_non_null(buf);
    len = (size_t)snprintf(buf,
                           cap,
                           "POST /api/v1/batch HTTP/1.1\r\n" HOST JSON
                           "Content-Length: %zu\r\n\r\n",
                           2 * depth);
    memset(buf + len, '[', depth);
    memset(buf + len + depth, ']', depth);
    assert_int_equal(exchange(buf, len + 2 * depth), 400);
    expect_healthy();

    memset(buf, 'A', 20000);
    len = 20000;
    len += (size_t)sprintf(buf + len, " / HTTP/1.1\r\n" HOST "\r\n");
    assert_true(acceptable(exchange(buf, len), WANT_4XX));
    expect_healthy();

    len = (size_t)sprintf(buf, "GET /healthz HTTP/1.1\r\n" HOST "X-A: ");
    memset(buf + len, 'a', (size_t)64 * 1024);
    len += (size_t)64 * 1024;
    len += (size_t)sprintf(buf + len, "\r\n\r\n");
    assert_true(acceptable(exchange(buf, len), WANT_4XX));
    expect_healthy();

    memset(buf, 0, 4096);
    memcpy(buf + 4096, "\r\n\r\n", 5);
    assert_true(acceptable(exchange(buf, 4100), WANT_4XX_OR_CLOSE));
    expect_healthy();
    free(buf);
}

/* Random mutations of good requests (a few bytes flipped, inserted or
 * cut), sent with the write side then shut: never a 5xx but 505, and
 * the server stays healthy. The seed is fixed, so a failure repeats. A
 * mutation that cuts the end of the headers waits for the idle timeout,
 * so they go in batches of BATCH connections at once. */
#define MUTATIONS 240
#define BATCH     60

static size_t mutate(const char *seed, unsigned int *rng, char *buf, size_t cap)
{
    size_t len = strlen(seed);
    int edits = 1 + (int)(rand_r(rng) % 4);

    memcpy(buf, seed, len + 1);
    for (int e = 0; e < edits && len > 2 && len < cap - 1; e++) {
        size_t at = (size_t)rand_r(rng) % len;
        char byte = (char)(rand_r(rng) % 256);

        switch (rand_r(rng) % 3) {
        case 0: /* flip */
            buf[at] = byte;
            break;
        case 1: /* insert */
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = byte;
            len++;
            break;
        default: /* cut */
            memmove(buf + at, buf + at + 1, len - at - 1);
            len--;
            break;
        }
    }
    return len;
}

static void test_malformed_mutations(void **state)
{
    static const char *const seeds[] = {
        "GET /api/v1/config/01-childless HTTP/1.1\r\nHost: x\r\n\r\n",
        "PUT /api/v1/config/01-childless/storeme HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 2\r\n\r\n42",
        "POST /api/v1/config/02-simple-children HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: application/json\r\nContent-Length: 15\r\n\r\n"
        "{\"name\":\"mut\"}",
        "POST /api/v1/batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
        "chunked\r\nContent-Type: application/json\r\n\r\n"
        "b\r\n{\"ops\":[]}\r\n0\r\n\r\n",
    };
    static char bufs[BATCH][512];
    size_t lens[BATCH];
    int fds[BATCH];
    unsigned int rng = 20261203;
    struct http_resp r;

    (void)state;
    for (int b = 0; b < MUTATIONS / BATCH; b++) {
        for (int i = 0; i < BATCH; i++) {
            lens[i] = mutate(seeds[i % 4], &rng, bufs[i], sizeof(bufs[i]));
            fds[i] = raw_connect();
            raw_send(fds[i], bufs[i], lens[i]);
            shutdown(fds[i], SHUT_WR);
        }
        for (int i = 0; i < BATCH; i++) {
            long status = raw_status(fds[i], 8000);

            close(fds[i]);
            if (status >= 500 && status != 505) {
                (void)fprintf(stderr,
                              "mutation %d: %ld for '%.*s'\n",
                              b * BATCH + i,
                              status,
                              (int)lens[i],
                              bufs[i]);
            }
            assert_true(status < 500 || status == 505);
        }
        expect_healthy();
    }
    /* an item a mutation may have made */
    http(&r, "DELETE", "/api/v1/config/02-simple-children/mut", NULL, 0, NULL);
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_corpus),
        cmocka_unit_test(test_malformed_problem_bodies),
        cmocka_unit_test(test_malformed_oversized),
        cmocka_unit_test(test_malformed_mutations),
    };

    return cmocka_run_group_tests_name(
        "http-malformed", tests, setup, harness_stop);
}
