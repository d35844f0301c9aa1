// SPDX-License-Identifier: MIT
/*
 * test-core-txn.c - change records, transactions, undo and revisions.
 *
 * docs/DESIGN.md §3: every successful mutation produces one change record
 * (op, path, argument, old value); a batch either stands or is undone by
 * inverse operations in reverse order through the same callbacks. Section
 * 9 pins revisions and the written-values export.
 */
#include "recorder.h"

/*
 *   sub (S)  make_group -> G
 *   G        a 0644 "a0\n", b 0644, wo 0200, ro 0444; binary blob;
 *            make_item -> I; links
 *   I        attribute v
 */
static struct rec_type *S, *G, *I;

static void tree(void)
{
    rec_tree(&S, &G, &I);
    rec_attr(G, "a", 0644, 0);
    rec_attr(G, "b", 0644, 0);
    rec_attr(G, "wo", 0200, REC_NO_SHOW);
    rec_attr(G, "ro", 0444, REC_NO_STORE);
    G->attrs[0].init = "a0\n";
    rec_bin(G, "blob", 0644, 0);
    rec_register("sub", S);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    rec_clear();
}

static const struct cfs_change *changes(struct cfs_txn *txn, size_t *n)
{
    return cfs_txn_changes(txn, n);
}

static uint64_t rev_of(const char *path)
{
    struct cfs_entry e;
    uint64_t rev;

    assert_ok(cfs_stat(path, &e));
    rev = e.revision;
    cfs_entry_done(&e);
    return rev;
}

/* docs/DESIGN.md §3: one record per successful mutation, in order, with op,
 * path and argument; all carry the transaction's one revision. */
static void test_txn_one_record_per_mutation(void **state)
{
    struct cfs_txn *txn;
    const struct cfs_change *ch;
    size_t n = 0;
    uint64_t before;

    (void)state;
    tree();
    before = cfs_revision();
    txn = rec_txn_begin();
    assert_int_equal(cfs_txn_revision(txn), 0);
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_ok(rec_txn_store_str(txn, "/sub/z/a", "1\n"));
    assert_ok(cfs_symlink(txn, "/sub/z/l", "/sub/x/"));
    assert_ok(cfs_unlink(txn, "/sub/z/l"));
    assert_ok(cfs_mkdir(txn, "/sub/z/i"));
    assert_ok(cfs_rmdir(txn, "/sub/z/i"));
    ch = changes(txn, &n);
    assert_int_equal(n, 6);
    assert_int_equal(ch[0].op, CFS_OP_MKDIR);
    assert_string_equal(ch[0].path, "/sub/z");
    assert_int_equal(ch[1].op, CFS_OP_STORE);
    assert_string_equal(ch[1].path, "/sub/z/a");
    assert_int_equal(ch[1].arg_len, 2);
    assert_memory_equal(ch[1].arg, "1\n", 2);
    assert_int_equal(ch[2].op, CFS_OP_SYMLINK);
    assert_string_equal(ch[2].path, "/sub/z/l");
    assert_string_equal(ch[2].arg, "/sub/x");
    assert_int_equal(ch[3].op, CFS_OP_UNLINK);
    assert_string_equal(ch[3].path, "/sub/z/l");
    assert_string_equal(ch[3].arg, "/sub/x");
    assert_int_equal(ch[4].op, CFS_OP_MKDIR);
    assert_string_equal(ch[4].path, "/sub/z/i");
    assert_int_equal(ch[5].op, CFS_OP_RMDIR);
    assert_string_equal(ch[5].path, "/sub/z/i");
    assert_true(cfs_txn_revision(txn) > before);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ch[i].revision, cfs_txn_revision(txn));
    }
    rec_txn_commit(txn);
    assert_int_equal(cfs_revision(), before + 1);
    assert_string_equal(cfs_op_name(CFS_OP_MKDIR), "mkdir");
    assert_string_equal(cfs_op_name(CFS_OP_RENAME), "rename");
}

/* docs/DESIGN.md §3, RM9: a failed operation adds no record and leaves the
 * transaction usable. */
