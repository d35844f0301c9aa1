/* SPDX-License-Identifier: MIT */
/*
 * schema-test.h - fixtures shared by the test-schema-*.c programs.
 *
 * Every allocation of core, of the schema library and of jansson goes
 * through cmocka's checked allocator during a test, so each test is also a
 * leak test, and st_alloc_fail_nth() makes the Nth allocation fail for
 * out-of-memory loops.
 */
#ifndef CFS_TEST_SCHEMA_TEST_H
#define CFS_TEST_SCHEMA_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>

#define assert_ok(expr) assert_int_equal((expr), 0)

/* Group setup: lets core make its process-wide tables on libc first. */
int st_group_setup(void **state);
/* Per test: route allocations to cmocka, and back to libc. */
int st_setup(void **state);
int st_teardown(void **state);

/*
 * cmocka checks for leaks when the test function returns, before the
 * teardown runs; so a test's fixture is built and torn down inside the
 * test function: ST_TEST(fn, before, after) runs before(), fn(), after()
 * (either may be NULL) as one cmocka test.
 */
struct st_case {
    void (*fn)(void **state);
    void (*before)(void);
    void (*after)(void);
};
void st_body(void **state);
#define ST_TEST(f, b, a)                                                       \
    {                                                                          \
        .name = #f, .test_func = st_body, .setup_func = st_setup,              \
        .teardown_func = st_teardown,                                          \
        .initial_state = &(struct st_case){f, b, a},                           \
    }

/* snprintf that fails the test when @buf is too small. */
void st_fmt(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append to a NUL-terminated @buf, cutting what does not fit. */
void st_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fail the @nth allocation of core or the schema library from now on
 * (0: never). */
void st_alloc_fail_nth(long nth);
/* Let the armed failure hit jansson too (for code that builds JSON
 * without parsing). */
void st_alloc_fail_json(bool on);
/* Whether the armed failure happened. */
bool st_alloc_failed(void);

/* tests/data and the shipped schemas/ folder of the source tree. */
const char *st_data_dir(void);
const char *st_shipped_dir(void);

/* Load @json (asserting success) and register it. */
struct cfs_schema *st_load(const char *json);
struct cfs_schema *st_load_register(const char *json);

/* Load @json expecting failure -EINVAL at @path with @reason_part in the
 * reason. */
void st_load_fails(const char *json, const char *path, const char *reason_part);

/* show() at @path must print exactly @expected followed by "\n". */
void st_show_eq(const char *path, const char *expected);

/* store @value (as given, no newline added); @return its result. */
int st_store(const char *path, const char *value);

/* Expect a refused store with @err and a detail containing @detail_part. */
void st_store_fails(const char *path,
                    const char *value,
                    int err,
                    const char *detail_part);

/* The names cfs_readdir lists at @path, joined with ' '. Caller frees
 * with test_free. */
char *st_readdir(const char *path);
void st_readdir_eq(const char *path, const char *expected);

/* The type name cfs_stat reports for the directory at @path. */
void st_type_eq(const char *path, const char *type);

/* The detail must contain @part. */
void st_detail_has(const char *part);

#endif /* CFS_TEST_SCHEMA_TEST_H */
