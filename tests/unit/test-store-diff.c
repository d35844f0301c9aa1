// SPDX-License-Identifier: MIT
/*
 * test-store-diff.c - the import plan (cfs_store_diff()).
 *
 * End to end: make state B in the tree and export it as the wanted
 * document, make state A in a fresh subsystem of the same name, diff,
 * run the plan as one transaction through core (which refuses any step
 * out of dependency order), and require the tree to equal B (replace) or
 * B plus what only A had (merge). And by hand: the order of a plan that
 * removes nested directories with links.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <configfs/store.h>

#include "store-test-util.h"
#include "store-testsys.h"

/* Run @ops (NULL-terminated strings as store_test_run() takes) directly on
 * the tree, without a store. */
static void make(const char *const *ops)
{
    for (size_t i = 0; ops[i]; i++) {
        char op[16], a[256], b[256];
        int k = sscanf(ops[i], "%15s %255s %255s", op, a, b);
        int r = -EINVAL;

        assert_true(k >= 2);
        if (strcmp(op, "mkdir") == 0) {
            r = cfs_mkdir(NULL, a);
        } else if (strcmp(op, "store") == 0) {
            r = cfs_write(NULL, a, b, strlen(b));
        } else if (strcmp(op, "symlink") == 0) {
            r = cfs_symlink(NULL, a, b);
        } else if (strcmp(op, "rename") == 0) {
            r = cfs_rename(NULL, a, b);
        }
        if (r < 0) {
            fail_msg("%s: %d", ops[i], r);
        }
    }
}

/* Run a plan as one transaction; fail with the op that was refused. */
static void apply_plan(const struct cfs_store_op *ops, size_t n)
{
    struct cfs_txn *txn = NULL;

    assert_int_equal(cfs_txn_begin(&txn), 0);
    for (size_t i = 0; i < n; i++) {
        const struct cfs_store_op *o = &ops[i];
        int r = -EINVAL;

        switch (o->op) {
        case CFS_OP_MKDIR:
            r = cfs_mkdir(txn, o->path);
            break;
        case CFS_OP_RMDIR:
            r = cfs_rmdir(txn, o->path);
            break;
        case CFS_OP_STORE:
            r = cfs_write(txn, o->path, o->arg, o->arg_len);
            break;
        case CFS_OP_SYMLINK:
            r = cfs_symlink(txn, o->path, o->arg);
            break;
        case CFS_OP_UNLINK:
            r = cfs_unlink(txn, o->path);
            break;
        case CFS_OP_RENAME:
            r = cfs_rename(txn, o->path, o->arg);
            break;
        }
        if (r < 0) {
            cfs_txn_abort(txn);
            fail_msg("op %zu (%s %s %s): %d",
                     i,
                     cfs_op_name(o->op),
                     o->path,
                     o->arg ? o->arg : "",
                     r);
        }
    }
    cfs_txn_commit(txn);
}

/* Export B, rebuild the subsystem as A, diff, apply; return the result and
 * the wanted document. */
static void roundtrip(const char *const *a_ops,
                      const char *const *b_ops,
                      enum cfs_store_diff_mode mode,
                      struct cfs_store_export **ret_want,
                      struct cfs_store_export **ret_result)
{
    struct cfs_store_export *have = NULL;
    struct cfs_store_op *ops = NULL;
    struct tsys *sys = NULL;
    size_t n = 0;

    assert_int_equal(tsys_register("d", &sys), 0);
    make(b_ops);
    assert_int_equal(cfs_store_export_tree("/d", ret_want), 0);
    tsys_unregister(sys);

    assert_int_equal(tsys_register("d", &sys), 0);
    make(a_ops);
    assert_int_equal(cfs_store_export_tree("/d", &have), 0);
    assert_int_equal(
        cfs_store_diff(&have->root, &(*ret_want)->root, mode, &ops, &n), 0);
    apply_plan(ops, n);
    cfs_store_ops_free(ops, n);
    cfs_store_export_free(have);
    assert_int_equal(cfs_store_export_tree("/d", ret_result), 0);
    tsys_unregister(sys);
}

static const char *const state_a[] = {
    "mkdir /d/items/keep",
    "store /d/items/keep/a 1",
    "store /d/items/keep/b 2",
    "mkdir /d/items/drop",
    "store /d/items/drop/a x",
    "mkdir /d/items/linker",
    "symlink /d/items/linker/l /d/items/drop",
    "mkdir /d/commit/pending/c1",
    "store /d/commit/pending/c1/a v",
    "rename /d/commit/pending/c1 /d/commit/live/c1",
    "mkdir /d/commit/pending/c3",
    "rename /d/commit/pending/c3 /d/commit/live/c3",
    "store /d/note old",
    NULL,
};

