// SPDX-License-Identifier: MIT
/*
 * test-core-alloc.c - cfs_grow() and cfs_grow_cap(), the one array growth
 * of core, the store and the schema engine.
 *
 * An array that grows must double (so appending n elements costs O(n)),
 * start at the size its caller chose, refuse a size that would wrap around
 * size_t instead of allocating a short block, and keep the old array whole
 * when the allocation fails, so callers can report ENOMEM and lose nothing
 * (docs/STYLE.md §3, §5).
 */
#include <stdint.h>

#include "recorder.h"

/* Growth starts at @first, then doubles; @need wins when it is larger. */
static void test_alloc_grow_cap_doubles(void **state)
{
    size_t cap = 0;

    (void)state;
    assert_int_equal(cfs_grow_cap(0, 1, 8, sizeof(int), &cap), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(cfs_grow_cap(8, 9, 8, sizeof(int), &cap), 0);
    assert_int_equal(cap, 16);
    assert_int_equal(cfs_grow_cap(16, 100, 8, sizeof(int), &cap), 0);
    assert_int_equal(cap, 100);
    assert_int_equal(cfs_grow_cap(0, 300, 256, 1, &cap), 0);
    assert_int_equal(cap, 300);
}

/* A capacity or a byte size beyond size_t is ENOMEM, and *ret_cap is left
 * alone. */
static void test_alloc_grow_cap_overflow(void **state)
{
    size_t cap = 7;

    (void)state;
    assert_int_equal(cfs_grow_cap(SIZE_MAX / 2 + 1, 0, 8, 1, &cap), -ENOMEM);
    assert_int_equal(cfs_grow_cap(SIZE_MAX / 8, 0, 8, 16, &cap), -ENOMEM);
    assert_int_equal(cfs_grow_cap(0, SIZE_MAX, 8, 2, &cap), -ENOMEM);
    assert_int_equal(cap, 7);
    assert_int_equal(
        cfs_grow(&(int *){NULL}, &(size_t){SIZE_MAX}, SIZE_MAX, sizeof(int), 8),
        -ENOMEM);
}

/* Appending keeps every element, and reallocates only when full. */
static void test_alloc_grow_appends(void **state)
{
    int *v = NULL;
    size_t cap = 0;
    size_t n;

    (void)state;
    for (n = 0; n < 100; n++) {
        size_t before = cap;

        assert_int_equal(cfs_grow(&v, &cap, n, sizeof(*v), 4), 0);
        assert_true(cap > n);
        if (n < before) {
            assert_int_equal(cap, before); /* room left: nothing changes */
        }
        v[n] = (int)n * 3;
    }
    assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
    for (n = 0; n < 100; n++) {
        assert_int_equal(v[n], (int)n * 3);
    }
    cfs_free(v);
}

/* A failed reallocation leaves the array, its contents and its capacity as
 * they were. */
static void test_alloc_grow_enomem_keeps_array(void **state)
{
    int *v = NULL;
    int *old;
    size_t cap = 0;

    (void)state;
    assert_int_equal(cfs_grow(&v, &cap, 0, sizeof(*v), 2), 0);
    v[0] = 10;
    v[1] = 11;
    old = v;
    rec_alloc_fail_nth(1);
    assert_int_equal(cfs_grow(&v, &cap, 2, sizeof(*v), 2), -ENOMEM);
    assert_true(rec_alloc_failed());
    rec_alloc_fail_nth(0);
    assert_ptr_equal(v, old);
    assert_int_equal(cap, 2);
    assert_int_equal(v[0], 10);
    assert_int_equal(v[1], 11);
    assert_int_equal(cfs_grow(&v, &cap, 2, sizeof(*v), 2), 0);
    assert_int_equal(cap, 4);
    assert_int_equal(v[1], 11);
    cfs_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_alloc_grow_cap_doubles),
        REC_TEST(test_alloc_grow_cap_overflow),
        REC_TEST(test_alloc_grow_appends),
        REC_TEST(test_alloc_grow_enomem_keeps_array),
    };

    return rec_run("core-alloc", tests);
}
