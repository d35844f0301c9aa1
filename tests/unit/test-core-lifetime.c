// SPDX-License-Identifier: MIT
/*
 * test-core-lifetime.c - locks held around callbacks, what callbacks see of
 * the hierarchy, directory states while an item is made or removed, and
 * removal against running callbacks.
 *
 * Covers docs/configfs-rules.md M22-M24 and T1-T9 (T10 is with the reference
 * counts in test-core-item.c). Threads never assert: they record, and the
 * main thread checks after joining.
 */
#include "recorder.h"

#include <time.h>

/*
 *   sub (S)  make_group -> G
 *   G        attribute a; binary blob; links; visibility callbacks;
 *            make_item -> I
 *   I        attribute v
 */
static struct rec_type *S, *G, *I;
static struct rec_obj *SUB;

static void tree(void)
{
    rec_tree(&S, &G, &I);
    G->visibility = true;
    rec_attr(G, "a", 0644, 0);
    rec_bin(G, "blob", 0644, 0);
    SUB = rec_register("sub", S);
    rec_clear();
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* T9, M22: make_*, disconnect_notify and drop_item run under su_mutex;
 * show, store, binary read/write, allow_link, drop_link, is_visible and
 * release do not. */
static void test_lifetime_su_mutex_per_callback(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(rec_store_str("/sub/x/a", "1"));
    assert_string_equal(rec_cat("/sub/x/a"), "1");
    assert_ok(rec_store_str("/sub/x/blob", "b"));
    assert_string_equal(rec_cat("/sub/x/blob"), "b");
    assert_ok(cfs_symlink(NULL, "/sub/x/l", "/sub/y"));
    assert_ok(cfs_unlink(NULL, "/sub/x/l"));
    assert_ok(cfs_mkdir(NULL, "/sub/x/i"));
    assert_ok(cfs_rmdir(NULL, "/sub/x/i"));
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
    rec_assert_locked("make_group(sub,x)", 1);
    rec_assert_locked("make_item(x,i)", 1);
    rec_assert_locked("disconnect_notify(x,i)", 1);
    rec_assert_locked("drop_item(x,i)", 1);
    rec_assert_locked("disconnect_notify(sub,y)", 1);
    rec_assert_locked("drop_item(sub,y)", 1);
    rec_assert_locked("is_visible(x,a,0)", 0);
    rec_assert_locked("is_bin_visible(x,blob,0)", 0);
    rec_assert_locked("store(x,a,1)", 0);
    rec_assert_locked("show(x,a)", 0);
    rec_assert_locked("write(x,blob,1)", 0);
    rec_assert_locked("read(x,blob,1)", 0);
    rec_assert_locked("allow_link(x,y)", 0);
    rec_assert_locked("drop_link(x,y)", 0);
    rec_assert_locked("release(i)", 0);
    rec_assert_locked("release(y)", 0);
}

struct seen {
    int make_linked;      /* new item's ci_parent at make time */
    int disc_on_children; /* at disconnect_notify */
    int disc_linked;
    int drop_on_children; /* at drop_item */
    int drop_linked;
    char walk[128]; /* sub's children, walked from a store */
    struct config_item *x;
};

static bool child_of(struct config_item *parent, struct config_item *item)
{
    struct config_item *it;

    list_for_each_entry(it, &to_config_group(parent)->cg_children, ci_entry) {
        if (it == item) {
            return true;
        }
    }
    return false;
}

static void hierarchy_hook(const char *cb,
                           struct config_item *item,
                           struct config_item *other,
                           void *data)
{
    struct seen *s = data;
    struct config_item *it;

    if (strcmp(cb, "make_group") == 0 && item) {
        s->make_linked = item->ci_parent != NULL;
    } else if (strcmp(cb, "disconnect_notify") == 0 && item && other) {
        s->disc_on_children = child_of(other, item);
        s->disc_linked = item->ci_parent != NULL;
    } else if (strcmp(cb, "drop_item") == 0 && item && other) {
        s->drop_on_children = child_of(other, item);
        s->drop_linked = item->ci_parent != NULL;
    } else if (strcmp(cb, "store") == 0) {
        size_t used = 0;
        pthread_mutex_lock(&SUB->u.su.su_mutex.lock);
        list_for_each_entry(it, &SUB->u.group.cg_children, ci_entry) {
            int w = snprintf(s->walk + used,
                             sizeof(s->walk) - used,
                             "%s%s",
                             used ? " " : "",
                             config_item_name(it));
            if (w > 0 && (size_t)w < sizeof(s->walk) - used) {
                used += (size_t)w;
            }
        }
        pthread_mutex_unlock(&SUB->u.su.su_mutex.lock);
    }
}

/* M23, MK7, RM11, RM12: make_* runs before the item is linked; a store may
 * take su_mutex and walk cg_children; at disconnect_notify the item is
 * still linked, at drop_item no longer. */
static void test_lifetime_hierarchy_seen_by_callbacks(void **state)
{
    struct seen s;

    (void)state;
    memset(&s, -1, sizeof(s));
    s.walk[0] = '\0';
    tree();
    rec_set_hook(hierarchy_hook, &s);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(cfs_mkdir(NULL, "/sub/y"));
    assert_ok(rec_store_str("/sub/x/a", "1"));
    assert_ok(cfs_rmdir(NULL, "/sub/y"));
    rec_set_hook(NULL, NULL);
    assert_int_equal(s.make_linked, 0);
    assert_string_equal(s.walk, "x y");
    assert_int_equal(s.disc_on_children, 1);
    assert_int_equal(s.disc_linked, 1);
    assert_int_equal(s.drop_on_children, 0);
    assert_int_equal(s.drop_linked, 0);
}

struct creating {
    int stat_attr, readdir_new, depend_new, stat_new;
    int calls;
};

static void creating_hook(const char *cb,
                          struct config_item *item,
                          struct config_item *other,
                          void *data)
{
    struct creating *c = data;
    struct cfs_entry e;
    struct cfs_entry *entries = NULL;
    size_t n = 0;

    (void)other;
    if (strcmp(cb, "is_visible") != 0 || c->calls++) {
        return;
    }
    c->stat_attr = cfs_stat("/sub/x/a", &e);
    if (!c->stat_attr) {
        cfs_entry_done(&e);
    }
    c->stat_new = cfs_stat("/sub/x", &e);
    if (!c->stat_new) {
        cfs_entry_done(&e);
    }
    c->readdir_new = cfs_readdir("/sub/x", &entries, &n);
    if (!c->readdir_new) {
        cfs_entries_free(entries, n);
    }
    c->depend_new = configfs_depend_item(&SUB->u.su, item);
    if (!c->depend_new) {
        configfs_undepend_item(item);
    }
}

/* T1, L2, D1, MK10: while an item is being made (its attribute files being
 * populated) nothing inside it can be looked up or listed, and it cannot
 * be depended on; it is ready when mkdir returns. */
static void test_lifetime_creating_is_invisible(void **state)
{
    struct creating c = {0};

    (void)state;
    tree();
    rec_set_hook(creating_hook, &c);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_set_hook(NULL, NULL);
    assert_true(c.calls > 0);
    assert_rc(c.stat_attr, -ENOENT);
    assert_rc(c.readdir_new, -ENOENT);
    assert_rc(c.depend_new, -ENOENT);
    assert_string_equal(rec_ls("/sub/x"), "a blob");
    assert_ok(configfs_depend_item(&SUB->u.su, rec_item("x")));
    configfs_undepend_item(rec_item("x"));
}

static void dropping_hook(const char *cb,
                          struct config_item *item,
                          struct config_item *other,
                          void *data)
{
    int *rc = data;

    (void)other;
    if (strcmp(cb, "disconnect_notify") == 0) {
        *rc = configfs_depend_item_unlocked(&SUB->u.su, item);
        if (*rc == 0) {
            configfs_undepend_item(item);
        }
    }
}

/* T1, M16, M17: an item being removed cannot be depended on (ENOENT). */
static void test_lifetime_dropping_refuses_depend(void **state)
{
    int rc = 1;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_set_hook(dropping_hook, &rc);
    assert_ok(cfs_rmdir(NULL, "/sub/x"));
    rec_set_hook(NULL, NULL);
    assert_rc(rc, -ENOENT);
}

/* ---- rmdir against a running show (RM10, T3) --------------------------- */

struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool entered, release, rmdir_done;
    int show_rc, rmdir_rc;
};

