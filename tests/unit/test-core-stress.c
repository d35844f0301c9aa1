/* SPDX-License-Identifier: MIT */
/*
 * test-core-stress.c - concurrent operations on shared parents, and T3.
 *
 * Worker threads run random mkdir/rmdir/store/show/symlink/unlink/readlink/
 * readdir/stat/rename/batch and subsystem (un)registration on a small test
 * subsystem whose names collide on purpose, bounded by an iteration count
 * and a wall-clock bound (CFS_STRESS_SECONDS, from the meson option
 * stress_seconds). Every return value must be 0 or an errno the rules allow
 * for that operation; the subsystem's callbacks check the ordering and lock
 * rules they can see (T3, T9, M22, M23, RM11, RM12, MK11, C11). At the end
 * the tree is torn down and every object must have been released, every
 * accepted link dropped, and every block the core allocated freed. Built to
 * run clean under ThreadSanitizer; waits are on conditions, never sleeps.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

/* ---- a counting allocator ------------------------------------------------
 *
 * cmocka's allocator is not thread-safe, and a mutex around it would give
 * ThreadSanitizer a happens-before edge on every allocation and hide real
 * races. So this one counts blocks with relaxed atomics (which order
 * nothing) over libc; ASan and valgrind see the blocks themselves.
 */

static atomic_long alloc_live;

/* Blocks live when the running test started: its leak check is relative to
 * them, so one failed test does not fail the next. main() registers a
 * subsystem once first, so that what core keeps for good after that (its
 * root table, which test-core-oom reports) is not charged to a test. */
static long alloc_at_start;

static void *st_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);

    if (p) {
        atomic_fetch_add_explicit(&alloc_live, 1, memory_order_relaxed);
    }
    return p;
}

