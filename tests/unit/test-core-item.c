// SPDX-License-Identifier: MIT
/*
 * test-core-item.c - items, names, reference counts and subsystems.
 *
 * Covers the object model of docs/configfs-rules.md section 1: item
 * initialisation and names (M1-M3), release (M5, M19), the counts that
 * mkdir and rmdir take and drop (M18, M20), the get/put/find helpers (M21),
 * subsystem registration (M9) and module pinning (M25).
 */
#include "recorder.h"

#include <errno.h>
#include <string.h>

/* A subsystem "sub" whose mkdir makes groups of type "g" (attribute a). */
static struct rec_obj *std_tree(struct rec_type **ret_child)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *g = rec_type_new("g");

    s->make = REC_MAKE_GROUP;
    s->child = g;
    g->make = REC_MAKE_ITEM;
    g->child = g;
    rec_attr(g, "a", 0644, 0);
    if (ret_child) {
        *ret_child = g;
    }
    return rec_register("sub", s);
}

/* docs/STYLE.md §12: once every subsystem is gone core holds no allocation
 * (else the allocator cannot be switched and leaks cannot be told apart). */
static void test_item_no_global_allocations(void **state)
{
    (void)state;
    assert_int_equal(rec_global_leftovers(), 0);
}

/* M1: init names the item, sets its type and one reference. */
static void test_item_init_sets_name_type_and_one_ref(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *o;

    (void)state;
    rec_type_build(t);
    o = rec_obj_new(t, "solo", NULL);
    assert_string_equal(config_item_name(&o->u.group.cg_item), "solo");
    assert_ptr_equal(o->u.group.cg_item.ci_type, &t->ct);
    assert_int_equal(rec_refs(&o->u.group.cg_item), 1);
    assert_null(o->u.group.cg_item.ci_parent);
    assert_null(o->u.group.cg_item.ci_group);
    assert_true(list_empty(&o->u.group.cg_children));
    config_item_put(&o->u.group.cg_item);
    rec_assert_trace("release(solo)");
}

/* M1: config_item_init() resets the count and keeps name and type. */
static void test_item_init_keeps_static_name(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct config_item item;

    (void)state;
    t->no_release = true;
    rec_type_build(t);
    memset(&item, 0, sizeof(item));
    memcpy(item.ci_namebuf, "static", sizeof("static"));
    item.ci_name = item.ci_namebuf;
    item.ci_type = &t->ct;
    config_item_init(&item);
    assert_int_equal(rec_refs(&item), 1);
    assert_string_equal(config_item_name(&item), "static");
    assert_ptr_equal(item.ci_type, &t->ct);
    config_item_put(&item);
    assert_int_equal(rec_refs(&item), 0);
    rec_assert_no_trace();
}

/* M2: short names live inline, long ones on the heap; 20 is no limit. */
static void test_item_long_name_on_heap(void **state)
{
    struct rec_type *t = rec_type_new("t");
    const char *longname = "a-name-well-over-twenty-bytes-long";
    struct rec_obj *s, *l;

    (void)state;
    rec_type_build(t);
    s = rec_obj_new(t, "short", NULL);
    l = rec_obj_new(t, longname, NULL);
    assert_ptr_equal(s->u.group.cg_item.ci_name, s->u.group.cg_item.ci_namebuf);
    assert_ptr_not_equal(l->u.group.cg_item.ci_name,
                         l->u.group.cg_item.ci_namebuf);
    assert_string_equal(config_item_name(&l->u.group.cg_item), longname);
    config_item_put(&s->u.group.cg_item);
    config_item_put(&l->u.group.cg_item);
}

