// SPDX-License-Identifier: MIT
/*
 * test-store-db.c - the database side of the store, driven with change
 * records built by hand: schema (STRICT, WAL, user_version), forward
 * migrations, the errno map, what each record does to the current state,
 * the journal and its history queries, pruning, export, and the order in
 * which cfs_store_load() streams replay steps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store-internal.h"
#include "store-test-util.h"

static struct cfs_change
chg(enum cfs_op op, uint64_t rev, const char *path, const char *arg)
{
    struct cfs_change c = {
        .op = op,
        .revision = rev,
        .path = (char *)path,
        .arg = (char *)arg,
        .arg_len = arg ? strlen(arg) : 0,
    };
    return c;
}

static int apply1(struct cfs_store *s, const struct cfs_change *c, size_t n)
{
    struct cfs_store_changeset set = {.changes = c, .n = n, .principal = "t"};

    return cfs_store_apply(s, &set, 1);
}

static struct cfs_store *open_plain(const char *path, uint64_t history_limit)
{
    struct cfs_store_options o = {
        .path = path,
        .no_replay = true,
        .history_limit = history_limit,
    };
    struct cfs_store *s = NULL;

    assert_int_equal(cfs_store_open(&o, &s), 0);
    return s;
}

static void test_db_errno_map(void **state)
{
    (void)state;
    assert_int_equal(store_errno(SQLITE_OK), 0);
    assert_int_equal(store_errno(SQLITE_DONE), 0);
    assert_int_equal(store_errno(SQLITE_FULL), -ENOSPC);
    assert_int_equal(store_errno(SQLITE_IOERR), -EIO);
    assert_int_equal(store_errno(SQLITE_IOERR_FSYNC), -EIO);
    assert_int_equal(store_errno(SQLITE_IOERR_WRITE), -EIO);
    assert_int_equal(store_errno(SQLITE_IOERR_NOMEM), -ENOMEM);
    assert_int_equal(store_errno(SQLITE_BUSY), -EAGAIN);
    assert_int_equal(store_errno(SQLITE_BUSY_SNAPSHOT), -EAGAIN);
    assert_int_equal(store_errno(SQLITE_LOCKED), -EAGAIN);
    assert_int_equal(store_errno(SQLITE_NOMEM), -ENOMEM);
    assert_int_equal(store_errno(SQLITE_CORRUPT), -EUCLEAN);
    assert_int_equal(store_errno(SQLITE_NOTADB), -EUCLEAN);
    assert_int_equal(store_errno(SQLITE_READONLY), -EROFS);
}

static void test_db_schema_strict_wal(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int version = 0, n = 0;

    cfs_store_close(s);
    assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
    assert_int_equal(store_user_version(db, &version), 0);
    assert_int_equal(version, store_migrations[store_n_migrations - 1].version);
    assert_int_equal(
        sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    /* Every table is STRICT: a wrong type is refused, not converted. */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT sql FROM sqlite_schema WHERE"
                                        " type = 'table' AND name NOT LIKE"
                                        " 'sqlite%'",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_non_null(
            strstr((const char *)sqlite3_column_text(st, 0), "STRICT"));
        n++;
    }
    sqlite3_finalize(st);
    assert_int_equal(n, 6);
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO journal (revision, time_us,"
                                      " op, path, binary, write_only) VALUES"
                                      " ('x', 0, 'mkdir', '/a', 0, 0)",
                                      NULL,
                                      NULL,
                                      NULL),
                         SQLITE_OK);
    sqlite3_close(db);
}

