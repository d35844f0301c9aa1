// SPDX-License-Identifier: MIT
/*
 * test-core-group.c - groups the kernel side adds: default groups of a
 * subsystem, registered groups, unregistration, and the tree observer.
 *
 * Covers docs/configfs-rules.md M13, M15, T7, T8 and the observer contract of
 * cfs.h (docs/DESIGN.md §6 replays stored state through it).
 */
#include "recorder.h"

/*
 *   sub (S)   attribute sa; default group sd (SD); make_group -> G
 *   G         attribute a; make_item -> I; links
 *   I         attribute v; links
 *   R         the type of registered groups: make_item -> I
 */
static struct rec_type *S, *SD, *G, *I, *R;

static struct rec_obj *tree(void)
{
    rec_tree(&S, &G, &I);
    SD = rec_type_new("sd");
    R = rec_type_new("r");
    rec_attr(S, "sa", 0644, 0);
    rec_default(S, "sd", SD);
    rec_attr(G, "a", 0644, 0);
    I->links = true;
    R->make = REC_MAKE_ITEM;
    R->child = I;
    return rec_register("sub", S);
}

/* M13, M9: a subsystem shows its attributes and default groups. */
static void test_group_subsystem_default_groups(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    assert_string_equal(rec_ls("/sub"), "sa sd");
    assert_ok(cfs_stat("/sub/sd", &e));
    assert_true(e.default_group);
    cfs_entry_done(&e);
    assert_rc(cfs_rmdir(NULL, "/sub/sd"), -EPERM);
}

/* M13, docs/DESIGN.md §2: the seed's default-group array on a subsystem. */
static void test_group_subsystem_seed_default_groups(void **state)
{
    struct rec_type *s = rec_type_new("seed");
    struct rec_type *d = rec_type_new("d");

    (void)state;
    rec_default(s, "d1", d);
    rec_default(s, "d2", d);
    s->seed_defaults = true;
    rec_register("seed", s);
    assert_string_equal(rec_ls("/seed"), "d1 d2");
}

/* M15, RM3: a group registered at run time appears under a live group, is
 * a default group for users (rmdir EPERM), accepts mkdir per its type, and
 * goes with configfs_unregister_group(). */
static void test_group_register_group(void **state)
{
    struct rec_obj *sub = tree();
    struct rec_obj *reg;
    struct cfs_entry e;

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    reg = rec_obj_new(R, "reg", sub);
    rec_clear();
    assert_ok(configfs_register_group(rec_group("x"), &reg->u.group));
    rec_assert_no_trace();
    assert_string_equal(rec_ls("/sub/x"), "a reg");
    assert_ok(cfs_stat("/sub/x/reg", &e));
    assert_true(e.default_group);
    assert_false(e.user_created);
    cfs_entry_done(&e);
    assert_ptr_equal(reg->u.group.cg_item.ci_parent, rec_item("x"));
    assert_rc(cfs_rmdir(NULL, "/sub/x/reg"), -EPERM);
    assert_ok(cfs_mkdir(NULL, "/sub/x/reg/k"));
    assert_ok(cfs_rmdir(NULL, "/sub/x/reg/k"));
    rec_clear();
    configfs_unregister_group(&reg->u.group);
    assert_string_equal(rec_ls("/sub/x"), "a");
    assert_null(reg->u.group.cg_item.ci_parent);
    config_group_put(&reg->u.group);
    rec_assert_trace("release(reg)");
}

/* M15: registration under the subsystem itself, and a name that is taken
 * is EEXIST. */
static void test_group_register_group_name_taken(void **state)
{
    struct rec_obj *sub = tree();
    struct rec_obj *reg, *dup;

    (void)state;
    reg = rec_obj_new(R, "reg", sub);
    dup = rec_obj_new(R, "sd", sub);
    assert_ok(configfs_register_group(&sub->u.group, &reg->u.group));
    assert_rc(configfs_register_group(&sub->u.group, &dup->u.group), -EEXIST);
    assert_string_equal(rec_ls("/sub"), "sa sd reg");
    configfs_unregister_group(&reg->u.group);
    config_group_put(&reg->u.group);
    config_group_put(&dup->u.group);
}

/* M15: configfs_register_default_group() allocates, names and registers a
 * group; configfs_unregister_default_group() removes and frees it. */
static void test_group_register_default_group(void **state)
{
    struct rec_obj *sub = tree();
    struct rec_type *k = rec_type_new("k");
    struct config_group *g;
    struct cfs_entry e;

    (void)state;
    k->no_release = true;
    rec_attr(k, "ka", 0644, 0);
    rec_type_build(k);
    g = configfs_register_default_group(&sub->u.group, "kg", &k->ct);
    assert_false(IS_ERR_OR_NULL(g));
    assert_string_equal(config_item_name(&g->cg_item), "kg");
    assert_string_equal(rec_ls("/sub/kg"), "ka");
    assert_ok(cfs_stat("/sub/kg", &e));
    assert_true(e.default_group);
    cfs_entry_done(&e);
    assert_rc(cfs_rmdir(NULL, "/sub/kg"), -EPERM);
    configfs_unregister_default_group(g);
    assert_string_equal(rec_ls("/sub"), "sa sd");
    g = configfs_register_default_group(&sub->u.group, "sd", &k->ct);
    assert_true(IS_ERR(g));
    assert_rc(PTR_ERR(g), -EEXIST);
}

