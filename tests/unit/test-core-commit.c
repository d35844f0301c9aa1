// SPDX-License-Identifier: MIT
/*
 * test-core-commit.c - committable groups: pending/ and live/, commit and
 * uncommit by rename, and where the item sits in the hierarchy afterwards.
 *
 * Covers docs/configfs-rules.md C1-C11 (the v8 design, with the C11 defect
 * fixed as docs/DESIGN.md §8 requires) and RL1 as the same section changes it.
 */
#include "recorder.h"

/*
 *   sub (S)  make_group -> C; links
 *   C        committable; attribute ca; default group dg; make_item -> I;
 *            links
 *   I        attribute v; links
 */
static struct rec_type *S, *C, *DG, *I;

static struct rec_obj *tree(void)
{
    struct rec_obj *sub;

    S = rec_type_new("s");
    C = rec_type_new("c");
    DG = rec_type_new("dg");
    I = rec_type_new("i");
    S->make = REC_MAKE_GROUP;
    S->child = C;
    C->committable = true;
    C->make = REC_MAKE_ITEM;
    C->child = I;
    C->links = true;
    rec_attr(C, "ca", 0644, 0);
    rec_default(C, "dg", DG);
    I->links = true;
    rec_attr(I, "v", 0644, 0);
    sub = rec_register("sub", S);
    assert_ok(cfs_mkdir(NULL, "/sub/c"));
    rec_clear();
    return sub;
}

static struct config_item *pending(void)
{
    struct config_group *c = rec_group("c");
    struct config_item *it;

    list_for_each_entry(it, &c->cg_children, ci_entry) {
        if (strcmp(config_item_name(it), "pending") == 0) {
            return it;
        }
    }
    return NULL;
}

static struct config_item *live(void)
{
    struct config_group *c = rec_group("c");
    struct config_item *it;

    list_for_each_entry(it, &c->cg_children, ci_entry) {
        if (strcmp(config_item_name(it), "live") == 0) {
            return it;
        }
    }
    return NULL;
}

static bool on_children(struct config_item *group, struct config_item *item)
{
    struct config_item *it;

    list_for_each_entry(it, &to_config_group(group)->cg_children, ci_entry) {
        if (it == item) {
            return true;
        }
    }
    return false;
}

/* C1, C2: a committable group gets pending/ and live/ after its own
 * default groups; both are default groups. */
static void test_commit_pending_and_live(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    assert_string_equal(rec_ls("/sub/c"), "ca dg pending live");
    assert_ok(cfs_stat("/sub/c", &e));
    assert_true(e.committable);
    cfs_entry_done(&e);
    assert_ok(cfs_stat("/sub/c/pending", &e));
    assert_true(e.default_group);
    assert_true(e.pending);
    assert_int_equal(e.creates, CFS_KIND_ITEM);
    cfs_entry_done(&e);
    assert_ok(cfs_stat("/sub/c/live", &e));
    assert_true(e.default_group);
    assert_true(e.live);
    assert_int_equal(e.creates, 0);
    cfs_entry_done(&e);
    assert_non_null(pending());
    assert_non_null(live());
}

/* C1 (and the header: both must be set): commit_item alone does not make
 * a group committable. */
static void test_commit_needs_both_methods(void **state)
{
    struct rec_type *half = rec_type_new("half");
    struct cfs_entry e;

    (void)state;
    tree();
    half->commit_only = true;
    half->make = REC_MAKE_ITEM;
    half->child = I;
    S->child = half;
    assert_ok(cfs_mkdir(NULL, "/sub/h"));
    assert_string_equal(rec_ls("/sub/h"), "");
    assert_ok(cfs_stat("/sub/h", &e));
    assert_false(e.committable);
    cfs_entry_done(&e);
}

/* C3: mkdir directly in the committable group is EPERM. */
static void test_commit_mkdir_in_group_eperm(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_mkdir(NULL, "/sub/c/k"), -EPERM);
    rec_assert_no_trace();
}

/* C4: pending/ uses the group's make_* and drop callbacks, with pending as
 * the group argument. */
static void test_commit_mkdir_rmdir_in_pending(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    rec_assert_trace("make_item(pending,k)");
    rec_assert_locked("make_item(pending,k)", 1);
    assert_ptr_equal(rec_item("k")->ci_parent, pending());
    assert_true(on_children(pending(), rec_item("k")));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/c/pending/k"));
    rec_assert_trace(
        "disconnect_notify(pending,k)", "drop_item(pending,k)", "release(k)");
}

