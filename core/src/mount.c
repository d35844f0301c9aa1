// SPDX-License-Identifier: MIT
/*
 * mount.c - the root of the tree, the global locks and the observer.
 *
 * The kernel keeps configfs's root in mount.c; here it is a static
 * dirent and group that every path starts from. The locks below are
 * taken in this order (docs/internals/locking.md has the long form):
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
        cfs__vis_unlocked();
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
