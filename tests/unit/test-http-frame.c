// SPDX-License-Identifier: MIT
/*
 * test-http-frame.c - the answer a writer node gives to a forwarded batch
 * (server/frame.h, cfs_http_frame_answers()): the forwarding node takes it
 * only when it is exactly one well-formed answer per request it sent. An
 * answer with bytes after the last, with more answers than requests or
 * fewer, cannot be matched to its requests: taken, a client could be told
 * another request's outcome; refused, every request of the batch is
 * answered 503 "may or may not have been made" (server/forward.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"
#include "jsonw.h"

/* One answer: @status, @rev, one header, @body. */
static void
answer(struct jw *w, const char *status, uint64_t rev, const char *body)
{
    cfs_http_frame_put_str(w, status);
    cfs_http_frame_put_u64(w, rev);
    cfs_http_frame_put_str(w, "1");
    cfs_http_frame_put_str(w, "Content-Type");
    cfs_http_frame_put_str(w, "application/json");
    cfs_http_frame_put_str(w, body);
}

struct seen {
    size_t n;
    uint64_t status[4], rev[4];
    char body[4][32];
};

static int each(void *ctx, size_t i, const struct cfs_http_fwd_answer *a)
{
    struct seen *s = ctx;

    assert_int_equal(i, s->n);
    assert_int_equal(a->nh, 1);
    assert_string_equal(a->name[0], "Content-Type");
    assert_string_equal(a->value[0], "application/json");
    s->status[i] = a->status;
    s->rev[i] = a->revision;
    memcpy(s->body[i], a->body, a->body_len + 1);
    s->n++;
    return 0;
}

static int parse(struct jw *w, size_t n, struct seen *s)
{
    memset(s, 0, sizeof(*s));
    return cfs_http_frame_answers(w->buf, w->buf + w->len, n, each, s);
}

static void test_exact(void **state)
{
    struct jw w = {0};
    struct seen s;

    (void)state;
    answer(&w, "201", 7, "{\"a\":1}");
    answer(&w, "409", 0, "{}");
    assert_int_equal(parse(&w, 2, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.status[0], 201);
    assert_int_equal(s.rev[0], 7);
    assert_string_equal(s.body[0], "{\"a\":1}");
    assert_int_equal(s.status[1], 409);
    assert_string_equal(s.body[1], "{}");
    free(w.buf);
}

static void test_trailing_bytes(void **state)
{
    struct jw w = {0};
    struct seen s;

    (void)state;
    answer(&w, "201", 7, "{}");
    answer(&w, "201", 8, "{}");
    JW_LIT(&w, "x");
    assert_int_equal(parse(&w, 2, &s), -EINVAL);
    free(w.buf);
}

static void test_more_answers(void **state)
{
    struct jw w = {0};
    struct seen s;

    (void)state;
    answer(&w, "201", 7, "{}");
    answer(&w, "201", 8, "{}");
    answer(&w, "201", 9, "{}");
    assert_int_equal(parse(&w, 2, &s), -EINVAL);
    free(w.buf);
}

static void test_fewer_answers(void **state)
{
    struct jw w = {0};
    struct seen s;

    (void)state;
    answer(&w, "201", 7, "{}");
    assert_int_equal(parse(&w, 2, &s), -EINVAL);
    free(w.buf);
}

static void test_bad_status(void **state)
{
    struct jw w = {0};
    struct seen s;

    (void)state;
    answer(&w, "99", 7, "{}");
    assert_int_equal(parse(&w, 1, &s), -EINVAL);
    free(w.buf);
    memset(&w, 0, sizeof(w));
    answer(&w, "600", 7, "{}");
    assert_int_equal(parse(&w, 1, &s), -EINVAL);
    free(w.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_trailing_bytes),
        cmocka_unit_test(test_more_answers),
        cmocka_unit_test(test_fewer_answers),
        cmocka_unit_test(test_bad_status),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
