// SPDX-License-Identifier: MIT
/*
 * test-core-link.c - cfs_symlink, cfs_readlink, cfs_unlink.
 *
 * Covers docs/configfs-rules.md SL1-SL10, RL1-RL3 and UL1-UL4, with the link
 * targets of docs/DESIGN.md §8: absolute config paths, resolved at
 * creation, read back as the target item's current path.
 */
#include "recorder.h"

/*
 *   sub (S)    make_group -> G
 *   G          attribute a; default group d (D); links; make_item -> I
 *   D          links
 *   I          no allow_link
 *   other (O)  make_item -> I
 */
static struct rec_type *S, *G, *D, *I, *O;

static void tree(void)
{
    S = rec_type_new("s");
    G = rec_type_new("g");
    D = rec_type_new("d");
    I = rec_type_new("i");
    O = rec_type_new("o");
    S->make = REC_MAKE_GROUP;
    S->child = G;
    G->links = true;
    G->make = REC_MAKE_ITEM;
    G->child = I;
    rec_attr(G, "a", 0644, 0);
    rec_default(G, "d", D);
    D->links = true;
    O->make = REC_MAKE_ITEM;
    O->child = I;
    rec_register("sub", S);
    rec_register("other", O);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/other/o"));
    rec_clear();
}

static void expect_link(const char *path, const char *target)
{
    char *got = NULL;
    struct cfs_entry e;

    assert_ok(cfs_readlink(path, &got));
    assert_string_equal(got, target);
    cfs_free(got);
    assert_ok(cfs_stat(path, &e));
    assert_int_equal(e.kind, CFS_KIND_LINK);
    assert_int_equal(e.mode, 0777);
    assert_string_equal(e.target, target);
    cfs_entry_done(&e);
}

/* SL7, SL9, T9: allow_link(dir item, target) runs without su_mutex; the
 * link is then an entry of its directory. */
static void test_link_creates_entry(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_assert_trace("allow_link(x,y)");
    rec_assert_locked("allow_link(x,y)", 0);
    expect_link("/sub/x/l", "/sub/y");
    assert_string_equal(rec_ls("/sub/x"), "a d l");
}

struct who {
    struct config_item *src, *target;
};

static void who_hook(const char *cb,
                     struct config_item *item,
                     struct config_item *other,
                     void *data)
{
    struct who *w = data;

    if (strcmp(cb, "allow_link") == 0) {
        w->src = item;
        w->target = other;
    }
}

/* SL7, M5: allow_link gets the link directory's item and the target item. */
static void test_link_allow_link_arguments(void **state)
{
    struct who w = {0};

    (void)state;
    tree();
    rec_set_hook(who_hook, &w);
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_set_hook(NULL, NULL);
    assert_ptr_equal(w.src, rec_item("x"));
    assert_ptr_equal(w.target, rec_item("y"));
}

/* SL4: a directory whose type has no allow_link hosts no links: EPERM;
 * this comes before target resolution (SL5). */
static void test_link_without_allow_link_eperm(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_symlink(NULL, "/other/o/l", "/sub/y"), -EPERM);
    assert_rc(cfs_symlink(NULL, "/other/o/l", "/sub/nope"), -EPERM);
    assert_rc(cfs_symlink(NULL, "/other/l", "/sub/y"), -EPERM);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/other/o"), "");
}

/* SL5 before SL7: target errors come before allow_link. */
static void test_link_target_errors(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/nope"), -ENOENT);
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/nope/y"), -ENOENT);
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/y/a"), -ENOTDIR);
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/y/a/b"), -ENOTDIR);
    assert_true(cfs_symlink(NULL, "/sub/x/l", "") < 0);
    assert_true(cfs_symlink(NULL, "/sub/x/l", "sub/y") < 0);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub/x"), "a d");
}