static void test_txn_no_record_on_failure(void **state)
{
    struct cfs_txn *txn;
    size_t n = 0;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_rc(cfs_mkdir(txn, "/sub/z"), -EEXIST);
    assert_rc(cfs_rmdir(txn, "/sub/nope"), -ENOENT);
    assert_rc(rec_txn_store_str(txn, "/sub/z/ro", "1"), -EACCES);
    assert_rc(cfs_symlink(txn, "/sub/z/l", "/sub/nope"), -ENOENT);
    assert_rc(cfs_unlink(txn, "/sub/z/a"), -EPERM);
    assert_rc(cfs_rename(txn, "/sub/z", "/sub/w"), -EPERM);
    G->attrs[1].store_err = -EINVAL;
    assert_rc(rec_txn_store_str(txn, "/sub/z/b", "1"), -EINVAL);
    changes(txn, &n);
    assert_int_equal(n, 1);
    assert_ok(cfs_mkdir(txn, "/sub/w"));
    changes(txn, &n);
    assert_int_equal(n, 2);
    rec_txn_commit(txn);
    assert_string_equal(rec_ls("/sub"), "x y z w");
}

/* docs/DESIGN.md §3, cfs.h: a store records the previous written value, or for
 * the first store what show() returned; write-only and binary stores say so. */
static void test_txn_store_old_values(void **state)
{
    struct cfs_txn *txn;
    const struct cfs_change *ch;
    size_t n = 0;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(rec_txn_store_str(txn, "/sub/x/a", "first"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/a", "second"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/wo", "secret"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/blob", "bin"));
    ch = changes(txn, &n);
    assert_int_equal(n, 4);
    assert_true(ch[0].has_old);
    assert_int_equal(ch[0].old_len, 3);
    assert_memory_equal(ch[0].old, "a0\n", 3);
    assert_true(ch[1].has_old);
    assert_int_equal(ch[1].old_len, 5);
    assert_memory_equal(ch[1].old, "first", 5);
    assert_false(ch[0].write_only);
    assert_false(ch[0].binary);
    assert_true(ch[2].write_only);
    assert_false(ch[2].has_old);
    assert_true(ch[3].binary);
    rec_txn_commit(txn);
}

/* docs/DESIGN.md §3: an rmdir record carries the values that had been written
 * to the item, in write order. */
static void test_txn_rmdir_record_dropped_values(void **state)
{
    struct cfs_txn *txn;
    const struct cfs_change *ch;
    size_t n = 0;

    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/y/b", "B"));
    assert_ok(rec_store_str("/sub/y/a", "A"));
    txn = rec_txn_begin();
    assert_ok(cfs_rmdir(txn, "/sub/y"));
    ch = changes(txn, &n);
    assert_int_equal(n, 1);
    assert_int_equal(ch[0].op, CFS_OP_RMDIR);
    assert_int_equal(ch[0].n_dropped, 2);
    assert_string_equal(ch[0].dropped[0].name, "b");
    assert_string_equal(ch[0].dropped[0].data, "B");
    assert_string_equal(ch[0].dropped[1].name, "a");
    assert_string_equal(ch[0].dropped[1].data, "A");
    rec_txn_commit(txn);
}

/* docs/DESIGN.md §9: written values in write order, the last write of each
 * attribute counting; write-only values included; refused stores not. */
static void test_txn_written_values(void **state)
{
    (void)state;
    tree();
    assert_string_equal(rec_values("/sub/x"), "");
    assert_ok(rec_store_str("/sub/x/b", "1"));
    assert_ok(rec_store_str("/sub/x/a", "2"));
    assert_ok(rec_store_str("/sub/x/wo", "3"));
    assert_string_equal(rec_values("/sub/x"), "b=1 a=2 wo=3");
    G->attrs[1].store_err = -EINVAL;
    assert_rc(rec_store_str("/sub/x/b", "9"), -EINVAL);
    assert_string_equal(rec_values("/sub/x"), "b=1 a=2 wo=3");
    G->attrs[1].store_err = 0;
    assert_ok(rec_store_str("/sub/x/b", "4"));
    assert_string_equal(rec_values("/sub/x"), "a=2 wo=3 b=4");
    assert_string_equal(rec_values("/sub/nope"), "E-ENOENT");
}

struct snapshot {
    char ls_sub[256], ls_x[256], ls_y[256], vals_x[256], vals_y[256];
    uint64_t rev_sub, rev_x, rev_y, rev_xa;
};

static void snap(struct snapshot *s)
{
    (void)snprintf(s->ls_sub, sizeof(s->ls_sub), "%s", rec_ls("/sub"));
    (void)snprintf(s->ls_x, sizeof(s->ls_x), "%s", rec_ls("/sub/x"));
    (void)snprintf(s->ls_y, sizeof(s->ls_y), "%s", rec_ls("/sub/y"));
    (void)snprintf(s->vals_x, sizeof(s->vals_x), "%s", rec_values("/sub/x"));
    (void)snprintf(s->vals_y, sizeof(s->vals_y), "%s", rec_values("/sub/y"));
    s->rev_sub = rev_of("/sub");
    s->rev_x = rev_of("/sub/x");
    s->rev_y = rev_of("/sub/y");
    s->rev_xa = rev_of("/sub/x/a");
}

static void assert_snap_equal(const struct snapshot *a,
                              const struct snapshot *b)
{
    assert_string_equal(a->ls_sub, b->ls_sub);
    assert_string_equal(a->ls_x, b->ls_x);
    assert_string_equal(a->ls_y, b->ls_y);
    assert_string_equal(a->vals_x, b->vals_x);
    assert_string_equal(a->vals_y, b->vals_y);
    assert_int_equal(a->rev_sub, b->rev_sub);
    assert_int_equal(a->rev_x, b->rev_x);
    assert_int_equal(a->rev_y, b->rev_y);
    assert_int_equal(a->rev_xa, b->rev_xa);
}

/* docs/DESIGN.md §3: abort undoes every change, newest first: listings, written
 * values and node revisions are as before. */
static void test_txn_abort_restores_tree(void **state)
{
    struct snapshot before, after;
    struct cfs_txn *txn;

    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/x/a", "x1"));
    assert_ok(rec_store_str("/sub/y/b", "y1"));
    assert_ok(rec_store_str("/sub/y/a", "y2"));
    assert_ok(cfs_symlink(NULL, "/sub/x/keep", "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/y/i"));
    assert_ok(rec_store_str("/sub/y/i/v", "iv"));
    assert_ok(cfs_unlink(NULL, "/sub/x/keep"));
    snap(&before);
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/a", "x2"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/b", "new"));
    assert_ok(cfs_symlink(txn, "/sub/x/l", "/sub/z"));
    assert_ok(cfs_rmdir(txn, "/sub/y/i"));
    assert_ok(cfs_rmdir(txn, "/sub/y"));
    assert_string_equal(rec_ls("/sub"), "x z");
    assert_ok(rec_txn_abort(txn));
    snap(&after);
    assert_snap_equal(&before, &after);
    assert_string_equal(rec_cat("/sub/x/a"), "x1");
    assert_string_equal(rec_cat("/sub/y/i/v"), "iv");
    assert_string_equal(rec_values("/sub/y/i"), "v=iv");
}

