/* SPDX-License-Identifier: MIT */
/*
 * util.h - fixtures and shorthands shared by the compat, module and
 * samples tests: core's allocator pointed at cmocka's for the length of
 * each test (so each test is also a leak test), and one-call forms of
 * show, store and readdir.
 */
#ifndef CFS_TESTS_COMPAT_UTIL_H
#define CFS_TESTS_COMPAT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

/* Run every path once on libc's allocator (register, mkdir, store, show,
 * rmdir, unregister), so that what core allocates once for good (the
 * root's child table) is not counted as a leak of the first test. Call
 * from main() before the tests. */
void cu_prime_core(void);

/* cmocka fixtures: core's allocator is cmocka's inside a test. */
int cu_setup(void **state);
int cu_teardown(void **state);

/* show() @path into @out (NUL-terminated, truncated to @size).
 * @return 0 or the negative errno of cfs_show(). */
int cu_show(const char *path, char *out, size_t size);

/* store() the string @value at @path: 0 or a negative errno. */
int cu_store(const char *path, const char *value);

/* Whether the directory @dir lists an entry named @name. */
bool cu_listed(const char *dir, const char *name);

#endif /* CFS_TESTS_COMPAT_UTIL_H */