/* T7, UL4, RM11: unregistering a subsystem never fails; it removes links
 * (drop_link), user items bottom-up (disconnect_notify, drop_item) and the
 * links other subsystems had into it, and produces no change record. */
static void test_group_unregister_removes_everything(void **state)
{
    struct rec_obj *sub = tree();
    struct rec_type *o = rec_type_new("o");
    uint64_t rev;

    (void)state;
    o->make = REC_MAKE_ITEM;
    o->child = I;
    rec_register("other", o);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_mkdir(NULL, "/other/o"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/other/o/in", "/sub/y"));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("y")));
    rev = cfs_revision();
    rec_clear();
    rec_unregister(sub);
    assert_int_equal(cfs_revision(), rev);
    assert_string_equal(rec_ls("/"), "other");
    assert_string_equal(rec_ls("/other/o"), "v");
    assert_int_equal(rec_occurrences("drop_link(x,y)"), 1);
    assert_int_equal(rec_occurrences("drop_link(o,y)"), 1);
    assert_true(rec_index("drop_link(x,y)", 0) <
                rec_index("disconnect_notify(sub,x)", 0));
    assert_true(rec_index("drop_link(o,y)", 0) <
                rec_index("disconnect_notify(sub,y)", 0));
    assert_true(rec_index("drop_item(x,i)", 0) <
                rec_index("disconnect_notify(sub,x)", 0));
    assert_true(rec_index("disconnect_notify(sub,x)", 0) <
                rec_index("drop_item(sub,x)", 0));
    assert_int_equal(rec_occurrences("release(x)"), 1);
    assert_int_equal(rec_occurrences("release(y)"), 1);
    assert_int_equal(rec_occurrences("release(i)"), 1);
    assert_int_equal(rec_occurrences("release(sub)"), 1);
    assert_int_equal(rec_occurrences("release(sd)"), 1);
}

/* T8: a dependency blocks only the rmdir of that item: not its attribute
 * I/O, links to or from it, unlinking them, mkdir inside it. */
static void test_group_depend_blocks_only_rmdir(void **state)
{
    struct rec_obj *sub = tree();

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(configfs_depend_item(&sub->u.su, rec_item("x")));
    assert_ok(rec_store_str("/sub/x/a", "1"));
    assert_string_equal(rec_cat("/sub/x/a"), "1");
    assert_ok(cfs_symlink(NULL, "/sub/x/out", "/sub/y"));
    assert_ok(cfs_symlink(NULL, "/sub/y/in", "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_rmdir(NULL, "/sub/x/i"));
    assert_ok(cfs_unlink(NULL, "/sub/x/out"));
    assert_ok(cfs_unlink(NULL, "/sub/y/in"));
    assert_rc(cfs_rmdir(NULL, "/sub/x"), -EBUSY);
    configfs_undepend_item(rec_item("x"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
}

struct observed {
    char log[8][64];
    int n;
    bool had_txn;
};

static void on_registered(void *data, struct cfs_txn *txn, const char *name)
{
    struct observed *o = data;

    if (o->n < 8) {
        (void)snprintf(
            o->log[o->n++], sizeof(o->log[0]), "registered %s", name);
    }
    o->had_txn = txn != NULL;
}

static void on_unregistered(void *data, const char *name)
{
    struct observed *o = data;

    if (o->n < 8) {
        (void)snprintf(
            o->log[o->n++], sizeof(o->log[0]), "unregistered %s", name);
    }
}

/* cfs.h observers (docs/DESIGN.md §6): told when a subsystem comes and goes,
 * with a transaction to replay into on registration. */
static void test_group_observer(void **state)
{
    struct observed o = {0};
    const struct cfs_observer obs = {
        .subsystem_registered = on_registered,
        .subsystem_unregistered = on_unregistered,
        .data = &o,
    };
    struct rec_obj *sub;

    (void)state;
    cfs_set_observer(&obs);
    sub = tree();
    rec_unregister(sub);
    cfs_set_observer(NULL);
    assert_int_equal(o.n, 2);
    assert_string_equal(o.log[0], "registered sub");
    assert_string_equal(o.log[1], "unregistered sub");
    assert_true(o.had_txn);
}

static void replay_into(void *data, struct cfs_txn *txn, const char *name)
{
    char path[64];

    (void)data;
    (void)snprintf(path, sizeof(path), "/%s/replayed", name);
    cfs_mkdir(txn, path);
}

/* docs/DESIGN.md §6: the registration observer may run mutations in the txn it
 * is given, and they appear with the subsystem. */
static void test_group_observer_replays(void **state)
{
    const struct cfs_observer obs = {
        .subsystem_registered = replay_into,
        .data = NULL,
    };

    (void)state;
    cfs_set_observer(&obs);
    tree();
    cfs_set_observer(NULL);
    assert_string_equal(rec_ls("/sub"), "sa sd replayed");
    assert_int_equal(rec_occurrences("make_group(sub,replayed)"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_group_subsystem_default_groups),
        REC_TEST(test_group_subsystem_seed_default_groups),
        REC_TEST(test_group_register_group),
        REC_TEST(test_group_register_group_name_taken),
        REC_TEST(test_group_register_default_group),
        REC_TEST(test_group_unregister_removes_everything),
        REC_TEST(test_group_depend_blocks_only_rmdir),
        REC_TEST(test_group_observer),
        REC_TEST(test_group_observer_replays),
    };

    return rec_run("core-group", tests);
}
