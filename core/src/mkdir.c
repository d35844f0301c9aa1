// SPDX-License-Identifier: MIT
/*
 * mkdir.c - mkdir: checks, make_*, the subtree, and its place.
 *
 * MK1-MK11 in kernel order: the checks, make_* under su_mutex, linking,
 * the subtree built whole, then made visible; a failure after make_*
 * unwinds through disconnect_notify and drop_item (MK11).
 */
#include "internal.h"

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
            pthread_mutex_t *su = cfs__su_lock(pgroup);
            list_del_init(&d->item->ci_entry);
            list_add_tail(&d->item->ci_entry, &s->item->ci_entry);
            cfs__su_unlock(su);
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
        r = cfs__child_reserve(parent);
    }
    if (r == 0) {
        frag = cfs__frag_new();
        r = frag ? 0 : -ENOMEM;
    }
    if (r < 0) {
        goto out;
    }

    /* MK6, MK7: make_* and linking, under su_mutex. */
    pthread_mutex_t *su = cfs__su_lock(pgroup);
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
        cfs__link_group(pgroup, to_config_group(item));
    } else {
        cfs__link_obj(&pgroup->cg_item, item);
    }
    cfs__callback_exit();
    cfs__su_unlock(su);
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
        r = cfs__build_dir(parent,
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
        cfs__drop_from_hierarchy(pgroup, gops, item, is_group);
        config_item_put(item);
        goto out;
    }
    cfs__module_get(item->ci_type->ct_owner); /* M25 */

    CFS_BUG_ON(!d);
    /* MK10: visible only now, whole. */
    cfs__tree_wrlock();
    cfs__child_insert(parent, d);
    if (txn->insert_before) {
        cfs__child_move_before(parent, d, txn->insert_before);
    }
    cfs__dirent_set_state(d, CFS_S_READY);
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
