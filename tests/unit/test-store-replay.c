// SPDX-License-Identifier: MIT
/*
 * test-store-replay.c - the write path and replay against the real tree:
 * committed transactions survive a restart exactly (values in write order,
 * links, commit state), replay goes through the subsystem's callbacks at
 * open and at a later registration, records the steps that now fail while
 * keeping their data, leaves unregistered subsystems' data alone, and
 * journals nothing of its own.
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

#include <cmocka.h>
#include <sqlite3.h>

#include <configfs/store.h>

#include "store-test-util.h"
#include "store-testsys.h"

static struct cfs_store *open_store(const char *path)
{
    struct cfs_store_options o = {.path = path};
    struct cfs_store *s = NULL;

    assert_int_equal(cfs_store_open(&o, &s), 0);
    return s;
}

/* A restart, with the subsystem registered before the store opens. */
static void test_replay_roundtrip(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    struct cfs_store_export *before = NULL, *after = NULL;
    uint64_t rev = 0;
    long rows;

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    RUN(s,
        "mkdir /s1/items/x",
        "store /s1/items/x/b one",
        "store /s1/items/x/a two",
        "store /s1/items/x/secret pw");
    RUN(s,
        "mkdir /s1/items/y",
        "symlink /s1/items/y/to-x /s1/items/x",
        "store /s1/note hi");
    RUN(s, "store /s1/items/x/b three");
    {
        static const char *const ops[] = {"mkdir /s1/items/z"};

        assert_int_equal(store_test_run(s, &rev, ops, 1), 0);
    }
    assert_int_equal(rev, cfs_revision());
    RUN(s, "rmdir /s1/items/z");
    rev = cfs_revision();
    assert_tree_matches_db(s, "/");
    assert_int_equal(cfs_store_export_tree("/", &before), 0);
    rows = journal_rows(t->path);

    cfs_store_close(s);
    tsys_unregister(sys);
    assert_int_equal(tsys_items_alive(), 0);
    cfs_revision_set(0);

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    assert_int_equal(cfs_revision(), rev);
    assert_int_equal(cfs_store_export_tree("/", &after), 0);
    assert_same_state(&before->root, &after->root);
    /* write order survives: a was written after the first b, and b again */
    expect_written("/s1/items/x/b", "three");
    assert_string_equal(
        after->root.children[0].children[0].children[0].values[0].name, "a");
    /* replay journals nothing */
    assert_int_equal(journal_rows(t->path), rows);
    cfs_store_export_free(before);
    cfs_store_export_free(after);
    cfs_store_close(s);
    tsys_unregister(sys);
}

/* Replay runs the steps in the order they were written across the whole
 * tree, not item by item: a subsystem whose store() looks at another
 * item's state sees at start-up the history it saw live. */
static void test_replay_global_write_order(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    char *live;

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    tsys_events_reset();
    RUN(s, "mkdir /s1/items/x", "mkdir /s1/items/y");
    RUN(s, "store /s1/items/y/a 1");
    RUN(s, "store /s1/items/x/a 2");
    RUN(s, "symlink /s1/items/x/to-y /s1/items/y");
    RUN(s, "store /s1/note 3");
    RUN(s, "mkdir /s1/commit/pending/p", "store /s1/commit/pending/p/a 4");
    RUN(s, "store /s1/items/y/b 5");
    RUN(s, "rename /s1/commit/pending/p /s1/commit/live/p");
    RUN(s, "store /s1/commit/live/p/b 6", "store /s1/items/x/b 7");
    RUN(s, "mkdir /s1/items/z", "store /s1/items/z/a 8");
    RUN(s, "store /s1/items/x/c 9");
    live = strdup(tsys_events());
    assert_non_null(live);
    cfs_store_close(s);
    tsys_unregister(sys);
    cfs_revision_set(0);

    tsys_events_reset();
    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    assert_string_equal(tsys_events(), live);
    free(live);
    cfs_store_close(s);
    tsys_unregister(sys);
}

/* A subsystem that registers after the store opened is replayed by the
 * observer; committed items come back in live/ with links to them. */