static struct gate gate = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

static void gate_hook(const char *cb,
                      struct config_item *item,
                      struct config_item *other,
                      void *data)
{
    (void)item;
    (void)other;
    (void)data;
    if (strcmp(cb, "show") != 0) {
        return;
    }
    pthread_mutex_lock(&gate.lock);
    gate.entered = true;
    pthread_cond_broadcast(&gate.cond);
    while (!gate.release) {
        pthread_cond_wait(&gate.cond, &gate.lock);
    }
    pthread_mutex_unlock(&gate.lock);
    rec_add("show-returns");
}

static void *show_thread(void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    (void)arg;
    rc = cfs_show("/sub/x/a", &buf, &len);
    cfs_free(buf);
    pthread_mutex_lock(&gate.lock);
    gate.show_rc = rc;
    pthread_mutex_unlock(&gate.lock);
    return NULL;
}

static void *rmdir_thread(void *arg)
{
    int rc;

    (void)arg;
    rc = cfs_rmdir(NULL, "/sub/x");
    pthread_mutex_lock(&gate.lock);
    gate.rmdir_rc = rc;
    gate.rmdir_done = true;
    pthread_mutex_unlock(&gate.lock);
    return NULL;
}

/* RM10, T3: rmdir waits for a show() already running on the item, and no
 * callback of the item runs after it. */