static const struct store_migration test_v1[] = {
    {1, "CREATE TABLE t (a INTEGER) STRICT; INSERT INTO t VALUES (1);"},
};
static const struct store_migration test_v2[] = {
    {1, "CREATE TABLE t (a INTEGER) STRICT; INSERT INTO t VALUES (1);"},
    {2, "ALTER TABLE t ADD COLUMN b TEXT; UPDATE t SET b = 'two';"},
    {3, "INSERT INTO t VALUES (3, 'three');"},
};
static const struct store_migration test_bad[] = {
    {1, "CREATE TABLE t (a INTEGER) STRICT; INSERT INTO t VALUES (1);"},
    {2, "ALTER TABLE t ADD COLUMN b TEXT; UPDATE t SET b = 'two';"},
    {3, "INSERT INTO t VALUES (3, 'three');"},
    {4, "INSERT INTO t VALUES (4, 'four'); THIS IS NOT SQL;"},
};

static int count_rows(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int n = -1;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

static void test_db_migrate_forward(void **state)
{
    struct tmpdb *t = *state;
    sqlite3 *db = NULL;
    int version = 0;

    assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
    assert_int_equal(store_migrate(db, test_v1, 1), 0);
    assert_int_equal(store_user_version(db, &version), 0);
    assert_int_equal(version, 1);
    /* Running it again changes nothing. */
    assert_int_equal(store_migrate(db, test_v1, 1), 0);
    assert_int_equal(count_rows(db, "SELECT count(*) FROM t"), 1);
    /* A newer program migrates the old file forward, step by step. */
    assert_int_equal(store_migrate(db, test_v2, 3), 0);
    assert_int_equal(store_user_version(db, &version), 0);
    assert_int_equal(version, 3);
    assert_int_equal(count_rows(db,
                                "SELECT count(*) FROM t WHERE b IS NOT"
                                " NULL"),
                     2);
    /* An older program refuses a newer file. */
    assert_int_equal(store_migrate(db, test_v1, 1), -ENOTSUP);
    /* A failing step is rolled back whole; earlier steps stay. */
    assert_int_equal(store_migrate(db, test_bad, 4), -EIO);
    assert_int_equal(store_user_version(db, &version), 0);
    assert_int_equal(version, 3);
    assert_int_equal(count_rows(db, "SELECT count(*) FROM t"), 2);
    sqlite3_close(db);
}

/* A file with user_version beyond the schema does not open. */
static void test_db_open_newer_refused(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store_options o = {.path = t->path, .no_replay = true};
    struct cfs_store *s = NULL;
    sqlite3 *db = NULL;
    char sql[64];

    cfs_store_close(open_plain(t->path, 0));
    assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
    snprintf(sql,
             sizeof(sql),
             "PRAGMA user_version = %d",
             store_migrations[store_n_migrations - 1].version + 1);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(cfs_store_open(&o, &s), -ENOTSUP);
    assert_null(s);
}

/* ---- state ------------------------------------------------------------- */

static const struct cfs_store_node *child(const struct cfs_store_node *n,
                                          const char *name)
{
    for (size_t i = 0; i < n->n_children; i++) {
        if (strcmp(n->children[i].name, name) == 0) {
            return &n->children[i];
        }
    }
    fail_msg("no child %s under %s", name, n->path);
    return NULL;
}

static void test_db_apply_state(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct cfs_store_export *e = NULL;
    const struct cfs_store_node *sub, *items, *a, *b;
    struct cfs_change c[] = {
        chg(CFS_OP_MKDIR, 1, "/sub/items/a", NULL),
        chg(CFS_OP_STORE, 1, "/sub/items/a/x", "1"),
        chg(CFS_OP_STORE, 1, "/sub/items/a/y", "2"),
        chg(CFS_OP_MKDIR, 1, "/sub/items/b", NULL),
    };
    struct cfs_change c2[] = {
        chg(CFS_OP_STORE, 2, "/sub/items/a/x", "3"),
        chg(CFS_OP_SYMLINK, 2, "/sub/items/b/to-a", "/sub/items/a"),
        chg(CFS_OP_STORE, 2, "/sub/note", "hello"),
    };
    struct cfs_change c3[] = {
        chg(CFS_OP_UNLINK, 3, "/sub/items/b/to-a", "/sub/items/a"),
        chg(CFS_OP_RMDIR, 3, "/sub/items/b", NULL),
    };
    struct cfs_store_info info;

    assert_int_equal(apply1(s, c, 4), 0);
    assert_int_equal(apply1(s, c2, 3), 0);
    assert_int_equal(cfs_store_export(s, "/", &e), 0);
    assert_int_equal(e->revision, 2);
    sub = child(&e->root, "sub");
    assert_false(sub->created);
    assert_int_equal(sub->n_values, 1);
    assert_string_equal(sub->values[0].name, "note");
    items = child(sub, "items");
    assert_false(items->created);
    a = child(items, "a");
    b = child(items, "b");
    assert_true(a->created);
    /* write order: y (seq 3) then x (rewritten later) */
    assert_int_equal(a->n_values, 2);
    assert_string_equal(a->values[0].name, "y");
    assert_string_equal(a->values[1].name, "x");
    assert_string_equal(a->values[1].data, "3");
    assert_int_equal(b->n_links, 1);
    assert_string_equal(b->links[0].name, "to-a");
    assert_string_equal(b->links[0].target, "/sub/items/a");
    cfs_store_export_free(e);

    assert_int_equal(apply1(s, c3, 2), 0);
    assert_int_equal(cfs_store_export(s, "/sub/items", &e), 0);
    assert_int_equal(e->root.n_children, 1);
    assert_string_equal(e->root.children[0].name, "a");
    cfs_store_export_free(e);
    assert_int_equal(cfs_store_export(s, "/sub/items/b", &e), -ENOENT);
    assert_int_equal(cfs_store_info(s, &info), 0);
    assert_int_equal(info.revision, 3);
    cfs_store_close(s);

    /* The revision survives a restart and reaches the tree. */
    cfs_revision_set(0);
    s = open_plain(t->path, 0);
    assert_int_equal(cfs_revision(), 3);
    cfs_store_close(s);
}

/* Commit moves an item with its subtree; links follow it by identity. */
static void test_db_apply_rename(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct cfs_store_export *e = NULL;
    const struct cfs_store_node *g, *live;
    struct cfs_change c[] = {
        chg(CFS_OP_MKDIR, 1, "/sub/g/pending/i", NULL),
        chg(CFS_OP_MKDIR, 1, "/sub/g/pending/i/child", NULL),
        chg(CFS_OP_STORE, 1, "/sub/g/pending/i/child/v", "deep"),
        chg(CFS_OP_MKDIR, 1, "/sub/other", NULL),
        chg(CFS_OP_SYMLINK, 1, "/sub/other/l", "/sub/g/pending/i/child"),
    };
    struct cfs_change c2[] = {
        chg(CFS_OP_RENAME, 2, "/sub/g/pending/i", "/sub/g/live/i"),
    };

    assert_int_equal(apply1(s, c, 5), 0);
    assert_int_equal(apply1(s, c2, 1), 0);
    assert_int_equal(cfs_store_export(s, "/", &e), 0);
    g = child(child(&e->root, "sub"), "g");
    live = child(g, "live");
    assert_true(child(live, "i")->committed);
    assert_string_equal(child(child(live, "i"), "child")->path,
                        "/sub/g/live/i/child");
    assert_string_equal(child(child(&e->root, "sub"), "other")->links[0].target,
                        "/sub/g/live/i/child");
    cfs_store_export_free(e);
    cfs_store_close(s);
}

/* ---- replay order ------------------------------------------------------ */

struct steps {
    char lines[64][160];
    size_t n;
};

static int record_step(void *data, const struct cfs_store_step *st)
{
    struct steps *v = data;

    assert_true(v->n < 64);
    snprintf(v->lines[v->n++],
             sizeof(v->lines[0]),
             "%s %s%s%.*s@%llu",
             cfs_store_step_name(st->op),
             st->path,
             st->arg ? " " : "",
             (int)st->arg_len,
             st->arg ? st->arg : "",
             (unsigned long long)st->revision);
    return 0;
}

static void test_db_load_order(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct steps v = {0};
    /* global write order: a/y, written in the second change set, after
     * everything of the first (not with the other values of a/) */
    static const char *const expect[] = {
        "mkdir /sub/p/pending/a@1",
        "store /sub/p/pending/a/z first@1",
        "mkdir /sub/p/pending/a/sub@1",
        "store /sub/p/pending/a/sub/k v@1",
        "store /sub/p/pending/a/y second@2",
        "mkdir /sub/b@2",
        "symlink /sub/b/l /sub/p/pending/a/sub@2",
        "commit /sub/p/pending/a /sub/p/live/a@3",
    };
    const char *only[] = {"sub"};
    struct cfs_change c[] = {
        chg(CFS_OP_MKDIR, 1, "/sub/p/pending/a", NULL),
        chg(CFS_OP_STORE, 1, "/sub/p/pending/a/z", "first"),
        chg(CFS_OP_MKDIR, 1, "/sub/p/pending/a/sub", NULL),
        chg(CFS_OP_STORE, 1, "/sub/p/pending/a/sub/k", "v"),
        chg(CFS_OP_MKDIR, 1, "/other/x", NULL),
    };
    struct cfs_change c2[] = {
        chg(CFS_OP_STORE, 2, "/sub/p/pending/a/y", "second"),
        chg(CFS_OP_MKDIR, 2, "/sub/b", NULL),
        chg(CFS_OP_SYMLINK, 2, "/sub/b/l", "/sub/p/pending/a/sub"),
    };
    struct cfs_change c3[] = {
        chg(CFS_OP_RENAME, 3, "/sub/p/pending/a", "/sub/p/live/a"),
    };
    size_t k = 0;

    assert_int_equal(apply1(s, c, 5), 0);
    assert_int_equal(apply1(s, c2, 3), 0);
    assert_int_equal(apply1(s, c3, 1), 0);
    assert_int_equal(cfs_store_load(s, only, 1, record_step, &v), 0);
    /* DIR steps for the anchors (sub, p, p/live's parent) come in between;
     * compare the rest in order. */
    for (size_t i = 0; i < v.n; i++) {
        if (strncmp(v.lines[i], "dir ", 4) == 0) {
            continue;
        }
        assert_true(k < sizeof(expect) / sizeof(expect[0]));
        assert_string_equal(v.lines[i], expect[k]);
        k++;
    }
    assert_int_equal(k, sizeof(expect) / sizeof(expect[0]));
    assert_string_equal(v.lines[0], "dir /sub@1");

    /* Everything: the other subsystem too. */
    memset(&v, 0, sizeof(v));
    assert_int_equal(cfs_store_load(s, NULL, 0, record_step, &v), 0);
    k = 0;
    for (size_t i = 0; i < v.n; i++) {
        k += strcmp(v.lines[i], "mkdir /other/x@1") == 0;
    }
    assert_int_equal(k, 1);
    cfs_store_close(s);
}

/* A mkdir where something is stored already (left over from a replay step
 * that failed) replaces it. */
static void test_db_mkdir_replaces(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct cfs_store_export *e = NULL;
    struct cfs_change c[] = {
        chg(CFS_OP_MKDIR, 1, "/sub/a", NULL),
        chg(CFS_OP_STORE, 1, "/sub/a/x", "old"),
        chg(CFS_OP_MKDIR, 1, "/sub/a/b", NULL),
    };
    struct cfs_change c2[] = {
        chg(CFS_OP_MKDIR, 2, "/sub/a", NULL),
        chg(CFS_OP_STORE, 2, "/sub/a/y", "new"),
    };

    assert_int_equal(apply1(s, c, 3), 0);
    assert_int_equal(apply1(s, c2, 2), 0);
    assert_int_equal(cfs_store_export(s, "/sub/a", &e), 0);
    assert_int_equal(e->root.n_values, 1);
    assert_string_equal(e->root.values[0].name, "y");
    assert_int_equal(e->root.n_children, 0);
    cfs_store_export_free(e);
    cfs_store_close(s);
}

/* ---- journal ----------------------------------------------------------- */

static void test_db_history(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct cfs_store_history_entry *h = NULL;
    struct cfs_store_history_query q = {0};
    size_t n = 0;
    struct cfs_change secret = chg(CFS_OP_STORE, 4, "/sub/a/pw", "hunter2");
    struct cfs_change mv;

    for (uint64_t rev = 1; rev <= 3; rev++) {
        char path[32];
        struct cfs_change c[2];

        snprintf(path, sizeof(path), "/sub/i%llu", (unsigned long long)rev);
        c[0] = chg(CFS_OP_MKDIR, rev, path, NULL);
        c[1] = chg(CFS_OP_MKDIR, rev, rev == 2 ? "/sub/a" : "/sub/ab", NULL);
        assert_int_equal(apply1(s, c, rev == 3 ? 1 : 2), 0);
    }
    secret.write_only = true;
    secret.has_old = true;
    secret.old = "old";
    secret.old_len = 3;
    assert_int_equal(apply1(s, &secret, 1), 0);

    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 6);
    assert_int_equal(h[0].revision, 4);
    assert_int_equal(h[0].op, CFS_OP_STORE);
    assert_true(h[0].write_only);
    assert_null(h[0].arg);
    assert_null(h[0].old);
    assert_string_equal(h[0].principal, "t");
    /* within a revision, the later record first */
    assert_string_equal(h[2].path, "/sub/a");
    assert_string_equal(h[3].path, "/sub/i2");
    cfs_store_history_free(h, n);

    /* Prefix: /sub/a and below, not /sub/ab. */
    q.path = "/sub/a/";
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(h[0].path, "/sub/a/pw");
    assert_string_equal(h[1].path, "/sub/a");
    cfs_store_history_free(h, n);

    /* before is exclusive; limit keeps the newest. */
    q = (struct cfs_store_history_query){.before = 3, .limit = 1};
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(h[0].revision, 2);
    assert_string_equal(h[0].path, "/sub/a");
    cfs_store_history_free(h, n);

    q = (struct cfs_store_history_query){.path = "relative"};
    assert_int_equal(cfs_store_history(s, &q, &h, &n), -EINVAL);
    q = (struct cfs_store_history_query){.path = "/nothing"};
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 0);
    assert_null(h);

    /* A rename is found under its destination as well as its source, as
     * the event stream's path filter finds it, and the directory's older
     * rows at its earlier place follow (its mkdir as /sub/i1). */
    mv = chg(CFS_OP_RENAME, 5, "/sub/i1", "/sub/moved");
    assert_int_equal(apply1(s, &mv, 1), 0);
    q = (struct cfs_store_history_query){.path = "/sub/moved"};
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(h[0].op, CFS_OP_RENAME);
    assert_string_equal(h[0].path, "/sub/i1");
    assert_int_equal(h[1].op, CFS_OP_MKDIR);
    assert_string_equal(h[1].path, "/sub/i1");
    cfs_store_history_free(h, n);
    q = (struct cfs_store_history_query){.path = "/sub/mo"};
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, 0);
    cfs_store_close(s);
}

