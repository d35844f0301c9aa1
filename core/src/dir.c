// SPDX-License-Identifier: MIT
/*
 * dir.c - the tree: path resolution, registration, mkdir, rmdir, rename.
 *
 * Lock order (take left before right, never the other way):
 *
 *   cfs__wlock  ->  su_mutex  ->  cfs__tree_lock  ->  frag->lock
 *
 * cfs__wlock, the mutation lock, serialises every mutation, transaction and
 * (un)registration; it is recursive for its holder so a store() may
 * register a group. Its holder may read the dirent tree without any other
 * lock, since only it changes the tree. It is held around make_item,
 * make_group, drop_item, disconnect_notify, store, bin write, allow_link,
 * drop_link, commit_item and uncommit_item.
 *
 * su_mutex (per subsystem) protects the client-visible hierarchy:
 * cg_children, ci_parent, ci_group, cg_subsys (M22). Core holds it around
 * make_*, around disconnect_notify + unlink + drop_item, while linking
 * default and registered groups, and around commit_item/uncommit_item (T9).
 *
 * cfs__tree_lock (rwlock) protects the dirent tree for readers: children
 * tables and lists, names, states, dependents, ci_dentry. Readers (stat,
 * readdir, show, readlink, depend_item) take it shared and never call a
 * callback under it; the mutation lock's holder takes it exclusive only for
 * the short moment it links, unlinks or re-states dirents.
 *
 * frag->lock counts show/store callbacks running on a fragment, so rmdir
 * can wait for them and none start after it (T3).
 *
 * Callbacks run under: make_*, disconnect_notify, drop_item, commit and
 * uncommit: cfs__wlock + su_mutex. store, bin write, allow_link, drop_link:
 * cfs__wlock. show, bin read: nothing. release: whatever lock the thread
 * dropping the last reference holds, never su_mutex or the tree lock.
 */
#include "internal.h"

/* ---- locks ------------------------------------------------------------- */

struct cfs__wlock cfs__wlock = {PTHREAD_MUTEX_INITIALIZER};
static _Thread_local unsigned int wlock_depth;
static _Thread_local unsigned int callback_depth;
pthread_rwlock_t cfs__tree_lock = PTHREAD_RWLOCK_INITIALIZER;

void cfs__wlock_acquire(void) CFS_NO_TSA
{
    if (wlock_depth++ == 0) {
        pthread_mutex_lock(&cfs__wlock.lock);
    }
}

void cfs__wlock_release(void) CFS_NO_TSA
{
    CFS_BUG_ON(wlock_depth == 0);
    if (--wlock_depth == 0) {
        pthread_mutex_unlock(&cfs__wlock.lock);
    }
}

bool cfs__wlock_held(void)
{
    return wlock_depth > 0;
}

bool cfs__in_callback(void)
{
    return callback_depth > 0;
}

void cfs__callback_enter(void)
{
    callback_depth++;
}

void cfs__callback_exit(void)
{
    callback_depth--;
}

void cfs__tree_rdlock(void)
{
    pthread_rwlock_rdlock(&cfs__tree_lock);
}

void cfs__tree_wrlock(void)
{
    pthread_rwlock_wrlock(&cfs__tree_lock);
}

void cfs__tree_unlock(void)
{
    pthread_rwlock_unlock(&cfs__tree_lock);
}

/* Lock the su_mutex of @group's subsystem; returns what to unlock, since
 * unlinking may clear cg_subsys in between. */
static pthread_mutex_t *su_lock(struct config_group *group)
{
    pthread_mutex_t *m =
        group && group->cg_subsys ? &group->cg_subsys->su_mutex.lock : NULL;

    if (m) {
        pthread_mutex_lock(m);
    }
    return m;
}

static void su_unlock(pthread_mutex_t *m)
{
    if (m) {
        pthread_mutex_unlock(m);
    }
}

/* ---- the root ---------------------------------------------------------- */

struct config_group cfs__root_group = {
    .cg_item =
        {
            .ci_name = cfs__root_group.cg_item.ci_namebuf,
            .ci_kref = {.refcount = 1},
            .ci_entry = LIST_HEAD_INIT(cfs__root_group.cg_item.ci_entry),
            .ci_dentry = &cfs__root,
        },
    .cg_children = LIST_HEAD_INIT(cfs__root_group.cg_children),
    .default_groups = LIST_HEAD_INIT(cfs__root_group.default_groups),
    .group_entry = LIST_HEAD_INIT(cfs__root_group.group_entry),
};

static char root_name[1];

struct cfs_dirent cfs__root = {
    .name = root_name,
    .kind = CFS_D_DIR,
    .state = CFS_S_READY,
    .flags = CFS_DF_ROOT,
    .item = &cfs__root_group.cg_item,
};

struct cfs_observer cfs__observer_cb;
bool cfs__observer_set;

void cfs_set_observer(const struct cfs_observer *observer)
{
    cfs__wlock_acquire();
    if (observer) {
        cfs__observer_cb = *observer;
    } else {
        memset(&cfs__observer_cb, 0, sizeof(cfs__observer_cb));
    }
    cfs__observer_set = observer != NULL;
    cfs__wlock_release();
}

/* ---- children tables --------------------------------------------------- */

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* Make room for one more child, so that the insert cannot fail. The new
 * table is filled and swapped in under the tree lock: readers may be
 * walking the old one. @pre the mutation lock, not the tree lock. */
static int htab_reserve(struct cfs_dirent *dir)
{
    struct cfs_dirent **tab;
    struct cfs_dirent **old;
    size_t cap;

    if (dir->hcount + 1 <= dir->hcap) {
        return 0;
    }
    cap = dir->hcap ? dir->hcap * 2 : 8;
    tab = cfs_zalloc(cap * sizeof(struct cfs_dirent *));
    if (!tab) {
        return -ENOMEM;
    }
    cfs__tree_wrlock();
    for (size_t i = 0; i < dir->hcap; i++) {
        struct cfs_dirent *d = dir->htab[i];

        while (d) {
            struct cfs_dirent *next = d->hnext;
            size_t b = d->hash & (cap - 1);

            d->hnext = tab[b];
            tab[b] = d;
            d = next;
        }
    }
    old = dir->htab;
    dir->htab = tab;
    dir->hcap = cap;
    cfs__tree_unlock();
    cfs_free(old);
    return 0;
}

/* The root is static: leave nothing allocated behind it once it is empty,
 * so that a program (or a test) ends with nothing allocated by core. */
static void root_trim(void)
{
    if (cfs__root.hcount == 0 && cfs__root.htab) {
        cfs_free(cfs__root.htab);
        cfs__root.htab = NULL;
        cfs__root.hcap = 0;
    }
}

/* Link @d as the newest child of @dir. @pre htab_reserve(dir) succeeded;
 * tree lock exclusive, or @dir not yet visible. */
static atomic_uint_fast64_t tree_nodes;

uint64_t cfs_tree_nodes(void)
{
    return atomic_load(&tree_nodes);
}

static void child_insert(struct cfs_dirent *dir, struct cfs_dirent *d)
{
    atomic_fetch_add(&tree_nodes, 1);
    size_t b = d->hash & (dir->hcap - 1);

    d->parent = dir;
    d->hnext = dir->htab[b];
    dir->htab[b] = d;
    dir->hcount++;
    d->next = NULL;
    d->prev = dir->last;
    if (dir->last) {
        dir->last->next = d;
    } else {
        dir->first = d;
    }
    dir->last = d;
    if (!(d->flags & CFS_DF_DEFAULT)) {
        dir->nchildren++;
    }
}

static void child_remove(struct cfs_dirent *dir, struct cfs_dirent *d)
{
    atomic_fetch_sub(&tree_nodes, 1);
    struct cfs_dirent **pp = &dir->htab[d->hash & (dir->hcap - 1)];

    while (*pp != d) {
        pp = &(*pp)->hnext;
    }
    *pp = d->hnext;
    d->hnext = NULL;
    dir->hcount--;
    if (d->prev) {
        d->prev->next = d->next;
    } else {
        dir->first = d->next;
    }
    if (d->next) {
        d->next->prev = d->prev;
    } else {
        dir->last = d->prev;
    }
    d->prev = d->next = NULL;
    if (!(d->flags & CFS_DF_DEFAULT)) {
        dir->nchildren--;
    }
    root_trim();
}