static void test_replay_observer_and_commit(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    struct cfs_store_problem *p = NULL;
    size_t np = 0;
    char *target = NULL;

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    RUN(s,
        "mkdir /s1/commit/pending/c",
        "store /s1/commit/pending/c/a v1",
        "mkdir /s1/items/i",
        "symlink /s1/items/i/to-c /s1/commit/pending/c");
    RUN(s, "rename /s1/commit/pending/c /s1/commit/live/c");
    assert_tree_matches_db(s, "/");
    cfs_store_close(s);
    tsys_unregister(sys);

    s = open_store(t->path);
    /* stored data of a subsystem that is not registered: kept, reported */
    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    assert_int_equal(np, 1);
    assert_string_equal(p[0].path, "/s1");
    assert_int_equal(p[0].op, CFS_STORE_STEP_SUBSYSTEM);
    cfs_store_problems_free(p, np);

    assert_int_equal(tsys_register("s1", &sys), 0);
    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    assert_int_equal(np, 0);
    expect_written("/s1/commit/live/c/a", "v1");
    assert_int_equal(cfs_readlink("/s1/items/i/to-c", &target), 0);
    assert_string_equal(target, "/s1/commit/live/c");
    cfs_free(target);
    assert_tree_matches_db(s, "/");

    /* Uncommit survives too. */
    RUN(s, "rename /s1/commit/live/c /s1/commit/pending/c");
    tsys_unregister(sys);
    assert_int_equal(tsys_register("s1", &sys), 0);
    expect_written("/s1/commit/pending/c/a", "v1");
    assert_tree_matches_db(s, "/");
    cfs_store_close(s);
    tsys_unregister(sys);
}

static uint64_t rev_of(const char *path)
{
    struct cfs_entry e;
    uint64_t rev;

    assert_int_equal(cfs_stat(path, &e), 0);
    rev = e.revision;
    cfs_entry_done(&e);
    return rev;
}

/* A directory's revision (its ETag over HTTP) is the last change to it,
 * also when that change left nothing to replay: the rmdir of a child, an
 * unlink, an uncommit. It survives a restart, and the replay of a
 * subsystem that registers late. */
static void test_replay_keeps_dir_revisions(void **state)
{
    static const char *const dirs[] = {
        "/s1/items",
        "/s1/items/x",
        "/s1/commit/pending",
        "/s1/commit/live",
        "/s1/commit/pending/c",
    };
    enum { N = sizeof(dirs) / sizeof(dirs[0]) };
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    uint64_t before[N];

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    RUN(s,
        "mkdir /s1/items/x",
        "mkdir /s1/items/y",
        "symlink /s1/items/x/to-y /s1/items/y");
    RUN(s, "store /s1/items/x/a 1");
    RUN(s, "unlink /s1/items/x/to-y");    /* x: last change an unlink */
    RUN(s, "rmdir /s1/items/y");          /* items: a child removed */
    RUN(s, "mkdir /s1/commit/pending/c"); /* committed, then uncommitted */
    RUN(s, "rename /s1/commit/pending/c /s1/commit/live/c");
    RUN(s, "rename /s1/commit/live/c /s1/commit/pending/c");
    for (size_t i = 0; i < N; i++) {
        before[i] = rev_of(dirs[i]);
    }
    assert_int_equal(before[0], rev_of("/s1/items/x") + 1);
    cfs_store_close(s);
    tsys_unregister(sys);
    cfs_revision_set(0);

    /* at open */
    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(rev_of(dirs[i]), before[i]);
    }
    /* and when the subsystem registers again */
    tsys_unregister(sys);
    assert_int_equal(tsys_register("s1", &sys), 0);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(rev_of(dirs[i]), before[i]);
    }
    cfs_store_close(s);
    tsys_unregister(sys);
}

/* Steps that fail now are reported with path and errno; their data stays
 * and comes back once the subsystem accepts it again. */
