// SPDX-License-Identifier: MIT
/*
 * test-core-rmdir.c - cfs_rmdir: the checks in kernel order (RM3, RM5,
 * RM6, RM7), what a failed check leaves (RM9), the callback order of a
 * successful one (RM11, RM12), default groups (M13, M14, RM7a) and
 * dependencies (M16, M17, T8).
 */
#include "recorder.h"

/*
 *   sub (S)   make_group -> G
 *   G         attribute a; default group d (D); make_item -> I; links
 *   D         make_item -> I; links
 *   I         attribute v; links
 */
static struct rec_type *S, *G, *D, *I;

static struct rec_obj *tree(void)
{
    rec_tree(&S, &G, &I);
    D = rec_type_new("d");
    rec_attr(G, "a", 0644, 0);
    rec_bin(G, "blob", 0644, 0);
    rec_default(G, "d", D);
    D->make = REC_MAKE_ITEM;
    D->child = I;
    D->links = true;
    I->links = true;
    return rec_register("sub", S);
}

/* Assert rmdir fails with @err, calls nothing and changes nothing (RM9). */
#define assert_rmdir_refused(path, err)                                        \
    do {                                                                       \
        char before_[RINGBUF];                                                 \
        (void)snprintf(before_, sizeof(before_), "%s", rec_ls("/sub"));        \
        rec_clear();                                                           \
        assert_rc(cfs_rmdir(NULL, path), err);                                 \
        rec_assert_no_trace();                                                 \
        assert_string_equal(rec_ls("/sub"), before_);                          \
    } while (0)
#define RINGBUF 1024

/* RM11, RM12, RM13, T9, M23, M7: disconnect_notify (item still linked),
 * unlink, drop_item (item unlinked; void, no veto), both under su_mutex;
 * then release without it. The default group gets no callback of its own;
 * the client frees it. */
static void test_rmdir_callback_order(void **state)
{
    uint64_t nodes;

    (void)state;
    tree();
    nodes = cfs_tree_nodes();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_true(cfs_tree_nodes() > nodes); /* x and its default group */
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace("disconnect_notify(sub,x)",
                     "drop_item(sub,x)",
                     "release(x)",
                     "release(d)");
    rec_assert_locked("disconnect_notify(sub,x)", 1);
    rec_assert_locked("drop_item(sub,x)", 1);
    rec_assert_locked("release(x)", 0);
    assert_int_equal(rec_at(0)->linked, 1);
    assert_int_equal(rec_at(1)->linked, 0);
    assert_string_equal(rec_ls("/sub"), "");
    assert_int_equal(cfs_tree_nodes(), nodes); /* the gauge of /metrics */
}

/* RM11 for a leaf item inside a group. */
static void test_rmdir_item_in_group(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x/i"));
    rec_assert_trace("disconnect_notify(x,i)", "drop_item(x,i)", "release(i)");
    assert_string_equal(rec_ls("/sub/x"), "a blob d");
}

/* M14, RM12, T10: default groups are unlinked with their parent but stay
 * allocated until the client drops them (here from the parent's release). */
static void test_rmdir_default_groups_freed_by_client(void **state)
{
    struct config_item *x, *d;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    x = config_item_get(rec_item("x"));
    d = rec_item("d");
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace("disconnect_notify(sub,x)", "drop_item(sub,x)");
    assert_null(x->ci_parent);
    assert_null(d->ci_parent);
    assert_null(d->ci_group);
    assert_int_equal(rec_refs(d), 1);
    config_item_put(x);
    rec_assert_trace("disconnect_notify(sub,x)",
                     "drop_item(sub,x)",
                     "release(x)",
                     "release(d)");
}

/* RM3: a default group is EPERM, even empty. */
static void test_rmdir_default_group_eperm(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_rmdir_refused("/sub/x/d", -EPERM);
    assert_rmdir_refused("/sub/x/d/", -EPERM);
}