int cfs__link_reserve(struct cfs_dirent *dir)
{
    return htab_reserve(dir);
}

void cfs__link_insert(struct cfs_dirent *dir, struct cfs_dirent *link)
{
    link->hash = name_hash(link->name, link->name_len);
    child_insert(dir, link);
}

void cfs__link_detach(struct cfs_dirent *dir, struct cfs_dirent *link)
{
    child_remove(dir, link);
}

struct cfs_dirent *
cfs__dir_lookup(struct cfs_dirent *dir, const char *name, size_t len)
{
    uint32_t h;

    if (!dir->hcap) {
        return NULL;
    }
    h = name_hash(name, len);
    for (struct cfs_dirent *d = dir->htab[h & (dir->hcap - 1)]; d;
         d = d->hnext) {
        if (d->hash == h && d->name_len == len &&
            memcmp(d->name, name, len) == 0) {
            return d;
        }
    }
    return NULL;
}

bool cfs__dirent_ready(const struct cfs_dirent *d)
{
    return d->state == CFS_S_READY;
}

/* ---- attributes of a directory ----------------------------------------- */

static const struct config_item_type *dir_type(const struct cfs_dirent *d)
{
    return d->item ? d->item->ci_type : NULL;
}

unsigned int cfs__n_attrs(const struct config_item_type *t)
{
    unsigned int n = 0;

    if (t && t->ct_attrs) {
        while (t->ct_attrs[n]) {
            n++;
        }
    }
    return n;
}

unsigned int cfs__n_bin_attrs(const struct config_item_type *t)
{
    unsigned int n = 0;

    if (t && t->ct_bin_attrs) {
        while (t->ct_bin_attrs[n]) {
            n++;
        }
    }
    return n;
}

bool cfs__attr_hidden(const struct cfs_dirent *d, unsigned int bit)
{
    return d->hidden && (d->hidden[bit / 8] & (1u << (bit % 8)));
}

struct configfs_attribute *cfs__dir_attr(struct cfs_dirent *d, unsigned idx)
{
    return dir_type(d)->ct_attrs[idx];
}

struct configfs_bin_attribute *cfs__dir_bin_attr(struct cfs_dirent *d,
                                                 unsigned idx)
{
    return dir_type(d)->ct_bin_attrs[idx];
}

int cfs__attr_lookup(struct cfs_dirent *dir,
                     const char *name,
                     size_t len,
                     unsigned int *ret_idx)
{
    const struct config_item_type *t = dir_type(dir);
    unsigned int na = cfs__n_attrs(t);
    unsigned int nb = cfs__n_bin_attrs(t);

    for (unsigned int i = 0; i < na; i++) {
        const char *an = t->ct_attrs[i]->ca_name;

        if (!cfs__attr_hidden(dir, i) && strlen(an) == len &&
            memcmp(an, name, len) == 0) {
            *ret_idx = i;
            return 1;
        }
    }
    for (unsigned int i = 0; i < nb; i++) {
        const char *an = t->ct_bin_attrs[i]->cb_attr.ca_name;

        if (!cfs__attr_hidden(dir, na + i) && strlen(an) == len &&
            memcmp(an, name, len) == 0) {
            *ret_idx = i;
            return 2;
        }
    }
    return 0;
}

/* ---- operations tables ------------------------------------------------- */

/*
 * A committable group G (C1) gets two default groups made by core: pending/
 * forwards mkdir, rmdir and links to G's operations with itself as the
 * group argument (C4); live/ has no group operations (C6).
 */
struct cfs_commit_pair {
    struct config_group pending;
    struct config_group live;
    struct config_group *owner;
    struct config_item_type pending_type;
    struct config_item_type live_type;
    struct configfs_group_operations pending_gops;
    struct configfs_item_operations pending_iops;
    struct configfs_item_operations live_iops;
    atomic_int refs;
};

static const struct configfs_group_operations *
owner_gops(struct cfs_commit_pair *pair)
{
    return pair->owner->cg_item.ci_type->ct_group_ops;
}

static struct config_item *pending_make_item(struct config_group *group,
                                             const char *name)
{
    struct cfs_commit_pair *pair =
        container_of(group, struct cfs_commit_pair, pending);

    return owner_gops(pair)->make_item(group, name);
}

static struct config_group *pending_make_group(struct config_group *group,
                                               const char *name)
{
    struct cfs_commit_pair *pair =
        container_of(group, struct cfs_commit_pair, pending);

    return owner_gops(pair)->make_group(group, name);
}

static struct cfs_commit_pair *pair_of_group(struct config_group *group)
{
    struct cfs_dirent *d = group->cg_item.ci_dentry;

    if (d && (d->flags & CFS_DF_LIVE)) {
        return container_of(group, struct cfs_commit_pair, live);
    }
    return container_of(group, struct cfs_commit_pair, pending);
}

static void pending_disconnect_notify(struct config_group *group,
                                      struct config_item *item)
{
    owner_gops(pair_of_group(group))->disconnect_notify(group, item);
}

static void pending_drop_item(struct config_group *group,
                              struct config_item *item)
{
    owner_gops(pair_of_group(group))->drop_item(group, item);
}

static int pending_allow_link(struct config_item *src,
                              struct config_item *target)
{
    struct cfs_commit_pair *pair =
        pair_of_group(to_config_group(src)); /* src is pending or live */
    const struct configfs_item_operations *ops =
        pair->owner->cg_item.ci_type->ct_item_ops;

    return ops->allow_link(src, target);
}

static void pending_drop_link(struct config_item *src,
                              struct config_item *target)
{
    struct cfs_commit_pair *pair = pair_of_group(to_config_group(src));
    const struct configfs_item_operations *ops =
        pair->owner->cg_item.ci_type->ct_item_ops;

    ops->drop_link(src, target);
}

static void pair_free_ref(struct cfs_commit_pair *pair)
{
    if (atomic_fetch_sub(&pair->refs, 1) == 1) {
        cfs_free(pair);
    }
}

static void pending_release(struct config_item *item)
{
    pair_free_ref(container_of(item, struct cfs_commit_pair, pending.cg_item));
}

static void live_release(struct config_item *item)
{
    pair_free_ref(container_of(item, struct cfs_commit_pair, live.cg_item));
}

static bool type_committable(const struct config_item_type *t)
{
    return t && t->ct_group_ops && t->ct_group_ops->commit_item &&
           t->ct_group_ops->uncommit_item;
}

static struct cfs_commit_pair *pair_new(struct config_group *owner)
{
    const struct config_item_type *t = owner->cg_item.ci_type;
    const struct configfs_group_operations *g = t->ct_group_ops;
    const struct configfs_item_operations *i = t->ct_item_ops;
    struct cfs_commit_pair *pair = cfs_zalloc(sizeof(*pair));

    if (!pair) {
        return NULL;
    }
    pair->owner = owner;
    atomic_init(&pair->refs, 2);
    pair->pending_gops.make_item = g->make_item ? pending_make_item : NULL;
    pair->pending_gops.make_group = g->make_group ? pending_make_group : NULL;
    pair->pending_gops.disconnect_notify =
        g->disconnect_notify ? pending_disconnect_notify : NULL;
    pair->pending_gops.drop_item = g->drop_item ? pending_drop_item : NULL;
    pair->pending_iops.release = pending_release;
    pair->live_iops.release = live_release;
    if (i && i->allow_link) {
        pair->pending_iops.allow_link = pending_allow_link;
        pair->pending_iops.drop_link = i->drop_link ? pending_drop_link : NULL;
    }
    pair->pending_type.ct_owner = t->ct_owner;
    pair->pending_type.ct_item_ops = &pair->pending_iops;
    pair->pending_type.ct_group_ops = &pair->pending_gops;
    pair->pending_type.ct_name = "pending";
    pair->live_type.ct_owner = t->ct_owner;
    pair->live_type.ct_item_ops = &pair->live_iops;
    pair->live_type.ct_name = "live";
    config_group_init_type_name(&pair->pending, "pending", &pair->pending_type);
    config_group_init_type_name(&pair->live, "live", &pair->live_type);
    return pair;
}