static void test_replay_problems_keep_data(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    struct cfs_store_problem *p = NULL;
    struct cfs_store_export *e = NULL;
    size_t np = 0;
    bool saw_store = false, saw_mkdir = false;

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    RUN(s,
        "mkdir /s1/items/ok",
        "store /s1/items/ok/a bad-now",
        "store /s1/items/ok/b fine");
    RUN(s,
        "mkdir /s1/items/nope",
        "store /s1/items/nope/a x",
        "store /s1/items/nope/b y");
    cfs_store_close(s);
    tsys_unregister(sys);

    tsys_default_refusals("bad", "nope");
    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    assert_int_equal(np, 2);
    for (size_t i = 0; i < np; i++) {
        if (p[i].op == CFS_STORE_STEP_STORE) {
            assert_string_equal(p[i].path, "/s1/items/ok/a");
            assert_int_equal(p[i].error, -EINVAL);
            saw_store = true;
        } else {
            assert_int_equal(p[i].op, CFS_STORE_STEP_MKDIR);
            assert_string_equal(p[i].path, "/s1/items/nope");
            assert_int_equal(p[i].error, -ENOSPC);
            assert_int_equal(p[i].skipped, 2);
            saw_mkdir = true;
        }
    }
    assert_true(saw_store && saw_mkdir);
    cfs_store_problems_free(p, np);
    expect_written("/s1/items/ok/b", "fine");
    /* the data is still stored */
    assert_int_equal(cfs_store_export(s, "/s1/items/nope", &e), 0);
    assert_int_equal(e->root.n_values, 2);
    cfs_store_export_free(e);

    /* A later registration that accepts it again replays it. */
    tsys_default_refusals(NULL, NULL);
    tsys_unregister(sys);
    assert_int_equal(tsys_register("s1", &sys), 0);
    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    assert_int_equal(np, 0);
    expect_written("/s1/items/ok/a", "bad-now");
    expect_written("/s1/items/nope/b", "y");
    assert_tree_matches_db(s, "/");
    cfs_store_close(s);
    tsys_unregister(sys);
}

/* Commits to one subsystem leave another's stored data untouched while it
 * is not registered. */
static void test_replay_unregistered_untouched(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *a = NULL, *b = NULL;
    struct cfs_store *s;
    struct cfs_store_export *e1 = NULL, *e2 = NULL;

    assert_int_equal(tsys_register("a", &a), 0);
    assert_int_equal(tsys_register("b", &b), 0);
    s = open_store(t->path);
    RUN(s,
        "mkdir /b/items/kept",
        "store /b/items/kept/a 1",
        "mkdir /a/items/x",
        "symlink /a/items/x/to-b /b/items/kept");
    assert_int_equal(cfs_store_export(s, "/b", &e1), 0);
    cfs_store_close(s);
    tsys_unregister(a);
    tsys_unregister(b);

    assert_int_equal(tsys_register("a", &a), 0);
    s = open_store(t->path);
    RUN(s, "mkdir /a/items/y", "store /a/items/y/a 2");
    assert_int_equal(cfs_store_export(s, "/b", &e2), 0);
    assert_same_state(&e1->root, &e2->root);
    cfs_store_export_free(e2);
    /* b arrives: its items come back, and so does a's link into it */
    assert_int_equal(tsys_register("b", &b), 0);
    expect_written("/b/items/kept/a", "1");
    {
        char *target = NULL;

        assert_int_equal(cfs_readlink("/a/items/x/to-b", &target), 0);
        assert_string_equal(target, "/b/items/kept");
        cfs_free(target);
    }
    assert_tree_matches_db(s, "/");
    cfs_store_export_free(e1);
    cfs_store_close(s);
    tsys_unregister(a);
    tsys_unregister(b);
}

/* Links that cross between two subsystems: a/items/x -> b/items/y and
 * b/items/y -> a/items/x. */
static void crossing_links_stored(const char *db)
{
    struct tsys *a = NULL, *b = NULL;
    struct cfs_store *s;

    assert_int_equal(tsys_register("a", &a), 0);
    assert_int_equal(tsys_register("b", &b), 0);
    s = open_store(db);
    RUN(s, "mkdir /a/items/x", "mkdir /b/items/y");
    RUN(s,
        "symlink /a/items/x/to-b /b/items/y",
        "symlink /b/items/y/to-a /a/items/x");
    cfs_store_close(s);
    tsys_unregister(b);
    tsys_unregister(a);
}