static void *st_realloc(void *ptr, size_t size)
{
    if (!ptr) {
        return st_malloc(size);
    }
    if (size == 0) {
        atomic_fetch_sub_explicit(&alloc_live, 1, memory_order_relaxed);
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

static void st_free(void *ptr)
{
    if (ptr) {
        atomic_fetch_sub_explicit(&alloc_live, 1, memory_order_relaxed);
        free(ptr);
    }
}

/* ---- violations seen by callbacks and workers -------------------------- */

static atomic_long n_violations;
static pthread_mutex_t violation_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_violation[1024];

static void violation(const char *fmt, ...) CFS_PRINTF(1, 2);

/* Workers and callbacks must not call cmocka (its failures longjmp to the
 * main thread's stack): they record, the main thread asserts. */
static void violation(const char *fmt, ...)
{
    va_list ap;

    if (atomic_fetch_add(&n_violations, 1) == 0) {
        pthread_mutex_lock(&violation_lock);
        va_start(ap, fmt);
        (void)vsnprintf(first_violation, sizeof(first_violation), fmt, ap);
        va_end(ap);
        pthread_mutex_unlock(&violation_lock);
    }
}

static void expect_no_violations(void)
{
    long n = atomic_load(&n_violations);

    if (n != 0) {
        pthread_mutex_lock(&violation_lock);
        print_error("first violation: %s\n", first_violation);
        pthread_mutex_unlock(&violation_lock);
        fail_msg("%ld rule violations", n);
    }
}

/* ---- the test subsystem ---------------------------------------------------
 *
 * /stress (or /aux-N)   description (ro)
 *   items/              make_item -> item
 *   groups/             make_group -> group, with default group sub/
 *                       (make_item -> item)
 *   commit/             committable: make_item -> item; pending/ live/
 *
 * item:  value, num, gate; allow_link (items and groups only, else EINVAL);
 *        value refuses stores while committed (EBUSY), like sample 04.
 * group: value, gate; allow_link. sub/: value, gate.
 */

enum { SN_MADE = 1, SN_DISCONNECTED, SN_DROPPED };

struct ssys;

struct snode {
    struct config_group group; /* items use group.cg_item only */
    bool is_group;
    bool is_user;        /* returned by make_item/make_group */
    struct snode *owner; /* whose mkdir made it: self, or the parent of a
                            default group (T3's fragment) */
    struct ssys *sys;
    atomic_int state;    /* SN_*, user nodes only */
    atomic_int inflight; /* attribute callbacks running in the fragment */
    atomic_bool committed;
    atomic_int num;
    /* Our copy: release() runs after core freed a heap ci_name (M5, M19). */
    char name[CFS_NAME_MAX + 1];
    pthread_mutex_t lock; /* value */
    char value[64];
    size_t value_len;
};

struct ssys {
    struct configfs_subsystem su;
};

static struct {
    atomic_long nodes_made; /* every snode */
    atomic_long nodes_released;
    atomic_long user_made; /* returned by make_* */
    atomic_long disconnected;
    atomic_long dropped;
    atomic_long allow_ok;
    atomic_long allow_refused;
    atomic_long drop_link;
    atomic_long commits;
    atomic_long uncommits;
    atomic_long sys_made;
    atomic_long sys_released;
} st;

static struct snode *to_snode(struct config_item *item)
{
    return container_of(item, struct snode, group.cg_item);
}

/* su_mutex must be held by this thread (T9). A default pthread mutex gives
 * EBUSY on trylock by anyone while it is held, so this cannot prove that the
 * holder is us, but it catches a callback run with the mutex free. */
static void expect_su_mutex_held(struct ssys *sys, const char *who)
{
    int rc = pthread_mutex_trylock(&sys->su.su_mutex.lock);

    if (rc == 0) {
        pthread_mutex_unlock(&sys->su.su_mutex.lock);
        violation("T9: %s called without su_mutex", who);
    }
}

/* ---- the T3 gate: an attribute whose callback blocks on demand --------- */

enum { EV_CB_ENTER = 1, EV_CB_EXIT, EV_DISCONNECT, EV_DROP, EV_RELEASE };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_bool armed;
    char owner[32]; /* the gate blocks for this owner's name */
    bool entered;
    bool open;
    bool rmdir_done;
    int events[32];
    int n_events;
} gate = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

static bool gate_matches(struct snode *owner)
{
    return atomic_load(&gate.armed) && strcmp(owner->name, gate.owner) == 0;
}

static void gate_event(struct snode *owner, int ev)
{
    if (!gate_matches(owner)) {
        return;
    }
    pthread_mutex_lock(&gate.lock);
    if (gate.n_events < (int)(sizeof(gate.events) / sizeof(gate.events[0]))) {
        gate.events[gate.n_events++] = ev;
    }
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
}

/* ---- attribute callbacks ----------------------------------------------- */

/* Entering an attribute callback: the fragment must not be on its way out
 * (T3, RM10). Paired with the check in disconnect_notify: whichever of the
 * two runs second sees the other. */
static struct snode *cb_enter(struct config_item *item, const char *what)
{
    struct snode *n = to_snode(item);
    struct snode *o = n->owner;

    atomic_fetch_add(&o->inflight, 1);
    if (o->is_user && atomic_load(&o->state) != SN_MADE) {
        violation("T3: %s on %s after disconnect_notify/drop_item",
                  what,
                  to_snode(item)->name);
    }
    return n;
}

static void cb_leave(struct snode *n)
{
    atomic_fetch_sub(&n->owner->inflight, 1);
}

/* M23: under su_mutex a live item is on its parent's cg_children and has a
 * parent; C11: after a commit that parent is live/, not pending/. */
static void expect_linked(struct snode *n)
{
    struct config_item *item = &n->group.cg_item;
    struct config_item *found = NULL;

    pthread_mutex_lock(&n->sys->su.su_mutex.lock);
    if (!item->ci_parent || !item->ci_group) {
        violation("M23: store on %s with ci_parent NULL under su_mutex",
                  to_snode(item)->name);
    } else {
        found = config_group_find_item(item->ci_group, config_item_name(item));
        if (found != item) {
            violation("M23/C11: %s is not on its ci_group's cg_children "
                      "(found %p)",
                      to_snode(item)->name,
                      (void *)found);
        }
        config_item_put(found);
    }
    pthread_mutex_unlock(&n->sys->su.su_mutex.lock);
}

static ssize_t sn_value_show(struct config_item *item, char *page)
{
    struct snode *n = cb_enter(item, "show");
    size_t len;

    pthread_mutex_lock(&n->lock);
    len = n->value_len;
    memcpy(page, n->value, len);
    pthread_mutex_unlock(&n->lock);
    cb_leave(n);
    return (ssize_t)len;
}

static ssize_t
sn_value_store(struct config_item *item, const char *page, size_t count)
{
    struct snode *n = cb_enter(item, "store");
    ssize_t rc = (ssize_t)count;

    if (n->is_user) {
        expect_linked(n);
    }
    if (atomic_load(&n->committed)) {
        rc = -EBUSY; /* like sample 04: no change while committed (C9) */
    } else if (count == 0 || count >= sizeof(n->value)) {
        rc = -EINVAL;
    } else {
        pthread_mutex_lock(&n->lock);
        memcpy(n->value, page, count);
        n->value_len = count;
        pthread_mutex_unlock(&n->lock);
    }
    cb_leave(n);
    return rc;
}

static ssize_t sn_num_show(struct config_item *item, char *page)
{
    struct snode *n = cb_enter(item, "show");
    int len = snprintf(page, CONFIGFS_PAGE_SIZE, "%d\n", atomic_load(&n->num));

    cb_leave(n);
    return len;
}

static ssize_t
sn_num_store(struct config_item *item, const char *page, size_t count)
{
    struct snode *n = cb_enter(item, "store");
    char buf[16];

    if (count == 0 || count >= sizeof(buf)) {
        cb_leave(n);
        return -EINVAL;
    }
    memcpy(buf, page, count);
    buf[count] = '\0';
    atomic_store(&n->num, (int)strtol(buf, NULL, 10));
    cb_leave(n);
    return (ssize_t)count;
}

/* Blocks while the gate is armed for this fragment and not yet open. */
static void gate_wait(struct snode *n)
{
    if (!gate_matches(n->owner)) {
        return;
    }
    pthread_mutex_lock(&gate.lock);
    gate.entered = true;
    if (gate.n_events < (int)(sizeof(gate.events) / sizeof(gate.events[0]))) {
        gate.events[gate.n_events++] = EV_CB_ENTER;
    }
    pthread_cond_broadcast(&gate.cond);
    while (!gate.open) {
        pthread_cond_wait(&gate.cond, &gate.lock);
    }
    if (gate.n_events < (int)(sizeof(gate.events) / sizeof(gate.events[0]))) {
        gate.events[gate.n_events++] = EV_CB_EXIT;
    }
    pthread_mutex_unlock(&gate.lock);
}

static ssize_t sn_gate_show(struct config_item *item, char *page)
{
    struct snode *n = cb_enter(item, "show");

    gate_wait(n);
    cb_leave(n);
    return snprintf(page, CONFIGFS_PAGE_SIZE, "gate\n");
}

static ssize_t
sn_gate_store(struct config_item *item, const char *page, size_t count)
{
    struct snode *n = cb_enter(item, "store");

    (void)page;
    gate_wait(n);
    cb_leave(n);
    return (ssize_t)count;
}

CONFIGFS_ATTR(sn_, value);
CONFIGFS_ATTR(sn_, num);
CONFIGFS_ATTR(sn_, gate);

static struct configfs_attribute *item_attrs[] = {
    &sn_attr_value,
    &sn_attr_num,
    &sn_attr_gate,
    NULL,
};

static struct configfs_attribute *group_attrs[] = {
    &sn_attr_value,
    &sn_attr_gate,
    NULL,
};

/* ---- item and group callbacks ------------------------------------------ */

static const struct config_item_type item_type;
static const struct config_item_type group_type;
static const struct config_item_type sub_type;
static const struct config_item_type ssys_type;

static void sn_release(struct config_item *item)
{
    struct snode *n = to_snode(item);

    if (n->is_user) {
        gate_event(n, EV_RELEASE);
        if (atomic_load(&n->state) != SN_DROPPED) {
            violation("RM11: release of %s before drop_item (state %d)",
                      n->name,
                      atomic_load(&n->state));
        }
    }
    if (n->owner == n && atomic_load(&n->inflight) != 0) {
        violation("T3: release with an attribute callback running");
    }
    if (n->is_group) {
        configfs_remove_default_groups(&n->group);
    }
    pthread_mutex_destroy(&n->lock);
    st_free(n);
    atomic_fetch_add(&st.nodes_released, 1);
}

static int sn_allow_link(struct config_item *src, struct config_item *target)
{
    struct snode *n = to_snode(src);

    /* Not under su_mutex (T9): take it to look at the hierarchy (M23). */
    pthread_mutex_lock(&n->sys->su.su_mutex.lock);
    if (!src->ci_parent) {
        violation("M23: allow_link in %s with ci_parent NULL",
                  to_snode(src)->name);
    }
    pthread_mutex_unlock(&n->sys->su.su_mutex.lock);
    if (target->ci_type != &item_type && target->ci_type != &group_type &&
        target->ci_type != &sub_type) {
        atomic_fetch_add(&st.allow_refused, 1);
        return -EINVAL; /* the client's own type check (H8) */
    }
    atomic_fetch_add(&st.allow_ok, 1);
    return 0;
}

static void sn_drop_link(struct config_item *src, struct config_item *target)
{
    (void)src;
    (void)target;
    atomic_fetch_add(&st.drop_link, 1);
}

/* A user node is marked is_user by its make_* once it is complete. */
static struct snode *snode_new(struct ssys *sys,
                               const char *name,
                               const struct config_item_type *type,
                               bool is_group)
{
    struct snode *n = cfs_zalloc(sizeof(*n));

    if (!n) {
        return NULL;
    }
    atomic_fetch_add(&st.nodes_made, 1);
    n->is_group = is_group;
    n->owner = n;
    n->sys = sys;
    atomic_init(&n->state, SN_MADE);
    pthread_mutex_init(&n->lock, NULL);
    (void)snprintf(n->name, sizeof(n->name), "%s", name);
    memcpy(n->value, "none\n", 5);
    n->value_len = 5;
    if (is_group) {
        config_group_init_type_name(&n->group, name, type);
    } else {
        config_item_init_type_name(&n->group.cg_item, name, type);
    }
    return n;
}

/* The parent of make_* may be core's own pending/ group (C4), so the
 * subsystem comes from cg_subsys, which is set on every linked group (M6). */
static struct ssys *sys_of(struct config_group *parent)
{
    struct config_item *it = &parent->cg_item;

    if (parent->cg_subsys) {
        return container_of(parent->cg_subsys, struct ssys, su);
    }
    violation("M6: make_* on %s whose cg_subsys is NULL", config_item_name(it));
    while (it->ci_type != &ssys_type && it->ci_parent) {
        it = it->ci_parent;
    }
    return container_of(to_config_group(it), struct ssys, su.su_group);
}

static struct config_item *sn_make_item(struct config_group *parent,
                                        const char *name)
{
    struct ssys *sys = sys_of(parent);
    struct snode *n = NULL;

    expect_su_mutex_held(sys, "make_item");
    n = snode_new(sys, name, &item_type, false);
    if (!n) {
        return NULL;
    }
    n->is_user = true;
    atomic_fetch_add(&st.user_made, 1);
    return &n->group.cg_item;
}

static struct config_group *sn_make_group(struct config_group *parent,
                                          const char *name)
{
    struct ssys *sys = sys_of(parent);
    struct snode *g = NULL;
    struct snode *sub = NULL;

    expect_su_mutex_held(sys, "make_group");
    g = snode_new(sys, name, &group_type, true);
    if (!g) {
        return NULL;
    }
    sub = snode_new(sys, "sub", &sub_type, true);
    if (!sub) {
        config_group_put(&g->group);
        return ERR_PTR(-ENOMEM);
    }
    sub->owner = g;
    configfs_add_default_group(&sub->group, &g->group);
    g->is_user = true;
    atomic_fetch_add(&st.user_made, 1);
    return &g->group;
}

static void sn_disconnect_notify(struct config_group *parent,
                                 struct config_item *item)
{
    struct snode *n = to_snode(item);
    int expected = SN_MADE;

    (void)parent;
    expect_su_mutex_held(n->sys, "disconnect_notify");
    gate_event(n, EV_DISCONNECT);
    if (!n->is_user) {
        violation("RM12: disconnect_notify for default group %s",
                  to_snode(item)->name);
        return;
    }
    if (!atomic_compare_exchange_strong(
            &n->state, &expected, SN_DISCONNECTED)) {
        violation("MK11/RM11: disconnect_notify on %s in state %d",
                  to_snode(item)->name,
                  expected);
    }
    if (atomic_load(&n->inflight) != 0) {
        violation("T3/RM10: disconnect_notify on %s with %d attribute "
                  "callbacks running",
                  to_snode(item)->name,
                  atomic_load(&n->inflight));
    }
    atomic_fetch_add(&st.disconnected, 1);
}

static void sn_drop_item(struct config_group *parent, struct config_item *item)
{
    struct snode *n = to_snode(item);
    int expected = SN_DISCONNECTED;

    (void)parent;
    expect_su_mutex_held(n->sys, "drop_item");
    gate_event(n, EV_DROP);
    if (!n->is_user) {
        violation("RM12: drop_item for default group %s", to_snode(item)->name);
    }
    if (!atomic_compare_exchange_strong(&n->state, &expected, SN_DROPPED)) {
        violation("MK11/RM11: drop_item on %s in state %d (expected "
                  "disconnect_notify first)",
                  to_snode(item)->name,
                  expected);
    }
    if (item->ci_parent) {
        violation("RM12: drop_item on %s that is still linked",
                  to_snode(item)->name);
    }
    if (atomic_load(&n->inflight) != 0) {
        violation("T3: drop_item with attribute callbacks running");
    }
    atomic_fetch_add(&st.dropped, 1);
    config_item_put(item);
}

static int sn_commit_item(struct config_item *item)
{
    struct snode *n = to_snode(item);
    bool expected = false;

    expect_su_mutex_held(n->sys, "commit_item"); /* M22 (d) */
    if (!atomic_compare_exchange_strong(&n->committed, &expected, true)) {
        violation("C8: commit_item on committed %s", to_snode(item)->name);
    }
    atomic_fetch_add(&st.commits, 1);
    return 0;
}

static int sn_uncommit_item(struct config_item *item)
{
    struct snode *n = to_snode(item);
    bool expected = true;

    expect_su_mutex_held(n->sys, "uncommit_item");
    if (!atomic_compare_exchange_strong(&n->committed, &expected, false)) {
        violation("C8: uncommit_item on uncommitted %s", to_snode(item)->name);
    }
    atomic_fetch_add(&st.uncommits, 1);
    return 0;
}

static const struct configfs_item_operations linkable_item_ops = {
    .release = sn_release,
    .allow_link = sn_allow_link,
    .drop_link = sn_drop_link,
};

static const struct configfs_item_operations plain_item_ops = {
    .release = sn_release,
};

static const struct configfs_group_operations maker_item_ops = {
    .make_item = sn_make_item,
    .disconnect_notify = sn_disconnect_notify,
    .drop_item = sn_drop_item,
};

static const struct configfs_group_operations maker_group_ops = {
    .make_group = sn_make_group,
    .disconnect_notify = sn_disconnect_notify,
    .drop_item = sn_drop_item,
};

static const struct configfs_group_operations committable_ops = {
    .make_item = sn_make_item,
    .disconnect_notify = sn_disconnect_notify,
    .drop_item = sn_drop_item,
    .commit_item = sn_commit_item,
    .uncommit_item = sn_uncommit_item,
};

static const struct config_item_type item_type = {
    .ct_item_ops = &linkable_item_ops,
    .ct_attrs = item_attrs,
    .ct_name = "stress-item",
};

static const struct config_item_type group_type = {
    .ct_item_ops = &linkable_item_ops,
    .ct_attrs = group_attrs,
    .ct_name = "stress-group",
};

static const struct config_item_type sub_type = {
    .ct_item_ops = &plain_item_ops,
    .ct_group_ops = &maker_item_ops,
    .ct_attrs = group_attrs,
    .ct_name = "stress-sub",
};

static const struct config_item_type items_type = {
    .ct_item_ops = &plain_item_ops,
    .ct_group_ops = &maker_item_ops,
    .ct_name = "stress-items",
};

static const struct config_item_type groups_type = {
    .ct_item_ops = &plain_item_ops,
    .ct_group_ops = &maker_group_ops,
    .ct_name = "stress-groups",
};

static const struct config_item_type commit_type = {
    .ct_item_ops = &plain_item_ops,
    .ct_group_ops = &committable_ops,
    .ct_name = "stress-commit",
};

static void ssys_release(struct config_item *item)
{
    struct config_group *g = to_config_group(item);

    configfs_remove_default_groups(g);
    st_free(container_of(g, struct ssys, su.su_group));
    atomic_fetch_add(&st.sys_released, 1);
}

static ssize_t ssys_description_show(struct config_item *item, char *page)
{
    (void)item;
    return snprintf(page, CONFIGFS_PAGE_SIZE, "stress subsystem\n");
}

CONFIGFS_ATTR_RO(ssys_, description);

static struct configfs_attribute *ssys_attrs[] = {
    &ssys_attr_description,
    NULL,
};

static const struct configfs_item_operations ssys_item_ops = {
    .release = ssys_release,
};

static const struct config_item_type ssys_type = {
    .ct_item_ops = &ssys_item_ops,
    .ct_attrs = ssys_attrs,
    .ct_name = "stress-subsystem",
};

/* Allocate and register a subsystem; NULL on any failure. */
static struct ssys *ssys_register(const char *name, int *ret_rc)
{
    static const struct {
        const char *name;
        const struct config_item_type *type;
    } defaults[] = {
        {"items", &items_type},
        {"groups", &groups_type},
        {"commit", &commit_type},
    };
    struct ssys *sys = cfs_zalloc(sizeof(*sys));
    size_t i;
    int rc;

    if (!sys) {
        *ret_rc = -ENOMEM;
        return NULL;
    }
    atomic_fetch_add(&st.sys_made, 1);
    pthread_mutex_init(&sys->su.su_mutex.lock, NULL);
    config_group_init_type_name(&sys->su.su_group, name, &ssys_type);
    for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        struct snode *d =
            snode_new(sys, defaults[i].name, defaults[i].type, true);

        if (!d) {
            config_group_put(&sys->su.su_group);
            *ret_rc = -ENOMEM;
            return NULL;
        }
        configfs_add_default_group(&d->group, &sys->su.su_group);
    }
    rc = configfs_register_subsystem(&sys->su);
    *ret_rc = rc;
    if (rc != 0) {
        config_group_put(&sys->su.su_group);
        return NULL;
    }
    return sys;
}