/* docs/DESIGN.md §3: the inverse operations run newest first through the same
 * callbacks: unlink (drop_link), store of the old value, rmdir. */
static void test_txn_abort_inverse_order(void **state)
{
    struct cfs_txn *txn;
    int unlink_at, store_at, rmdir_at;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/a", "changed"));
    assert_ok(cfs_symlink(txn, "/sub/z/l", "/sub/x"));
    rec_clear();
    assert_ok(rec_txn_abort(txn));
    unlink_at = rec_index("drop_link(z,x)", 0);
    store_at = rec_index("store(x,a,3)", 0);
    rmdir_at = rec_index("disconnect_notify(sub,z)", 0);
    assert_true(unlink_at >= 0);
    assert_true(store_at > unlink_at);
    assert_true(rmdir_at > store_at);
    assert_int_equal(rec_index("drop_item(sub,z)", 0), rmdir_at + 1);
    assert_true(rec_index("release(z)", 0) > rmdir_at + 1);
    assert_string_equal(rec_cat("/sub/x/a"), "a0\n");
    assert_string_equal(rec_ls("/sub"), "x y");
}

/* docs/DESIGN.md §3: undoing an rmdir makes the item again through make_* and
 * replays its written values in their order. */
static void test_txn_abort_rmdir_recreates(void **state)
{
    struct cfs_txn *txn;

    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/y/b", "B"));
    assert_ok(rec_store_str("/sub/y/a", "A"));
    txn = rec_txn_begin();
    assert_ok(cfs_rmdir(txn, "/sub/y"));
    rec_clear();
    assert_ok(rec_txn_abort(txn));
    assert_int_equal(rec_index("make_group(sub,y)", 0), 0);
    assert_true(rec_index("store(y,b,1)", 0) > 0);
    assert_true(rec_index("store(y,a,1)", 0) > rec_index("store(y,b,1)", 0));
    assert_string_equal(rec_values("/sub/y"), "b=B a=A");
    assert_string_equal(rec_ls("/sub"), "x y");
}