const struct configfs_group_operations *cfs__group_ops(struct cfs_dirent *d)
{
    const struct config_item_type *t = dir_type(d);

    if (d->flags & CFS_DF_LIVE) {
        /* live/ has no group operations (C6); removal on unregister
         * still tells the owner. */
        return NULL;
    }
    return t ? t->ct_group_ops : NULL;
}

const struct configfs_item_operations *cfs__item_ops(struct cfs_dirent *d)
{
    const struct config_item_type *t = dir_type(d);

    return t ? t->ct_item_ops : NULL;
}

/* The operations that drop an item from @parent: the owner's for live/. */
static const struct configfs_group_operations *
drop_ops(struct cfs_dirent *parent)
{
    if (parent->flags & CFS_DF_LIVE) {
        struct cfs_commit_pair *pair = container_of(
            to_config_group(parent->item), struct cfs_commit_pair, live);

        return owner_gops(pair);
    }
    return cfs__group_ops(parent);
}

/* ---- the client-visible hierarchy (su_mutex) --------------------------- */

/* @pre su_mutex of @parent_item's subsystem. */
static void link_obj(struct config_item *parent_item, struct config_item *item)
{
    item->ci_parent = parent_item;
    item->ci_group = config_group_get(to_config_group(parent_item));
    list_add_tail(&item->ci_entry, &item->ci_group->cg_children);
    config_item_get(item);
}

static void unlink_obj(struct config_item *item)
{
    struct config_group *group = item->ci_group;

    list_del_init(&item->ci_entry);
    item->ci_group = NULL;
    item->ci_parent = NULL;
    config_item_put(item);
    config_group_put(group);
}

static void link_group(struct config_group *parent_group,
                       struct config_group *group)
{
    struct config_group *dg;
    struct configfs_subsystem *subsys;

    link_obj(&parent_group->cg_item, &group->cg_item);
    subsys = parent_group->cg_subsys;
    if (!subsys) {
        subsys = to_configfs_subsystem(group); /* a subsystem being added */
    }
    group->cg_subsys = subsys;
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        link_group(group, dg);
    }
    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            link_group(group, group->cg_default_groups_array[i]);
        }
    }
    if (group->cg_cfs_pair) {
        link_group(group, &group->cg_cfs_pair->pending);
        link_group(group, &group->cg_cfs_pair->live);
    }
}

static void unlink_group(struct config_group *group)
{
    struct config_group *dg;

    if (group->cg_cfs_pair) {
        unlink_group(&group->cg_cfs_pair->pending);
        unlink_group(&group->cg_cfs_pair->live);
    }
    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            unlink_group(group->cg_default_groups_array[i]);
        }
    }
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        unlink_group(dg);
    }
    group->cg_subsys = NULL;
    unlink_obj(&group->cg_item);
}

/* Drop core's own references on the pending/live groups of every
 * committable group in @group's subtree (after unlink_group). */
static void put_pairs(struct config_group *group)
{
    struct config_group *dg;

    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            put_pairs(group->cg_default_groups_array[i]);
        }
    }
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        put_pairs(dg);
    }
    if (group->cg_cfs_pair) {
        struct cfs_commit_pair *pair = group->cg_cfs_pair;

        group->cg_cfs_pair = NULL;
        config_group_put(&pair->pending);
        config_group_put(&pair->live);
    }
}

/* ---- dirents ----------------------------------------------------------- */

static struct cfs_dirent *dirent_new(const char *name,
                                     size_t len,
                                     enum cfs_dkind kind,
                                     unsigned int flags)
{
    struct cfs_dirent *d = cfs_zalloc(sizeof(*d));

    if (!d) {
        return NULL;
    }
    d->name = cfs_memdup(name, len);
    if (!d->name) {
        cfs_free(d);
        return NULL;
    }
    d->name_len = len;
    d->hash = name_hash(name, len);
    d->kind = (uint8_t)kind;
    d->flags = (uint16_t)flags;
    return d;
}

/* Free @d and its subtree. Items are not touched: their hierarchy links
 * and references are handled by the caller. */
static void dirent_free_tree(struct cfs_dirent *d)
{
    struct cfs_dirent *c = d->first;

    while (c) {
        struct cfs_dirent *next = c->next;

        dirent_free_tree(c);
        atomic_fetch_sub(&tree_nodes, 1); /* inserted, never removed */
        c = next;
    }
    if (d->kind == CFS_D_LINK && d->target) {
        d->target->links_to--;
    }
    cfs__wvals_free(d);
    cfs__frag_put(d->frag);
    cfs_free(d->hidden);
    cfs_free(d->htab);
    cfs_free(d->name);
    cfs_free(d);
}

/* Items forget the dirents of a subtree that is going away. */
static void dirent_unhook(struct cfs_dirent *d)
{
    if (d->kind != CFS_D_DIR) {
        return;
    }
    if (d->item && d->item->ci_dentry == d) {
        d->item->ci_dentry = NULL;
    }
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        dirent_unhook(c);
    }
}

static void dirent_set_state(struct cfs_dirent *d, enum cfs_dstate state)
{
    if (d->kind != CFS_D_DIR) {
        return;
    }
    d->state = (uint8_t)state;
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        dirent_set_state(c, state);
    }
}

/* A build that failed: drop the pending/live pairs made for committable
 * groups in the partial subtree @d (and @group's own, which may exist
 * before its dirent is marked), deepest first. */
static void unwind_pairs(struct cfs_dirent *d, struct config_group *group)
{
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_GROUP) &&
            !(c->flags & (CFS_DF_PENDING | CFS_DF_LIVE))) {
            unwind_pairs(c, to_config_group(c->item));
        }
    }
    if (group && group->cg_cfs_pair) {
        struct cfs_commit_pair *pair = group->cg_cfs_pair;
        pthread_mutex_t *su = su_lock(group);

        unlink_group(&pair->pending);
        unlink_group(&pair->live);
        su_unlock(su);
        group->cg_cfs_pair = NULL;
        config_group_put(&pair->pending);
        config_group_put(&pair->live);
    }
}

/* Two attributes of one name (L4): refused, rather than one shadowing the
 * other as in the kernel. */
static int check_attr_names(const struct config_item_type *t)
{
    unsigned int na = cfs__n_attrs(t);
    unsigned int nb = cfs__n_bin_attrs(t);

    for (unsigned int i = 0; i < na + nb; i++) {
        const char *a = i < na ? t->ct_attrs[i]->ca_name
                               : t->ct_bin_attrs[i - na]->cb_attr.ca_name;

        if (!a) {
            return -EINVAL;
        }
        for (unsigned int j = i + 1; j < na + nb; j++) {
            const char *b = j < na ? t->ct_attrs[j]->ca_name
                                   : t->ct_bin_attrs[j - na]->cb_attr.ca_name;

            if (b && strcmp(a, b) == 0) {
                return -EINVAL;
            }
        }
    }
    return 0;
}

/* Evaluate is_visible once, at creation (M12). */
static int dirent_visibility(struct cfs_dirent *d)
{
    const struct config_item_type *t = dir_type(d);
    const struct configfs_group_operations *g = t->ct_group_ops;
    unsigned int na = cfs__n_attrs(t);
    unsigned int nb = cfs__n_bin_attrs(t);

    if (!g || (!g->is_visible && !g->is_bin_visible) || na + nb == 0) {
        return 0;
    }
    d->hidden = cfs_zalloc((na + nb + 7) / 8);
    if (!d->hidden) {
        return -ENOMEM;
    }
    for (unsigned int i = 0; g->is_visible && i < na; i++) {
        if (!g->is_visible(d->item, t->ct_attrs[i], (int)i)) {
            d->hidden[i / 8] |= (uint8_t)(1u << (i % 8));
        }
    }
    for (unsigned int i = 0; g->is_bin_visible && i < nb; i++) {
        unsigned int bit = na + i;

        if (!g->is_bin_visible(d->item, t->ct_bin_attrs[i], (int)i)) {
            d->hidden[bit / 8] |= (uint8_t)(1u << (bit % 8));
        }
    }
    return 0;
}

