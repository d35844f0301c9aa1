// SPDX-License-Identifier: MIT
/*
 * committable.c - committable groups: the pending/live pair, operations tables.
 *
 * A committable group (C1) gets two default groups made by core:
 * pending/ forwards mkdir, rmdir and links to the group's own operations
 * with itself as the group argument (C4); live/ has none (C6). Also the
 * lookup of the operations that apply in a directory.
 */
#include "internal.h"

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

bool cfs__type_committable(const struct config_item_type *t)
{
    return t && t->ct_group_ops && t->ct_group_ops->commit_item &&
           t->ct_group_ops->uncommit_item;
}

struct cfs_commit_pair *cfs__pair_new(struct config_group *owner)
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
    const struct config_item_type *t = cfs__dir_type(d);

    if (d->flags & CFS_DF_LIVE) {
        /* live/ has no group operations (C6); removal on unregister
         * still tells the owner. */
        return NULL;
    }
    return t ? t->ct_group_ops : NULL;
}

const struct configfs_item_operations *cfs__item_ops(struct cfs_dirent *d)
{
    const struct config_item_type *t = cfs__dir_type(d);

    return t ? t->ct_item_ops : NULL;
}

/* The operations that drop an item from @parent: the owner's for live/. */
const struct configfs_group_operations *cfs__drop_ops(struct cfs_dirent *parent)
{
    if (parent->flags & CFS_DF_LIVE) {
        struct cfs_commit_pair *pair = container_of(
            to_config_group(parent->item), struct cfs_commit_pair, live);

        return owner_gops(pair);
    }
    return cfs__group_ops(parent);
}