static void expect_link(const char *path, const char *target)
{
    char *t = NULL;

    assert_int_equal(cfs_readlink(path, &t), 0);
    assert_string_equal(t, target);
    cfs_free(t);
}

static void expect_no_problems(struct cfs_store *s)
{
    struct cfs_store_problem *p = NULL;
    size_t np = 0;

    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    for (size_t i = 0; i < np; i++) {
        print_error("problem: %s %s %d\n",
                    cfs_store_step_name(p[i].op),
                    p[i].path,
                    p[i].error);
    }
    assert_int_equal(np, 0);
    cfs_store_problems_free(p, np);
}

/* Each link is made by exactly one replay, whichever subsystem comes
 * first: both registered before the store opens, one before and one
 * after (either), or both after (in either order). Both links come back
 * and nothing is reported (a link already there, or one tried twice,
 * would be an EEXIST problem). */
static void test_replay_crossing_links_any_order(void **state)
{
    static const char *const orders[][2] = {
        {"ab", ""}, {"a", "b"}, {"b", "a"}, {"", "ab"}, {"", "ba"}};
    struct tmpdb *t = *state;

    crossing_links_stored(t->path);
    for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
        struct tsys *sys[2] = {NULL, NULL};
        struct cfs_store *s;
        size_t n = 0;

        for (const char *c = orders[k][0]; *c; c++) {
            const char name[2] = {*c, '\0'};

            assert_int_equal(tsys_register(name, &sys[n++]), 0);
        }
        s = open_store(t->path);
        for (const char *c = orders[k][1]; *c; c++) {
            const char name[2] = {*c, '\0'};

            assert_int_equal(tsys_register(name, &sys[n++]), 0);
        }
        expect_link("/a/items/x/to-b", "/b/items/y");
        expect_link("/b/items/y/to-a", "/a/items/x");
        expect_no_problems(s);
        assert_tree_matches_db(s, "/");
        cfs_store_close(s);
        tsys_unregister(sys[1]);
        tsys_unregister(sys[0]);
    }
}

/* A stored link whose name is taken now (here: an attribute "a" of the
 * item, as a new version of a subsystem may add one) is a problem with
 * EEXIST, reported, its data kept - not a link quietly taken as made. */
static void test_replay_link_name_taken_is_a_problem(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    struct cfs_store_problem *p = NULL;
    struct cfs_store_export *e = NULL;
    sqlite3 *db = NULL;
    size_t np = 0;

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    RUN(s, "mkdir /s1/items/x", "mkdir /s1/items/y");
    RUN(s, "symlink /s1/items/x/l /s1/items/y");
    cfs_store_close(s);
    tsys_unregister(sys);
    /* the stored link is now called like the item's attribute a */
    assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE link SET name = 'a' WHERE name = 'l'",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_changes(db), 1);
    sqlite3_close(db);

    assert_int_equal(tsys_register("s1", &sys), 0);
    s = open_store(t->path);
    assert_int_equal(cfs_store_problems(s, &p, &np), 0);
    assert_int_equal(np, 1);
    assert_int_equal(p[0].op, CFS_STORE_STEP_SYMLINK);
    assert_string_equal(p[0].path, "/s1/items/x/a");
    assert_int_equal(p[0].error, -EEXIST);
    cfs_store_problems_free(p, np);
    /* the data stays */
    assert_int_equal(cfs_store_export(s, "/s1/items/x", &e), 0);
    assert_int_equal(e->root.n_links, 1);
    cfs_store_export_free(e);
    cfs_store_close(s);
    tsys_unregister(sys);
}

struct writer {
    struct cfs_store *store;
    int id;
    int n;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;