static const char *const state_b[] = {
    "mkdir /d/items/keep",
    "store /d/items/keep/a 1",
    "store /d/items/keep/b changed",
    "mkdir /d/items/linker",
    "mkdir /d/items/new",
    "store /d/items/new/c fresh",
    /* uncommitted in B, written differently */
    "mkdir /d/commit/pending/c1",
    "store /d/commit/pending/c1/a w",
    /* new and committed, linked from an existing item */
    "mkdir /d/commit/pending/c2",
    "store /d/commit/pending/c2/a two",
    "rename /d/commit/pending/c2 /d/commit/live/c2",
    "symlink /d/items/linker/l /d/commit/live/c2",
    "symlink /d/items/new/to-keep /d/items/keep",
    /* committed in both, value changed: uncommit, store, commit */
    "mkdir /d/commit/pending/c3",
    "store /d/commit/pending/c3/b three",
    "rename /d/commit/pending/c3 /d/commit/live/c3",
    "store /d/note new",
    NULL,
};

static void test_diff_replace_reaches_document(void **state)
{
    struct cfs_store_export *want = NULL, *result = NULL;

    (void)state;
    roundtrip(state_a, state_b, CFS_STORE_DIFF_REPLACE, &want, &result);
    assert_same_state(&want->root, &result->root);
    cfs_store_export_free(want);
    cfs_store_export_free(result);
    assert_int_equal(tsys_items_alive(), 0);
}

static void test_diff_merge_keeps_the_rest(void **state)
{
    struct cfs_store_export *want = NULL, *result = NULL;
    const struct cfs_store_node *items = NULL;
    bool drop = false, linker_l = false;

    (void)state;
    roundtrip(state_a, state_b, CFS_STORE_DIFF_MERGE, &want, &result);
    for (size_t i = 0; i < result->root.n_children; i++) {
        if (strcmp(result->root.children[i].name, "items") == 0) {
            items = &result->root.children[i];
        }
    }
    assert_non_null(items);
    for (size_t i = 0; i < items->n_children; i++) {
        const struct cfs_store_node *c = &items->children[i];

        drop |= strcmp(c->name, "drop") == 0;
        if (strcmp(c->name, "linker") == 0) {
            /* the link's target changed: re-pointed, not dropped */
            assert_int_equal(c->n_links, 1);
            assert_string_equal(c->links[0].target, "/d/commit/live/c2");
            linker_l = true;
        }
    }
    assert_true(drop && linker_l);
    cfs_store_export_free(want);
    cfs_store_export_free(result);
}

/* The same document again: nothing to do. */
static void test_diff_identical_is_empty(void **state)
{
    struct cfs_store_export *e = NULL;
    struct cfs_store_op *ops = NULL;
    struct tsys *sys = NULL;
    size_t n = 1;

    (void)state;
    assert_int_equal(tsys_register("d", &sys), 0);
    make(state_b);
    assert_int_equal(cfs_store_export_tree("/d", &e), 0);
    assert_int_equal(
        cfs_store_diff(&e->root, &e->root, CFS_STORE_DIFF_REPLACE, &ops, &n),
        0);
    assert_int_equal(n, 0);
    cfs_store_ops_free(ops, n);
    cfs_store_export_free(e);
    tsys_unregister(sys);
}

/* Ops for a wide tree: @n items in /d/items (every @every-th one written
 * with @tag) and @n/4 committed items, some linked from /d/items/linker.
 * NULL-terminated; free with free_ops(). */
static char **wide_ops(size_t n, size_t first, size_t every, const char *tag)
{
    char **ops = calloc(4 * n + 8, sizeof(*ops));
    size_t k = 0;

    assert_non_null(ops);
    for (size_t i = first; i < first + n; i++) {
        ops[k] = malloc(64);
        (void)snprintf(ops[k++], 64, "mkdir /d/items/i%zu", i);
        if (i % every == 0) {
            ops[k] = malloc(64);
            (void)snprintf(ops[k++], 64, "store /d/items/i%zu/a %s", i, tag);
        }
    }
    for (size_t i = first; i < first + n / 4; i++) {
        ops[k] = malloc(96);
        (void)snprintf(ops[k++], 96, "mkdir /d/commit/pending/c%zu", i);
        ops[k] = malloc(96);
        (void)snprintf(ops[k++],
                       96,
                       "rename /d/commit/pending/c%zu /d/commit/live/c%zu",
                       i,
                       i);
    }
    ops[k] = malloc(96);
    (void)snprintf(ops[k++], 96, "mkdir /d/items/linker");
    ops[k] = malloc(96);
    (void)snprintf(ops[k++],
                   96,
                   "symlink /d/items/linker/l /d/commit/live/c%zu",
                   first + n / 8);
    return ops;
}