/* cfs.h: an inverse step a callback now refuses is reported; the other
 * steps still run. */
static void test_txn_abort_reports_refusal(void **state)
{
    struct cfs_txn *txn;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_ok(rec_txn_store_str(txn, "/sub/x/b", "new"));
    G->attrs[1].store_err = -EBUSY;
    assert_rc(rec_txn_abort(txn), -EBUSY);
    G->attrs[1].store_err = 0;
    assert_string_equal(rec_ls("/sub"), "x y");
}

/* cfs.h, SL7: undoing an unlink makes the link again through allow_link.
 * When the item refuses now, abort reports the refusal and the link stays
 * gone: the item did not take it back, so neither the tree nor the target's
 * link count may say it is there (the target can be removed). */
static void test_txn_abort_unlink_refused_by_allow_link(void **state)
{
    struct cfs_txn *txn;
    char *target = NULL;

    (void)state;
    tree();
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_string_equal(rec_ls("/sub/x"), "a b wo ro blob l");
    txn = rec_txn_begin();
    assert_ok(cfs_unlink(txn, "/sub/x/l"));
    G->allow_err = -EACCES;
    rec_clear();
    assert_rc(rec_txn_abort(txn), -EACCES);
    G->allow_err = 0;
    rec_assert_trace("allow_link(x,y)");
    assert_string_equal(rec_ls("/sub/x"), "a b wo ro blob");
    assert_rc(cfs_readlink("/sub/x/l", &target), -ENOENT);
    assert_null(target);
    assert_ok(cfs_rmdir(NULL, "/sub/y")); /* no link left that holds it */
}

/* cfs.h: commit keeps every change. */
static void test_txn_commit_keeps(void **state)
{
    struct cfs_txn *txn;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/z"));
    assert_ok(rec_txn_store_str(txn, "/sub/z/a", "kept"));
    rec_txn_commit(txn);
    assert_string_equal(rec_ls("/sub"), "x y z");
    assert_string_equal(rec_values("/sub/z"), "a=kept");
    cfs_txn_commit(NULL);
}

/* cfs.h: a sealed transaction takes no more operations and releases the
 * mutation lock; it can still be aborted. */
static void test_txn_seal(void **state)
{
    struct cfs_txn *a, *b;

    (void)state;
    tree();
    a = rec_txn_begin();
    assert_ok(cfs_mkdir(a, "/sub/z"));
    cfs_txn_seal(a);
    assert_true(cfs_mkdir(a, "/sub/w") < 0);
    b = rec_txn_begin();
    assert_ok(cfs_mkdir(b, "/sub/w"));
    cfs_txn_seal(b);
    assert_ok(rec_txn_abort(b));
    assert_ok(rec_txn_abort(a));
    assert_string_equal(rec_ls("/sub"), "x y");
}

/* docs/DESIGN.md §4, §9: one global revision, +1 per mutation or batch; a node
 * carries the revision that last changed it (its mkdir, a store of its
 * attribute, a child added or removed, a link in it); an attribute the
 * revision of its last store. */
static void test_txn_revisions(void **state)
{
    uint64_t r0, r1, r2;
    struct cfs_txn *txn;

    (void)state;
    tree();
    r0 = cfs_revision();
    assert_ok(cfs_mkdir(NULL, "/sub/z"));
    r1 = cfs_revision();
    assert_int_equal(r1, r0 + 1);
    assert_int_equal(rev_of("/sub/z"), r1);
    assert_int_equal(rev_of("/sub"), r1);
    assert_int_equal(rev_of("/sub/z/a"), r1);
    assert_ok(rec_store_str("/sub/z/a", "v"));
    r2 = cfs_revision();
    assert_int_equal(r2, r1 + 1);
    assert_int_equal(rev_of("/sub/z/a"), r2);
    assert_int_equal(rev_of("/sub/z"), r2);
    assert_int_equal(rev_of("/sub/z/b"), r1);
    assert_int_equal(rev_of("/sub"), r1);
    assert_ok(cfs_symlink(NULL, "/sub/z/l", "/sub/x"));
    assert_int_equal(rev_of("/sub/z"), r2 + 1);
    txn = rec_txn_begin();
    assert_ok(cfs_mkdir(txn, "/sub/w"));
    assert_ok(cfs_mkdir(txn, "/sub/v"));
    rec_txn_commit(txn);
    assert_int_equal(cfs_revision(), r2 + 2);
    assert_int_equal(rev_of("/sub/w"), r2 + 2);
    assert_int_equal(rev_of("/sub/v"), r2 + 2);
    txn = rec_txn_begin();
    rec_txn_commit(txn);
    assert_int_equal(cfs_revision(), r2 + 2);
    cfs_revision_set(1000);
    assert_int_equal(cfs_revision(), 1000);
    assert_ok(cfs_mkdir(NULL, "/sub/u"));
    assert_int_equal(cfs_revision(), 1001);
}

