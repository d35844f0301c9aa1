// SPDX-License-Identifier: MIT
/*
 * depend.c - configfs_depend_item() and its unlocked variant.
 *
 * A dependent blocks the rmdir of that one item (M16, M17, T8).
 */
#include "internal.h"

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

int cfs_dependents(const char *path, unsigned long *ret_count)
{
    struct cfs_resolved res;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_NODE);
    if (r == 0 && res.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r == 0) {
        *ret_count = res.dir->dependents;
    }
    cfs__tree_unlock();
    return r;
}