static int build_dir(struct cfs_dirent *parent,
                     struct config_item *item,
                     const char *name,
                     unsigned int flags,
                     struct cfs_frag *frag,
                     uint64_t rev,
                     bool is_group,
                     struct cfs_dirent **ret);

static int build_child_group(struct cfs_dirent *d,
                             struct config_group *dg,
                             unsigned int flags,
                             struct cfs_frag *frag,
                             uint64_t rev)
{
    struct cfs_dirent *child = NULL;
    const char *name = dg->cg_item.ci_name;
    unsigned int idx;
    int r;

    if (!name) {
        return -ENOMEM; /* config_item_init_type_name() could not copy */
    }
    /* A default group named like an attribute or a sibling (MK9, L4). */
    if (cfs__attr_lookup(d, name, strlen(name), &idx) ||
        cfs__dir_lookup(d, name, strlen(name))) {
        return -EEXIST;
    }
    r = htab_reserve(d);
    if (r < 0) {
        return r;
    }
    r = build_dir(d, &dg->cg_item, name, flags, frag, rev, true, &child);
    if (r < 0) {
        return r;
    }
    child_insert(d, child);
    return 0;
}

/*
 * Build the dirent subtree of @item, not yet linked into @parent: the
 * directory, which attributes are visible, default groups recursively and,
 * for committable groups, pending/ and live/ (MK9, C2). All or nothing: on
 * error the partial subtree is freed and pairs made here are dropped.
 * @pre the mutation lock; @item is linked into the hierarchy.
 */
static int build_dir(struct cfs_dirent *parent,
                     struct config_item *item,
                     const char *name,
                     unsigned int flags,
                     struct cfs_frag *frag,
                     uint64_t rev,
                     bool is_group,
                     struct cfs_dirent **ret)
{
    struct config_group *group = is_group ? to_config_group(item) : NULL;
    struct cfs_dirent *d;
    struct config_group *dg;
    int r;

    if (!item->ci_type) {
        return -EINVAL; /* M4, MK8 */
    }
    r = check_attr_names(item->ci_type);
    if (r < 0) {
        return r;
    }
    d = dirent_new(
        name, strlen(name), CFS_D_DIR, flags | (is_group ? CFS_DF_GROUP : 0u));
    if (!d) {
        return -ENOMEM;
    }
    d->parent = parent;
    d->item = item;
    d->frag = frag;
    cfs__frag_get(frag);
    d->revision = rev;
    d->created_rev = rev;
    item->ci_dentry = d;
    r = dirent_visibility(d);
    if (r < 0) {
        goto fail;
    }
    if (!group) {
        *ret = d;
        return 0;
    }
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        r = build_child_group(d, dg, CFS_DF_DEFAULT, frag, rev);
        if (r < 0) {
            goto fail;
        }
    }
    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            r = build_child_group(d,
                                  group->cg_default_groups_array[i],
                                  CFS_DF_DEFAULT,
                                  frag,
                                  rev);
            if (r < 0) {
                goto fail;
            }
        }
    }
    if (type_committable(item->ci_type)) {
        struct cfs_commit_pair *pair = pair_new(group);

        if (!pair) {
            r = -ENOMEM;
            goto fail;
        }
        pthread_mutex_t *su = su_lock(group);
        group->cg_cfs_pair = pair;
        link_group(group, &pair->pending);
        link_group(group, &pair->live);
        su_unlock(su);
        d->flags |= CFS_DF_COMMITTABLE;
        r = build_child_group(
            d, &pair->pending, CFS_DF_DEFAULT | CFS_DF_PENDING, frag, rev);
        if (r == 0) {
            r = build_child_group(
                d, &pair->live, CFS_DF_DEFAULT | CFS_DF_LIVE, frag, rev);
        }
        if (r < 0) {
            goto fail;
        }
    }
    *ret = d;
    return 0;

fail:
    dirent_unhook(d);
    unwind_pairs(d, group);
    dirent_free_tree(d);
    return r;
}

/* ---- paths ------------------------------------------------------------- */

/* Resolve the first @plen bytes of @path; allocates nothing, so undo can
 * use it when memory is short. */
int cfs__resolve_n(const char *path, size_t plen, struct cfs_resolved *ret)
{
    struct cfs_dirent *cur = &cfs__root;
    const char *p = path;
    const char *end = path + plen;
    unsigned int follows = 0;

    if (!path || plen == 0 || path[0] != '/') {
        return -EINVAL;
    }
    if (plen >= CFS_PATH_MAX) {
        return -ENAMETOOLONG; /* L1 */
    }
    for (;;) {
        const char *name;
        size_t len;
        struct cfs_dirent *d;
        unsigned int idx;
        int r;

        while (p < end && *p == '/') {
            p++;
        }
        if (p == end) {
            break;
        }
        name = p;
        for (len = 0; p + len < end && p[len] != '/'; len++) {
        }
        r = cfs_name_check(name, len);
        if (r < 0) {
            return r;
        }
        if (!cfs__dirent_ready(cur)) {
            return -ENOENT; /* L2 */
        }
        p += len;
        while (p < end && *p == '/') {
            p++;
        }
        d = cfs__dir_lookup(cur, name, len);
        if (d && d->kind == CFS_D_LINK) {
            if (p == end) {
                ret->dir = d;
                ret->kind = CFS_R_LINK;
                ret->idx = 0;
                ret->follows = follows;
                return 0;
            }
            if (++follows > CFS_SYMLINK_FOLLOW_MAX) {
                return -ELOOP;
            }
            cur = d->target;
            continue;
        }
        if (d) {
            cur = d;
            continue;
        }
        r = cfs__attr_lookup(cur, name, len, &idx);
        if (!r) {
            return -ENOENT;
        }
        if (p != end) {
            return -ENOTDIR; /* an attribute in the middle of a path */
        }
        ret->dir = cur;
        ret->kind = r == 1 ? CFS_R_ATTR : CFS_R_BIN_ATTR;
        ret->idx = idx;
        ret->follows = follows;
        return 0;
    }
    ret->dir = cur;
    ret->kind = CFS_R_DIR;
    ret->idx = 0;
    ret->follows = follows;
    return 0;
}

int cfs__resolve(const char *path, struct cfs_resolved *ret)
{
    return path ? cfs__resolve_n(path, strlen(path), ret) : -EINVAL;
}