/* SL7: a refusal of allow_link is returned; no link, no drop_link. */
static void test_link_allow_link_refuses(void **state)
{
    (void)state;
    tree();
    G->allow_err = -EINVAL;
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/y"), -EINVAL);
    G->allow_err = -EEXIST;
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/y"), -EEXIST);
    rec_assert_trace("allow_link(x,y)", "allow_link(x,y)");
    assert_string_equal(rec_ls("/sub/x"), "a d");
}

/* SL7, SL10: core checks no target type: another subsystem, the link's own
 * item, a default group, the parent, a subsystem are all accepted. */
static void test_link_no_type_checks(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/o", "/other/o"));
    assert_ok(cfs_symlink(NULL, "/sub/x/me", "/sub/x"));
    assert_ok(cfs_symlink(NULL, "/sub/x/dg", "/sub/y/d"));
    assert_ok(cfs_symlink(NULL, "/sub/x/up", "/sub"));
    assert_ok(cfs_symlink(NULL, "/sub/x/os", "/other"));
    rec_assert_trace("allow_link(x,o)",
                     "allow_link(x,x)",
                     "allow_link(x,d)",
                     "allow_link(x,sub)",
                     "allow_link(x,other)");
    expect_link("/sub/x/o", "/other/o");
    expect_link("/sub/x/me", "/sub/x");
    expect_link("/sub/x/dg", "/sub/y/d");
    expect_link("/sub/x/up", "/sub");
    expect_link("/sub/x/os", "/other");
}

/* SL10: duplicates and mutual links are accepted (clients may refuse). */
static void test_link_duplicates_and_loops(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l1", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l2", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/back", "/sub/x"));
    assert_string_equal(rec_ls("/sub/x"), "a d l1 l2");
    assert_string_equal(rec_ls("/sub/y"), "a d back");
}

/* SL1: an existing name of any kind is EEXIST, before allow_link. */
static void test_link_name_exists_eexist(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_clear();
    assert_rc(cfs_symlink(NULL, "/sub/x/a", "/sub/y"), -EEXIST);
    assert_rc(cfs_symlink(NULL, "/sub/x/d", "/sub/y"), -EEXIST);
    assert_rc(cfs_symlink(NULL, "/sub/x/l", "/sub/y"), -EEXIST);
    assert_rc(cfs_symlink(NULL, "/sub/y", "/sub/x"), -EEXIST);
    rec_assert_no_trace();
}

/* SL1, SL2, docs/DESIGN.md §9: bad link names, and links in the root. */
static void test_link_bad_names_and_root(void **state)
{
    char path[512];

    (void)state;
    tree();
    (void)snprintf(path, sizeof(path), "/sub/x/%0256d", 0);
    assert_rc(cfs_symlink(NULL, path, "/sub/y"), -ENAMETOOLONG);
    assert_rc(cfs_symlink(NULL, "/sub/x/.", "/sub/y"), -EINVAL);
    assert_rc(cfs_symlink(NULL, "/sub/x/..", "/sub/y"), -EINVAL);
    assert_rc(cfs_symlink(NULL, "/sub/x/a\x01", "/sub/y"), -EINVAL);
    assert_rc(cfs_symlink(NULL, "/l", "/sub"), -EPERM);
    assert_rc(cfs_symlink(NULL, "/sub/nope/l", "/sub/y"), -ENOENT);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/"), "sub other");
}

/* SL4: default groups host links when their type allows. */
static void test_link_in_default_group(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/d/l", "/sub/y"));
    rec_assert_trace("allow_link(d,y)");
    assert_string_equal(rec_ls("/sub/x/d"), "l");
}

/* SL5, RL2: the target string is resolved at creation, through links, and
 * not kept: readlink gives the target's canonical path. */
static void test_link_target_resolved_canonically(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l1", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l2", "/sub/x/l1"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l3", "/sub/x/l1/d/"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l4", "/sub/y/"));
    rec_assert_trace("allow_link(x,y)",
                     "allow_link(y,y)",
                     "allow_link(y,d)",
                     "allow_link(y,y)");
    expect_link("/sub/y/l2", "/sub/y");
    expect_link("/sub/y/l3", "/sub/y/d");
    expect_link("/sub/y/l4", "/sub/y");
}