/* M2, H15: config_item_set_name formats, and reports ENOMEM. */
static void test_item_set_name_format_and_enomem(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *o;

    (void)state;
    rec_type_build(t);
    o = rec_obj_new(t, "x", NULL);
    assert_ok(config_item_set_name(&o->u.group.cg_item, "%s.%d", "lun", 7));
    assert_string_equal(config_item_name(&o->u.group.cg_item), "lun.7");
    assert_ok(config_item_set_name(
        &o->u.group.cg_item, "%s", "another-name-longer-than-the-buffer"));
    assert_string_equal(config_item_name(&o->u.group.cg_item),
                        "another-name-longer-than-the-buffer");
    rec_alloc_fail_nth(1);
    assert_rc(config_item_set_name(&o->u.group.cg_item,
                                   "%s",
                                   "yet-another-name-longer-than-twenty"),
              -ENOMEM);
    assert_true(rec_alloc_failed());
    rec_alloc_fail_nth(0);
    config_item_put(&o->u.group.cg_item);
}

/* M2, L1: a user name may be 255 bytes; 256 is ENAMETOOLONG. */
static void test_item_name_up_to_255_bytes(void **state)
{
    char path[CFS_NAME_MAX + 16];
    char name[CFS_NAME_MAX + 2];

    (void)state;
    std_tree(NULL);
    memset(name, 'n', CFS_NAME_MAX);
    name[CFS_NAME_MAX] = '\0';
    (void)snprintf(path, sizeof(path), "/sub/%s", name);
    assert_ok(cfs_mkdir(NULL, path));
    assert_non_null(rec_find(name));
    assert_string_equal(config_item_name(rec_item(name)), name);
    memset(name, 'm', CFS_NAME_MAX + 1);
    name[CFS_NAME_MAX + 1] = '\0';
    (void)snprintf(path, sizeof(path), "/sub/%s", name);
    rec_clear();
    assert_rc(cfs_mkdir(NULL, path), -ENAMETOOLONG);
    rec_assert_no_trace();
}

/* M3: the directory and ci_name agree; configfsd forces ci_name to the
 * mkdir name (or refuses the item). */
static void test_item_ci_name_forced_to_dir_name(void **state)
{
    struct rec_obj *sub;
    int rc;

    (void)state;
    sub = std_tree(NULL);
    sub->type->make_name = "other";
    rc = cfs_mkdir(NULL, "/sub/x");
    if (rc == 0) {
        struct cfs_entry e;
        assert_ok(cfs_stat("/sub/x", &e));
        cfs_entry_done(&e);
        assert_rc(cfs_stat("/sub/other", &e), -ENOENT);
        assert_string_equal(rec_ls("/sub"), "x");
        assert_non_null(rec_find("other"));
        assert_string_equal(config_item_name(rec_item("other")), "x");
    } else {
        assert_rc(rc, -EINVAL);
        assert_string_equal(rec_ls("/sub"), "");
    }
}

/* M5, M19: release runs once, when the last reference goes. */
static void test_item_release_on_last_put(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *o;
    struct config_item *item;

    (void)state;
    rec_type_build(t);
    o = rec_obj_new(t, "x", NULL);
    item = &o->u.group.cg_item;
    assert_ptr_equal(config_item_get(item), item);
    assert_int_equal(rec_refs(item), 2);
    config_item_put(item);
    rec_assert_no_trace();
    config_item_put(item);
    rec_assert_trace("release(x)");
}

/* M19: after release, the references held through ci_group and ci_parent
 * of an item that was never unlinked are dropped. */
static void test_item_release_drops_parent_refs(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *p, *c;

    (void)state;
    rec_type_build(t);
    p = rec_obj_new(t, "p", NULL);
    c = rec_obj_new(t, "c", NULL);
    c->u.group.cg_item.ci_parent = config_item_get(&p->u.group.cg_item);
    c->u.group.cg_item.ci_group = config_group_get(&p->u.group);
    assert_int_equal(rec_refs(&p->u.group.cg_item), 3);
    config_item_put(&c->u.group.cg_item);
    rec_assert_trace("release(c)");
    assert_int_equal(rec_refs(&p->u.group.cg_item), 1);
    config_item_put(&p->u.group.cg_item);
    rec_assert_trace("release(c)", "release(p)");
}

