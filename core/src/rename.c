// SPDX-License-Identifier: MIT
/*
 * rename.c - rename: commit and uncommit between pending/ and live/.
 *
 * configfs has no other rename (RN1); the committable moves follow
 * C7 and C8, and move the item on cg_children too (C11).
 */
#include "internal.h"

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
    if (!cto) {
        cfs__vis_touch(txn, dp, d->name, NULL); /* replay: the destination */
    }
    if (r == 0) {
        r = cfs__child_reserve(dp);
    }
    if (r < 0) {
        goto out;
    }
    item = d->item;
    pthread_mutex_t *su = cfs__su_lock(newg);
    cfs__callback_enter();
    r = commit ? gops->commit_item(item) : gops->uncommit_item(item); /* C8 */
    cfs__callback_exit();
    if (r != 0) {
        cfs__su_unlock(su);
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
    cfs__child_remove(sp, d);
    d->name_len = len; /* unchanged (C7) */
    cfs__child_insert(dp, d);
    if (rev) {
        sp->revision = dp->revision = d->revision = rev;
    }
    cfs__tree_unlock();
    cfs__su_unlock(su);
    cfs__txn_push(txn);
    ch = NULL;
out:
    if (ch) {
        cfs__txn_unprepare(txn);
    }
    cfs_free(cto);
    return r;
}
