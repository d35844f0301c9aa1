// SPDX-License-Identifier: MIT
/*
 * test-core-mkdir.c - cfs_mkdir: checks in kernel order, make_* results,
 * linking, the built subtree and the teardown of a failed mkdir.
 *
 * Covers docs/configfs-rules.md MK1-MK14, L1, L3-L5, M4, M6-M8, M12, M13 and
 * the listing order of docs/DESIGN.md §8 (D2 as overridden there).
 */
#include "recorder.h"

/*
 * The tree most tests use:
 *   sub (S)      make_group -> G
 *   G            attributes a (0644), b (0444); default group d (D);
 *                make_item -> I; links
 *   D            attribute c (0644)
 *   I            attribute v (0644)
 */
static struct rec_type *S, *G, *D, *I;

static struct rec_obj *tree(void)
{
    rec_tree(&S, &G, &I);
    D = rec_type_new("d");
    rec_attr(G, "a", 0644, 0);
    rec_attr(G, "b", 0444, REC_NO_STORE);
    rec_default(G, "d", D);
    rec_attr(D, "c", 0644, 0);
    return rec_register("sub", S);
}

/* MK6, MK12, MK14: a successful mkdir calls make_group (under su_mutex)
 * and nothing else; the new directory is 0755, user-created. */
static void test_mkdir_calls_make_only(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_assert_trace("make_group(sub,x)");
    rec_assert_locked("make_group(sub,x)", 1);
    assert_ok(cfs_stat("/sub/x", &e));
    assert_int_equal(e.kind, CFS_KIND_GROUP);
    assert_int_equal(e.mode, 0755);
    assert_true(e.user_created);
    assert_false(e.default_group);
    assert_int_equal(e.creates, CFS_KIND_ITEM);
    cfs_entry_done(&e);
    assert_string_equal(rec_ls("/sub"), "x");
}

/* MK7, M6, M13: the new group is linked: ci_parent, ci_group, the tail of
 * the parent's cg_children, cg_subsys; its default groups too. */
static void test_mkdir_links_into_parent(void **state)
{
    struct rec_obj *sub = tree();
    struct config_group *x, *y, *d;
    struct config_item *pos;
    struct list_head *lh;
    int n = 0;

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    x = rec_group("x");
    y = rec_group("y");
    assert_ptr_equal(x->cg_item.ci_parent, &sub->u.group.cg_item);
    assert_ptr_equal(x->cg_item.ci_group, &sub->u.group);
    assert_ptr_equal(x->cg_subsys, &sub->u.su);
    list_for_each(lh, &sub->u.group.cg_children) {
        pos = list_entry(lh, struct config_item, ci_entry);
        assert_ptr_equal(pos, n == 0 ? &x->cg_item : &y->cg_item);
        n++;
    }
    assert_int_equal(n, 2);
    d = &rec_obj_of(&x->cg_item)->defaults[0]->u.group;
    assert_ptr_equal(d->cg_item.ci_parent, &x->cg_item);
    assert_ptr_equal(d->cg_item.ci_group, x);
    assert_ptr_equal(d->cg_subsys, &sub->u.su);
    n = 0;
    list_for_each(lh, &x->cg_children) {
        assert_ptr_equal(list_entry(lh, struct config_item, ci_entry),
                         &d->cg_item);
        n++;
    }
    assert_int_equal(n, 1);
}

/* M8: with both make_group and make_item set, only make_group is called. */
static void test_mkdir_make_group_wins(void **state)
{
    (void)state;
    tree();
    S->make = REC_MAKE_BOTH;
    rec_type_build(S);
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_assert_trace("make_group(sub,x)");
}

/* limits.h: no directory deeper than CFS_DEPTH_MAX below the root; the
 * refusal calls nothing. */
static void test_mkdir_depth_limit(void **state)
{
    struct rec_type *t = rec_type_new("nest");
    char path[CFS_DEPTH_MAX * 3 + 16] = "/nest";

    (void)state;
    t->make = REC_MAKE_GROUP;
    t->child = t;
    rec_register("nest", t);
    for (int depth = 2; depth <= CFS_DEPTH_MAX; depth++) {
        strcat(path, "/d");
        assert_ok(cfs_mkdir(NULL, path));
    }
    rec_clear();
    strcat(path, "/d");
    assert_rc(cfs_mkdir(NULL, path), -ENAMETOOLONG);
    assert_int_equal(rec_count(), 0);
    /* bottom-up, as rm -r cannot (RM14) */
    for (int depth = CFS_DEPTH_MAX; depth >= 2; depth--) {
        path[strlen(path) - 2] = '\0';
        assert_ok(cfs_rmdir(NULL, path));
    }
}