/* SL5, limits.h: resolving a target follows at most 40 links; one more is
 * ELOOP. */
static void test_link_target_eloop(void **state)
{
    char path[1024];
    size_t len;

    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/self", "/sub/x"));
    memcpy(path, "/sub/x", sizeof("/sub/x"));
    len = strlen(path);
    for (int i = 0; i < CFS_SYMLINK_FOLLOW_MAX; i++) {
        memcpy(path + len, "/self", sizeof("/self"));
        len += 5;
    }
    assert_ok(cfs_symlink(NULL, "/sub/y/ok", path));
    expect_link("/sub/y/ok", "/sub/x");
    memcpy(path + len, "/self", sizeof("/self"));
    rec_clear();
    assert_rc(cfs_symlink(NULL, "/sub/y/loop", path), -ELOOP);
    rec_assert_no_trace();
}

/* SL8, docs/STYLE.md §12: under allocation failure a symlink either stands or
 * fails ENOMEM; if allow_link had accepted, drop_link undoes it. */
static void test_link_oom_loop(void **state)
{
    long n;
    int rc;

    (void)state;
    tree();
    for (n = 1; n < 10000; n++) {
        rec_clear();
        rec_alloc_fail_nth(n);
        rc = cfs_symlink(NULL, "/sub/x/l", "/sub/y");
        rec_alloc_fail_nth(0);
        if (rc == 0) {
            expect_link("/sub/x/l", "/sub/y");
            assert_ok(cfs_unlink(NULL, "/sub/x/l"));
            if (!rec_alloc_failed()) {
                break;
            }
            continue;
        }
        assert_rc(rc, -ENOMEM);
        assert_string_equal(rec_ls("/sub/x"), "a d");
        if (rec_index("allow_link(x,y)", 0) >= 0) {
            rec_assert_trace("allow_link(x,y)", "drop_link(x,y)");
        } else {
            rec_assert_no_trace();
        }
    }
}

/* UL4, T9, RL3: unlink removes the link, then drop_link runs without
 * su_mutex, and the target can go. */
static void test_unlink_calls_drop_link(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_rc(cfs_rmdir(NULL, "/sub/y"), -EBUSY);
    rec_clear();
    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    rec_assert_trace("drop_link(x,y)");
    rec_assert_locked("drop_link(x,y)", 0);
    assert_string_equal(rec_ls("/sub/x"), "a d");
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
}

/* UL4, M5: without drop_link, unlink still works. */
static void test_unlink_without_drop_link(void **state)
{
    (void)state;
    tree();
    G->no_drop_link = true;
    rec_type_build(G);
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    rec_clear();
    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    rec_assert_no_trace();
}

/* UL1, UL2, UL3, F2: missing ENOENT, directory EISDIR, attribute EPERM,
 * anything in the root EPERM; nothing called. */
static void test_unlink_errors(void **state)
{
    (void)state;
    tree();
    assert_rc(cfs_unlink(NULL, "/sub/x/nope"), -ENOENT);
    assert_rc(cfs_unlink(NULL, "/sub/x/d"), -EISDIR);
    assert_rc(cfs_unlink(NULL, "/sub/y"), -EISDIR);
    assert_rc(cfs_unlink(NULL, "/sub/x/a"), -EPERM);
    assert_rc(cfs_unlink(NULL, "/sub"), -EPERM);
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub/x"), "a d");
}

/* RL1-RL3: readlink of something that is not a link is refused. */
static void test_readlink_errors(void **state)
{
    char *target = NULL;

    (void)state;
    tree();
    assert_rc(cfs_readlink("/sub/x/nope", &target), -ENOENT);
    assert_true(cfs_readlink("/sub/x", &target) < 0);
    assert_true(cfs_readlink("/sub/x/a", &target) < 0);
    assert_null(target);
}