/* A committed item's history by its live/ path: its stores there, its
 * commit, and before that its mkdir and stores in pending/ -- not those of
 * an older item of the same name, and the same on a later page (before=),
 * after an uncommit and a second commit too. */
static void test_db_history_follows_commits(void **state)
{
    static const struct {
        enum cfs_op op;
        const char *path, *arg;
    } steps[] = {
        {CFS_OP_MKDIR, "/g/pending/c", NULL},         /* 1: an older item */
        {CFS_OP_RMDIR, "/g/pending/c", NULL},         /* 2 */
        {CFS_OP_MKDIR, "/g/pending/c", NULL},         /* 3: this one */
        {CFS_OP_STORE, "/g/pending/c/a", "x"},        /* 4 */
        {CFS_OP_STORE, "/g/pending/d/a", "y"},        /* 5: another item */
        {CFS_OP_RENAME, "/g/pending/c", "/g/live/c"}, /* 6: commit */
        {CFS_OP_RENAME, "/g/live/c", "/g/pending/c"}, /* 7: uncommit */
        {CFS_OP_STORE, "/g/pending/c/a", "z"},        /* 8 */
        {CFS_OP_RENAME, "/g/pending/c", "/g/live/c"}, /* 9: commit */
        {CFS_OP_STORE, "/g/live/c/b", "w"},           /* 10 */
    };
    static const uint64_t want[] = {10, 9, 8, 7, 6, 4, 3};
    enum { N = sizeof(want) / sizeof(want[0]) };
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 0);
    struct cfs_store_history_entry *h = NULL;
    struct cfs_store_history_query q = {.path = "/g/live/c"};
    size_t n = 0;

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct cfs_change c =
            chg(steps[i].op, i + 1, steps[i].path, steps[i].arg);

        assert_int_equal(apply1(s, &c, 1), 0);
    }
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    assert_int_equal(n, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(h[i].revision, want[i]);
    }
    cfs_store_history_free(h, n);

    /* pages of two: the renames above a page still lead below it */
    q.before = 0;
    q.limit = 2;
    for (size_t page = 0; page * 2 < N; page++) {
        assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
        assert_int_equal(n, page * 2 + 2 <= N ? 2 : N - page * 2);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(h[i].revision, want[page * 2 + i]);
        }
        q.before = h[n - 1].revision;
        cfs_store_history_free(h, n);
    }
    cfs_store_close(s);
}