static void free_ops(char **ops)
{
    for (size_t i = 0; ops[i]; i++) {
        free(ops[i]);
    }
    free(ops);
}

/* Groups of hundreds of children (found by name through the plan's hash
 * index, rebuilt as it grows): replace and merge reach the document, and
 * the document against itself plans nothing. */
static void test_diff_wide_groups(void **state)
{
    char **a = wide_ops(400, 0, 2, "old");
    char **b = wide_ops(400, 200, 2, "new");
    struct cfs_store_export *want = NULL, *result = NULL;
    struct cfs_store_op *ops = NULL;
    size_t n = 1;

    (void)state;
    roundtrip((const char *const *)a,
              (const char *const *)b,
              CFS_STORE_DIFF_REPLACE,
              &want,
              &result);
    assert_same_state(&want->root, &result->root);
    assert_int_equal(
        cfs_store_diff(
            &result->root, &want->root, CFS_STORE_DIFF_REPLACE, &ops, &n),
        0);
    assert_int_equal(n, 0);
    cfs_store_ops_free(ops, n);
    cfs_store_export_free(want);
    cfs_store_export_free(result);

    roundtrip((const char *const *)a,
              (const char *const *)b,
              CFS_STORE_DIFF_MERGE,
              &want,
              &result);
    /* merge: A's 200 items below B's range are kept, B's are added */
    for (size_t i = 0; i < result->root.n_children; i++) {
        if (strcmp(result->root.children[i].name, "items") == 0) {
            assert_int_equal(result->root.children[i].n_children, 600 + 1);
        }
    }
    cfs_store_export_free(want);
    cfs_store_export_free(result);
    free_ops(a);
    free_ops(b);
    assert_int_equal(tsys_items_alive(), 0);
}

/* By hand: removing nested directories that hold links. */
static void test_diff_removal_order(void **state)
{
    static struct cfs_store_link links_b[] = {{"l", "/r/x"}};
    static struct cfs_store_node b[] = {{
        .name = "b",
        .path = "/r/a/b",
        .created = true,
        .links = links_b,
        .n_links = 1,
    }};
    static struct cfs_store_node children[] = {
        {.name = "a",
         .path = "/r/a",
         .created = true,
         .children = b,
         .n_children = 1},
        {.name = "x", .path = "/r/x", .created = true},
    };
    struct cfs_store_node have = {
        .name = "r",
        .path = "/r",
        .children = children,
        .n_children = 2,
    };
    struct cfs_store_node want = {.name = "r", .path = "/r"};
    /* links first, then directories bottom-up, newest first */
    static const char *const expect[] = {
        "unlink /r/a/b/l",
        "rmdir /r/x",
        "rmdir /r/a/b",
        "rmdir /r/a",
    };
    struct cfs_store_op *ops = NULL;
    size_t n = 0;

    (void)state;
    assert_int_equal(
        cfs_store_diff(&have, &want, CFS_STORE_DIFF_REPLACE, &ops, &n), 0);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        char line[128];

        snprintf(
            line, sizeof(line), "%s %s", cfs_op_name(ops[i].op), ops[i].path);
        assert_string_equal(line, expect[i]);
    }
    cfs_store_ops_free(ops, n);
    /* merge removes nothing */
    assert_int_equal(
        cfs_store_diff(&have, &want, CFS_STORE_DIFF_MERGE, &ops, &n), 0);
    assert_int_equal(n, 0);
    cfs_store_ops_free(ops, n);
}

/* A document naming one item both in pending/ and in live/ is refused. */
static void test_diff_refuses_twins(void **state)
{
    static struct cfs_store_node p[] = {{.name = "i", .created = true}};
    static struct cfs_store_node l[] = {
        {.name = "i", .created = true, .committed = true}};
    static struct cfs_store_node halves[] = {
        {.name = "pending", .children = p, .n_children = 1},
        {.name = "live", .children = l, .n_children = 1},
    };
    struct cfs_store_node want = {
        .name = "g",
        .path = "/s/g",
        .children = halves,
        .n_children = 2,
    };
    struct cfs_store_node have = {.name = "g", .path = "/s/g"};
    struct cfs_store_op *ops = NULL;
    size_t n = 0;

    (void)state;
    assert_int_equal(
        cfs_store_diff(&have, &want, CFS_STORE_DIFF_MERGE, &ops, &n), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_replace_reaches_document),
        cmocka_unit_test(test_diff_merge_keeps_the_rest),
        cmocka_unit_test(test_diff_identical_is_empty),
        cmocka_unit_test(test_diff_wide_groups),
        cmocka_unit_test(test_diff_removal_order),
        cmocka_unit_test(test_diff_refuses_twins),
    };

    return cmocka_run_group_tests(
        tests, store_test_group_setup, store_test_group_teardown);
}
