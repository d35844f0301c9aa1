// SPDX-License-Identifier: MIT
/*
 * store-test-util.c - scratch databases and the allocator hook for the
 * persistence tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <configfs/cfs.h>

#include "store-test-util.h"

void tmpdb_unlink(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[PATH_MAX + 16];

    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
        unlink(p);
    }
}

int tmpdb_setup(void **state)
{
    struct tmpdb *t = calloc(1, sizeof(*t));
    const char *base = getenv("CFS_TEST_TMPDIR");

    if (!t) {
        return -1;
    }
    snprintf(
        t->dir, sizeof(t->dir), "%s/cfs-store-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(t->dir)) {
        free(t);
        return -1;
    }
    snprintf(t->path, sizeof(t->path), "%s/test.db", t->dir);
    *state = t;
    return 0;
}

int tmpdb_teardown(void **state)
{
    struct tmpdb *t = *state;

    tmpdb_unlink(t->path);
    rmdir(t->dir);
    free(t);
    return 0;
}

static void *hook_malloc(size_t size)
{
    return test_malloc(size);
}

static void *hook_realloc(void *p, size_t size)
{
    return test_realloc(p, size);
}

static void hook_free(void *p)
{
    test_free(p);
}

int store_test_group_setup(void **state)
{
    (void)state;
    cfs_set_alloc_funcs(hook_malloc, hook_realloc, hook_free);
    return 0;
}

int store_test_group_teardown(void **state)
{
    (void)state;
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return 0;
}