int cfs__resolve_parent(const char *path,
                        struct cfs_dirent **ret_parent,
                        const char **ret_name,
                        size_t *ret_len)
{
    struct cfs_resolved res;
    size_t plen;
    size_t end;
    size_t start;
    int r;

    if (!path || path[0] != '/') {
        return -EINVAL;
    }
    plen = strlen(path);
    if (plen >= CFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    end = plen;
    while (end > 0 && path[end - 1] == '/') {
        end--; /* trailing slashes are accepted (MK1) */
    }
    start = end;
    while (start > 0 && path[start - 1] != '/') {
        start--;
    }
    if (start == end) {
        return -EEXIST; /* the root itself */
    }
    r = start == 1 ? cfs__resolve_n("/", 1, &res)
                   : cfs__resolve_n(path, start, &res);
    if (r < 0) {
        return r;
    }
    if (res.kind == CFS_R_ATTR || res.kind == CFS_R_BIN_ATTR) {
        return -ENOTDIR; /* MK1 */
    }
    if (res.kind == CFS_R_LINK) {
        res.dir = res.dir->target; /* a link as the last parent component */
    }
    r = cfs_name_check(path + start, end - start);
    if (r < 0) {
        return r;
    }
    *ret_parent = res.dir;
    *ret_name = path + start;
    *ret_len = end - start;
    return 0;
}

int cfs__dirent_path(const struct cfs_dirent *d, char **ret_path)
{
    size_t len = 0;
    char *buf;
    char *p;

    for (const struct cfs_dirent *c = d; c && c->parent; c = c->parent) {
        len += c->name_len + 1;
    }
    if (len == 0) {
        len = 1;
    }
    buf = cfs_malloc(len + 1);
    if (!buf) {
        return -ENOMEM;
    }
    p = buf + len;
    *p = '\0';
    for (const struct cfs_dirent *c = d; c && c->parent; c = c->parent) {
        p -= c->name_len;
        memcpy(p, c->name, c->name_len);
        *--p = '/';
    }
    if (p != buf) {
        buf[0] = '/';
    }
    *ret_path = buf;
    return 0;
}

int cfs_item_path(struct config_item *item, char **ret_path)
{
    int r = -ENOENT;

    cfs__tree_rdlock();
    if (item && item->ci_dentry && item->ci_dentry->state != CFS_S_DEAD) {
        r = cfs__dirent_path(item->ci_dentry, ret_path);
    }
    cfs__tree_unlock();
    return r;
}

/* ---- removal ----------------------------------------------------------- */

/* Take @item out of the hierarchy as rmdir and a failed mkdir do (MK11,
 * RM11): disconnect_notify, unlink (default groups too), drop_item or a
 * plain put, under su_mutex. Core's pending/live groups go with it. */
static void drop_from_hierarchy(struct config_group *pgroup,
                                const struct configfs_group_operations *ops,
                                struct config_item *item,
                                bool is_group)
{
    pthread_mutex_t *su = su_lock(pgroup);
    cfs__callback_enter();
    if (ops && ops->disconnect_notify) {
        ops->disconnect_notify(pgroup, item);
    }
    if (is_group) {
        unlink_group(to_config_group(item));
        put_pairs(to_config_group(item));
    } else {
        unlink_obj(item);
    }
    if (ops && ops->drop_item) {
        ops->drop_item(pgroup, item);
    } else {
        config_item_put(item);
    }
    cfs__callback_exit();
    su_unlock(su);
}

static void kill_frags(struct cfs_dirent *d)
{
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR) {
            kill_frags(c);
        }
    }
    if (d->frag && (!d->parent || d->parent->frag != d->frag)) {
        cfs__frag_kill(d->frag);
    }
}

/* Mark a subtree dead: its items no longer point at it. @pre tree lock
 * exclusive. */
static void dirent_kill(struct cfs_dirent *d)
{
    if (d->kind != CFS_D_DIR) {
        return;
    }
    d->state = CFS_S_DEAD;
    if (d->item && d->item->ci_dentry == d) {
        d->item->ci_dentry = NULL;
    }
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        dirent_kill(c);
    }
}

/* Take @d out of the tree: callbacks in flight finish, none start after
 * (RM10, T3). @pre the mutation lock. */
static void detach_dirent(struct cfs_dirent *d)
{
    cfs__tree_wrlock();
    dirent_set_state(d, CFS_S_DROPPING);
    cfs__tree_unlock();
    kill_frags(d);
    cfs__tree_wrlock();
    child_remove(d->parent, d);
    dirent_kill(d);
    cfs__tree_unlock();
}

static void unregister_dir(struct cfs_dirent *d);

/* Remove what is inside @d, newest first: links (drop_link), user-made
 * directories bottom-up (disconnect_notify, drop_item) and registered
 * groups. Default groups stay, emptied. @pre the mutation lock. */
static void teardown_children(struct cfs_dirent *d)
{
    struct cfs_dirent *c = d->last;

    while (c) {
        struct cfs_dirent *prev = c->prev;

        if (c->kind == CFS_D_LINK) {
            cfs__link_remove(c);
        } else if (c->flags & CFS_DF_REGISTERED) {
            unregister_dir(c);
        } else {
            teardown_children(c);
            if (!(c->flags & CFS_DF_DEFAULT)) {
                struct config_item *item = c->item;
                struct cfs_dirent *parent = c->parent;
                struct module *owner = item->ci_type->ct_owner;

                detach_dirent(c);
                config_item_get(item);
                drop_from_hierarchy(to_config_group(parent->item),
                                    drop_ops(parent),
                                    item,
                                    c->flags & CFS_DF_GROUP);
                dirent_free_tree(c);
                cfs__module_put(owner);
                config_item_put(item);
            }
        }
        c = prev;
    }
}

/* Remove registered groups inside a subtree about to go (they are not on
 * any default_groups list, so unlink_group would not find them). */
static void drop_registered(struct cfs_dirent *d)
{
    struct cfs_dirent *c = d->last;

    while (c) {
        struct cfs_dirent *prev = c->prev;

        if (c->kind == CFS_D_DIR) {
            if (c->flags & CFS_DF_REGISTERED) {
                unregister_dir(c);
            } else {
                drop_registered(c);
            }
        }
        c = prev;
    }
}

/* Kernel-side removal of a subsystem or registered group: never fails,
 * checks nothing (T7). @pre the mutation lock. */
static void unregister_dir(struct cfs_dirent *d)
{
    struct config_group *group = to_config_group(d->item);
    struct config_group *lock_group =
        d->parent == &cfs__root ? group : to_config_group(d->parent->item);

    cfs__links_drop_into(d);
    teardown_children(d);
    detach_dirent(d);
    pthread_mutex_t *su = su_lock(lock_group);
    unlink_group(group);
    put_pairs(group);
    su_unlock(su);
    dirent_free_tree(d);
}

/* RM5-RM7 on the default groups of @d, recursively. */
static int check_default_links(struct cfs_dirent *d)
{
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            if (c->links_to) {
                return -EBUSY;
            }
            int r = check_default_links(c);

            if (r < 0) {
                return r;
            }
        }
    }
    return 0;
}

static int check_default_children(struct cfs_dirent *d)
{
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            if (c->nchildren) {
                return -ENOTEMPTY;
            }
            int r = check_default_children(c);

            if (r < 0) {
                return r;
            }
        }
    }
    return 0;
}

/* The rmdir checks that depend on counts other threads may change
 * (dependents): RM5, RM6, RM7 in kernel order. @pre tree lock exclusive. */
static int rmdir_check(struct cfs_dirent *d)
{
    int r;

    if (d->dependents) {
        return -EBUSY; /* RM5 */
    }
    if (d->links_to) {
        return -EBUSY; /* RM6 */
    }
    if (d->nchildren) {
        return -ENOTEMPTY; /* RM7: a user child or an outgoing link */
    }
    r = check_default_links(d);
    if (r == 0) {
        r = check_default_children(d);
    }
    return r;
}

/* Values written in @d and its default groups, names relative to @d, in
 * write order: what undoing an rmdir must store again. */
static int collect_dropped(struct cfs_dirent *d,
                           const char *prefix,
                           struct cfs_value **vals,
                           uint64_t **seqs,
                           size_t *n,
                           size_t *cap)
{
    for (size_t i = 0; i < d->n_wvals; i++) {
        const struct cfs_wval *w = &d->wvals[i];
        const char *an = cfs__wval_name(d, w);
        size_t plen = strlen(prefix);
        size_t alen = strlen(an);
        char *name;

        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 4;
            struct cfs_value *nv = cfs_realloc(*vals, nc * sizeof(**vals));

            if (!nv) {
                return -ENOMEM;
            }
            *vals = nv;
            uint64_t *ns = cfs_realloc(*seqs, nc * sizeof(**seqs));

            if (!ns) {
                return -ENOMEM;
            }
            *seqs = ns;
            *cap = nc;
        }
        name = cfs_malloc(plen + alen + 1);
        if (!name) {
            return -ENOMEM;
        }
        (void)snprintf(name, plen + alen + 1, "%s%s", prefix, an);
        (*vals)[*n].name = name;
        (*vals)[*n].data = cfs_memdup(w->data, w->len);
        if (!(*vals)[*n].data) {
            cfs_free(name);
            return -ENOMEM;
        }
        (*vals)[*n].len = w->len;
        (*vals)[*n].binary = w->bin;
        (*vals)[*n].revision = w->revision;
        (*seqs)[*n] = w->seq;
        (*n)++;
    }
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT) &&
            (c->n_wvals || c->first)) {
            size_t plen = strlen(prefix);
            char *sub = cfs_malloc(plen + c->name_len + 2);
            int r;

            if (!sub) {
                return -ENOMEM;
            }
            memcpy(sub, prefix, plen);
            memcpy(sub + plen, c->name, c->name_len);
            sub[plen + c->name_len] = '/';
            sub[plen + c->name_len + 1] = '\0';
            r = collect_dropped(c, sub, vals, seqs, n, cap);
            cfs_free(sub);
            if (r < 0) {
                return r;
            }
        }
    }
    return 0;
}