static void ssys_unregister(struct ssys *sys)
{
    configfs_unregister_subsystem(&sys->su);
    pthread_mutex_destroy(&sys->su.su_mutex.lock);
    config_group_put(&sys->su.su_group);
}

/* ---- allowed results --------------------------------------------------- */

enum {
    R_OK = 1u << 0,
    R_ENOENT = 1u << 1,
    R_EEXIST = 1u << 2,
    R_EBUSY = 1u << 3,
    R_ENOTEMPTY = 1u << 4,
    R_EPERM = 1u << 5,
    R_EINVAL = 1u << 6,
};

static unsigned int result_bit(int rc)
{
    switch (rc) {
    case 0:
        return R_OK;
    case -ENOENT:
        return R_ENOENT;
    case -EEXIST:
        return R_EEXIST;
    case -EBUSY:
        return R_EBUSY;
    case -ENOTEMPTY:
        return R_ENOTEMPTY;
    case -EPERM:
        return R_EPERM;
    case -EINVAL:
        return R_EINVAL;
    default:
        return 0;
    }
}

/* ---- workers ----------------------------------------------------------- */

#define NI 8 /* items/iN */
#define NG 4 /* groups/gN, each with sub/sM */
#define NS 3
#define NC 6 /* commit/{pending,live}/cN */
#define NL 3 /* link names lN */

