/* SPDX-License-Identifier: MIT */
/*
 * test-http-throttle.c - the wrong-token limit (server/throttle.h) on its
 * own clock: an IPv6 client is keyed by its /64, not its interface id (a
 * host given a /64 cannot escape the limit by changing addresses in it),
 * an IPv4-mapped address as the IPv4 one, and the Retry-After it answers
 * is rounded up: a client is still refused in the last second of its wait
 * and never told 0 while refused.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "throttle.h"

#define S        1000000ull /* microseconds */
#define T0       (1000 * S)
#define BURST    10u
#define WINDOW_S 60u /* one failure forgiven every 6 s */

static struct sockaddr_storage addr(const char *text)
{
    struct sockaddr_storage ss;

    memset(&ss, 0, sizeof(ss));
    if (strchr(text, ':')) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

        in6->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;

        in->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
    }
    return ss;
}

static unsigned check(struct cfs_http_throttle *t, const char *a, uint64_t us)
{
    struct sockaddr_storage ss = addr(a);

    return cfs_http_throttle_check(t, (struct sockaddr *)&ss, us);
}

static void fail_burst(struct cfs_http_throttle *t, const char *a, uint64_t us)
{
    struct sockaddr_storage ss = addr(a);

    for (unsigned i = 0; i < BURST; i++) {
        assert_int_equal(check(t, a, us), 0); /* let through until now */
        cfs_http_throttle_fail(t, (struct sockaddr *)&ss, us);
    }
}

/* An IPv6 client is its /64: another interface id in it is refused too,
 * the next /64 is not; an IPv4-mapped address is the IPv4 one. */
static void test_throttle_ipv6_by_64(void **state)
{
    struct cfs_http_throttle *t = NULL;

    (void)state;
    assert_int_equal(cfs_http_throttle_new(BURST, WINDOW_S, &t), 0);
    fail_burst(t, "2001:db8:1:2::1", T0);
    assert_int_equal(check(t, "2001:db8:1:2::1", T0), 6);
    assert_int_equal(check(t, "2001:db8:1:2:ffff:ffff:ffff:fffe", T0), 6);
    assert_int_equal(check(t, "2001:db8:1:2:abcd::42", T0), 6);
    assert_int_equal(check(t, "2001:db8:1:3::1", T0), 0);
    assert_int_equal(check(t, "2001:db8:1:1:ffff:ffff:ffff:ffff", T0), 0);

    fail_burst(t, "::ffff:192.0.2.7", T0);
    assert_int_equal(check(t, "192.0.2.7", T0), 6);
    assert_int_equal(check(t, "192.0.2.8", T0), 0);
    cfs_http_throttle_free(t);
}

/* Retry-After is the wait rounded up to a whole second: never 0 while a
 * request is refused, 1 in the last second, and 0 exactly when the window
 * lets one more through. */
static void test_throttle_retry_after_rounded_up(void **state)
{
    struct cfs_http_throttle *t = NULL;

    (void)state;
    assert_int_equal(cfs_http_throttle_new(BURST, WINDOW_S, &t), 0);
    fail_burst(t, "2001:db8::5", T0);
    assert_int_equal(check(t, "2001:db8::5", T0), 6);
    assert_int_equal(check(t, "2001:db8::5", T0 + S / 5), 6); /* 5.8 s */
    assert_int_equal(check(t, "2001:db8::5", T0 + 1 * S), 5); /* 5 s */
    assert_int_equal(check(t, "2001:db8::5", T0 + 5 * S + S / 2), 1);
    assert_int_equal(check(t, "2001:db8::5", T0 + 6 * S - 1), 1); /* 1 us */
    assert_int_equal(check(t, "2001:db8::5", T0 + 6 * S), 0);
    cfs_http_throttle_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throttle_ipv6_by_64),
        cmocka_unit_test(test_throttle_retry_after_rounded_up),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