/* M21: get/put are NULL-safe; config_group_get/put count on the item. */
static void test_item_get_put_null_safe(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *o;

    (void)state;
    assert_null(config_item_get(NULL));
    config_item_put(NULL);
    assert_null(config_group_get(NULL));
    config_group_put(NULL);
    rec_type_build(t);
    o = rec_obj_new(t, "g", NULL);
    assert_ptr_equal(config_group_get(&o->u.group), &o->u.group);
    assert_int_equal(rec_refs(&o->u.group.cg_item), 2);
    config_group_put(&o->u.group);
    assert_int_equal(rec_refs(&o->u.group.cg_item), 1);
    config_group_put(&o->u.group);
    rec_assert_trace("release(g)");
}

static void unless_zero_hook(const char *cb,
                             struct config_item *item,
                             struct config_item *other,
                             void *data)
{
    (void)other;
    (void)data;
    if (strcmp(cb, "release") == 0) {
        rec_add("get_unless_zero=%s",
                config_item_get_unless_zero(item) ? "item" : "NULL");
    }
}

/* M21: get_unless_zero returns the item while it has references and NULL
 * once the count reached zero (seen from inside release). */
static void test_item_get_unless_zero(void **state)
{
    struct rec_type *t = rec_type_new("t");
    struct rec_obj *o;
    struct config_item *item;

    (void)state;
    rec_type_build(t);
    o = rec_obj_new(t, "x", NULL);
    item = &o->u.group.cg_item;
    assert_ptr_equal(config_item_get_unless_zero(item), item);
    config_item_put(item);
    rec_set_hook(unless_zero_hook, NULL);
    config_item_put(item);
    rec_assert_trace("release(x)", "get_unless_zero=NULL");
}

/* M18, MK7: a live user-created item holds two references (creator and
 * parent's child list); its parent one more (for ci_parent). */
static void test_item_mkdir_counts(void **state)
{
    struct rec_obj *sub = std_tree(NULL);
    struct config_item *subitem = &sub->u.group.cg_item;
    int before = rec_refs(subitem);

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_int_equal(rec_refs(rec_item("x")), 2);
    assert_int_equal(rec_refs(subitem), before + 1);
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_int_equal(rec_refs(rec_item("i")), 2);
    assert_int_equal(rec_refs(rec_item("x")), 3);
}

/* M18, SL9: links take no item references. */
static void test_item_links_take_no_refs(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *g = rec_type_new("g");
    int x_refs, y_refs;

    (void)state;
    s->make = REC_MAKE_GROUP;
    s->child = g;
    g->links = true;
    rec_register("sub", s);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    x_refs = rec_refs(rec_item("x"));
    y_refs = rec_refs(rec_item("y"));
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_int_equal(rec_refs(rec_item("x")), x_refs);
    assert_int_equal(rec_refs(rec_item("y")), y_refs);
    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    assert_int_equal(rec_refs(rec_item("y")), y_refs);
}

/* M20, RM11: rmdir drops the child-list, parent and creator references:
 * release runs at the end of rmdir; the parent is back to its count. */
static void test_item_rmdir_releases(void **state)
{
    struct rec_obj *sub = std_tree(NULL);
    int before = rec_refs(&sub->u.group.cg_item);

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace(
        "disconnect_notify(sub,x)", "drop_item(sub,x)", "release(x)");
    assert_null(rec_find("x"));
    assert_int_equal(rec_refs(&sub->u.group.cg_item), before);
}

/* M20: without drop_item, configfs drops the creator reference itself. */
static void test_item_rmdir_without_drop_item_puts(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *i = rec_type_new("i");

    (void)state;
    s->make = REC_MAKE_ITEM;
    s->child = i;
    s->no_drop_item = true;
    rec_register("sub", s);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace("disconnect_notify(sub,x)", "release(x)");
}

/* M20, T10: a client reference keeps the item past rmdir, unlinked; the
 * last put releases it. */
static void test_item_client_ref_outlives_rmdir(void **state)
{
    struct config_item *x;

    (void)state;
    std_tree(NULL);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    x = config_item_get(rec_item("x"));
    rec_clear();
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_assert_trace("disconnect_notify(sub,x)", "drop_item(sub,x)");
    assert_int_equal(rec_refs(x), 1);
    assert_null(x->ci_parent);
    assert_null(x->ci_group);
    assert_string_equal(rec_ls("/sub"), "");
    config_item_put(x);
    rec_assert_trace(
        "disconnect_notify(sub,x)", "drop_item(sub,x)", "release(x)");
}