static void test_db_history_prune(void **state)
{
    struct tmpdb *t = *state;
    struct cfs_store *s = open_plain(t->path, 10);
    struct cfs_store_history_entry *h = NULL;
    struct cfs_store_history_query q = {.limit = 10000};
    struct cfs_store_export *e = NULL;
    struct cfs_store_info info;
    size_t n = 0;

    for (uint64_t rev = 1; rev <= 300; rev++) {
        char path[32];
        struct cfs_change c;

        snprintf(path, sizeof(path), "/sub/i%llu", (unsigned long long)rev);
        c = chg(CFS_OP_MKDIR, rev, path, NULL);
        assert_int_equal(apply1(s, &c, 1), 0);
    }
    assert_int_equal(cfs_store_history(s, &q, &h, &n), 0);
    /* Pruned in steps: never fewer than the limit, never far beyond it. */
    assert_true(n >= 10 && n < 10 + 64);
    assert_int_equal(h[0].revision, 300);
    cfs_store_history_free(h, n);
    assert_int_equal(cfs_store_info(s, &info), 0);
    assert_true(info.history_floor >= 300 - 10 - 64);
    /* Current state is untouched. */
    assert_int_equal(cfs_store_export(s, "/sub", &e), 0);
    assert_int_equal(e->root.n_children, 300);
    cfs_store_export_free(e);
    cfs_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_db_errno_map),
        cmocka_unit_test_setup_teardown(
            test_db_schema_strict_wal, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_migrate_forward, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_open_newer_refused, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_apply_state, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_apply_rename, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_load_order, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_mkdir_replaces, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_history, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_history_prune, tmpdb_setup, tmpdb_teardown),
        cmocka_unit_test_setup_teardown(
            test_db_history_follows_commits, tmpdb_setup, tmpdb_teardown),
    };

    return cmocka_run_group_tests(
        tests, store_test_group_setup, store_test_group_teardown);
}