enum op {
    OP_MKDIR,
    OP_RMDIR,
    OP_STORE,
    OP_SHOW,
    OP_SYMLINK,
    OP_UNLINK,
    OP_READLINK,
    OP_READDIR,
    OP_STAT,
    OP_COMMIT,
    OP_UNCOMMIT,
    OP_TXN,
    OP_AUX,
    N_OPS
};

static const char *const op_names[N_OPS] = {
    "mkdir",
    "rmdir",
    "store",
    "show",
    "symlink",
    "unlink",
    "readlink",
    "readdir",
    "stat",
    "commit",
    "uncommit",
    "txn",
    "aux-register",
};

/* Relative weights of the operations. */
static const unsigned int op_weight[N_OPS] = {
    [OP_MKDIR] = 14,
    [OP_RMDIR] = 14,
    [OP_STORE] = 12,
    [OP_SHOW] = 12,
    [OP_SYMLINK] = 6,
    [OP_UNLINK] = 12,
    [OP_READLINK] = 3,
    [OP_READDIR] = 6,
    [OP_STAT] = 3,
    [OP_COMMIT] = 5,
    [OP_UNCOMMIT] = 5,
    [OP_TXN] = 3,
    [OP_AUX] = 1,
};

struct worker {
    pthread_t thread;
    int id;
    uint64_t rng;
    unsigned long max_ops;
    struct timespec deadline;
    unsigned long n_ops;
    unsigned long ok[N_OPS];
    unsigned long total[N_OPS];
    _Atomic(const char *) doing; /* for the deadlock report */
    int aux_seq;
};

static const char *root = "/stress";
static pthread_barrier_t start_barrier;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int workers_done;

static uint64_t rnd(struct worker *w)
{
    /* xorshift64* */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 2685821657736338717ull;
}

static unsigned int rnd_below(struct worker *w, unsigned int n)
{
    return (unsigned int)((rnd(w) >> 33) % n);
}

static bool past(const struct timespec *deadline)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static void check_rc(struct worker *w,
                     enum op op,
                     const char *path,
                     int rc,
                     unsigned int allowed)
{
    w->total[op]++;
    if (rc == 0) {
        w->ok[op]++;
    }
    if (!(result_bit(rc) & allowed)) {
        violation("%s %s: returned %d (%s), not allowed here",
                  op_names[op],
                  path,
                  rc,
                  strerror(-rc));
    }
}

/* The kinds of directories in the shared tree. */
enum dir_kind {
    D_ITEM,      /* items/iN */
    D_GROUP,     /* groups/gN */
    D_SUB,       /* groups/gN/sub (a default group) */
    D_SUB_ITEM,  /* groups/gN/sub/sM */
    D_PENDING,   /* commit/pending/cN */
    D_LIVE,      /* commit/live/cN */
    D_CONTAINER, /* items, groups, commit: wrong type for a link target */
    N_DIR_KINDS
};

static enum dir_kind random_dir(struct worker *w, char *out, size_t size)
{
    enum dir_kind k = (enum dir_kind)rnd_below(w, N_DIR_KINDS);

    switch (k) {
    case D_ITEM:
        (void)snprintf(out, size, "%s/items/i%u", root, rnd_below(w, NI));
        break;
    case D_GROUP:
        (void)snprintf(out, size, "%s/groups/g%u", root, rnd_below(w, NG));
        break;
    case D_SUB:
        (void)snprintf(out, size, "%s/groups/g%u/sub", root, rnd_below(w, NG));
        break;
    case D_SUB_ITEM:
        (void)snprintf(out,
                       size,
                       "%s/groups/g%u/sub/s%u",
                       root,
                       rnd_below(w, NG),
                       rnd_below(w, NS));
        break;
    case D_PENDING:
        (void)snprintf(
            out, size, "%s/commit/pending/c%u", root, rnd_below(w, NC));
        break;
    case D_LIVE:
        (void)snprintf(out, size, "%s/commit/live/c%u", root, rnd_below(w, NC));
        break;
    default:
        k = D_CONTAINER;
        (void)snprintf(
            out,
            size,
            "%s/%s",
            root,
            (const char *[]){"items", "groups", "commit"}[rnd_below(w, 3)]);
        break;
    }
    return k;
}

/* A directory that can host links: an item or a user group. */
static void random_link_dir(struct worker *w, char *out, size_t size)
{
    for (;;) {
        enum dir_kind k = random_dir(w, out, size);

        if (k == D_ITEM || k == D_GROUP || k == D_SUB_ITEM || k == D_PENDING ||
            k == D_LIVE) {
            return;
        }
    }
}

static void do_mkdir(struct worker *w, struct cfs_txn *txn)
{
    char path[128];
    unsigned int allowed = R_OK | R_EEXIST;

    switch (rnd_below(w, 4)) {
    case 0:
        (void)snprintf(
            path, sizeof(path), "%s/items/i%u", root, rnd_below(w, NI));
        break;
    case 1:
        (void)snprintf(
            path, sizeof(path), "%s/groups/g%u", root, rnd_below(w, NG));
        break;
    case 2:
        (void)snprintf(path,
                       sizeof(path),
                       "%s/groups/g%u/sub/s%u",
                       root,
                       rnd_below(w, NG),
                       rnd_below(w, NS));
        allowed |= R_ENOENT; /* the group is not there (MK1, T5) */
        break;
    default:
        (void)snprintf(path,
                       sizeof(path),
                       "%s/commit/pending/c%u",
                       root,
                       rnd_below(w, NC));
        break; /* EEXIST also when live/ has it (C5) */
    }
    check_rc(w, OP_MKDIR, path, cfs_mkdir(txn, path), allowed);
}

static void do_rmdir(struct worker *w)
{
    char path[128];
    /* ENOENT: gone; EBUSY: incoming links (RM6, RM7); ENOTEMPTY: outgoing
     * links or user children (RM7). */
    unsigned int allowed = R_OK | R_ENOENT | R_EBUSY | R_ENOTEMPTY;
    enum dir_kind k = random_dir(w, path, sizeof(path));

    if (k == D_LIVE || k == D_SUB || k == D_CONTAINER) {
        /* An item in live/ (C6); a default group (RM3). */
        allowed = R_EPERM | R_ENOENT;
    }
    check_rc(w, OP_RMDIR, path, cfs_rmdir(NULL, path), allowed);
}

