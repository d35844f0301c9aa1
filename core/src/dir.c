// SPDX-License-Identifier: MIT
/*
 * dir.c - building and tearing down directory subtrees.
 *
 * A mkdir or a registration builds the whole dirent subtree of an item
 * (attributes' visibility, default groups, pending/ and live/) before
 * anyone can see it (MK9, MK10); rmdir and unregistration detach a
 * subtree, wait for running callbacks (T3) and remove what is inside.
 */
#include "internal.h"

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
        pthread_mutex_t *su = cfs__su_lock(group);

        cfs__unlink_group(&pair->pending);
        cfs__unlink_group(&pair->live);
        cfs__su_unlock(su);
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
    const struct config_item_type *t = cfs__dir_type(d);
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
    r = cfs__child_reserve(d);
    if (r < 0) {
        return r;
    }
    r = cfs__build_dir(d, &dg->cg_item, name, flags, frag, rev, true, &child);
    if (r < 0) {
        return r;
    }
    cfs__child_insert(d, child);
    return 0;
}

/*
 * Build the dirent subtree of @item, not yet linked into @parent: the
 * directory, which attributes are visible, default groups recursively and,
 * for committable groups, pending/ and live/ (MK9, C2). All or nothing: on
 * error the partial subtree is freed and pairs made here are dropped.
 * @pre the mutation lock; @item is linked into the hierarchy.
 */
int cfs__build_dir(struct cfs_dirent *parent,
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
    d = cfs__dirent_new(
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
    if (cfs__type_committable(item->ci_type)) {
        struct cfs_commit_pair *pair = cfs__pair_new(group);

        if (!pair) {
            r = -ENOMEM;
            goto fail;
        }
        pthread_mutex_t *su = cfs__su_lock(group);
        group->cg_cfs_pair = pair;
        cfs__link_group(group, &pair->pending);
        cfs__link_group(group, &pair->live);
        cfs__su_unlock(su);
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
    cfs__dirent_unhook(d);
    unwind_pairs(d, group);
    cfs__dirent_free_tree(d);
    return r;
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
void cfs__detach_dirent(struct cfs_dirent *d)
{
    cfs__tree_wrlock();
    cfs__dirent_set_state(d, CFS_S_DROPPING);
    cfs__tree_unlock();
    kill_frags(d);
    cfs__tree_wrlock();
    cfs__child_remove(d->parent, d);
    dirent_kill(d);
    cfs__tree_unlock();
}

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
            cfs__unregister_dir(c);
        } else {
            teardown_children(c);
            if (!(c->flags & CFS_DF_DEFAULT)) {
                config_item_put(cfs__remove_dir(c, cfs__drop_ops(c->parent)));
            }
        }
        c = prev;
    }
}

struct config_item *cfs__remove_dir(struct cfs_dirent *d,
                                    const struct configfs_group_operations *ops)
{
    struct config_item *item = d->item;
    struct cfs_dirent *parent = d->parent;
    struct module *owner = item->ci_type->ct_owner;

    cfs__detach_dirent(d);
    config_item_get(item); /* the working reference */
    cfs__drop_from_hierarchy(
        to_config_group(parent->item), ops, item, d->flags & CFS_DF_GROUP);
    cfs__dirent_free_tree(d);
    cfs__module_put(owner);
    return item;
}

/* Remove registered groups inside a subtree about to go (they are not on
 * any default_groups list, so cfs__unlink_group would not find them). */
void cfs__drop_registered(struct cfs_dirent *d)
{
    struct cfs_dirent *c = d->last;

    while (c) {
        struct cfs_dirent *prev = c->prev;

        if (c->kind == CFS_D_DIR) {
            if (c->flags & CFS_DF_REGISTERED) {
                cfs__unregister_dir(c);
            } else {
                cfs__drop_registered(c);
            }
        }
        c = prev;
    }
}

/* Kernel-side removal of a subsystem or registered group: never fails,
 * checks nothing (T7). @pre the mutation lock. */
void cfs__unregister_dir(struct cfs_dirent *d)
{
    struct config_group *group = to_config_group(d->item);
    struct config_group *lock_group =
        d->parent == &cfs__root ? group : to_config_group(d->parent->item);

    cfs__links_drop_into(d);
    teardown_children(d);
    cfs__detach_dirent(d);
    pthread_mutex_t *su = cfs__su_lock(lock_group);
    cfs__unlink_group(group);
    cfs__put_pairs(group);
    cfs__su_unlock(su);
    cfs__dirent_free_tree(d);
}