static int
dropped_values(struct cfs_dirent *d, struct cfs_value **ret_vals, size_t *ret_n)
{
    struct cfs_value *vals = NULL;
    uint64_t *seqs = NULL;
    size_t n = 0, cap = 0;
    int r = collect_dropped(d, "", &vals, &seqs, &n, &cap);

    if (r < 0) {
        cfs_values_free(vals, n);
        cfs_free(seqs);
        return r;
    }
    /* Insertion sort by write order; n is small. */
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && seqs[j - 1] > seqs[j]; j--) {
            struct cfs_value tv = vals[j];
            uint64_t ts = seqs[j];

            vals[j] = vals[j - 1];
            seqs[j] = seqs[j - 1];
            vals[j - 1] = tv;
            seqs[j - 1] = ts;
        }
    }
    cfs_free(seqs);
    *ret_vals = vals;
    *ret_n = n;
    return 0;
}

/* Revisions of default groups, kept by rmdir for its undo. */

static size_t count_default(const struct cfs_dirent *d)
{
    size_t n = 0;

    for (const struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            n += 1 + count_default(c);
        }
    }
    return n;
}

static void walk_default(
    struct cfs_dirent *d, uint64_t *revs, size_t n, size_t *i, bool save)
{
    for (struct cfs_dirent *c = d->first; c && *i < n; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            if (save) {
                revs[2 * *i] = c->revision;
                revs[2 * *i + 1] = c->created_rev;
            } else {
                c->revision = revs[2 * *i];
                c->created_rev = revs[2 * *i + 1];
            }
            (*i)++;
            walk_default(c, revs, n, i, save);
        }
    }
}

int cfs__dg_revs_save(struct cfs_dirent *d, uint64_t **ret, size_t *ret_n)
{
    size_t n = count_default(d);
    size_t i = 0;
    uint64_t *revs;

    *ret = NULL;
    *ret_n = 0;
    if (n == 0) {
        return 0;
    }
    revs = cfs_malloc(2 * n * sizeof(*revs));
    if (!revs) {
        return -ENOMEM;
    }
    walk_default(d, revs, n, &i, true);
    *ret = revs;
    *ret_n = n;
    return 0;
}

void cfs__dg_revs_restore(struct cfs_dirent *d, uint64_t *revs, size_t n)
{
    size_t i = 0;

    if (n && n == count_default(d)) { /* the same shape as before */
        cfs__tree_wrlock();
        walk_default(d, revs, n, &i, false);
        cfs__tree_unlock();
    }
}

/* ---- mkdir ------------------------------------------------------------- */

/* Undoing an rmdir or unlink: put the re-made @d back where it was,
 * before the sibling named @before. @pre tree lock exclusive. */
void cfs__child_move_before(struct cfs_dirent *parent,
                            struct cfs_dirent *d,
                            const char *before)
{
    struct cfs_dirent *s = cfs__dir_lookup(parent, before, strlen(before));

    if (!s || s == d) {
        return;
    }
    parent->last = d->prev; /* out of the tail ... */
    d->prev->next = NULL;
    d->prev = s->prev; /* ... and in before @s */
    d->next = s;
    if (s->prev) {
        s->prev->next = d;
    } else {
        parent->first = d;
    }
    s->prev = d;
}

/* The same on cg_children: before the next sibling that is an item.
 * @pre the mutation lock; not the tree lock (su_mutex comes first). */
static void move_item_before_next(struct config_group *pgroup,
                                  struct cfs_dirent *d)
{
    for (struct cfs_dirent *s = d->next; s; s = s->next) {
        if (s->kind == CFS_D_DIR && s->item) {
            pthread_mutex_t *su = su_lock(pgroup);
            list_del_init(&d->item->ci_entry);
            list_add_tail(&d->item->ci_entry, &s->item->ci_entry);
            su_unlock(su);
            return;
        }
    }
}

int cfs__do_mkdir(struct cfs_txn *txn, const char *path)
{
    struct cfs_dirent *parent = NULL;
    struct cfs_dirent *d = NULL;
    const struct configfs_group_operations *gops;
    struct config_group *pgroup;
    struct config_item *item = NULL;
    struct cfs_frag *frag = NULL;
    struct cfs_change *ch = NULL;
    const char *name;
    char *cname = NULL;
    bool is_group = false;
    unsigned int idx;
    uint64_t rev = 0;
    size_t len;
    int r;

    r = cfs__resolve_parent(path, &parent, &name, &len);
    if (r < 0) {
        return r;
    }
    if (parent->flags & CFS_DF_ROOT) {
        return -EPERM; /* MK2, F2 */
    }
    {
        size_t depth = 1; /* of the new directory, below the root */

        for (const struct cfs_dirent *p = parent; p->parent; p = p->parent) {
            depth++;
        }
        if (depth > CFS_DEPTH_MAX) {
            return -ENAMETOOLONG; /* limits.h: a tree no deeper than that */
        }
    }
    if (cfs__dir_lookup(parent, name, len) ||
        cfs__attr_lookup(parent, name, len, &idx)) {
        return -EEXIST; /* MK1 */
    }
    if (!cfs__dirent_ready(parent)) {
        return -ENOENT; /* MK3 */
    }
    gops = cfs__group_ops(parent);
    if (!(parent->flags & CFS_DF_GROUP) ||
        (parent->flags & CFS_DF_COMMITTABLE) || !gops ||
        (!gops->make_group && !gops->make_item)) {
        return -EPERM; /* MK4, C3, C6 */
    }
    pgroup = to_config_group(parent->item);
    if (parent->flags & CFS_DF_PENDING) {
        struct cfs_commit_pair *pair =
            container_of(pgroup, struct cfs_commit_pair, pending);

        if (pair->live.cg_item.ci_dentry &&
            cfs__dir_lookup(pair->live.cg_item.ci_dentry, name, len)) {
            return -EEXIST; /* C5 */
        }
    }
    cname = cfs_memdup(name, len);
    if (!cname) {
        return -ENOMEM;
    }
    r = cfs__txn_prepare(txn, CFS_OP_MKDIR, parent, cname, NULL, 0, &ch);
    if (r == 0) {
        r = htab_reserve(parent);
    }
    if (r == 0) {
        frag = cfs__frag_new();
        r = frag ? 0 : -ENOMEM;
    }
    if (r < 0) {
        goto out;
    }

    /* MK6, MK7: make_* and linking, under su_mutex. */
    pthread_mutex_t *su = su_lock(pgroup);
    cfs__callback_enter();
    if (gops->make_group) {
        struct config_group *g = gops->make_group(pgroup, cname);

        item = IS_ERR_OR_NULL(g) ? (struct config_item *)g : &g->cg_item;
        is_group = true;
    } else {
        item = gops->make_item(pgroup, cname);
    }
    if (!item || IS_ERR(item)) {
        r = item ? (int)PTR_ERR(item) : -ENOMEM;
        item = NULL;
    } else if (is_group) {
        link_group(pgroup, to_config_group(item));
    } else {
        link_obj(&pgroup->cg_item, item);
    }
    cfs__callback_exit();
    su_unlock(su);
    if (!item) {
        goto out; /* nothing else is called (MK6) */
    }

    /* The directory's name is the item's name (M3). */
    if (!item->ci_name) {
        r = -ENOMEM; /* config_item_init_type_name() could not copy it */
    } else if (strcmp(item->ci_name, cname) != 0) {
        r = config_item_set_name(item, "%s", cname);
    }
    if (r == 0 && !item->ci_type) {
        r = -EINVAL; /* MK8 */
    }
    if (r == 0) {
        rev = cfs__txn_rev(txn);
        r = build_dir(parent,
                      item,
                      cname,
                      CFS_DF_USER | (is_group ? CFS_DF_GROUP : 0u),
                      frag,
                      rev,
                      is_group,
                      &d);
    }
    if (r < 0) {
        /* MK11; our working reference keeps release() out of su_mutex */
        config_item_get(item);
        drop_from_hierarchy(pgroup, gops, item, is_group);
        config_item_put(item);
        goto out;
    }
    cfs__module_get(item->ci_type->ct_owner); /* M25 */

    CFS_BUG_ON(!d);
    /* MK10: visible only now, whole. */
    cfs__tree_wrlock();
    child_insert(parent, d);
    if (txn->insert_before) {
        cfs__child_move_before(parent, d, txn->insert_before);
    }
    dirent_set_state(d, CFS_S_READY);
    if (ch) {
        ch->priv->rev_parent = parent->revision;
    }
    if (rev) {
        parent->revision = rev;
    }
    cfs__tree_unlock();
    if (txn->insert_before) {
        move_item_before_next(pgroup, d);
    }
    cfs__txn_push(txn);
    ch = NULL;

out:
    if (ch) {
        cfs__txn_unprepare(txn);
    }
    cfs__frag_put(frag);
    cfs_free(cname);
    return r;
}