static void attr_path(struct worker *w,
                      char *out,
                      size_t size,
                      const char **ret_attr,
                      enum dir_kind *ret_kind)
{
    char dir[112];
    enum dir_kind k;
    const char *attr;

    do {
        k = random_dir(w, dir, sizeof(dir));
    } while (k == D_CONTAINER);
    attr = "value";
    if ((k == D_ITEM || k == D_SUB_ITEM || k == D_PENDING || k == D_LIVE) &&
        rnd_below(w, 2)) {
        attr = "num";
    }
    (void)snprintf(out, size, "%s/%s", dir, attr);
    *ret_attr = attr;
    *ret_kind = k;
}

static void do_store(struct worker *w, struct cfs_txn *txn)
{
    char path[128];
    char val[32];
    const char *attr = NULL;
    enum dir_kind k;
    unsigned int allowed = R_OK | R_ENOENT;
    int len;

    attr_path(w, path, sizeof(path), &attr, &k);
    if (strcmp(attr, "num") == 0) {
        len = snprintf(val, sizeof(val), "%u\n", rnd_below(w, 1000));
    } else {
        len = snprintf(val, sizeof(val), "t%d-%lu\n", w->id, w->n_ops);
        if (k == D_PENDING || k == D_LIVE) {
            /* Committed, or committed between lookup and store. */
            allowed |= R_EBUSY;
        }
    }
    check_rc(
        w, OP_STORE, path, cfs_write(txn, path, val, (size_t)len), allowed);
}

/* Digits from @p, at least one; @return the first byte after them. */
static const char *skip_digits(const char *p)
{
    const char *start = p;

    while (*p >= '0' && *p <= '9') {
        p++;
    }
    return p > start ? p : NULL;
}

/* A value some store wrote, whole: "none\n" (never written), "t<id>-<n>\n"
 * for value, "<n>\n" for num. A torn or mixed value fails. */
static bool value_well_formed(const char *attr, const char *buf, size_t len)
{
    const char *p = buf;

    if (len == 0 || buf[len] != '\0' || strlen(buf) != len ||
        buf[len - 1] != '\n') {
        return false;
    }
    if (strcmp(attr, "num") == 0) {
        p = skip_digits(p + (*p == '-'));
    } else if (strcmp(buf, "none\n") == 0) {
        return true;
    } else if (*p == 't') {
        p = skip_digits(p + 1);
        p = p && *p == '-' ? skip_digits(p + 1) : NULL;
    } else {
        p = NULL;
    }
    return p && strcmp(p, "\n") == 0;
}

static void do_show(struct worker *w)
{
    char path[128];
    const char *attr = NULL;
    enum dir_kind k;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    attr_path(w, path, sizeof(path), &attr, &k);
    rc = cfs_show(path, &buf, &len);
    check_rc(w, OP_SHOW, path, rc, R_OK | R_ENOENT);
    if (rc == 0) {
        if (!value_well_formed(attr, buf, len)) {
            violation("show %s: malformed value (%zu bytes)", path, len);
        }
        cfs_free(buf);
    }
}

static void do_symlink(struct worker *w, struct cfs_txn *txn)
{
    char dir[112];
    char path[128];
    char target[128];
    enum dir_kind k;
    unsigned int allowed = R_OK | R_ENOENT | R_EEXIST;

    random_link_dir(w, dir, sizeof(dir));
    (void)snprintf(path, sizeof(path), "%s/l%u", dir, rnd_below(w, NL));
    k = random_dir(w, target, sizeof(target));
    if (k == D_CONTAINER) {
        /* allow_link refuses that type (SL7) - when it gets asked. */
        allowed = R_ENOENT | R_EEXIST | R_EINVAL;
    }
    check_rc(w, OP_SYMLINK, path, cfs_symlink(txn, path, target), allowed);
}

static void do_unlink(struct worker *w)
{
    char dir[112];
    char path[128];

    random_link_dir(w, dir, sizeof(dir));
    (void)snprintf(path, sizeof(path), "%s/l%u", dir, rnd_below(w, NL));
    check_rc(w, OP_UNLINK, path, cfs_unlink(NULL, path), R_OK | R_ENOENT);
}

static void do_readlink(struct worker *w)
{
    char dir[112];
    char path[128];
    char *target = NULL;
    int rc;

    random_link_dir(w, dir, sizeof(dir));
    (void)snprintf(path, sizeof(path), "%s/l%u", dir, rnd_below(w, NL));
    rc = cfs_readlink(path, &target);
    check_rc(w, OP_READLINK, path, rc, R_OK | R_ENOENT);
    if (rc == 0) {
        if (strncmp(target, root, strlen(root)) != 0 ||
            target[strlen(root)] != '/') {
            violation("readlink %s: target %s outside %s", path, target, root);
        }
        cfs_free(target);
    }
}

static void do_readdir(struct worker *w)
{
    char path[128];
    struct cfs_entry *ents = NULL;
    size_t n = 0;
    size_t i;
    size_t j;
    enum dir_kind k = random_dir(w, path, sizeof(path));
    int rc;

    if (rnd_below(w, 8) == 0) {
        (void)snprintf(path, sizeof(path), "/");
        k = D_CONTAINER;
    }
    rc = cfs_readdir(path, &ents, &n);
    check_rc(w, OP_READDIR, path, rc, R_OK | R_ENOENT);
    if (rc != 0) {
        return;
    }
    for (i = 0; i < n; i++) {
        for (j = i + 1; j < n; j++) {
            if (strcmp(ents[i].name, ents[j].name) == 0) {
                violation("readdir %s: %s listed twice", path, ents[i].name);
            }
        }
    }
    /* Attributes first, in declaration order (docs/DESIGN.md §3). */
    if (k == D_ITEM || k == D_SUB_ITEM || k == D_PENDING || k == D_LIVE) {
        if (n < 3 || strcmp(ents[0].name, "value") != 0 ||
            strcmp(ents[1].name, "num") != 0 ||
            strcmp(ents[2].name, "gate") != 0) {
            violation("readdir %s: attributes not first in order", path);
        }
    }
    cfs_entries_free(ents, n);
}

static void do_stat(struct worker *w)
{
    char path[128];
    struct cfs_entry e;
    int rc;

    random_dir(w, path, sizeof(path));
    memset(&e, 0, sizeof(e));
    rc = cfs_stat(path, &e);
    check_rc(w, OP_STAT, path, rc, R_OK | R_ENOENT);
    if (rc == 0) {
        cfs_entry_done(&e);
    }
}

static void do_rename(struct worker *w, bool commit, struct cfs_txn *txn)
{
    char from[128];
    char to[128];
    unsigned int c = rnd_below(w, NC);

    (void)snprintf(from,
                   sizeof(from),
                   "%s/commit/%s/c%u",
                   root,
                   commit ? "pending" : "live",
                   c);
    (void)snprintf(to,
                   sizeof(to),
                   "%s/commit/%s/c%u",
                   root,
                   commit ? "live" : "pending",
                   c);
    check_rc(w,
             commit ? OP_COMMIT : OP_UNCOMMIT,
             from,
             cfs_rename(txn, from, to),
             R_OK | R_ENOENT);
}

/* A batch of mutations, then commit or abort; an abort must succeed: no
 * callback of this subsystem refuses an inverse step. */
