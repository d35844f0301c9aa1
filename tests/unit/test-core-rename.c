// SPDX-License-Identifier: MIT
/*
 * test-core-rename.c - cfs_rename outside committable groups: refused.
 *
 * Covers docs/configfs-rules.md RN1 and RN2 (the committable moves are in
 * test-core-commit.c).
 */
#include "recorder.h"

static void tree(void)
{
    struct rec_type *s, *g, *i;

    rec_tree(&s, &g, &i);
    rec_attr(g, "a", 0644, 0);
    rec_default(g, "d", rec_type_new("d"));
    rec_register("sub", s);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_clear();
}

/* RN1, RN2: outside pending/ and live/, every rename is EPERM: items,
 * groups, attributes, links, default groups, between or within
 * directories; nothing is called and nothing moves. */
static void test_rename_refused(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_rename(NULL, "/sub/x", "/sub/z"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/x/i", "/sub/y/i"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/x/i", "/sub/x/j"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/x/a", "/sub/x/b"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/x/l", "/sub/x/m"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/x/d", "/sub/x/e"), -EPERM);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub"), "x y");
    assert_string_equal(rec_ls("/sub/x"), "a d i l");
}

/* RN1, F2: renames in the root are EPERM. */
static void test_rename_in_root_refused(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_rename(NULL, "/sub", "/sub2"), -EPERM);
    assert_string_equal(rec_ls("/"), "sub");
}

/* RN1: a missing source is ENOENT (before EPERM). */
static void test_rename_missing_source(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_rename(NULL, "/sub/nope", "/sub/z"), -ENOENT);
    assert_rc(cfs_rename(NULL, "/sub/nope/a", "/sub/z"), -ENOENT);
    rec_assert_no_trace();
}

/* RN1: renaming an entry onto itself is a no-op that succeeds and records
 * nothing. */
static void test_rename_onto_itself(void **state)
{
    struct cfs_txn *txn;
    size_t n = 99;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_rename(txn, "/sub/x", "/sub/x"));
    assert_ok(cfs_rename(txn, "/sub/x/a", "/sub/x/a"));
    cfs_txn_changes(txn, &n);
    assert_int_equal(n, 0);
    rec_txn_commit(txn);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub"), "x y");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_rename_refused),
        REC_TEST(test_rename_in_root_refused),
        REC_TEST(test_rename_missing_source),
        REC_TEST(test_rename_onto_itself),
    };

    return rec_run("core-rename", tests);
}