/* MK4: mkdir in a directory made by make_item is EPERM, before make_*. */
static void test_mkdir_in_item_eperm(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_stat("/sub/x/i", &e));
    assert_int_equal(e.kind, CFS_KIND_ITEM);
    assert_int_equal(e.creates, 0);
    cfs_entry_done(&e);
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x/i/k"), -EPERM);
    rec_assert_no_trace();
}

/* MK4: a group without make_item/make_group, or without group operations,
 * accepts no mkdir: EPERM ("lack of mkdir returns EPERM"). */
static void test_mkdir_without_make_eperm(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *t = rec_type_new("t");

    (void)state;
    s->make = REC_MAKE_NONE;
    t->no_group_ops = true;
    rec_register("nomake", s);
    rec_register("noops", t);
    assert_rc(cfs_mkdir(NULL, "/nomake/x"), -EPERM);
    assert_rc(cfs_mkdir(NULL, "/noops/x"), -EPERM);
    rec_assert_no_trace();
}

/* MK6, M7, D4: make_* returning ERR_PTR(e) fails mkdir with e and nothing
 * else is called; NULL is ENOMEM; the name never appears. */
static void test_mkdir_make_error_passed_through(void **state)
{
    static const int errs[] = {
        -EINVAL, -ENOSPC, -EBUSY, -ENOENT, -ENOSYS, -EEXIST, -ENAMETOOLONG};

    (void)state;
    tree();
    for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
        S->make_err = errs[k];
        rec_clear();
        assert_rc(cfs_mkdir(NULL, "/sub/x"), errs[k]);
        rec_assert_trace("make_group(sub,x)");
        assert_string_equal(rec_ls("/sub"), "");
    }
    S->make_err = REC_MAKE_NULL;
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x"), -ENOMEM);
    rec_assert_trace("make_group(sub,x)");
    assert_string_equal(rec_ls("/sub"), "");
}

/* MK8, M4, MK11, D4: an item without a type is EINVAL after make_*; the
 * teardown calls disconnect_notify then drop_item, under su_mutex, and the
 * child that failed to be made is not listed. */
static void test_mkdir_untyped_item_einval(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    S->make_untyped = true;
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x"), -EINVAL);
    rec_assert_trace(
        "make_group(sub,x)", "disconnect_notify(sub,x)", "drop_item(sub,x)");
    rec_assert_locked("disconnect_notify(sub,x)", 1);
    rec_assert_locked("drop_item(sub,x)", 1);
    assert_rc(cfs_stat("/sub/x", &e), -ENOENT);
    assert_string_equal(rec_ls("/sub"), "");
}

/* MK9, L4, MK11, M14: a default group named like an attribute fails the
 * mkdir EEXIST after make_*, with the full teardown; the client then frees
 * the default groups from release. */
static void test_mkdir_default_named_like_attr_eexist(void **state)
{
    (void)state;
    tree();
    rec_attr(G, "d", 0644, 0);
    rec_type_build(G);
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x"), -EEXIST);
    rec_assert_trace("make_group(sub,x)",
                     "disconnect_notify(sub,x)",
                     "drop_item(sub,x)",
                     "release(x)",
                     "release(d)");
    rec_assert_locked("drop_item(sub,x)", 1);
    rec_assert_locked("release(x)", 0);
    assert_string_equal(rec_ls("/sub"), "");
}

static void untype_default_hook(const char *cb,
                                struct config_item *item,
                                struct config_item *other,
                                void *data)
{
    struct rec_obj *obj;

    (void)other;
    (void)data;
    if (strcmp(cb, "make_group") == 0 && item) {
        obj = rec_obj_of(item);
        if (obj && obj->defaults[0]) {
            obj->defaults[0]->u.group.cg_item.ci_type = NULL;
        }
    }
}

/* MK9: a default group without a type fails the mkdir EINVAL, unwound. */
static void test_mkdir_untyped_default_group_einval(void **state)
{
    (void)state;
    tree();
    rec_set_hook(untype_default_hook, NULL);
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x"), -EINVAL);
    rec_set_hook(NULL, NULL);
    assert_int_equal(rec_index("make_group(sub,x)", 0), 0);
    assert_int_equal(rec_index("disconnect_notify(sub,x)", 0), 1);
    assert_int_equal(rec_index("drop_item(sub,x)", 0), 2);
    assert_string_equal(rec_ls("/sub"), "");
}