static void do_txn(struct worker *w)
{
    struct cfs_txn *txn = NULL;
    unsigned int i;
    unsigned int n = 2 + rnd_below(w, 4);
    int rc = cfs_txn_begin(&txn);

    check_rc(w, OP_TXN, "begin", rc, R_OK);
    if (rc != 0) {
        return;
    }
    for (i = 0; i < n; i++) {
        switch (rnd_below(w, 4)) {
        case 0:
            do_mkdir(w, txn);
            break;
        case 1:
            do_store(w, txn);
            break;
        case 2:
            do_symlink(w, txn);
            break;
        default:
            do_rename(w, rnd_below(w, 2), txn);
            break;
        }
    }
    if (rnd_below(w, 2)) {
        cfs_txn_commit(txn);
    } else {
        rc = cfs_txn_abort(txn);
        check_rc(w, OP_TXN, "abort", rc, R_OK);
    }
}

/* A subsystem of this thread's own comes and goes while the others work:
 * registration against operations (M24, H7), unregistration with an item
 * and a link inside (T7). */
static void do_aux(struct worker *w)
{
    char name[32];
    char path[64];
    char link[80];
    struct ssys *sys = NULL;
    int rc;

    (void)snprintf(name, sizeof(name), "aux-%d-%d", w->id, w->aux_seq++ % 2);
    sys = ssys_register(name, &rc);
    check_rc(w, OP_AUX, name, rc, R_OK);
    if (!sys) {
        return;
    }
    (void)snprintf(path, sizeof(path), "/%s/items/a", name);
    check_rc(w, OP_AUX, path, cfs_mkdir(NULL, path), R_OK);
    (void)snprintf(link, sizeof(link), "%s/l0", path);
    check_rc(w, OP_AUX, link, cfs_symlink(NULL, link, path), R_OK);
    ssys_unregister(sys);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    unsigned int total_weight = 0;
    unsigned int i;

    for (i = 0; i < N_OPS; i++) {
        total_weight += op_weight[i];
    }
    pthread_barrier_wait(&start_barrier);
    while (w->n_ops < w->max_ops && !past(&w->deadline)) {
        unsigned int r = rnd_below(w, total_weight);
        enum op op = OP_MKDIR;

        for (i = 0; i < N_OPS; i++) {
            if (r < op_weight[i]) {
                op = (enum op)i;
                break;
            }
            r -= op_weight[i];
        }
        atomic_store(&w->doing, op_names[op]);
        switch (op) {
        case OP_MKDIR:
            do_mkdir(w, NULL);
            break;
        case OP_RMDIR:
            do_rmdir(w);
            break;
        case OP_STORE:
            do_store(w, NULL);
            break;
        case OP_SHOW:
            do_show(w);
            break;
        case OP_SYMLINK:
            do_symlink(w, NULL);
            break;
        case OP_UNLINK:
            do_unlink(w);
            break;
        case OP_READLINK:
            do_readlink(w);
            break;
        case OP_READDIR:
            do_readdir(w);
            break;
        case OP_STAT:
            do_stat(w);
            break;
        case OP_COMMIT:
            do_rename(w, true, NULL);
            break;
        case OP_UNCOMMIT:
            do_rename(w, false, NULL);
            break;
        case OP_TXN:
            do_txn(w);
            break;
        default:
            do_aux(w);
            break;
        }
        w->n_ops++;
    }
    atomic_store(&w->doing, "done");
    pthread_mutex_lock(&done_lock);
    workers_done++;
    pthread_cond_broadcast(&done_cond);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

/* ---- configuration ----------------------------------------------------- */

static long env_long(const char *name, long def, long min, long max)
{
    const char *s = getenv(name);
    char *end = NULL;
    long v;

    if (!s || !*s) {
        return def;
    }
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < min || v > max) {
        (void)fprintf(stderr, "%s=%s ignored (%ld..%ld)\n", name, s, min, max);
        return def;
    }
    return v;
}

static long stress_seconds(void)
{
    return env_long("CFS_STRESS_SECONDS", 5, 1, 3600);
}

/* ---- running a load ---------------------------------------------------- */

/* How long past the wall-clock bound the workers may take to finish their
 * last operation before the run is declared deadlocked. */
#define GRACE_SECONDS 120

static void run_load(double seconds)
{
    int nthreads = (int)env_long("CFS_STRESS_THREADS", 8, 1, 256);
    unsigned long max_ops =
        (unsigned long)env_long("CFS_STRESS_ITERATIONS", 1000000, 1, 1L << 40);
    uint64_t seed = (uint64_t)env_long(
        "CFS_STRESS_SEED", (long)time(NULL), 0, 0x7fffffffffffffffL);
    struct worker *ws = calloc((size_t)nthreads, sizeof(*ws));
    struct timespec deadline;
    struct timespec give_up;
    unsigned long totals[N_OPS] = {0};
    unsigned long oks[N_OPS] = {0};
    unsigned long all = 0;
    int i;
    int j;

    assert_non_null(ws);
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)seconds;
    deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    print_message("# load: %d threads, %.1f s, at most %lu ops each, "
                  "CFS_STRESS_SEED=%" PRIu64 "\n",
                  nthreads,
                  seconds,
                  max_ops,
                  seed);
    workers_done = 0;
    assert_int_equal(
        pthread_barrier_init(&start_barrier, NULL, (unsigned int)nthreads), 0);
    for (i = 0; i < nthreads; i++) {
        ws[i].id = i;
        ws[i].rng = (seed + 1) * 0x9e3779b97f4a7c15ull + (uint64_t)i * 7919;
        ws[i].rng |= 1;
        ws[i].max_ops = max_ops;
        ws[i].deadline = deadline;
        atomic_init(&ws[i].doing, "starting");
        assert_int_equal(
            pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]), 0);
    }

    /* Wait for the workers with a bound: a deadlock in core becomes a
     * report of what each thread was doing, not a hung test. */
    clock_gettime(CLOCK_REALTIME, &give_up);
    give_up.tv_sec += (time_t)seconds + GRACE_SECONDS;
    pthread_mutex_lock(&done_lock);
    while (workers_done < nthreads) {
        if (pthread_cond_timedwait(&done_cond, &done_lock, &give_up) ==
            ETIMEDOUT) {
            break;
        }
    }
    if (workers_done < nthreads) {
        (void)fprintf(stderr,
                      "stress: %d of %d workers still running %d s after "
                      "the bound; deadlock?\n",
                      nthreads - workers_done,
                      nthreads,
                      GRACE_SECONDS);
        for (i = 0; i < nthreads; i++) {
            (void)fprintf(
                stderr, "  worker %d: %s\n", i, atomic_load(&ws[i].doing));
        }
        abort();
    }
    pthread_mutex_unlock(&done_lock);
    for (i = 0; i < nthreads; i++) {
        pthread_join(ws[i].thread, NULL);
        for (j = 0; j < N_OPS; j++) {
            totals[j] += ws[i].total[j];
            oks[j] += ws[i].ok[j];
        }
        all += ws[i].n_ops;
    }
    pthread_barrier_destroy(&start_barrier);
    free(ws);

    print_message("# load: %lu operations\n", all);
    for (j = 0; j < N_OPS; j++) {
        print_message(
            "#   %-12s %8lu calls %8lu ok\n", op_names[j], totals[j], oks[j]);
    }
    expect_no_violations();
    /* A load that never succeeds at something tests nothing. */
    if (all >= 20000) {
        static const enum op must_succeed[] = {
            OP_MKDIR,
            OP_RMDIR,
            OP_STORE,
            OP_SHOW,
            OP_SYMLINK,
            OP_UNLINK,
            OP_READDIR,
            OP_COMMIT,
            OP_UNCOMMIT,
        };
        size_t k;

        for (k = 0; k < sizeof(must_succeed) / sizeof(must_succeed[0]); k++) {
            if (oks[must_succeed[k]] == 0) {
                fail_msg("no %s ever succeeded", op_names[must_succeed[k]]);
            }
        }
    }
}