/* M21: config_group_find_item under su_mutex returns a new reference to a
 * child by name, or NULL. */
static void test_item_find_item_under_su_mutex(void **state)
{
    struct rec_obj *sub = std_tree(NULL);
    struct config_item *found, *missing;
    int refs;

    (void)state;
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    refs = rec_refs(rec_item("x"));
    pthread_mutex_lock(&sub->u.su.su_mutex.lock);
    found = config_group_find_item(&sub->u.group, "x");
    missing = config_group_find_item(&sub->u.group, "nope");
    pthread_mutex_unlock(&sub->u.su.su_mutex.lock);
    assert_ptr_equal(found, rec_item("x"));
    assert_null(missing);
    assert_int_equal(rec_refs(found), refs + 1);
    config_item_put(found);
    assert_int_equal(rec_refs(rec_item("x")), refs);
}

/* M9: a subsystem appears under the root; a second one with the same name
 * is EEXIST; unregistering removes it. */
static void test_item_register_subsystem(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_obj *a, *dup = NULL;
    struct cfs_entry e;

    (void)state;
    a = rec_register("alpha", s);
    assert_ok(cfs_stat("/alpha", &e));
    assert_int_equal(e.kind, CFS_KIND_SUBSYSTEM);
    assert_int_equal(e.mode, 0755);
    cfs_entry_done(&e);
    assert_rc(rec_register_rc("alpha", s, &dup), -EEXIST);
    assert_null(dup);
    rec_register("beta", s);
    assert_string_equal(rec_ls("/"), "alpha beta");
    rec_unregister(a);
    assert_rc(cfs_stat("/alpha", &e), -ENOENT);
    assert_string_equal(rec_ls("/"), "beta");
}

/* M9, MK5: a subsystem without a type, or with a bad name, is refused. */
static void test_item_register_refuses_bad_subsystems(void **state)
{
    struct configfs_subsystem su;
    struct rec_type *s = rec_type_new("s");

    (void)state;
    memset(&su, 0, sizeof(su));
    config_group_init_type_name(&su.su_group, "notype", NULL);
    assert_rc(configfs_register_subsystem(&su), -EINVAL);
    config_item_put(&su.su_group.cg_item);
    assert_rc(rec_register_rc("a/b", s, NULL), -EINVAL);
    assert_rc(rec_register_rc("..", s, NULL), -EINVAL);
    assert_rc(rec_register_rc("", s, NULL), -EINVAL);
    assert_string_equal(rec_ls("/"), "");
}

/* M2, M9: a statically declared subsystem names itself in ci_namebuf. */
static void test_item_register_static_subsystem(void **state)
{
    static struct configfs_subsystem su;
    struct rec_type *s = rec_type_new("s");
    struct cfs_entry e;

    (void)state;
    s->no_release = true;
    rec_type_build(s);
    memset(&su, 0, sizeof(su));
    memcpy(su.su_group.cg_item.ci_namebuf, "static", sizeof("static"));
    su.su_group.cg_item.ci_type = &s->ct;
    config_group_init(&su.su_group);
    assert_ok(configfs_register_subsystem(&su));
    assert_string_equal(config_item_name(&su.su_group.cg_item), "static");
    assert_ok(cfs_stat("/static", &e));
    cfs_entry_done(&e);
    configfs_unregister_subsystem(&su);
    assert_rc(cfs_stat("/static", &e), -ENOENT);
}

/* M25: every item mkdir makes pins its type's module until it is gone. */
static void test_item_module_pinned_by_items(void **state)
{
    static struct module mod;
    struct rec_type *g;

    (void)state;
    memset(&mod, 0, sizeof(mod));
    mod.name = "m";
    std_tree(&g);
    g->owner = &mod;
    rec_type_build(g);
    assert_int_equal(atomic_load(&mod.refcnt), 0);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_int_equal(atomic_load(&mod.refcnt), 1);
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_int_equal(atomic_load(&mod.refcnt), 2);
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    assert_int_equal(atomic_load(&mod.refcnt), 1);
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
    assert_int_equal(atomic_load(&mod.refcnt), 0);
}