/* RM3 before RM5, RM6 and RM7: a default group with dependents, incoming
 * links and user children is still EPERM. */
static void test_rmdir_default_group_eperm_first(void **state)
{
    struct rec_obj *sub;

    (void)state;
    sub = tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/d/k"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l", "/sub/x/d"));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("d")));
    assert_rmdir_refused("/sub/x/d", -EPERM);
    configfs_undepend_item(rec_item("d"));
}

/* RM2, F2: the subsystem directory and the root are EPERM. */
static void test_rmdir_subsystem_and_root_eperm(void **state)
{
    (void)state;
    tree();
    assert_rmdir_refused("/sub", -EPERM);
    assert_rmdir_refused("/", -EPERM);
    assert_string_equal(rec_ls("/"), "sub");
}

/* RM1: not a directory ENOTDIR; missing ENOENT; "." and ".." EINVAL
 * (docs/DESIGN.md §3: they are invalid names). */
static void test_rmdir_path_errors(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_rmdir_refused("/sub/x/a", -ENOTDIR);
    assert_rmdir_refused("/sub/x/l", -ENOTDIR);
    assert_rmdir_refused("/sub/nope", -ENOENT);
    assert_rmdir_refused("/sub/nope/x", -ENOENT);
    assert_rmdir_refused("/sub/x/.", -EINVAL);
    assert_rmdir_refused("/sub/x/..", -EINVAL);
}