/* MK1: an existing entry of any kind is EEXIST, before make_* (and before
 * the EPERM of MK4: the VFS check comes first). */
static void test_mkdir_existing_entry_eexist(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/x"), -EEXIST);     /* item dir */
    assert_rc(cfs_mkdir(NULL, "/sub/x/i"), -EEXIST);   /* item dir */
    assert_rc(cfs_mkdir(NULL, "/sub/x/a"), -EEXIST);   /* attribute */
    assert_rc(cfs_mkdir(NULL, "/sub/x/d"), -EEXIST);   /* default group */
    assert_rc(cfs_mkdir(NULL, "/sub/x/l"), -EEXIST);   /* symlink */
    assert_rc(cfs_mkdir(NULL, "/sub/x/i/v"), -EEXIST); /* in an item */
    rec_assert_no_trace();
}

/* MK1: a missing parent is ENOENT; a file on the way is ENOTDIR. */
static void test_mkdir_bad_parent(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/nope/y"), -ENOENT);
    assert_rc(cfs_mkdir(NULL, "/nope/y"), -ENOENT);
    assert_rc(cfs_mkdir(NULL, "/sub/x/a/y"), -ENOTDIR);
    rec_assert_no_trace();
}

/* MK2, F2, docs/DESIGN.md §8: mkdir in the root is EPERM, whatever the name
 * (the kernel's VFS would say EEXIST for a taken one first). */
static void test_mkdir_in_root_eperm(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_mkdir(NULL, "/newsub"), -EPERM);
    assert_rc(cfs_mkdir(NULL, "/sub"), -EPERM);
    assert_string_equal(rec_ls("/"), "sub");
}

/* MK1, MK13, docs/DESIGN.md §3 and §9: names that are ".", "..", over 255
 * bytes, not UTF-8, or hold control bytes are refused before make_*. */
static void test_mkdir_invalid_names(void **state)
{
    char path[512];

    (void)state;
    tree();
    rec_clear();
    assert_rc(cfs_mkdir(NULL, "/sub/."), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/.."), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/a\x01"), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/tab\there"), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/del\x7f"), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/bad\xff"), -EINVAL);
    assert_rc(cfs_mkdir(NULL, "/sub/\xc3"), -EINVAL);
    (void)snprintf(path, sizeof(path), "/sub/%0256d", 0);
    assert_rc(cfs_mkdir(NULL, path), -ENAMETOOLONG);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub"), "");
}

/* cfs_name_check: the name rule of docs/DESIGN.md §3. */
static void test_mkdir_name_check(void **state)
{
    char name[CFS_NAME_MAX + 1];

    (void)state;
    assert_ok(cfs_name_check("x", 1));
    assert_ok(cfs_name_check("caf\xc3\xa9", 5));
    assert_ok(cfs_name_check("with space", 10));
    assert_ok(cfs_name_check("...", 3));
    assert_rc(cfs_name_check("", 0), -EINVAL);
    assert_rc(cfs_name_check(".", 1), -EINVAL);
    assert_rc(cfs_name_check("..", 2), -EINVAL);
    assert_rc(cfs_name_check("a/b", 3), -EINVAL);
    assert_rc(cfs_name_check("a\0b", 3), -EINVAL);
    assert_rc(cfs_name_check("a\nb", 3), -EINVAL);
    assert_rc(cfs_name_check("\x7f", 1), -EINVAL);
    assert_rc(cfs_name_check("\xc0\xaf", 2), -EINVAL); /* overlong '/' */
    memset(name, 'n', sizeof(name));
    assert_ok(cfs_name_check(name, CFS_NAME_MAX));
    assert_rc(cfs_name_check(name, CFS_NAME_MAX + 1), -ENAMETOOLONG);
}

/* MK1, MK6: a trailing slash is accepted; make_* gets the bare name, a
 * NUL-terminated copy. */
static void test_mkdir_trailing_slash(void **state)
{
    (void)state;
    tree();
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/x/"));
    rec_assert_trace("make_group(sub,x)");
    assert_string_equal(rec_ls("/sub"), "x");
}