/* ---- rmdir ------------------------------------------------------------- */

int cfs__do_rmdir(struct cfs_txn *txn, const char *path)
{
    struct cfs_resolved res;
    struct cfs_dirent *d;
    struct cfs_dirent *parent;
    struct cfs_change *ch = NULL;
    struct config_item *item;
    struct module *owner;
    uint64_t rev;
    int r;

    r = cfs__resolve(path, &res);
    if (r < 0) {
        return r;
    }
    if (res.kind != CFS_R_DIR) {
        return -ENOTDIR; /* RM1 */
    }
    d = res.dir;
    if (d->flags & (CFS_DF_ROOT | CFS_DF_SUBSYS)) {
        return -EPERM; /* RM2, F2 */
    }
    if (d->flags & CFS_DF_DEFAULT) {
        return -EPERM; /* RM3 */
    }
    parent = d->parent;
    if (!dir_type(parent)) {
        return -EINVAL; /* RM4 */
    }
    if (parent->flags & CFS_DF_LIVE) {
        return -EPERM; /* C6 */
    }
    if (!cfs__dirent_ready(d)) {
        return -ENOENT;
    }
    r = cfs__txn_prepare(txn, CFS_OP_RMDIR, parent, d->name, NULL, 0, &ch);
    if (r < 0) {
        return r;
    }
    if (ch) {
        r = dropped_values(d, &ch->dropped, &ch->n_dropped);
        if (r < 0) {
            cfs__txn_unprepare(txn);
            return r;
        }
        ch->priv->rev_self = d->revision;
        ch->priv->created_self = d->created_rev;
        r = cfs__dg_revs_save(d, &ch->priv->dg_revs, &ch->priv->n_dg_revs);
        if (r < 0) {
            cfs__txn_unprepare(txn);
            return r;
        }
        if (d->next) {
            ch->priv->before = cfs_memdup(d->next->name, d->next->name_len);
            if (!ch->priv->before) {
                cfs__txn_unprepare(txn);
                return -ENOMEM;
            }
        }
        ch->priv->rev_parent = parent->revision;
    }
    cfs__tree_wrlock();
    r = rmdir_check(d);
    if (r == 0) {
        dirent_set_state(d, CFS_S_DROPPING); /* depend_item now fails */
    }
    cfs__tree_unlock();
    if (r < 0) {
        if (ch) {
            cfs__txn_unprepare(txn);
        }
        return r; /* RM9: no callback */
    }

    item = d->item;
    owner = item->ci_type->ct_owner;
    drop_registered(d);
    detach_dirent(d);
    config_item_get(item); /* the working reference */
    drop_from_hierarchy(to_config_group(parent->item),
                        cfs__group_ops(parent),
                        item,
                        d->flags & CFS_DF_GROUP);
    dirent_free_tree(d);
    cfs__module_put(owner);
    rev = cfs__txn_rev(txn);
    if (rev) {
        cfs__tree_wrlock();
        parent->revision = rev;
        cfs__tree_unlock();
    }
    cfs__txn_push(txn);
    config_item_put(item); /* release() usually runs here (RM11) */
    return 0;
}

/* ---- rename: commit and uncommit --------------------------------------- */

int cfs__do_rename(struct cfs_txn *txn, const char *from, const char *to)
{
    struct cfs_resolved res;
    struct cfs_dirent *d, *sp, *dp;
    struct cfs_change *ch = NULL;
    struct cfs_commit_pair *pair;
    struct config_group *newg, *oldg;
    struct config_item *item;
    const struct configfs_group_operations *gops;
    const char *name;
    char *cto = NULL;
    size_t len;
    bool commit;
    uint64_t rev;
    int r;

    r = cfs__resolve(from, &res);
    if (r < 0) {
        return r; /* RN1 */
    }
    r = cfs__resolve_parent(to, &dp, &name, &len);
    if (r < 0) {
        return r;
    }
    d = res.dir;
    if (res.kind == CFS_R_ATTR || res.kind == CFS_R_BIN_ATTR) {
        unsigned int idx;

        if (d == dp &&
            cfs__attr_lookup(dp, name, len, &idx) ==
                (res.kind == CFS_R_ATTR ? 1 : 2) &&
            idx == res.idx) {
            return 0; /* onto itself: a no-op (RN1) */
        }
        return -EPERM; /* RN1 */
    }
    if (d->parent == dp && d->name_len == len &&
        memcmp(d->name, name, len) == 0) {
        return 0; /* onto itself: a no-op (RN1) */
    }
    if (res.kind != CFS_R_DIR || (d->flags & (CFS_DF_ROOT | CFS_DF_DEFAULT))) {
        return -EPERM; /* RN1 */
    }
    sp = d->parent;
    commit = (sp->flags & CFS_DF_PENDING) && (dp->flags & CFS_DF_LIVE);
    if (!commit &&
        !((sp->flags & CFS_DF_LIVE) && (dp->flags & CFS_DF_PENDING))) {
        return -EPERM; /* C7: not a pending/live pair */
    }
    if (sp->parent != dp->parent) {
        return -EPERM; /* C7: another committable group */
    }
    if (d->name_len != len || memcmp(d->name, name, len) != 0) {
        return -EPERM; /* C7: the name changes */
    }
    if (cfs__dir_lookup(dp, name, len)) {
        return -EEXIST;
    }
    pair = to_config_group(sp->parent->item)->cg_cfs_pair;
    gops = sp->parent->item->ci_type->ct_group_ops;
    newg = commit ? &pair->live : &pair->pending;
    if (!txn->undoing && !txn->replay) {
        cto = cfs__join_path(dp, d->name); /* undo allocates nothing */
        if (!cto) {
            return -ENOMEM;
        }
    }
    r = cfs__txn_prepare(
        txn, CFS_OP_RENAME, sp, d->name, cto, cto ? strlen(cto) : 0, &ch);
    if (r == 0) {
        r = htab_reserve(dp);
    }
    if (r < 0) {
        goto out;
    }
    item = d->item;
    pthread_mutex_t *su = su_lock(newg);
    cfs__callback_enter();
    r = commit ? gops->commit_item(item) : gops->uncommit_item(item); /* C8 */
    cfs__callback_exit();
    if (r != 0) {
        su_unlock(su);
        r = r < 0 ? r : -EINVAL;
        goto out;
    }
    /* Move it on cg_children too (the v8 patch did not, C11). */
    oldg = item->ci_group;
    list_del_init(&item->ci_entry);
    item->ci_parent = &newg->cg_item;
    item->ci_group = config_group_get(newg);
    list_add_tail(&item->ci_entry, &newg->cg_children);
    config_group_put(oldg);
    rev = cfs__txn_rev(txn);
    cfs__tree_wrlock();
    if (ch) {
        ch->priv->rev_parent = sp->revision;
        ch->priv->rev_other = dp->revision;
        ch->priv->rev_self = d->revision;
    }
    child_remove(sp, d);
    d->name_len = len; /* unchanged (C7) */
    child_insert(dp, d);
    if (rev) {
        sp->revision = dp->revision = d->revision = rev;
    }
    cfs__tree_unlock();
    su_unlock(su);
    cfs__txn_push(txn);
    ch = NULL;
out:
    if (ch) {
        cfs__txn_unprepare(txn);
    }
    cfs_free(cto);
    return r;
}