    for (int i = 0; i < w->n; i++) {
        char path[64], value[32];
        struct cfs_txn *txn = NULL;
        int r = cfs_txn_begin(&txn);

        if (r == 0 && i == 0) {
            snprintf(path, sizeof(path), "/s1/items/w%d", w->id);
            r = cfs_mkdir(txn, path);
        }
        if (r == 0) {
            snprintf(path, sizeof(path), "/s1/items/w%d/a", w->id);
            snprintf(value, sizeof(value), "%d", i);
            r = cfs_write(txn, path, value, strlen(value));
        }
        if (r == 0) {
            r = cfs_store_commit_txn(w->store, txn, NULL, NULL);
        } else if (txn) {
            cfs_txn_abort(txn);
        }
        if (r < 0) {
            return (void *)(intptr_t)r;
        }
    }
    return NULL;
}

/* Concurrent writers share commits and every acknowledged write is there. */
static void test_replay_concurrent_writers(void **state)
{
    enum { THREADS = 16, WRITES = 40 };
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store_options o = {.path = t->path,
                                  .sync = CFS_STORE_SYNC_NORMAL};
    struct cfs_store *s = NULL;
    struct writer w[THREADS];
    pthread_t th[THREADS];
    struct cfs_store_info info;

    store_test_threaded(true);
    assert_int_equal(tsys_register("s1", &sys), 0);
    assert_int_equal(cfs_store_open(&o, &s), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct writer){.store = s, .id = i, .n = WRITES};
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *ret = NULL;

        pthread_join(th[i], &ret);
        assert_null(ret);
    }
    assert_int_equal(cfs_store_info(s, &info), 0);
    assert_int_equal(info.txns, THREADS * WRITES);
    assert_true(info.commits <= info.txns);
    assert_int_equal(info.revision, cfs_revision());
    assert_tree_matches_db(s, "/");
    cfs_store_close(s);
    tsys_unregister(sys);
    store_test_threaded(false);
}

static bool touched(struct cfs_store *s, const char *path, uint64_t rev)
{
    bool t = false;

    assert_int_equal(cfs_store_touched_since(s, path, rev, &t), 0);
    return t;
}

/* What an import checks before it applies a plan made on a snapshot: a
 * change after the snapshot's revision at or under the path, as source or
 * as target, and only that. */
static void test_touched_since(void **state)
{
    struct tmpdb *t = *state;
    struct tsys *sys = NULL;
    struct cfs_store *s;
    uint64_t rev;

    assert_int_equal(tsys_register("d", &sys), 0);
    s = open_store(t->path);
    RUN(s, "mkdir /d/items/a", "store /d/items/a/a 1", "mkdir /d/items/ab");
    rev = cfs_revision();
    assert_false(touched(s, "/d/items/a", rev));
    assert_false(touched(s, "/", rev));
    assert_true(touched(s, "/d/items/a", rev - 1));
    RUN(s, "store /d/items/ab/a 2"); /* a sibling whose name extends it */
    assert_false(touched(s, "/d/items/a", rev));
    assert_true(touched(s, "/d/items", rev));
    assert_true(touched(s, "/", rev));
    rev = cfs_revision();
    RUN(s, "symlink /d/items/ab/l /d/items/a"); /* a link into it */
    assert_true(touched(s, "/d/items/a", rev));
    rev = cfs_revision();
    RUN(s,
        "mkdir /d/commit/pending/c",
        "rename /d/commit/pending/c /d/commit/live/c");
    assert_true(touched(s, "/d/commit/live", rev));
    assert_true(touched(s, "/d/commit/pending", rev));
    assert_false(touched(s, "/d/items", rev));
    assert_false(touched(s, "/d/items", cfs_revision()));
    cfs_store_close(s);
    tsys_unregister(sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_replay_roundtrip, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_touched_since, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_keeps_dir_revisions, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_global_write_order, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_observer_and_commit, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_problems_keep_data, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_unregistered_untouched, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_crossing_links_any_order, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_link_name_taken_is_a_problem,
            tmpdb_setup,
            tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_concurrent_writers, tmpdb_setup, tmpdb_teardown),
    };

    return cmocka_run_group_tests(
        tests, store_test_group_setup, store_test_group_teardown);
}