/* C4: pending/ inherits the group's allow_link/drop_link. */
static void test_commit_pending_inherits_links(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    rec_clear();
    assert_ok(cfs_symlink(NULL, "/sub/c/pending/l", "/sub/c/pending/k"));
    rec_assert_trace("allow_link(pending,k)");
    assert_ok(cfs_unlink(NULL, "/sub/c/pending/l"));
    rec_assert_trace("allow_link(pending,k)", "drop_link(pending,k)");
}

/* C8, C11, T9: rename pending -> live calls commit_item under su_mutex and
 * moves the entry; the item is then on live's cg_children with ci_parent
 * and ci_group the live group, and off pending's. */
static void test_commit_moves_item(void **state)
{
    struct config_item *k;
    struct cfs_entry e;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    rec_clear();
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    rec_assert_trace("commit_item(k)");
    rec_assert_locked("commit_item(k)", 1);
    assert_string_equal(rec_ls("/sub/c/pending"), "");
    assert_string_equal(rec_ls("/sub/c/live"), "k");
    k = rec_item("k");
    assert_ptr_equal(k->ci_parent, live());
    assert_ptr_equal(k->ci_group, to_config_group(live()));
    assert_true(on_children(live(), k));
    assert_false(on_children(pending(), k));
    assert_ok(cfs_stat("/sub/c/live/k", &e));
    assert_true(e.live);
    cfs_entry_done(&e);
}

/* C8: a refused commit_item fails the rename with its errno and nothing
 * moves. */
static void test_commit_refused(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    C->commit_err = -EINVAL;
    rec_clear();
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"), -EINVAL);
    rec_assert_trace("commit_item(k)");
    assert_string_equal(rec_ls("/sub/c/pending"), "k");
    assert_string_equal(rec_ls("/sub/c/live"), "");
    assert_ptr_equal(rec_item("k")->ci_parent, pending());
    assert_true(on_children(pending(), rec_item("k")));
}

/* C8, C11: live -> pending calls uncommit_item; a refusal keeps it live. */
static void test_commit_uncommit(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    C->uncommit_err = -EBUSY;
    rec_clear();
    assert_rc(cfs_rename(NULL, "/sub/c/live/k", "/sub/c/pending/k"), -EBUSY);
    rec_assert_trace("uncommit_item(k)");
    assert_string_equal(rec_ls("/sub/c/live"), "k");
    C->uncommit_err = 0;
    rec_clear();
    assert_ok(cfs_rename(NULL, "/sub/c/live/k", "/sub/c/pending/k"));
    rec_assert_trace("uncommit_item(k)");
    rec_assert_locked("uncommit_item(k)", 1);
    assert_string_equal(rec_ls("/sub/c/pending"), "k");
    assert_ptr_equal(rec_item("k")->ci_parent, pending());
    assert_true(on_children(pending(), rec_item("k")));
    assert_false(on_children(live(), rec_item("k")));
}

/* C6, RM3, RM4: live/ takes no mkdir, its items cannot be removed, and
 * neither pending/ nor live/ can be removed. */
static void test_commit_live_rules(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/c/live/j"), -EPERM);
    assert_rc(cfs_rmdir(NULL, "/sub/c/live/k"), -EPERM);
    assert_rc(cfs_rmdir(NULL, "/sub/c/live"), -EPERM);
    assert_rc(cfs_rmdir(NULL, "/sub/c/pending"), -EPERM);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub/c/live"), "k");
}

/* C5: a name that is live cannot be made again in pending/. */
static void test_commit_name_live_eexist(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/c/pending/k"), -EEXIST);
    rec_assert_no_trace();
}

/* C7: only pending <-> live of one group, same name; anything else EPERM
 * with no callback. */
static void test_commit_rename_rules(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c2"));
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/j"));
    rec_clear();
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k2"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c2/live/k"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/pending/k2"),
              -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/dg/k"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/k"), -EPERM);
    assert_rc(cfs_rename(NULL, "/sub/c/pending", "/sub/c/live"), -EPERM);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub/c/pending"), "k j");
}

/* C9: core does not refuse stores to live items (the client may). */
static void test_commit_store_in_live(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    assert_ok(rec_store_str("/sub/c/live/k/v", "7"));
    assert_string_equal(rec_cat("/sub/c/live/k/v"), "7");
    I->attrs[0].store_err = -EBUSY;
    assert_rc(rec_store_str("/sub/c/live/k/v", "8"), -EBUSY);
}