/* ---- teardown and accounting ------------------------------------------- */

static void must(int rc, const char *what, const char *path)
{
    if (rc != 0) {
        fail_msg("teardown: %s %s: %d (%s)", what, path, rc, strerror(-rc));
    }
}

static void unlink_all_in(const char *dir)
{
    struct cfs_entry *ents = NULL;
    size_t n = 0;
    size_t i;
    int rc = cfs_readdir(dir, &ents, &n);

    if (rc == -ENOENT) {
        return;
    }
    must(rc, "readdir", dir);
    for (i = 0; i < n; i++) {
        char path[160];

        if (ents[i].kind != CFS_KIND_LINK) {
            continue;
        }
        (void)snprintf(path, sizeof(path), "%s/%s", dir, ents[i].name);
        must(cfs_unlink(NULL, path), "unlink", path);
    }
    cfs_entries_free(ents, n);
}

static void rmdir_if_there(const char *path)
{
    int rc = cfs_rmdir(NULL, path);

    if (rc != -ENOENT) {
        must(rc, "rmdir", path);
    }
}

static void expect_empty(const char *dir)
{
    struct cfs_entry *ents = NULL;
    size_t n = 0;

    must(cfs_readdir(dir, &ents, &n), "readdir", dir);
    if (n != 0) {
        fail_msg("teardown: %s still lists %zu entries (first %s)",
                 dir,
                 n,
                 ents[0].name);
    }
    cfs_entries_free(ents, n);
}

/* Everything users made goes, by the rules: links first, uncommit, then
 * rmdir bottom-up (RM14). Single-threaded, so every step must succeed. */
static void teardown_tree(void)
{
    char path[128];
    char to[128];
    int rc;
    int i;
    int j;

    for (i = 0; i < NI; i++) {
        (void)snprintf(path, sizeof(path), "%s/items/i%d", root, i);
        unlink_all_in(path);
    }
    for (i = 0; i < NG; i++) {
        (void)snprintf(path, sizeof(path), "%s/groups/g%d", root, i);
        unlink_all_in(path);
        for (j = 0; j < NS; j++) {
            (void)snprintf(
                path, sizeof(path), "%s/groups/g%d/sub/s%d", root, i, j);
            unlink_all_in(path);
        }
    }
    for (i = 0; i < NC; i++) {
        (void)snprintf(path, sizeof(path), "%s/commit/pending/c%d", root, i);
        unlink_all_in(path);
        (void)snprintf(path, sizeof(path), "%s/commit/live/c%d", root, i);
        unlink_all_in(path);
        (void)snprintf(to, sizeof(to), "%s/commit/pending/c%d", root, i);
        rc = cfs_rename(NULL, path, to);
        if (rc != -ENOENT) {
            must(rc, "uncommit", path);
        }
    }
    for (i = 0; i < NG; i++) {
        for (j = 0; j < NS; j++) {
            (void)snprintf(
                path, sizeof(path), "%s/groups/g%d/sub/s%d", root, i, j);
            rmdir_if_there(path);
        }
        (void)snprintf(path, sizeof(path), "%s/groups/g%d", root, i);
        rmdir_if_there(path);
    }
    for (i = 0; i < NI; i++) {
        (void)snprintf(path, sizeof(path), "%s/items/i%d", root, i);
        rmdir_if_there(path);
    }
    for (i = 0; i < NC; i++) {
        (void)snprintf(path, sizeof(path), "%s/commit/pending/c%d", root, i);
        rmdir_if_there(path);
    }
    (void)snprintf(path, sizeof(path), "%s/items", root);
    expect_empty(path);
    (void)snprintf(path, sizeof(path), "%s/groups", root);
    expect_empty(path);
    (void)snprintf(path, sizeof(path), "%s/commit/pending", root);
    expect_empty(path);
    (void)snprintf(path, sizeof(path), "%s/commit/live", root);
    expect_empty(path);
}

/* Every make_* result was dropped once and released; every accepted link
 * was dropped; every core block was freed. */
static void expect_all_released(void)
{
    long made = atomic_load(&st.nodes_made);
    long released = atomic_load(&st.nodes_released);

    print_message("# accounting: %ld nodes made, %ld released; %ld user items, "
                  "%ld dropped; %ld links accepted, %ld dropped, %ld "
                  "refused; %ld commits, %ld uncommits; %ld core blocks "
                  "live\n",
                  made,
                  released,
                  atomic_load(&st.user_made),
                  atomic_load(&st.dropped),
                  atomic_load(&st.allow_ok),
                  atomic_load(&st.drop_link),
                  atomic_load(&st.allow_refused),
                  atomic_load(&st.commits),
                  atomic_load(&st.uncommits),
                  atomic_load(&alloc_live));
    expect_no_violations();
    assert_int_equal(atomic_load(&st.user_made), atomic_load(&st.dropped));
    assert_int_equal(atomic_load(&st.dropped), atomic_load(&st.disconnected));
    assert_int_equal(made, released);
    assert_int_equal(atomic_load(&st.allow_ok), atomic_load(&st.drop_link));
    assert_int_equal(atomic_load(&st.sys_made), atomic_load(&st.sys_released));
    assert_int_equal(atomic_load(&alloc_live), alloc_at_start);
}

static void reset_counters(void)
{
    memset(&st, 0, sizeof(st));
    atomic_store(&n_violations, 0);
}

/* The subsystem of the running test, for the cleanup after a failure. */
static struct ssys *current_sys;