/* RM5, M16: an item with dependents is EBUSY until undepend. */
static void test_rmdir_dependent_ebusy(void **state)
{
    struct rec_obj *sub;

    (void)state;
    sub = tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("x")));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("x")));
    assert_rmdir_refused("/sub/x", -EBUSY);
    configfs_undepend_item(rec_item("x"));
    assert_rmdir_refused("/sub/x", -EBUSY);
    configfs_undepend_item(rec_item("x"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

/* RM5 before RM7: dependents are EBUSY even with user children. */
static void test_rmdir_dependent_before_children(void **state)
{
    struct rec_obj *sub;

    (void)state;
    sub = tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("x")));
    assert_rmdir_refused("/sub/x", -EBUSY);
    configfs_undepend_item(rec_item("x"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
}

/* M16: depend_item is ENOENT for an unregistered subsystem, an item not in
 * the subsystem's tree, or an item of another subsystem. */
static void test_rmdir_depend_errors(void **state)
{
    struct rec_obj *sub, *other, *fake, *solo;

    (void)state;
    sub = tree();
    other = rec_register("other", S);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    fake = rec_obj_new(S, "fake", NULL);
    solo = rec_obj_new(I, "solo", NULL);
    assert_rc(configfs_depend_item(&fake->u.su, rec_item("x")), -ENOENT);
    assert_rc(configfs_depend_item(&sub->u.su, &solo->u.group.cg_item),
              -ENOENT);
    assert_rc(configfs_depend_item(&other->u.su, rec_item("x")), -ENOENT);
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    config_item_put(&solo->u.group.cg_item);
    config_item_put(&fake->u.group.cg_item);
}

struct depend_ctx {
    struct rec_obj *sub;
    int rc;
    int root_rc;
    bool root_tried;
};

static void depend_in_store_hook(const char *cb,
                                 struct config_item *item,
                                 struct config_item *other,
                                 void *data)
{
    struct depend_ctx *ctx = data;
    struct config_item *root;

    (void)item;
    (void)other;
    if (strcmp(cb, "store") != 0) {
        return;
    }
    ctx->rc = configfs_depend_item_unlocked(&ctx->sub->u.su, rec_item("y"));
    root = ctx->sub->u.group.cg_item.ci_parent;
    if (root) {
        ctx->root_tried = true;
        ctx->root_rc = configfs_depend_item_unlocked(&ctx->sub->u.su, root);
    }
}

/* M17, U5: depend_item_unlocked works from inside a store; EINVAL for the
 * configfs root item. */
static void test_rmdir_depend_unlocked_in_store(void **state)
{
    struct depend_ctx ctx = {0};

    (void)state;
    ctx.sub = tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    rec_set_hook(depend_in_store_hook, &ctx);
    assert_ok(rec_store_str("/sub/x/a", "1"));
    rec_set_hook(NULL, NULL);
    assert_ok(ctx.rc);
    /* The root item is reachable as the subsystem's parent. */
    assert_true(ctx.root_tried);
    assert_rc(ctx.root_rc, -EINVAL);
    assert_rmdir_refused("/sub/y", -EBUSY);
    configfs_undepend_item(rec_item("y"));
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
}

/* RM6, RL3: the target of a link is EBUSY until the link goes. */
static void test_rmdir_incoming_link_ebusy(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l", "/sub/x"));
    assert_rmdir_refused("/sub/x", -EBUSY);
    assert_ok(cfs_unlink(NULL, "/sub/y/l"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

/* RM6 before RM7: incoming links are EBUSY even with children and
 * outgoing links. */
static void test_rmdir_incoming_link_before_children(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_symlink(NULL, "/sub/x/out", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/in", "/sub/x"));
    assert_rmdir_refused("/sub/x", -EBUSY);
    assert_ok(cfs_unlink(NULL, "/sub/y/in"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
}

/* RM7, RM14: a user child is ENOTEMPTY; there is no recursive removal. */
static void test_rmdir_user_child_enotempty(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
    assert_ok(cfs_rmdir(NULL, "/sub/x/i"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

/* RM7, RM7a, SL9: an outgoing link is ENOTEMPTY. */
static void test_rmdir_outgoing_link_enotempty(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

/* RM7: a link to one of the item's default groups is EBUSY. */
static void test_rmdir_default_group_link_ebusy(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l", "/sub/x/d"));
    assert_rmdir_refused("/sub/x", -EBUSY);
}

/* RM7, C10: a user child inside a default group is ENOTEMPTY; so is an
 * outgoing link from a default group. */
static void test_rmdir_default_group_child_enotempty(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/d/k"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
    assert_ok(cfs_rmdir(NULL, "/sub/x/d/k"));
    assert_ok(cfs_symlink(NULL, "/sub/x/d/l", "/sub/y"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
}

/* RM7 ("in practice"): a user child directly in the item is ENOTEMPTY
 * even when a default group of it is the target of a link. */
static void test_rmdir_own_child_before_default_link(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l", "/sub/x/d"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
}

/* RM7, T8: a dependency on a default group does not stop the rmdir of its
 * owner (only the rmdir target's own count is checked). */
static void test_rmdir_depend_on_default_group_ignored(void **state)
{
    struct rec_obj *sub;
    struct config_item *d;

    (void)state;
    sub = tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    d = config_item_get(rec_item("d"));
    assert_ok(configfs_depend_item(&sub->u.su, d));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    assert_string_equal(rec_ls("/sub"), "");
    config_item_put(d);
}

/* RM7a, M13: a group whose only children are default groups (nested ones
 * too) goes in one rmdir. */
static void test_rmdir_only_default_groups(void **state)
{
    struct rec_type *e;

    (void)state;
    tree();
    e = rec_type_new("e");
    rec_default(D, "e", e);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_string_equal(rec_ls("/sub/x/d"), "e");
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace("disconnect_notify(sub,x)",
                     "drop_item(sub,x)",
                     "release(x)",
                     "release(d)",
                     "release(e)");
}

/* RM7a, SL10: a link to itself makes an item EBUSY (not ENOTEMPTY). */
static void test_rmdir_self_link_ebusy(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_symlink(NULL, "/sub/x/me", "/sub/x"));
    assert_rmdir_refused("/sub/x", -EBUSY);
    assert_ok(cfs_unlink(NULL, "/sub/x/me"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

/* RM9: a refused rmdir leaves attribute values and links as they were. */
static void test_rmdir_refused_keeps_state(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(rec_store_str("/sub/x/a", "42\n"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_rmdir_refused("/sub/x", -ENOTEMPTY);
    assert_string_equal(rec_cat("/sub/x/a"), "42\n");
    assert_string_equal(rec_values("/sub/x"), "a=42\n");
    assert_string_equal(rec_ls("/sub/x"), "a blob d l");
    assert_rmdir_refused("/sub/y", -EBUSY);
}

/* RM10, T3, T6, WR7, RD2, RD6, BIN6: once removed, the item's attributes
 * are gone (ENOENT) and no show/store/read/write runs, even while a client
 * still holds the item. */
static void test_rmdir_then_no_attribute_callbacks(void **state)
{
    struct config_item *x;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    x = config_item_get(rec_item("x"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_clear();
    assert_string_equal(rec_cat("/sub/x/a"), "E-ENOENT");
    assert_rc(rec_store_str("/sub/x/a", "1"), -ENOENT);
    assert_string_equal(rec_cat("/sub/x/blob"), "E-ENOENT");
    assert_rc(rec_store_str("/sub/x/blob", "1"), -ENOENT);
    rec_assert_no_trace();
    config_item_put(x);
}

/* docs/STYLE.md §12: rmdir under allocation failure either succeeds whole or
 * fails ENOMEM with nothing called and nothing changed. */
static void test_rmdir_oom_loop(void **state)
{
    long n;
    int rc;

    (void)state;
    tree();
    for (n = 1; n < 10000; n++) {
        assert_ok(cfs_mkdir(NULL, "/sub/x"));
        assert_ok(rec_store_str("/sub/x/a", "v"));
        rec_clear();
        rec_alloc_fail_nth(n);
        rc = cfs_rmdir(NULL, "/sub/x");
        rec_alloc_fail_nth(0);
        if (rc == 0) {
            rec_assert_trace("disconnect_notify(sub,x)",
                             "drop_item(sub,x)",
                             "release(x)",
                             "release(d)");
            if (!rec_alloc_failed()) {
                break;
            }
            continue;
        }
        assert_rc(rc, -ENOMEM);
        rec_assert_no_trace();
        assert_string_equal(rec_ls("/sub"), "x");
        assert_ok(cfs_rmdir(NULL, "/sub/x"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_rmdir_callback_order),
        REC_TEST(test_rmdir_item_in_group),
        REC_TEST(test_rmdir_default_groups_freed_by_client),
        REC_TEST(test_rmdir_default_group_eperm),
        REC_TEST(test_rmdir_default_group_eperm_first),
        REC_TEST(test_rmdir_subsystem_and_root_eperm),
        REC_TEST(test_rmdir_path_errors),
        REC_TEST(test_rmdir_dependent_ebusy),
        REC_TEST(test_rmdir_dependent_before_children),
        REC_TEST(test_rmdir_depend_errors),
        REC_TEST(test_rmdir_depend_unlocked_in_store),
        REC_TEST(test_rmdir_incoming_link_ebusy),
        REC_TEST(test_rmdir_incoming_link_before_children),
        REC_TEST(test_rmdir_user_child_enotempty),
        REC_TEST(test_rmdir_outgoing_link_enotempty),
        REC_TEST(test_rmdir_default_group_link_ebusy),
        REC_TEST(test_rmdir_default_group_child_enotempty),
        REC_TEST(test_rmdir_own_child_before_default_link),
        REC_TEST(test_rmdir_depend_on_default_group_ignored),
        REC_TEST(test_rmdir_only_default_groups),
        REC_TEST(test_rmdir_self_link_ebusy),
        REC_TEST(test_rmdir_refused_keeps_state),
        REC_TEST(test_rmdir_then_no_attribute_callbacks),
        REC_TEST(test_rmdir_oom_loop),
    };

    return rec_run("core-rmdir", tests);
}