/* ---- registration ------------------------------------------------------ */

static int register_dir(struct cfs_dirent *parent,
                        struct config_group *pgroup,
                        struct config_group *group,
                        unsigned int flags)
{
    const char *name = group->cg_item.ci_name;
    struct cfs_dirent *d = NULL;
    struct cfs_frag *frag;
    pthread_mutex_t *su;
    unsigned int idx;
    int r;

    if (!name) {
        return -ENOMEM;
    }
    r = cfs_name_check(name, strlen(name));
    if (r < 0) {
        return r;
    }
    if (!group->cg_item.ci_type) {
        return -EINVAL; /* M4 */
    }
    if (group->cg_item.ci_dentry ||
        cfs__dir_lookup(parent, name, strlen(name)) ||
        cfs__attr_lookup(parent, name, strlen(name), &idx)) {
        return -EEXIST; /* M9 */
    }
    r = htab_reserve(parent);
    if (r < 0) {
        return r;
    }
    frag = cfs__frag_new();
    if (!frag) {
        return -ENOMEM;
    }
    /* A subsystem's own su_mutex guards its linking; link_group() takes
     * cg_subsys from the group itself when the parent (the root) has none. */
    su = parent == &cfs__root ? &to_configfs_subsystem(group)->su_mutex.lock
                              : su_lock(pgroup);
    if (parent == &cfs__root) {
        group->cg_subsys = NULL;
        pthread_mutex_lock(su);
    }
    link_group(pgroup, group);
    su_unlock(su);
    r = build_dir(
        parent, &group->cg_item, name, flags, frag, cfs_revision(), true, &d);
    cfs__frag_put(frag);
    if (r < 0) {
        pthread_mutex_lock(su);
        unlink_group(group);
        su_unlock(su);
        return r;
    }
    cfs__tree_wrlock();
    child_insert(parent, d);
    dirent_set_state(d, CFS_S_READY);
    cfs__tree_unlock();
    return 0;
}

int configfs_register_subsystem(struct configfs_subsystem *subsys)
{
    struct config_group *group = &subsys->su_group;
    struct cfs_txn *txn = NULL;
    int r;

    if (!group->cg_item.ci_name) {
        if (!group->cg_item.ci_namebuf[0]) {
            /* config_item_init_type_name() could not copy the name */
            return -ENOMEM;
        }
        group->cg_item.ci_name = group->cg_item.ci_namebuf;
    }
    cfs__wlock_acquire();
    r = register_dir(&cfs__root, &cfs__root_group, group, CFS_DF_SUBSYS);
    if (r < 0) {
        cfs__tree_wrlock();
        root_trim();
        cfs__tree_unlock();
    }
    if (r == 0 && cfs__observer_set && cfs__observer_cb.subsystem_registered &&
        cfs_txn_begin_replay(&txn) == 0) {
        cfs__observer_cb.subsystem_registered(
            cfs__observer_cb.data, txn, group->cg_item.ci_name);
        cfs_txn_commit(txn);
    }
    cfs__wlock_release();
    return r;
}

void configfs_unregister_subsystem(struct configfs_subsystem *subsys)
{
    struct cfs_dirent *d;
    char *name = NULL;

    cfs__wlock_acquire();
    d = subsys->su_group.cg_item.ci_dentry;
    if (d && d->parent == &cfs__root) {
        name = cfs_strdup(d->name);
        unregister_dir(d);
        if (name && cfs__observer_set &&
            cfs__observer_cb.subsystem_unregistered) {
            cfs__observer_cb.subsystem_unregistered(cfs__observer_cb.data,
                                                    name);
        }
        cfs_free(name);
    }
    cfs__wlock_release();
}

int configfs_register_group(struct config_group *parent_group,
                            struct config_group *group)
{
    struct cfs_dirent *parent;
    int r;

    cfs__wlock_acquire();
    parent = parent_group->cg_item.ci_dentry;
    if (!parent || !cfs__dirent_ready(parent) || parent == &cfs__root) {
        r = -ENOENT;
    } else {
        r = register_dir(
            parent, parent_group, group, CFS_DF_DEFAULT | CFS_DF_REGISTERED);
    }
    cfs__wlock_release();
    return r;
}

void configfs_unregister_group(struct config_group *group)
{
    struct cfs_dirent *d;

    cfs__wlock_acquire();
    d = group->cg_item.ci_dentry;
    if (d && (d->flags & CFS_DF_REGISTERED)) {
        unregister_dir(d);
    }
    cfs__wlock_release();
}

/* configfs_register_default_group() allocates the group; this release
 * frees it when its type has none of its own. */
struct cfs_default_group {
    struct config_group group;
    struct config_item_type type; /* the caller's, with our release */
    struct configfs_item_operations iops;
};

static void default_group_release(struct config_item *item)
{
    struct cfs_default_group *dg =
        container_of(to_config_group(item), struct cfs_default_group, group);

    cfs_free(dg);
}

struct config_group *
configfs_register_default_group(struct config_group *parent_group,
                                const char *name,
                                const struct config_item_type *item_type)
{
    struct cfs_default_group *dg;
    int r;

    if (!item_type) {
        return ERR_PTR(-EINVAL);
    }
    dg = cfs_zalloc(sizeof(*dg));
    if (!dg) {
        return ERR_PTR(-ENOMEM);
    }
    dg->type = *item_type;
    if (item_type->ct_item_ops) {
        dg->iops = *item_type->ct_item_ops;
    }
    if (!dg->iops.release) {
        dg->iops.release = default_group_release;
    }
    dg->type.ct_item_ops = &dg->iops;
    config_group_init_type_name(&dg->group, name, &dg->type);
    r = configfs_register_group(parent_group, &dg->group);
    if (r < 0) {
        config_group_put(&dg->group);
        return ERR_PTR(r);
    }
    return &dg->group;
}

void configfs_unregister_default_group(struct config_group *group)
{
    configfs_unregister_group(group);
    config_group_put(group);
}

/* ---- dependencies ------------------------------------------------------ */

static int depend(struct configfs_subsystem *subsys,
                  struct config_item *target,
                  bool unlocked)
{
    struct cfs_dirent *sd;
    struct cfs_dirent *d;
    struct cfs_dirent *top;
    int r = 0;

    if (!target) {
        return -ENOENT;
    }
    if (target == &cfs__root_group.cg_item) {
        return unlocked ? -EINVAL : -ENOENT; /* M17 */
    }
    cfs__tree_wrlock();
    sd = subsys ? subsys->su_group.cg_item.ci_dentry : NULL;
    d = target->ci_dentry;
    if (!sd || sd->parent != &cfs__root || !cfs__dirent_ready(sd) || !d ||
        !cfs__dirent_ready(d)) {
        r = -ENOENT; /* M16: not registered, not found, coming or going */
        goto out;
    }
    for (top = d; top->parent && top->parent != &cfs__root; top = top->parent) {
    }
    if (!unlocked && top != sd) {
        r = -ENOENT; /* not in that subsystem's tree */
        goto out;
    }
    d->dependents++;
out:
    cfs__tree_unlock();
    return r;
}

int configfs_depend_item(struct configfs_subsystem *subsys,
                         struct config_item *target)
{
    return depend(subsys, target, false);
}

int configfs_depend_item_unlocked(struct configfs_subsystem *caller_subsys,
                                  struct config_item *target)
{
    return depend(caller_subsys, target, true);
}

void configfs_undepend_item(struct config_item *target)
{
    struct cfs_dirent *d;

    cfs__tree_wrlock();
    d = target ? target->ci_dentry : NULL;
    if (d && d->dependents) {
        d->dependents--;
    }
    cfs__tree_unlock();
}
