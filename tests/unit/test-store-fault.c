// SPDX-License-Identifier: MIT
/*
 * test-store-fault.c - storage failures, injected below SQLite by a VFS
 * (fault-vfs.c): a full disk, a failing write, a failing fsync, a lock held
 * by another process; and a statement that fails before COMMIT. In each
 * case the caller gets ENOSPC, EIO, EAGAIN or EINVAL, the in-memory change
 * is undone through the inverse operations, tree and database agree, and
 * the next commit works. When commits queue behind a
 * failing one they fail with it and are undone newest first.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include <configfs/store.h>

#include "fault-vfs.h"
#include "store-test-util.h"
#include "store-testsys.h"

struct env {
    struct tmpdb *t;
    struct tsys *sys;
    struct cfs_store *s;
};

/* The fixture makes only the scratch directory: cmocka counts what a test
 * allocates from its own start, so tests open and close the rest. */
static int env_setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    void *t = NULL;

    if (!e || tmpdb_setup(&t) < 0) {
        free(e);
        return -1;
    }
    e->t = t;
    fault_vfs_register();
    fault_vfs_clear();
    *state = e;
    return 0;
}

static int env_teardown(void **state)
{
    struct env *e = *state;
    void *t = e->t;

    fault_vfs_clear();
    tmpdb_teardown(&t);
    free(e);
    return 0;
}

static void env_open(struct env *e)
{
    struct cfs_store_options o = {.path = e->t->path, .vfs = FAULT_VFS_NAME};

    assert_int_equal(tsys_register("s1", &e->sys), 0);
    assert_int_equal(cfs_store_open(&o, &e->s), 0);
}

static void env_close(struct env *e)
{
    cfs_store_close(e->s);
    tsys_unregister(e->sys);
    e->s = NULL;
    e->sys = NULL;
}

/* After a failure: the tree holds what the database holds, also across a
 * restart, and the store takes new commits. */
static void expect_consistent(struct env *e)
{
    struct cfs_store_problem *p = NULL;
    size_t np = 0;

    assert_tree_matches_db(e->s, "/");
    assert_int_equal(cfs_store_problems(e->s, &p, &np), 0);
    assert_int_equal(np, 0);
    RUN(e->s, "mkdir /s1/items/after", "store /s1/items/after/a ok");
    RUN(e->s, "rmdir /s1/items/after");
    env_close(e);
    assert_int_equal(tsys_items_alive(), 0);
    env_open(e);
    assert_tree_matches_db(e->s, "/");
}

static int run1(struct env *e, const char *const *ops, size_t n)
{
    return store_test_run(e->s, NULL, ops, n);
}

static void expect_absent(const char *path)
{
    struct cfs_entry entry;

    assert_int_equal(cfs_stat(path, &entry), -ENOENT);
}

/* A database that cannot be written is refused at open with the reason,
 * not opened read-only to fail every commit later, nor reported missing:
 * on a read-only file system it cannot be made (EROFS); an existing file
 * the process may not write is EACCES. */
static void test_fault_unwritable_at_open(void **state)
{
    struct env *e = *state;
    struct cfs_store_options o = {.path = e->t->path, .vfs = FAULT_VFS_NAME};
    struct cfs_store *s = NULL;

    fault_vfs_deny_write(EROFS);
    assert_int_equal(cfs_store_open(&o, &s), -EROFS);
    assert_null(s);
    fault_vfs_clear();

    env_open(e);
    RUN(e->s, "mkdir /s1/items/x", "store /s1/items/x/a kept");
    env_close(e);
    fault_vfs_deny_write(EACCES);
    assert_int_equal(tsys_register("s1", &e->sys), 0);
    assert_int_equal(cfs_store_open(&o, &s), -EACCES);
    assert_null(s);
    tsys_unregister(e->sys);
    e->sys = NULL;
    fault_vfs_clear();

    env_open(e); /* writable again: nothing was lost */
    expect_written("/s1/items/x/a", "kept");
    env_close(e);
}