/* MK13, L3: names are kept byte for byte and matched case-sensitively;
 * "a/b" is b inside a. */
static void test_mkdir_names_exact(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/Abc"));
    assert_ok(cfs_mkdir(NULL, "/sub/abc"));
    assert_ok(cfs_mkdir(NULL, "/sub/caf\xc3\xa9"));
    assert_ok(cfs_mkdir(NULL, "/sub/a b"));
    assert_string_equal(rec_ls("/sub"), "Abc abc caf\xc3\xa9 a b");
    assert_rc(cfs_stat("/sub/ABC", &e), -ENOENT);
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/abc/k"));
    rec_assert_trace("make_item(abc,k)");
    assert_rc(cfs_mkdir(NULL, "/sub/zz/k"), -ENOENT);
}

/* MK9, D2 (as docs/DESIGN.md §8 orders it): attributes in declaration order
 * (text, then binary), then default groups, then children and links oldest
 * first. */
static void test_mkdir_listing_order(void **state)
{
    struct rec_type *d2 = NULL;

    (void)state;
    tree();
    d2 = rec_type_new("d2");
    rec_default(G, "d2", d2);
    rec_bin(G, "blob", 0644, 0);
    rec_attr(G, "z", 0644, 0);
    rec_type_build(G);
    rec_type_build(d2);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/k2"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/k1"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/k0"));
    assert_string_equal(rec_ls("/sub/x"), "a b z blob d d2 k2 k1 l k0");
}

/* M13: default groups are created recursively, with their own attributes
 * and default groups, and flagged default. */
static void test_mkdir_default_groups_recursive(void **state)
{
    struct rec_type *e;
    struct cfs_entry st;

    (void)state;
    tree();
    e = rec_type_new("e");
    rec_attr(e, "ea", 0444, REC_NO_STORE);
    rec_default(D, "e", e);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_string_equal(rec_ls("/sub/x/d"), "c e");
    assert_string_equal(rec_ls("/sub/x/d/e"), "ea");
    assert_ok(cfs_stat("/sub/x/d", &st));
    assert_int_equal(st.kind, CFS_KIND_GROUP);
    assert_true(st.default_group);
    assert_false(st.user_created);
    assert_int_equal(st.mode, 0755);
    cfs_entry_done(&st);
    assert_ok(cfs_stat("/sub/x/d/e", &st));
    assert_true(st.default_group);
    cfs_entry_done(&st);
}

/* M13, docs/DESIGN.md §2: the seed's NULL-terminated default_groups array works
 * like configfs_add_default_group(). */