static void reenter_hook(const char *cb,
                         struct config_item *item,
                         struct config_item *other,
                         void *data)
{
    int *rcs = data;
    struct cfs_txn *txn = NULL;

    (void)item;
    (void)other;
    if (strcmp(cb, "store") == 0 || strcmp(cb, "make_group") == 0 ||
        strcmp(cb, "allow_link") == 0) {
        rcs[0] = cfs_txn_begin(&txn);
        rcs[1] = cfs_mkdir(NULL, "/sub/inner");
        rcs[2] = cfs_rmdir(NULL, "/sub/y");
        rcs[3] = rec_store_str("/sub/y/a", "1");
        if (txn) {
            cfs_txn_commit(txn);
        }
    }
}

/* M24, T4, cfs.h: a callback cannot start a transaction or a mutation:
 * -EDEADLK, whether from make_group, store or allow_link. */
static void test_txn_callbacks_cannot_mutate(void **state)
{
    int rcs[4];

    (void)state;
    tree();
    for (int k = 0; k < 3; k++) {
        memset(rcs, 0, sizeof(rcs));
        rec_set_hook(reenter_hook, rcs);
        if (k == 0) {
            assert_ok(cfs_mkdir(NULL, "/sub/z"));
        } else if (k == 1) {
            assert_ok(rec_store_str("/sub/x/a", "v"));
        } else {
            assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
        }
        rec_set_hook(NULL, NULL);
        assert_rc(rcs[0], -EDEADLK);
        assert_rc(rcs[1], -EDEADLK);
        assert_rc(rcs[2], -EDEADLK);
        assert_rc(rcs[3], -EDEADLK);
    }
    assert_string_equal(rec_ls("/sub"), "x y z");
}

/* ---- committed reads (docs/DESIGN.md §6) --------------------------------- */

static void *other_thread_write(void *arg)
{
    (void)arg;
    assert_ok(cfs_write(NULL, "/sub/x/a", "7", 1));
    return NULL;
}

static void *other_thread_commit(void *arg)
{
    rec_txn_commit(arg);
    return NULL;
}

static void *other_thread_abort(void *arg)
{
    (void)rec_txn_abort(arg);
    return NULL;
}

static int hook_calls;
static void count_hook(void *arg)
{
    (void)arg;
    __atomic_fetch_add(&hook_calls, 1, __ATOMIC_SEQ_CST);
}

/* A read that saw a transaction not yet committed may not answer until it
 * is; once it is, it may; the hook is told when it ends. */
static void test_read_waits_for_open_txn(void **state)
{
    struct cfs_read_mark m;
    struct cfs_txn *txn;
    pthread_t t;

    (void)state;
    tree();
    assert_ok(cfs_read_hook_add(count_hook, NULL));
    hook_calls = 0;
    txn = rec_txn_begin();
    assert_ok(cfs_write(txn, "/sub/x/a", "5", 1));
    cfs_txn_seal(txn); /* as the store does: the lock goes, it stays open */
    cfs_read_begin(&m);
    assert_string_equal(rec_cat("/sub/x/a"), "5");
    assert_int_equal(cfs_read_end(&m), -EINPROGRESS);
    assert_int_equal(cfs_read_end(&m), -EINPROGRESS);
    assert_int_equal(pthread_create(&t, NULL, other_thread_commit, txn), 0);
    assert_int_equal(cfs_read_wait(&m), 0); /* blocks until committed */
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(cfs_read_end(&m), 0);
    assert_true(__atomic_load_n(&hook_calls, __ATOMIC_SEQ_CST) > 0);
    cfs_read_hook_remove(count_hook, NULL);

    /* a transaction that began after the read ended does not hold it */
    cfs_read_begin(&m);
    assert_int_equal(cfs_read_end(&m), 0);
    txn = rec_txn_begin();
    assert_ok(cfs_write(txn, "/sub/x/a", "6", 1));
    cfs_txn_seal(txn);
    assert_int_equal(cfs_read_end(&m), 0);
    rec_txn_commit(txn);
}

