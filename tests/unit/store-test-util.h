/* SPDX-License-Identifier: MIT */
/*
 * store-test-util.h - what the store tests share: a scratch database
 * path per test, and routing core's allocator through cmocka so every test
 * is also a leak test.
 */
#ifndef STORE_TEST_UTIL_H
#define STORE_TEST_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* cmocka keeps its allocation list per thread: a test whose threads
 * allocate runs on libc's allocator between store_test_threaded(true) and
 * store_test_threaded(false), with nothing allocated at either call. */
void store_test_threaded(bool on);

/* Group setup/teardown: core's allocator through cmocka's. */
int store_test_group_setup(void **state);
int store_test_group_teardown(void **state);

struct cfs_store;
struct cfs_store_node;

/* Fail unless @a and @b describe the same written state: the same
 * directories (children matched by name), values in the same order, the
 * same links, created and committed flags, and types where both know one. */
void assert_same_state(const struct cfs_store_node *a,
                       const struct cfs_store_node *b);

/* Fail unless the live tree and the database agree at and under @path. */
void assert_tree_matches_db(struct cfs_store *store, const char *path);

/* Count the journal rows of the database at @path (its own connection). */
long journal_rows(const char *path);

/* Run one transaction of @n operations through cfs_store_commit_txn():
 * "mkdir P", "rmdir P", "store P V", "symlink P T", "unlink P",
 * "rename P Q". An operation that fails aborts the transaction.
 * @return what the failing operation or the commit returned. */
int store_test_run(struct cfs_store *s,
                   uint64_t *ret_rev,
                   const char *const *ops,
                   size_t n);

#define RUN(s, ...)                                                            \
    do {                                                                       \
        static const char *const ops_[] = {__VA_ARGS__};                       \
        assert_int_equal(                                                      \
            store_test_run(s, NULL, ops_, sizeof(ops_) / sizeof(ops_[0])), 0); \
    } while (0)

/* Fail unless the live tree has @value written at attribute @path. */
void expect_written(const char *path, const char *value);

#endif