static void test_mkdir_seed_default_groups(void **state)
{
    struct rec_type *e;
    struct cfs_entry st;

    (void)state;
    tree();
    e = rec_type_new("e");
    rec_default(G, "e", e);
    G->seed_defaults = true;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_string_equal(rec_ls("/sub/x"), "a b d e");
    assert_ok(cfs_stat("/sub/x/e", &st));
    assert_true(st.default_group);
    cfs_entry_done(&st);
    assert_ptr_equal(
        rec_obj_of(rec_item("x"))->defaults[1]->u.group.cg_item.ci_parent,
        rec_item("x"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    assert_int_equal(rec_occurrences("release(d)"), 1);
    assert_int_equal(rec_occurrences("release(e)"), 1);
}

/* M13, MK6: a default group whose type has make_* accepts mkdir; the
 * callback gets the default group as parent. */
static void test_mkdir_in_default_group(void **state)
{
    (void)state;
    tree();
    D->make = REC_MAKE_ITEM;
    D->child = I;
    rec_type_build(D);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/x/d/k"));
    rec_assert_trace("make_item(d,k)");
    assert_string_equal(rec_ls("/sub/x/d"), "c k");
}

/* M12, L5, T9: is_visible is asked once per attribute index when the item
 * is created, without su_mutex; a hidden attribute does not exist, and the
 * answer is not re-evaluated later. */
static void test_mkdir_is_visible_once(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    G->attrs[1].flags |= REC_HIDDEN;
    rec_bin(G, "blob", 0644, 0);
    G->bins[0].flags |= REC_HIDDEN;
    rec_type_build(G);
    rec_clear();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_assert_trace("make_group(sub,x)",
                     "is_visible(x,a,0)",
                     "is_visible(x,b,1)",
                     "is_bin_visible(x,blob,0)");
    rec_assert_locked("is_visible(x,a,0)", 0);
    assert_string_equal(rec_ls("/sub/x"), "a d");
    assert_rc(cfs_stat("/sub/x/b", &e), -ENOENT);
    assert_string_equal(rec_cat("/sub/x/b"), "E-ENOENT");
    assert_rc(rec_store_str("/sub/x/b", "1"), -ENOENT);
    assert_rc(cfs_stat("/sub/x/blob", &e), -ENOENT);
    G->attrs[1].flags &= ~REC_HIDDEN;
    G->attrs[0].flags |= REC_HIDDEN;
    rec_clear();
    assert_string_equal(rec_ls("/sub/x"), "a d");
    assert_int_equal(rec_prefixed("is_visible"), 0);
}

/* L1: a component over 255 bytes is ENAMETOOLONG even where nothing could
 * exist; a path over PATH_MAX likewise. */
static void test_mkdir_lookup_name_too_long(void **state)
{
    static char path[CFS_PATH_MAX + 64];
    struct cfs_entry e;
    size_t len;

    (void)state;
    tree();
    (void)snprintf(path, sizeof(path), "/sub/%0300d", 0);
    assert_rc(cfs_stat(path, &e), -ENAMETOOLONG);
    memcpy(path, "/sub", sizeof("/sub"));
    len = strlen(path);
    while (len < CFS_PATH_MAX + 10) {
        memcpy(path + len, "/abcdefgh", sizeof("/abcdefgh"));
        len += 9;
    }
    assert_rc(cfs_stat(path, &e), -ENAMETOOLONG);
    assert_rc(cfs_mkdir(NULL, path), -ENAMETOOLONG);
}

/* docs/STYLE.md §12, MK5, MK11: fail each allocation of a mkdir in turn: it
 * fails ENOMEM with the tree unchanged, calls drop_item for any make_* it made,
 * and leaks nothing. */
static void test_mkdir_oom_loop(void **state)
{
    long n;
    int rc;

    (void)state;
    tree();
    for (n = 1; n < 10000; n++) {
        rec_clear();
        rec_alloc_fail_nth(n);
        rc = cfs_mkdir(NULL, "/sub/x");
        rec_alloc_fail_nth(0);
        if (rc == 0) {
            assert_string_equal(rec_ls("/sub"), "x");
            assert_ok(cfs_rmdir(NULL, "/sub/x"));
            if (!rec_alloc_failed()) {
                break;
            }
            continue;
        }
        assert_rc(rc, -ENOMEM);
        assert_string_equal(rec_ls("/sub"), "");
        if (rec_index("make_group(sub,x)", 0) >= 0) {
            /* make_group succeeded: MK11 teardown, in order. */
            assert_int_equal(rec_index("disconnect_notify(sub,x)", 0), 1);
            assert_int_equal(rec_index("drop_item(sub,x)", 0), 2);
            assert_true(rec_index("release(x)", 0) > 2);
        } else {
            rec_assert_no_trace();
        }
    }
    assert_true(n > 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_mkdir_calls_make_only),
        REC_TEST(test_mkdir_links_into_parent),
        REC_TEST(test_mkdir_make_group_wins),
        REC_TEST(test_mkdir_in_item_eperm),
        REC_TEST(test_mkdir_depth_limit),
        REC_TEST(test_mkdir_without_make_eperm),
        REC_TEST(test_mkdir_make_error_passed_through),
        REC_TEST(test_mkdir_untyped_item_einval),
        REC_TEST(test_mkdir_default_named_like_attr_eexist),
        REC_TEST(test_mkdir_untyped_default_group_einval),
        REC_TEST(test_mkdir_existing_entry_eexist),
        REC_TEST(test_mkdir_bad_parent),
        REC_TEST(test_mkdir_in_root_eperm),
        REC_TEST(test_mkdir_invalid_names),
        REC_TEST(test_mkdir_name_check),
        REC_TEST(test_mkdir_trailing_slash),
        REC_TEST(test_mkdir_names_exact),
        REC_TEST(test_mkdir_listing_order),
        REC_TEST(test_mkdir_default_groups_recursive),
        REC_TEST(test_mkdir_seed_default_groups),
        REC_TEST(test_mkdir_in_default_group),
        REC_TEST(test_mkdir_is_visible_once),
        REC_TEST(test_mkdir_lookup_name_too_long),
        REC_TEST(test_mkdir_oom_loop),
    };

    return rec_run("core-mkdir", tests);
}
