// SPDX-License-Identifier: MIT
/*
 * register.c - registering subsystems and groups, and removing them.
 *
 * configfs_register_subsystem(), configfs_register_group() and
 * configfs_register_default_group(), with their unregister twins (M9,
 * M15, T7); the observer hears of subsystems coming and going.
 */
#include "internal.h"

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
    r = cfs__child_reserve(parent);
    if (r < 0) {
        return r;
    }
    frag = cfs__frag_new();
    if (!frag) {
        return -ENOMEM;
    }
    /* A subsystem's own su_mutex guards its linking; cfs__link_group() takes
     * cg_subsys from the group itself when the parent (the root) has none. */
    su = parent == &cfs__root ? &to_configfs_subsystem(group)->su_mutex.lock
                              : cfs__su_lock(pgroup);
    if (parent == &cfs__root) {
        group->cg_subsys = NULL;
        pthread_mutex_lock(su);
    }
    cfs__link_group(pgroup, group);
    cfs__su_unlock(su);
    r = cfs__build_dir(
        parent, &group->cg_item, name, flags, frag, cfs_revision(), true, &d);
    cfs__frag_put(frag);
    if (r < 0) {
        pthread_mutex_lock(su);
        cfs__unlink_group(group);
        cfs__su_unlock(su);
        return r;
    }
    cfs__tree_wrlock();
    cfs__child_insert(parent, d);
    cfs__dirent_set_state(d, CFS_S_READY);
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
    cfs__vis_world_begin();
    r = register_dir(&cfs__root, &cfs__root_group, group, CFS_DF_SUBSYS);
    if (r < 0) {
        cfs__tree_wrlock();
        cfs__root_trim();
        cfs__tree_unlock();
    }
    if (r == 0 && cfs__observer_set && cfs__observer_cb.subsystem_registered &&
        cfs_txn_begin_replay(&txn) == 0) {
        cfs__observer_cb.subsystem_registered(
            cfs__observer_cb.data, txn, group->cg_item.ci_name);
        cfs_txn_commit(txn);
    }
    cfs__vis_world_end();
    cfs__wlock_release();
    return r;
}

void configfs_unregister_subsystem(struct configfs_subsystem *subsys)
{
    struct cfs_dirent *d;
    char *name = NULL;

    cfs__wlock_acquire();
    cfs__vis_world_begin();
    d = subsys->su_group.cg_item.ci_dentry;
    if (d && d->parent == &cfs__root) {
        name = cfs_strdup(d->name);
        cfs__unregister_dir(d);
        if (name && cfs__observer_set &&
            cfs__observer_cb.subsystem_unregistered) {
            cfs__observer_cb.subsystem_unregistered(cfs__observer_cb.data,
                                                    name);
        }
        cfs_free(name);
    }
    cfs__vis_world_end();
    cfs__wlock_release();
}

int configfs_register_group(struct config_group *parent_group,
                            struct config_group *group)
{
    struct cfs_dirent *parent;
    int r;

    cfs__wlock_acquire();
    cfs__vis_world_begin();
    parent = parent_group->cg_item.ci_dentry;
    if (!parent || !cfs__dirent_ready(parent) || parent == &cfs__root) {
        r = -ENOENT;
    } else {
        r = register_dir(
            parent, parent_group, group, CFS_DF_DEFAULT | CFS_DF_REGISTERED);
    }
    cfs__vis_world_end();
    cfs__wlock_release();
    return r;
}

void configfs_unregister_group(struct config_group *group)
{
    struct cfs_dirent *d;

    cfs__wlock_acquire();
    cfs__vis_world_begin();
    d = group->cg_item.ci_dentry;
    if (d && (d->flags & CFS_DF_REGISTERED)) {
        cfs__unregister_dir(d);
    }
    cfs__vis_world_end();
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
