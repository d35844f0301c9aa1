/* SPDX-License-Identifier: MIT */
/*
 * test-http-body.c - the values a request body gives, when memory runs
 * out: cfs_http_json_value_bytes() answers NULL with no reason, so that the
 * caller says 500 ENOMEM instead of storing or freeing what it never got.
 *
 * malloc is wrapped (-Wl,--wrap=malloc) for the server's own code and this
 * file: fail_at = N makes the Nth call from now on fail, once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "body.h"

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

static unsigned fail_at; /* 0: disarmed */

void *__wrap_malloc(size_t size)
{
    if (fail_at > 0 && --fail_at == 0) {
        return NULL;
    }
    return __real_malloc(size);
}

/* Leave a non-zero pattern where the next call's locals will be, so that
 * one left unset reads as a pointer rather than as NULL by luck. */
static void __attribute__((noinline)) scribble(void)
{
    volatile unsigned char junk[4096];

    for (size_t i = 0; i < sizeof(junk); i++) {
        junk[i] = 0xa5;
    }
}

/* Base64 decoding takes two allocations (the bytes, and the round trip
 * that proves them strict): either failing is NULL and no reason. */
static void test_base64_value_without_memory(void **state)
{
    json_t *v = json_string("eA==");
    json_t *enc = json_string("base64");

    (void)state;
    for (unsigned n = 1; n <= 2; n++) {
        const char *why = NULL;
        size_t len = 0;
        char *out;

        scribble();
        fail_at = n;
        out = cfs_http_json_value_bytes(v, enc, &len, &why);
        fail_at = 0;
        assert_null(out);
        assert_null(why);
    }
    {
        const char *why = NULL;
        size_t len = 0;
        char *out = cfs_http_json_value_bytes(v, enc, &len, &why);

        assert_non_null(out);
        assert_int_equal(len, 1);
        assert_memory_equal(out, "x", 1);
        free(out);
    }
    json_decref(v);
    json_decref(enc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_value_without_memory),
    };

    return cmocka_run_group_tests_name("http-body", tests, NULL, NULL);
}