/* docs/STYLE.md §12, M9: registration under allocation failure either succeeds
 * or fails ENOMEM leaving nothing behind (no directory, no leak). */
static void test_item_register_oom_loop(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *d = rec_type_new("d");
    struct rec_obj *sub;
    long n;
    int rc;

    (void)state;
    s->make = REC_MAKE_ITEM;
    s->child = s;
    rec_attr(s, "a", 0644, 0);
    rec_bin(s, "b", 0644, 0);
    rec_default(s, "d", d);
    rec_attr(d, "c", 0644, 0);
    for (n = 1; n < 10000; n++) {
        sub = NULL;
        rec_alloc_fail_nth(n);
        rc = rec_register_rc("oomsub", s, &sub);
        rec_alloc_fail_nth(0);
        if (rc == 0) {
            assert_string_equal(rec_ls("/oomsub"), "a b d");
            rec_unregister(sub);
            if (!rec_alloc_failed()) {
                break;
            }
            continue;
        }
        assert_rc(rc, -ENOMEM);
        assert_null(sub);
        assert_string_equal(rec_ls("/"), "");
    }
    assert_true(n > 1);
}

/* M2, configfs.h config_item_init_type_name(): a subsystem whose heap name
 * could not be allocated is refused with ENOMEM. */
static void test_item_unnamed_is_enomem(void **state)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_obj *sub = NULL;

    (void)state;
    rec_type_build(s);
    rec_alloc_fail_nth(1);
    assert_rc(rec_register_rc("a-subsystem-name-longer-than-twenty", s, &sub),
              -ENOMEM);
    assert_true(rec_alloc_failed());
    rec_alloc_fail_nth(0);
    assert_string_equal(rec_ls("/"), "");
}

/* cfs_item_path: the absolute path of a live item; ENOENT once gone. */
static void test_item_path_of_live_item(void **state)
{
    char *path = NULL;
    struct config_item *x;

    (void)state;
    std_tree(NULL);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_item_path(rec_item("i"), &path));
    assert_string_equal(path, "/sub/x/i");
    cfs_free(path);
    path = NULL;
    x = config_item_get(rec_item("x"));
    assert_ok(cfs_rmdir(NULL, "/sub/x/i"));
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    assert_rc(cfs_item_path(x, &path), -ENOENT);
    assert_null(path);
    config_item_put(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_item_no_global_allocations),
        REC_TEST(test_item_init_sets_name_type_and_one_ref),
        REC_TEST(test_item_init_keeps_static_name),
        REC_TEST(test_item_long_name_on_heap),
        REC_TEST(test_item_set_name_format_and_enomem),
        REC_TEST(test_item_name_up_to_255_bytes),
        REC_TEST(test_item_ci_name_forced_to_dir_name),
        REC_TEST(test_item_release_on_last_put),
        REC_TEST(test_item_release_drops_parent_refs),
        REC_TEST(test_item_get_put_null_safe),
        REC_TEST(test_item_get_unless_zero),
        REC_TEST(test_item_mkdir_counts),
        REC_TEST(test_item_links_take_no_refs),
        REC_TEST(test_item_rmdir_releases),
        REC_TEST(test_item_rmdir_without_drop_item_puts),
        REC_TEST(test_item_client_ref_outlives_rmdir),
        REC_TEST(test_item_find_item_under_su_mutex),
        REC_TEST(test_item_register_subsystem),
        REC_TEST(test_item_register_refuses_bad_subsystems),
        REC_TEST(test_item_register_static_subsystem),
        REC_TEST(test_item_module_pinned_by_items),
        REC_TEST(test_item_register_oom_loop),
        REC_TEST(test_item_unnamed_is_enomem),
        REC_TEST(test_item_path_of_live_item),
    };

    return rec_run("core-item", tests);
}