/* Used by: each target keeps its links (the reverse index behind
 * cfs_links_to), through symlink, unlink, rmdir and a transaction undone
 * either way; links to a default group count for its parent (RM6). */
static void test_links_to_index(void **state)
{
    struct cfs_txn *txn;

    (void)state;
    tree();
    assert_string_equal(rec_links_to("/sub/y"), "");
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/x/d/m", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/l2", "/sub/x/d"));
    assert_string_equal(rec_links_to("/sub/y"), "/sub/x/d/m /sub/x/l");
    assert_string_equal(rec_links_to("/sub/x"), "/sub/y/l2");
    assert_string_equal(rec_links_to("/sub/x/d"), "/sub/y/l2");
    assert_string_equal(rec_links_to("/other/o"), "");
    assert_rc(cfs_links_to("/sub/x/a", &(char **){NULL}, &(size_t){0}),
              -ENOTDIR);

    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    assert_string_equal(rec_links_to("/sub/y"), "/sub/x/d/m");

    /* undone: the unlinked link is back, the new one gone */
    txn = rec_txn_begin();
    assert_ok(cfs_unlink(txn, "/sub/x/d/m"));
    assert_ok(cfs_symlink(txn, "/sub/x/l3", "/sub/y"));
    assert_string_equal(rec_links_to("/sub/y"), "/sub/x/l3");
    assert_ok(rec_txn_abort(txn));
    assert_string_equal(rec_links_to("/sub/y"), "/sub/x/d/m");

    /* kept: as done */
    txn = rec_txn_begin();
    assert_ok(cfs_symlink(txn, "/sub/x/l3", "/sub/y"));
    rec_txn_commit(txn);
    assert_string_equal(rec_links_to("/sub/y"), "/sub/x/d/m /sub/x/l3");

    /* the holder goes: its links with it */
    assert_ok(cfs_unlink(NULL, "/sub/x/d/m"));
    assert_ok(cfs_unlink(NULL, "/sub/x/l3"));
    assert_rc(cfs_rmdir(NULL, "/sub/x"), -EBUSY); /* y/l2 -> x/d */
    assert_ok(cfs_unlink(NULL, "/sub/y/l2"));
    assert_string_equal(rec_links_to("/sub/x"), "");
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    assert_string_equal(rec_links_to("/sub/y"), "");
    assert_rc(cfs_links_to("/sub/x", &(char **){NULL}, &(size_t){0}), -ENOENT);

    /* an rmdir undone brings its item back unlinked; links made again */
    txn = rec_txn_begin();
    assert_ok(cfs_rmdir(txn, "/other/o"));
    assert_ok(rec_txn_abort(txn));
    assert_ok(cfs_symlink(NULL, "/sub/y/o", "/other/o"));
    assert_string_equal(rec_links_to("/other/o"), "/sub/y/o");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_link_creates_entry),
        REC_TEST(test_links_to_index),
        REC_TEST(test_link_allow_link_arguments),
        REC_TEST(test_link_without_allow_link_eperm),
        REC_TEST(test_link_target_errors),
        REC_TEST(test_link_allow_link_refuses),
        REC_TEST(test_link_no_type_checks),
        REC_TEST(test_link_duplicates_and_loops),
        REC_TEST(test_link_name_exists_eexist),
        REC_TEST(test_link_bad_names_and_root),
        REC_TEST(test_link_in_default_group),
        REC_TEST(test_link_target_resolved_canonically),
        REC_TEST(test_link_target_eloop),
        REC_TEST(test_link_oom_loop),
        REC_TEST(test_unlink_calls_drop_link),
        REC_TEST(test_unlink_without_drop_link),
        REC_TEST(test_unlink_errors),
        REC_TEST(test_readlink_errors),
    };

    return rec_run("core-link", tests);
}
