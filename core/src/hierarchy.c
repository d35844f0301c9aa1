// SPDX-License-Identifier: MIT
/*
 * hierarchy.c - the client-visible hierarchy, under su_mutex.
 *
 * What subsystems see and walk: ci_parent, ci_group, cg_children and
 * cg_subsys, linked and unlinked as the kernel's dir.c does (M22, M23),
 * and the disconnect_notify/unlink/drop_item sequence of rmdir and of a
 * failed mkdir (MK11, RM11).
 */
#include "internal.h"

/* Lock the su_mutex of @group's subsystem; returns what to unlock, since
 * unlinking may clear cg_subsys in between. */
pthread_mutex_t *cfs__su_lock(struct config_group *group)
{
    pthread_mutex_t *m =
        group && group->cg_subsys ? &group->cg_subsys->su_mutex.lock : NULL;

    if (m) {
        pthread_mutex_lock(m);
    }
    return m;
}

void cfs__su_unlock(pthread_mutex_t *m)
{
    if (m) {
        pthread_mutex_unlock(m);
    }
}

/* @pre su_mutex of @parent_item's subsystem. */
void cfs__link_obj(struct config_item *parent_item, struct config_item *item)
{
    item->ci_parent = parent_item;
    item->ci_group = config_group_get(to_config_group(parent_item));
    list_add_tail(&item->ci_entry, &item->ci_group->cg_children);
    config_item_get(item);
}

void cfs__unlink_obj(struct config_item *item)
{
    struct config_group *group = item->ci_group;

    list_del_init(&item->ci_entry);
    item->ci_group = NULL;
    item->ci_parent = NULL;
    config_item_put(item);
    config_group_put(group);
}

void cfs__link_group(struct config_group *parent_group,
                     struct config_group *group)
{
    struct config_group *dg;
    struct configfs_subsystem *subsys;

    cfs__link_obj(&parent_group->cg_item, &group->cg_item);
    subsys = parent_group->cg_subsys;
    if (!subsys) {
        subsys = to_configfs_subsystem(group); /* a subsystem being added */
    }
    group->cg_subsys = subsys;
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        cfs__link_group(group, dg);
    }
    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            cfs__link_group(group, group->cg_default_groups_array[i]);
        }
    }
    if (group->cg_cfs_pair) {
        cfs__link_group(group, &group->cg_cfs_pair->pending);
        cfs__link_group(group, &group->cg_cfs_pair->live);
    }
}

void cfs__unlink_group(struct config_group *group)
{
    struct config_group *dg;

    if (group->cg_cfs_pair) {
        cfs__unlink_group(&group->cg_cfs_pair->pending);
        cfs__unlink_group(&group->cg_cfs_pair->live);
    }
    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            cfs__unlink_group(group->cg_default_groups_array[i]);
        }
    }
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        cfs__unlink_group(dg);
    }
    group->cg_subsys = NULL;
    cfs__unlink_obj(&group->cg_item);
}

/* Drop core's own references on the pending/live groups of every
 * committable group in @group's subtree (after cfs__unlink_group). */
void cfs__put_pairs(struct config_group *group)
{
    struct config_group *dg;

    if (group->cg_default_groups_array) {
        for (size_t i = 0; group->cg_default_groups_array[i]; i++) {
            cfs__put_pairs(group->cg_default_groups_array[i]);
        }
    }
    list_for_each_entry(dg, &group->default_groups, group_entry) {
        cfs__put_pairs(dg);
    }
    if (group->cg_cfs_pair) {
        struct cfs_commit_pair *pair = group->cg_cfs_pair;

        group->cg_cfs_pair = NULL;
        config_group_put(&pair->pending);
        config_group_put(&pair->live);
    }
}

/* Take @item out of the hierarchy as rmdir and a failed mkdir do (MK11,
 * RM11): disconnect_notify, unlink (default groups too), drop_item or a
 * plain put, under su_mutex. Core's pending/live groups go with it. */
void cfs__drop_from_hierarchy(struct config_group *pgroup,
                              const struct configfs_group_operations *ops,
                              struct config_item *item,
                              bool is_group)
{
    pthread_mutex_t *su = cfs__su_lock(pgroup);
    cfs__callback_enter();
    if (ops && ops->disconnect_notify) {
        ops->disconnect_notify(pgroup, item);
    }
    if (is_group) {
        cfs__unlink_group(to_config_group(item));
        cfs__put_pairs(to_config_group(item));
    } else {
        cfs__unlink_obj(item);
    }
    if (ops && ops->drop_item) {
        ops->drop_item(pgroup, item);
    } else {
        config_item_put(item);
    }
    cfs__callback_exit();
    cfs__su_unlock(su);
}