/* C10, RM7: the committable group is ENOTEMPTY while pending/ or live/
 * hold items, and goes in one rmdir when both are empty. */
static void test_commit_rmdir_group(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_rc(cfs_rmdir(NULL, "/sub/c"), -ENOTEMPTY);
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    assert_rc(cfs_rmdir(NULL, "/sub/c"), -ENOTEMPTY);
    assert_ok(cfs_rename(NULL, "/sub/c/live/k", "/sub/c/pending/k"));
    assert_ok(cfs_rmdir(NULL, "/sub/c/pending/k"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/c"));
    rec_assert_trace("disconnect_notify(sub,c)",
                     "drop_item(sub,c)",
                     "release(c)",
                     "release(dg)");
    assert_string_equal(rec_ls("/sub"), "");
}

/* RL1 as docs/DESIGN.md §8 changes it: a link target is computed when read, so
 * a link to a pending item reads back its live path after the commit. */
static void test_commit_link_follows_move(void **state)
{
    char *target = NULL;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/j"));
    assert_ok(cfs_symlink(NULL, "/sub/c/pending/j/l", "/sub/c/pending/k"));
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    assert_ok(cfs_readlink("/sub/c/pending/j/l", &target));
    assert_string_equal(target, "/sub/c/live/k");
    cfs_free(target);
    assert_rc(cfs_rename(NULL, "/sub/c/live/k", "/sub/c/pending/k"), 0);
}

/* Used by follows a commit and its undo: links are kept by target. */
static void test_commit_links_to_follow_move(void **state)
{
    struct cfs_txn *txn;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/j"));
    assert_ok(cfs_symlink(NULL, "/sub/c/pending/j/l", "/sub/c/pending/k"));
    txn = rec_txn_begin();
    assert_ok(cfs_rename(txn, "/sub/c/pending/k", "/sub/c/live/k"));
    assert_string_equal(rec_links_to("/sub/c/live/k"), "/sub/c/pending/j/l");
    assert_ok(rec_txn_abort(txn));
    assert_string_equal(rec_links_to("/sub/c/pending/k"), "/sub/c/pending/j/l");
    assert_ok(cfs_rename(NULL, "/sub/c/pending/k", "/sub/c/live/k"));
    assert_string_equal(rec_links_to("/sub/c/live/k"), "/sub/c/pending/j/l");
    assert_rc(cfs_rename(NULL, "/sub/c/live/k", "/sub/c/pending/k"), 0);
}

/* C8, change records: a commit is one rename record (path = source, arg =
 * destination). */
static void test_commit_change_record(void **state)
{
    struct cfs_txn *txn;
    const struct cfs_change *ch;
    size_t n = 0;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/c/pending/k"));
    txn = rec_txn_begin();
    assert_ok(cfs_rename(txn, "/sub/c/pending/k", "/sub/c/live/k"));
    ch = cfs_txn_changes(txn, &n);
    assert_int_equal(n, 1);
    assert_int_equal(ch[0].op, CFS_OP_RENAME);
    assert_string_equal(ch[0].path, "/sub/c/pending/k");
    assert_string_equal(ch[0].arg, "/sub/c/live/k");
    rec_clear();
    assert_ok(rec_txn_abort(txn));
    rec_assert_trace("uncommit_item(k)");
    assert_string_equal(rec_ls("/sub/c/pending"), "k");
    assert_true(on_children(pending(), rec_item("k")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_commit_pending_and_live),
        REC_TEST(test_commit_needs_both_methods),
        REC_TEST(test_commit_mkdir_in_group_eperm),
        REC_TEST(test_commit_mkdir_rmdir_in_pending),
        REC_TEST(test_commit_pending_inherits_links),
        REC_TEST(test_commit_moves_item),
        REC_TEST(test_commit_refused),
        REC_TEST(test_commit_uncommit),
        REC_TEST(test_commit_live_rules),
        REC_TEST(test_commit_name_live_eexist),
        REC_TEST(test_commit_rename_rules),
        REC_TEST(test_commit_store_in_live),
        REC_TEST(test_commit_rmdir_group),
        REC_TEST(test_commit_link_follows_move),
        REC_TEST(test_commit_links_to_follow_move),
        REC_TEST(test_commit_change_record),
    };

    return rec_run("core-commit", tests);
}