/* Disk full while the commit writes the log. */
static void test_fault_enospc(void **state)
{
    struct env *e = *state;
    static const char *const ops[] = {
        "mkdir /s1/items/x",
        "store /s1/items/x/a 1",
        "store /s1/items/base/a changed",
        "symlink /s1/items/base/l /s1/items/x",
    };

    env_open(e);

    RUN(e->s, "mkdir /s1/items/base", "store /s1/items/base/a kept");
    fault_vfs_fail_write(0, SQLITE_FULL, false);
    assert_int_equal(run1(e, ops, 4), -ENOSPC);
    assert_int_equal(fault_vfs_hits(), 1);
    expect_absent("/s1/items/x");
    expect_absent("/s1/items/base/l");
    expect_written("/s1/items/base/a", "kept");
    expect_consistent(e);
    expect_absent("/s1/items/x");
    env_close(e);
}

/* Run @sql on the database through a connection of its own. */
static void db_exec(struct env *e, const char *sql)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(e->t->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* A write that fails inside the transaction, before COMMIT (here a
 * trigger refuses one row): the whole commit fails and is undone, not
 * acknowledged with the rest of its changes written. */
static void test_fault_statement(void **state)
{
    struct env *e = *state;
    static const char *const ops[] = {
        "store /s1/items/base/a changed",
        "store /s1/items/base/b refused",
        "mkdir /s1/items/y",
    };

    env_open(e);
    RUN(e->s, "mkdir /s1/items/base", "store /s1/items/base/a kept");
    db_exec(e,
            "CREATE TRIGGER refuse BEFORE INSERT ON attr"
            " WHEN NEW.name = 'b' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    assert_int_equal(run1(e, ops, 3), -EINVAL);
    expect_written("/s1/items/base/a", "kept");
    expect_absent("/s1/items/y");
    assert_tree_matches_db(e->s, "/");
    db_exec(e, "DROP TRIGGER refuse");
    expect_consistent(e);
    expect_absent("/s1/items/y");
    env_close(e);
}

/* An I/O error on write, then on fsync. */
static void test_fault_eio(void **state)
{
    struct env *e = *state;
    static const char *const ops[] = {
        "store /s1/items/base/a new",
        "rmdir /s1/items/gone",
    };

    env_open(e);

    RUN(e->s,
        "mkdir /s1/items/base",
        "store /s1/items/base/a old",
        "mkdir /s1/items/gone",
        "store /s1/items/gone/b written",
        "store /s1/items/gone/a too");
    fault_vfs_fail_write(0, SQLITE_IOERR_WRITE, false);
    assert_int_equal(run1(e, ops, 2), -EIO);
    expect_written("/s1/items/base/a", "old");
    /* the removed item is back, values in their order */
    expect_written("/s1/items/gone/b", "written");
    assert_tree_matches_db(e->s, "/");

    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, 0);
    assert_int_equal(run1(e, ops, 2), -EIO);
    assert_int_equal(fault_vfs_hits(), 2);
    expect_written("/s1/items/base/a", "old");
    expect_written("/s1/items/gone/a", "too");
    expect_consistent(e);
    env_close(e);
}

/* A disk that stays full: every commit fails, nothing sticks. */
static void test_fault_sticky(void **state)
{
    struct env *e = *state;

    env_open(e);

    RUN(e->s, "mkdir /s1/items/base");
    fault_vfs_fail_write(0, SQLITE_FULL, true);
    for (int i = 0; i < 5; i++) {
        char path[64];
        const char *ops[] = {path};

        snprintf(path, sizeof(path), "mkdir /s1/items/x%d", i);
        assert_int_equal(run1(e, ops, 1), -ENOSPC);
    }
    fault_vfs_clear();
    expect_consistent(e);
    env_close(e);
}

/* Another process holds the write lock past the busy timeout. */
static void test_fault_eagain(void **state)
{
    struct env *e = *state;
    struct cfs_store_options o = {
        .path = e->t->path,
        .vfs = FAULT_VFS_NAME,
        .busy_timeout_ms = 50,
    };
    static const char *const ops[] = {"mkdir /s1/items/x"};
    sqlite3 *other = NULL;

    assert_int_equal(tsys_register("s1", &e->sys), 0);
    assert_int_equal(cfs_store_open(&o, &e->s), 0);
    assert_int_equal(sqlite3_open(e->t->path, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(run1(e, ops, 1), -EAGAIN);
    expect_absent("/s1/items/x");
    assert_int_equal(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(other);
    expect_consistent(e);
    env_close(e);
}

struct dependent {
    struct cfs_store *s;
    int id;
    int ret;
};

/* Write into the item the slow, failing commit made. */
static void *dependent_main(void *arg)
{
    struct dependent *d = arg;
    char op[64];
    const char *ops[] = {op};

    snprintf(op,
             sizeof(op),
             "store /s1/items/shared/%c v%d",
             "abc"[d->id % 3],
             d -> id);
    d->ret = store_test_run(d->s, NULL, ops, 1);
    return NULL;
}

static void *leader_main(void *arg)
{
    struct dependent *d = arg;
    static const char *const ops[] = {"mkdir /s1/items/shared"};

    d->ret = store_test_run(d->s, NULL, ops, 1);
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

/* Transactions queued behind a failing commit built on its changes: they
 * fail with it and are undone newest first (an undo in another order would
 * fail, and be reported as a problem). */
static void test_fault_queue_fails_newest_first(void **state)
{
    enum { N = 6 };
    struct env *e = *state;
    struct dependent lead = {.s = e->s}, dep[N];
    pthread_t lt, th[N];
    struct cfs_store_info info;
    struct cfs_entry entry;

    /* This test's threads allocate: libc's allocator. */
    store_test_threaded(true);
    env_open(e);
    lead.s = e->s;

    /* The leader's fsync fails, but only once every dependent transaction
     * is queued behind it. */
    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, FAULT_VFS_HOLD);
    pthread_create(&lt, NULL, leader_main, &lead);
    do {
        sleep_ms(1); /* until the mkdir is in the tree */
    } while (cfs_stat("/s1/items/shared", &entry) < 0);
    cfs_entry_done(&entry);
    for (int i = 0; i < N; i++) {
        dep[i] = (struct dependent){.s = e->s, .id = i};
        pthread_create(&th[i], NULL, dependent_main, &dep[i]);
    }
    do {
        sleep_ms(1);
        assert_int_equal(cfs_store_info(e->s, &info), 0);
    } while (info.pending < N + 1);
    fault_vfs_release();
    pthread_join(lt, NULL);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(dep[i].ret, -EIO);
    }
    assert_int_equal(lead.ret, -EIO);
    assert_int_equal(fault_vfs_hits(), 1);
    assert_int_equal(cfs_store_info(e->s, &info), 0);
    assert_true(info.failures >= 1);
    assert_int_equal(info.pending, 0);
    expect_absent("/s1/items/shared");
    expect_consistent(e);
    env_close(e);
    store_test_threaded(false);
}

/* ---- asynchronous submissions (cfs_store_submit_async) ----------------- */

struct calls {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n;
    int err[64];
    uint64_t rev[64];
};

static void on_done(void *ctx, int err, uint64_t revision)
{
    struct calls *c = ctx;

    pthread_mutex_lock(&c->lock);
    c->err[c->n] = err;
    c->rev[c->n] = revision;
    c->n++;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void calls_wait(struct calls *c, int n)
{
    pthread_mutex_lock(&c->lock);
    while (c->n < n) {
        pthread_cond_wait(&c->cond, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
}

/* One store in its own transaction, submitted without waiting.
 * @return what cfs_store_submit_async() returned. */
static int submit_store(struct env *e,
                        const char *path,
                        const char *value,
                        struct calls *c,
                        uint64_t *ret_rev)
{
    struct cfs_txn *txn = NULL;

    assert_int_equal(cfs_txn_begin(&txn), 0);
    assert_int_equal(cfs_write(txn, path, value, strlen(value)), 0);
    *ret_rev = cfs_txn_revision(txn);
    return cfs_store_submit_async(e->s, txn, "async", on_done, c);
}

/* Every submission is called back once, in revision order, after its
 * change is durable; one that changes nothing is not queued; close waits
 * for the callbacks still due. */
static void test_async_order(void **state)
{
    enum { N = 40 };
    struct env *e = *state;
    struct calls c = {.n = 0};
    uint64_t want[N];
    struct cfs_txn *txn = NULL;
    struct cfs_store_info info;

    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    store_test_threaded(true);
    env_open(e);
    RUN(e->s, "mkdir /s1/items/x");
    for (int i = 0; i < N; i++) {
        char v[16];

        snprintf(v, sizeof(v), "v%d", i);
        assert_int_equal(submit_store(e, "/s1/items/x/a", v, &c, &want[i]), 0);
    }
    calls_wait(&c, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(c.err[i], 0);
        assert_int_equal(c.rev[i], want[i]);
    }
    expect_written("/s1/items/x/a", "v39");
    assert_int_equal(cfs_store_info(e->s, &info), 0);
    assert_int_equal(info.pending, 0);
    assert_int_equal(info.revision, want[N - 1]);

    assert_int_equal(cfs_txn_begin(&txn), 0); /* nothing to store */
    assert_int_equal(cfs_store_submit_async(e->s, txn, NULL, on_done, &c), 1);

    /* Closing with callbacks due: each one runs before close returns. */
    for (int i = 0; i < 8; i++) {
        assert_int_equal(submit_store(e, "/s1/items/x/b", "w", &c, &want[i]),
                         0);
    }
    env_close(e);
    assert_int_equal(c.n, N + 8);
    for (int i = N; i < N + 8; i++) {
        assert_int_equal(c.err[i], 0);
    }
    env_open(e);
    expect_written("/s1/items/x/b", "w");
    assert_tree_matches_db(e->s, "/");
    RUN(e->s, "rmdir /s1/items/x");
    env_close(e);
    store_test_threaded(false);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.lock);
}

/* Asynchronous submissions queued behind a failing commit, between
 * waiting ones: all fail with it, are undone newest first, and are called
 * back with the error and no revision. */
static void test_async_fails_newest_first(void **state)
{
    enum { N = 4 };
    struct env *e = *state;
    struct dependent lead = {.s = e->s}, dep[N];
    pthread_t lt, th[N];
    struct calls c = {.n = 0};
    struct cfs_store_info info;
    struct cfs_entry entry;
    uint64_t rev;

    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    store_test_threaded(true);
    env_open(e);
    lead.s = e->s;
    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, FAULT_VFS_HOLD);
    pthread_create(&lt, NULL, leader_main, &lead);
    do {
        sleep_ms(1); /* until the mkdir is in the tree */
    } while (cfs_stat("/s1/items/shared", &entry) < 0);
    cfs_entry_done(&entry);
    for (int i = 0; i < N; i++) {
        int pending = 1 + 2 * i;

        /* a waiting writer, then an asynchronous one, alternately */
        dep[i] = (struct dependent){.s = e->s, .id = i};
        pthread_create(&th[i], NULL, dependent_main, &dep[i]);
        do {
            sleep_ms(1);
            assert_int_equal(cfs_store_info(e->s, &info), 0);
        } while (info.pending < (uint64_t)pending + 1);
        assert_int_equal(
            submit_store(e, "/s1/items/shared/c", "async", &c, &rev), 0);
    }
    fault_vfs_release();
    calls_wait(&c, N);
    pthread_join(lt, NULL);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(dep[i].ret, -EIO);
        assert_int_equal(c.err[i], -EIO);
        assert_int_equal(c.rev[i], 0);
    }
    assert_int_equal(lead.ret, -EIO);
    assert_int_equal(fault_vfs_hits(), 1);
    assert_int_equal(cfs_store_info(e->s, &info), 0);
    assert_int_equal(info.pending, 0);
    expect_absent("/s1/items/shared");
    expect_consistent(e);
    env_close(e);
    store_test_threaded(false);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_fault_unwritable_at_open, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_enospc, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_eio, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_statement, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_sticky, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_eagain, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_fault_queue_fails_newest_first, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_async_order, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_async_fails_newest_first, env_setup, env_teardown),
    };

    return cmocka_run_group_tests(
        tests, store_test_group_setup, store_test_group_teardown);
}