static void test_lifetime_rmdir_waits_for_running_show(void **state)
{
    pthread_t shower, remover;
    bool done_early;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    gate.entered = gate.release = gate.rmdir_done = false;
    gate.show_rc = gate.rmdir_rc = 1;
    rec_clear();
    rec_set_hook(gate_hook, NULL);
    assert_int_equal(pthread_create(&shower, NULL, show_thread, NULL), 0);
    pthread_mutex_lock(&gate.lock);
    while (!gate.entered) {
        pthread_cond_wait(&gate.cond, &gate.lock);
    }
    pthread_mutex_unlock(&gate.lock);
    assert_int_equal(pthread_create(&remover, NULL, rmdir_thread, NULL), 0);
    sleep_ms(200);
    pthread_mutex_lock(&gate.lock);
    done_early = gate.rmdir_done;
    gate.release = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    pthread_join(shower, NULL);
    pthread_join(remover, NULL);
    rec_set_hook(NULL, NULL);
    assert_false(done_early);
    assert_ok(gate.show_rc);
    assert_ok(gate.rmdir_rc);
    assert_true(rec_index("show-returns", 0) <
                rec_index("disconnect_notify(sub,x)", 0));
    rec_clear();
    assert_string_equal(rec_cat("/sub/x/a"), "E-ENOENT");
    rec_assert_no_trace();
}

/* ---- concurrent writers (M24) ------------------------------------------ */

struct racer {
    int rc;
};

static pthread_barrier_t start_line;

static void *mkdir_racer(void *arg)
{
    struct racer *r = arg;

    pthread_barrier_wait(&start_line);
    r->rc = cfs_mkdir(NULL, "/sub/same");
    return NULL;
}

/* M24: mkdirs of one name are serialised: one wins, the other sees it
 * (EEXIST), and make_group runs once. */
static void test_lifetime_concurrent_mkdir_same_name(void **state)
{
    enum { N = 4 };
    pthread_t th[N];
    struct racer r[N];
    int ok = 0, exists = 0;

    (void)state;
    tree();
    pthread_barrier_init(&start_line, NULL, N);
    for (int i = 0; i < N; i++) {
        r[i].rc = 1;
        assert_int_equal(pthread_create(&th[i], NULL, mkdir_racer, &r[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += r[i].rc == 0;
        exists += r[i].rc == -EEXIST;
    }
    pthread_barrier_destroy(&start_line);
    assert_int_equal(ok, 1);
    assert_int_equal(exists, N - 1);
    assert_int_equal(rec_occurrences("make_group(sub,same)"), 1);
}

static void *show_loop(void *arg)
{
    int *bad = arg;

    for (int i = 0; i < 200; i++) {
        char *buf = NULL;
        size_t len = 0;
        if (cfs_show("/sub/x/a", &buf, &len) != 0 ||
            (strcmp(buf, "one") != 0 && strcmp(buf, "two") != 0)) {
            (*bad)++;
        }
        cfs_free(buf);
    }
    return NULL;
}

/* WR8, RD7: shows run alongside stores; each sees one whole value. */
static void test_lifetime_show_alongside_store(void **state)
{
    pthread_t th;
    int bad = 0;

    (void)state;
    tree();
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    assert_ok(rec_store_str("/sub/x/a", "one"));
    assert_int_equal(pthread_create(&th, NULL, show_loop, &bad), 0);
    for (int i = 0; i < 200; i++) {
        assert_ok(rec_store_str("/sub/x/a", i % 2 ? "one" : "two"));
    }
    pthread_join(th, NULL);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_lifetime_su_mutex_per_callback),
        REC_TEST(test_lifetime_hierarchy_seen_by_callbacks),
        REC_TEST(test_lifetime_creating_is_invisible),
        REC_TEST(test_lifetime_dropping_refuses_depend),
        REC_TEST(test_lifetime_rmdir_waits_for_running_show),
        REC_TEST(test_lifetime_concurrent_mkdir_same_name),
        REC_TEST(test_lifetime_show_alongside_store),
    };

    return rec_run("core-lifetime", tests);
}
