/* SPDX-License-Identifier: MIT */
/*
 * store-test-util.h - what the persistence tests share: a scratch database
 * path per test, and routing core's allocator through cmocka so every test
 * is also a leak test.
 */
#ifndef STORE_TEST_UTIL_H
#define STORE_TEST_UTIL_H

#include <limits.h>

struct tmpdb {
    char dir[PATH_MAX];
    char path[PATH_MAX + 16];
};

/* cmocka setup/teardown: *state becomes a struct tmpdb with a fresh
 * directory; teardown removes the database files and the directory. */
int tmpdb_setup(void **state);
int tmpdb_teardown(void **state);

/* Remove the database and its -wal and -shm files. */
void tmpdb_unlink(const char *path);

/* Group setup/teardown: core's allocator through cmocka's. */
int store_test_group_setup(void **state);
int store_test_group_teardown(void **state);

#endif