static void register_main(void)
{
    int rc = 0;
    struct ssys *sys = NULL;

    reset_counters();
    alloc_at_start = atomic_load(&alloc_live);
    sys = ssys_register(root + 1, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(sys);
    current_sys = sys;
}

static void unregister_main(void)
{
    ssys_unregister(current_sys);
    current_sys = NULL;
}

/* After a failed test: let a held callback go, and take the subsystem
 * away, so that the next test starts from an empty tree. */
static int test_teardown(void **state)
{
    (void)state;
    pthread_mutex_lock(&gate.lock);
    atomic_store(&gate.armed, false);
    gate.open = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    if (current_sys) {
        unregister_main();
    }
    return 0;
}

/* ---- tests ------------------------------------------------------------- */

/* The load, then a teardown by the rules: all steps succeed, everything is
 * released (RM11, M20), links dropped (UL4), nothing leaks. */
static void test_stress_ops_then_teardown(void **state)
{
    (void)state;
    register_main();
    run_load((double)stress_seconds() / 2);
    teardown_tree();
    /* rmdir returned and nobody else holds a reference, so every user node
     * is released already (M20); what is left is the subsystem's three
     * default groups. */
    expect_no_violations();
    assert_int_equal(atomic_load(&st.user_made), atomic_load(&st.dropped));
    assert_int_equal(
        atomic_load(&st.nodes_made) - atomic_load(&st.nodes_released), 3);
    unregister_main();
    expect_all_released();
}

/* The load, then unregistration with the whole tree in place (T7): core
 * removes links, committed and pending items, groups, bottom-up, through
 * the callbacks. */
static void test_stress_ops_then_unregister(void **state)
{
    (void)state;
    register_main();
    run_load((double)stress_seconds() / 2);
    unregister_main();
    expect_all_released();
}

/* ---- T3: rmdir waits for running attribute callbacks ------------------- */

struct t3_call {
    pthread_t thread;
    const char *path;
    bool store;
    int rc;
    char buf[16];
    size_t len;
};

static void *t3_attr_thread(void *arg)
{
    struct t3_call *c = arg;
    char *buf = NULL;

    if (c->store) {
        c->rc = cfs_write(NULL, c->path, "x\n", 2);
    } else {
        c->rc = cfs_show(c->path, &buf, &c->len);
        if (c->rc == 0) {
            (void)snprintf(c->buf, sizeof(c->buf), "%s", buf);
            cfs_free(buf);
        }
    }
    return NULL;
}

static void *t3_rmdir_thread(void *arg)
{
    struct t3_call *c = arg;

    c->rc = cfs_rmdir(NULL, c->path);
    pthread_mutex_lock(&gate.lock);
    gate.rmdir_done = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    return NULL;
}

static struct timespec in_ms(long ms)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int event_index(int ev)
{
    int i;

    for (i = 0; i < gate.n_events; i++) {
        if (gate.events[i] == ev) {
            return i;
        }
    }
    return -1;
}

/*
 * How long rmdir is given to return (wrongly) while the gated callback is
 * held. rmdir returning at all in this window is the failure; not returning
 * is the expected outcome, which cannot be observed other than by waiting a
 * bounded time for the wrong one. Correctness does not depend on it: the
 * callback order checks below catch an rmdir that did not wait, whatever
 * the timing.
 */
#define T3_WINDOW_MS 300

/*
 * mkdir @dir; hold an attribute callback on @attr (in @dir's fragment);
 * rmdir @dir from another thread. rmdir must not return while the callback
 * runs; disconnect_notify and drop_item come after the callback ends
 * (RM10, RM11); a show started during the rmdir finishes before them or
 * answers ENOENT; a show or store started after rmdir returned is ENOENT and
 * calls nothing (T3, WR7, RD2).
 */
static void t3_run(const char *dir, const char *attr, bool store)
{
    struct t3_call held = {.path = attr, .store = store};
    struct t3_call late = {.store = false};
    struct t3_call rm = {.path = dir};
    char late_path[128];
    const char *name = strrchr(dir, '/') + 1;
    struct timespec until;
    char *buf = NULL;
    size_t len = 0;
    bool returned_early;

    register_main();
    assert_int_equal(cfs_mkdir(NULL, dir), 0);
    (void)snprintf(late_path, sizeof(late_path), "%s/value", dir);
    late.path = late_path;

    pthread_mutex_lock(&gate.lock);
    (void)snprintf(gate.owner, sizeof(gate.owner), "%s", name);
    gate.entered = gate.open = gate.rmdir_done = false;
    gate.n_events = 0;
    atomic_store(&gate.armed, true);
    pthread_mutex_unlock(&gate.lock);

    assert_int_equal(pthread_create(&held.thread, NULL, t3_attr_thread, &held),
                     0);
    pthread_mutex_lock(&gate.lock);
    until = in_ms(60000);
    while (!gate.entered) {
        if (pthread_cond_timedwait(&gate.cond, &gate.lock, &until) ==
            ETIMEDOUT) {
            break;
        }
    }
    assert_true(gate.entered);
    pthread_mutex_unlock(&gate.lock);

    assert_int_equal(pthread_create(&rm.thread, NULL, t3_rmdir_thread, &rm), 0);
    pthread_mutex_lock(&gate.lock);
    until = in_ms(T3_WINDOW_MS);
    while (!gate.rmdir_done) {
        if (pthread_cond_timedwait(&gate.cond, &gate.lock, &until) ==
            ETIMEDOUT) {
            break;
        }
    }
    returned_early = gate.rmdir_done;
    pthread_mutex_unlock(&gate.lock);

    /* A show that starts while rmdir waits. */
    assert_int_equal(pthread_create(&late.thread, NULL, t3_attr_thread, &late),
                     0);

    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.cond);
    /* Bounded, so that an rmdir that never comes back is a report. */
    until = in_ms(60000);
    while (!gate.rmdir_done) {
        if (pthread_cond_timedwait(&gate.cond, &gate.lock, &until) ==
            ETIMEDOUT) {
            (void)fprintf(stderr,
                          "T3: rmdir %s still running 60 s after the %s "
                          "ended; deadlock?\n",
                          dir,
                          store ? "store" : "show");
            abort();
        }
    }
    pthread_mutex_unlock(&gate.lock);

    pthread_join(held.thread, NULL);
    pthread_join(rm.thread, NULL);
    pthread_join(late.thread, NULL);

    if (returned_early) {
        fail_msg("T3: rmdir %s returned (%d) while a %s on %s was running",
                 dir,
                 rm.rc,
                 store ? "store" : "show",
                 attr);
    }
    assert_int_equal(held.rc, 0);
    if (!store) {
        assert_string_equal(held.buf, "gate\n");
    }
    assert_int_equal(rm.rc, 0);
    if (late.rc != 0 && late.rc != -ENOENT) {
        fail_msg("T3: show during rmdir returned %d", late.rc);
    }

    pthread_mutex_lock(&gate.lock);
    atomic_store(&gate.armed, false);
    {
        int exit_at = event_index(EV_CB_EXIT);
        int disc_at = event_index(EV_DISCONNECT);
        int drop_at = event_index(EV_DROP);

        pthread_mutex_unlock(&gate.lock);
        assert_true(exit_at >= 0);
        if (disc_at < 0 || drop_at < 0) {
            fail_msg("T3: rmdir of %s called no disconnect_notify/drop_item",
                     dir);
        }
        if (disc_at < exit_at || drop_at < exit_at) {
            fail_msg("T3/RM10: disconnect_notify (%d) or drop_item (%d) ran "
                     "before the %s ended (%d)",
                     disc_at,
                     drop_at,
                     store ? "store" : "show",
                     exit_at);
        }
    }

    /* After rmdir: nothing starts (T3, WR7). */
    assert_int_equal(cfs_show(attr, &buf, &len), -ENOENT);
    assert_int_equal(cfs_write(NULL, attr, "y", 1), -ENOENT);
    assert_int_equal(cfs_show(late_path, &buf, &len), -ENOENT);

    unregister_main();
    expect_all_released();
}

static void test_stress_t3_rmdir_waits_for_show(void **state)
{
    (void)state;
    t3_run("/stress/items/t3", "/stress/items/t3/gate", false);
}

static void test_stress_t3_rmdir_waits_for_store(void **state)
{
    (void)state;
    t3_run("/stress/items/t3", "/stress/items/t3/gate", true);
}

/* The fragment covers default groups: a show in groups/t3/sub holds off the
 * rmdir of groups/t3 (T3, RM10). */
static void test_stress_t3_rmdir_waits_for_default_group_show(void **state)
{
    (void)state;
    t3_run("/stress/groups/t3", "/stress/groups/t3/sub/gate", false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stress_t3_rmdir_waits_for_show,
                                  test_teardown),
        cmocka_unit_test_teardown(test_stress_t3_rmdir_waits_for_store,
                                  test_teardown),
        cmocka_unit_test_teardown(
            test_stress_t3_rmdir_waits_for_default_group_show, test_teardown),
        cmocka_unit_test_teardown(test_stress_ops_then_teardown, test_teardown),
        cmocka_unit_test_teardown(test_stress_ops_then_unregister,
                                  test_teardown),
    };
    int failed;

    cfs_set_alloc_funcs(st_malloc, st_realloc, st_free);
    {
        int rc = 0;
        struct ssys *sys = ssys_register("warm-up", &rc);

        if (!sys) {
            (void)fprintf(stderr, "warm-up registration failed: %d\n", rc);
            return 1;
        }
        ssys_unregister(sys);
    }
    failed = cmocka_run_group_tests_name("core-stress", tests, NULL, NULL);
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return failed;
}
