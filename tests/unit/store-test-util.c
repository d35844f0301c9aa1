// SPDX-License-Identifier: MIT
/*
 * store-test-util.c - scratch databases and the allocator hook for the
 * store tests.
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

#include <errno.h>
#include <sqlite3.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>
#include <configfs/store.h>

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

void store_test_threaded(bool on)
{
    if (on) {
        cfs_set_alloc_funcs(NULL, NULL, NULL);
    } else {
        cfs_set_alloc_funcs(hook_malloc, hook_realloc, hook_free);
    }
}

/* The root's table of subsystems is allocated at the first registration
 * and kept for good; made with libc's allocator here, before the hook, it
 * is not reported as a leak of the first test (which cmocka would then
 * free under core). It holds 8 names before it grows: tests keep fewer
 * subsystems registered at once. */
static struct configfs_subsystem warmup_subsys;
static const struct config_item_type warmup_type = {.ct_name = "warmup"};

int store_test_group_setup(void **state)
{
    (void)state;
    config_group_init_type_name(
        &warmup_subsys.su_group, "store-test-warmup", &warmup_type);
    if (configfs_register_subsystem(&warmup_subsys) == 0) {
        configfs_unregister_subsystem(&warmup_subsys);
    }
    cfs_set_alloc_funcs(hook_malloc, hook_realloc, hook_free);
    return 0;
}

int store_test_group_teardown(void **state)
{
    (void)state;
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return 0;
}

static const struct cfs_store_node *find_child(const struct cfs_store_node *n,
                                               const char *name)
{
    for (size_t i = 0; i < n->n_children; i++) {
        if (strcmp(n->children[i].name, name) == 0) {
            return &n->children[i];
        }
    }
    return NULL;
}

static size_t written_count(const struct cfs_store_node *n)
{
    size_t k = 0;

    while (k < n->n_values && !n->values[k].is_default) {
        k++;
    }
    return k;
}

void assert_same_state(const struct cfs_store_node *a,
                       const struct cfs_store_node *b)
{
    if (strcmp(a->path, b->path) != 0) {
        fail_msg("path %s != %s", a->path, b->path);
    }
    if (a->created != b->created || a->committed != b->committed) {
        fail_msg("%s: created %d/%d committed %d/%d",
                 a->path,
                 a->created,
                 b->created,
                 a->committed,
                 b->committed);
    }
    if (a->type && b->type && strcmp(a->type, b->type) != 0) {
        fail_msg("%s: type %s != %s", a->path, a->type, b->type);
    }
    /* Written values must match; defaults (is_default, listed after them)
     * come from the live tree, so a directory that is not there (its
     * subsystem unregistered) lists none: compared when both list some. */
    size_t wa = written_count(a), wb = written_count(b);
    bool both = wa < a->n_values && wb < b->n_values;
    size_t nv = both ? a->n_values : wa;

    if (wa != wb || (both && a->n_values != b->n_values)) {
        fail_msg("%s: %zu values != %zu", a->path, a->n_values, b->n_values);
    }
    for (size_t i = 0; i < nv; i++) {
        const struct cfs_store_value *x = &a->values[i], *y = &b->values[i];

        if (strcmp(x->name, y->name) != 0 || x->len != y->len ||
            x->binary != y->binary || x->is_default != y->is_default ||
            memcmp(x->data, y->data, x->len) != 0) {
            fail_msg("%s: value %zu: %s=%.*s != %s=%.*s",
                     a->path,
                     i,
                     x->name,
                     (int)x->len,
                     x->data,
                     y->name,
                     (int)y->len,
                     y->data);
        }
    }
    if (a->n_links != b->n_links) {
        fail_msg("%s: %zu links != %zu", a->path, a->n_links, b->n_links);
    }
    for (size_t i = 0; i < a->n_links; i++) {
        size_t k = 0;

        while (k < b->n_links && strcmp(a->links[i].name, b->links[k].name)) {
            k++;
        }
        if (k == b->n_links ||
            strcmp(a->links[i].target, b->links[k].target) != 0) {
            fail_msg("%s: link %s -> %s not matched",
                     a->path,
                     a->links[i].name,
                     a->links[i].target);
        }
    }
    if (a->n_children != b->n_children) {
        fail_msg(
            "%s: %zu children != %zu", a->path, a->n_children, b->n_children);
    }
    for (size_t i = 0; i < a->n_children; i++) {
        const struct cfs_store_node *c = find_child(b, a->children[i].name);

        if (!c) {
            fail_msg("%s: no child %s on the other side",
                     a->path,
                     a->children[i].name);
        }
        assert_same_state(&a->children[i], c);
    }
}

void assert_tree_matches_db(struct cfs_store *store, const char *path)
{
    struct cfs_store_export *db = NULL, *tree = NULL;
    int r = cfs_store_export(store, path, &db);

    assert_int_equal(cfs_store_export_tree(path, &tree), 0);
    if (r == -ENOENT) {
        /* nothing stored: the tree must hold nothing written either */
        assert_false(tree->root.created || tree->root.n_values ||
                     tree->root.n_links || tree->root.n_children);
    } else {
        assert_int_equal(r, 0);
        assert_same_state(&db->root, &tree->root);
    }
    cfs_store_export_free(db);
    cfs_store_export_free(tree);
}

long journal_rows(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long n = -1;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM journal", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

int store_test_run(struct cfs_store *s,
                   uint64_t *ret_rev,
                   const char *const *ops,
                   size_t n)
{
    struct cfs_txn *txn = NULL;

    assert_int_equal(cfs_txn_begin(&txn), 0);
    for (size_t i = 0; i < n; i++) {
        char op[16], a[256], b[256];
        int k = sscanf(ops[i], "%15s %255s %255s", op, a, b);
        int r = -EINVAL;

        assert_true(k >= 2);
        if (strcmp(op, "mkdir") == 0) {
            r = cfs_mkdir(txn, a);
        } else if (strcmp(op, "rmdir") == 0) {
            r = cfs_rmdir(txn, a);
        } else if (strcmp(op, "store") == 0) {
            r = cfs_write(txn, a, b, strlen(b));
        } else if (strcmp(op, "symlink") == 0) {
            r = cfs_symlink(txn, a, b);
        } else if (strcmp(op, "unlink") == 0) {
            r = cfs_unlink(txn, a);
        } else if (strcmp(op, "rename") == 0) {
            r = cfs_rename(txn, a, b);
        }
        if (r < 0) {
            print_error("%s: %d\n", ops[i], r);
            cfs_txn_abort(txn);
            return r;
        }
    }
    return cfs_store_commit_txn(s, txn, "tester", ret_rev);
}

void expect_written(const char *path, const char *value)
{
    struct cfs_store_export *e = NULL;
    size_t dlen = strrchr(path, '/') - path;
    char dir[256];
    bool found = false;

    snprintf(dir, sizeof(dir), "%.*s", (int)dlen, path);
    assert_int_equal(cfs_store_export_tree(dir, &e), 0);
    for (size_t i = 0; i < e->root.n_values; i++) {
        if (strcmp(e->root.values[i].name, path + dlen + 1) == 0) {
            assert_string_equal(e->root.values[i].data, value);
            found = true;
        }
    }
    if (!found) {
        fail_msg("%s not written", path);
    }
    cfs_store_export_free(e);
}