/* What a read saw was undone by another thread: it reads again. */
static void test_read_again_after_undo(void **state)
{
    struct cfs_read_mark m;
    struct cfs_txn *txn;
    pthread_t t;

    (void)state;
    tree();
    txn = rec_txn_begin();
    assert_ok(cfs_write(txn, "/sub/x/a", "5", 1));
    cfs_txn_seal(txn);
    cfs_read_begin(&m);
    assert_string_equal(rec_cat("/sub/x/a"), "5");
    assert_int_equal(cfs_read_end(&m), -EINPROGRESS);
    assert_int_equal(pthread_create(&t, NULL, other_thread_abort, txn), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(cfs_read_end(&m), -EAGAIN);
    assert_string_equal(rec_cat("/sub/x/a"), "a0\n");
}

/* Another thread changed the tree while the read ran: the read may be
 * torn (a revision from before, a value from after), it reads again. Its
 * own thread's changes tear nothing. */
static void test_read_torn_by_other_thread(void **state)
{
    struct cfs_read_mark m;
    pthread_t t;

    (void)state;
    tree();
    cfs_read_begin(&m);
    assert_string_equal(rec_cat("/sub/x/a"), "a0\n");
    assert_int_equal(pthread_create(&t, NULL, other_thread_write, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(cfs_read_end(&m), -EAGAIN);

    cfs_read_begin(&m);
    assert_string_equal(rec_cat("/sub/x/a"), "7");
    assert_ok(cfs_write(NULL, "/sub/x/a", "8", 1));
    assert_int_equal(cfs_read_end(&m), 0);
}

static uint64_t created_of(const char *path)
{
    struct cfs_entry e;
    uint64_t created;

    assert_ok(cfs_stat(path, &e));
    created = e.created;
    cfs_entry_done(&e);
    return created;
}

/* WR7, RD6, cfs.h: an entry tells which incarnation of its name it is
 * (the revision its node, an attribute's directory, was made at): a store
 * keeps it, an item removed and made again under its name has a new one,
 * and an undone removal puts the old one back (the mount's open files
 * compare it). */
static void test_txn_created_identity(void **state)
{
    struct cfs_txn *txn;
    uint64_t y, again;

    (void)state;
    tree();
    y = created_of("/sub/y");
    assert_int_equal(created_of("/sub/y/a"), y);
    assert_int_equal(created_of("/sub/y/blob"), y);
    assert_ok(rec_store_str("/sub/y/a", "v"));
    assert_int_equal(created_of("/sub/y/a"), y);
    assert_int_equal(created_of("/sub/y"), y);
    txn = rec_txn_begin();
    assert_ok(cfs_rmdir(txn, "/sub/y"));
    assert_ok(rec_txn_abort(txn));
    assert_int_equal(created_of("/sub/y"), y);
    assert_int_equal(created_of("/sub/y/a"), y);
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    again = created_of("/sub/y");
    assert_true(again != y);
    assert_int_equal(created_of("/sub/y/a"), again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_txn_one_record_per_mutation),
        REC_TEST(test_txn_no_record_on_failure),
        REC_TEST(test_txn_store_old_values),
        REC_TEST(test_txn_rmdir_record_dropped_values),
        REC_TEST(test_txn_written_values),
        REC_TEST(test_txn_abort_restores_tree),
        REC_TEST(test_txn_abort_inverse_order),
        REC_TEST(test_txn_abort_rmdir_recreates),
        REC_TEST(test_txn_abort_reports_refusal),
        REC_TEST(test_txn_abort_unlink_refused_by_allow_link),
        REC_TEST(test_txn_commit_keeps),
        REC_TEST(test_txn_seal),
        REC_TEST(test_txn_revisions),
        REC_TEST(test_txn_callbacks_cannot_mutate),
        REC_TEST(test_read_waits_for_open_txn),
        REC_TEST(test_read_again_after_undo),
        REC_TEST(test_read_torn_by_other_thread),
        REC_TEST(test_txn_created_identity),
    };

    return rec_run("core-txn", tests);
}
