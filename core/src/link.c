// SPDX-License-Identifier: MIT
/*
 * link.c - symlink, unlink and readlink between configfs items.
 *
 * A link is a dirent in its directory that points at the target's dirent;
 * it holds no item reference (M18) but counts as an incoming link of the
 * target, which rmdir refuses with EBUSY (RM6). Its text is computed from
 * the target whenever it is read, so it follows a committable move.
 */
#include "internal.h"

void cfs__link_attach(struct cfs_dirent *link, struct cfs_dirent *t)
{
    link->target = t;
    link->lprev = NULL;
    link->lnext = t->linked_by;
    if (t->linked_by) {
        t->linked_by->lprev = link;
    }
    t->linked_by = link;
    t->links_to++;
}

void cfs__link_unattach(struct cfs_dirent *link)
{
    struct cfs_dirent *t = link->target;

    if (link->lprev) {
        link->lprev->lnext = link->lnext;
    } else {
        t->linked_by = link->lnext;
    }
    if (link->lnext) {
        link->lnext->lprev = link->lprev;
    }
    link->lprev = link->lnext = NULL;
    link->target = NULL;
    t->links_to--;
}

static void call_drop_link(struct cfs_dirent *dir, struct cfs_dirent *target)
{
    const struct configfs_item_operations *iops = cfs__item_ops(dir);

    if (iops && iops->drop_link) {
        cfs__callback_enter();
        iops->drop_link(dir->item, target->item);
        cfs__callback_exit();
    }
}

int cfs__do_symlink(struct cfs_txn *txn, const char *path, const char *target)
{
    struct cfs_dirent *dir = NULL;
    struct cfs_dirent *t;
    struct cfs_dirent *link = NULL;
    struct cfs_resolved tres;
    const struct configfs_item_operations *iops;
    struct cfs_change *ch = NULL;
    char *tpath = NULL;
    char *cname = NULL;
    const char *name;
    unsigned int idx;
    uint64_t rev;
    size_t len;
    int r;

    r = cfs__resolve_parent(path, &dir, &name, &len);
    if (r < 0) {
        return r;
    }
    if (dir->flags & CFS_DF_ROOT) {
        return -EPERM; /* SL2, F2 */
    }
    if (cfs__dir_lookup(dir, name, len) ||
        cfs__attr_lookup(dir, name, len, &idx)) {
        return -EEXIST; /* SL1 */
    }
    if (!target || !*target) {
        return -ENOENT; /* SL1: empty target */
    }
    if (!cfs__dirent_ready(dir)) {
        return -ENOENT; /* SL3 */
    }
    iops = cfs__item_ops(dir);
    if (!iops || !iops->allow_link) {
        return -EPERM; /* SL4 */
    }
    if (target[0] != '/') {
        return -EINVAL; /* targets are absolute config paths (docs/DESIGN.md §8)
                         */
    }
    r = cfs__resolve(target, &tres); /* SL5 */
    if (r < 0) {
        return r;
    }
    if (tres.kind == CFS_R_ATTR || tres.kind == CFS_R_BIN_ATTR) {
        return -ENOTDIR;
    }
    if (tres.kind == CFS_R_LINK && tres.follows + 1 > CFS_SYMLINK_FOLLOW_MAX) {
        return -ELOOP; /* SL5 */
    }
    t = tres.kind == CFS_R_LINK ? tres.dir->target : tres.dir;
    if (t->flags & CFS_DF_ROOT) {
        return -EPERM; /* not inside a subsystem */
    }
    cname = cfs_memdup(name, len);
    if (!cname) {
        return -ENOMEM;
    }
    r = cfs__dirent_path(t, &tpath);
    if (r == 0) {
        r = cfs__txn_prepare(
            txn, CFS_OP_SYMLINK, dir, cname, tpath, strlen(tpath), &ch);
    }
    if (r < 0) {
        goto out;
    }
    link = cfs_zalloc(sizeof(*link));
    if (!link) {
        r = -ENOMEM;
        goto out;
    }
    link->name = cname;
    cname = NULL;
    link->name_len = len;
    link->kind = CFS_D_LINK;
    link->state = CFS_S_READY;
    r = cfs__link_reserve(dir);
    if (r < 0) {
        goto out;
    }

    cfs__callback_enter();
    r = iops->allow_link(dir->item, t->item); /* SL7, without su_mutex */
    cfs__callback_exit();
    if (r != 0) {
        r = r < 0 ? r : -EPERM;
        goto out;
    }
    if (!cfs__dirent_ready(t)) {
        call_drop_link(dir, t); /* SL8 */
        r = -ENOENT;
        goto out;
    }
    rev = cfs__txn_rev(txn);
    cfs__tree_wrlock();
    cfs__link_attach(link, t);
    link->revision = link->created_rev = rev;
    cfs__link_insert(dir, link);
    if (txn->insert_before) {
        cfs__child_move_before(dir, link, txn->insert_before);
    }
    if (ch) {
        ch->priv->rev_parent = dir->revision;
    }
    if (rev) {
        dir->revision = rev;
    }
    cfs__tree_unlock();
    link = NULL;
    cfs__txn_push(txn);
    ch = NULL;

out:
    if (ch) {
        cfs__txn_unprepare(txn);
    }
    if (link) {
        cfs_free(link->name);
        cfs_free(link);
    }
    cfs_free(tpath);
    cfs_free(cname);
    return r;
}

void cfs__link_take(struct cfs_dirent *link)
{
    struct cfs_dirent *dir = link->parent;
    struct cfs_dirent *target = link->target;

    cfs__tree_wrlock();
    cfs__link_detach(dir, link);
    cfs__tree_unlock();
    call_drop_link(dir, target); /* UL4: after the link is gone */
    cfs__tree_wrlock();
    cfs__link_unattach(link);
    link->parent = NULL;
    cfs__tree_unlock();
}

void cfs__link_free(struct cfs_dirent *link)
{
    if (link) {
        cfs_free(link->name);
        cfs_free(link);
    }
}

void cfs__link_remove(struct cfs_dirent *link)
{
    cfs__link_take(link);
    cfs__link_free(link);
}

int cfs__link_restore(struct cfs_dirent *link,
                      const char *path,
                      const char *target,
                      const char *before)
{
    struct cfs_resolved dres = {0}, tres = {0};
    const struct configfs_item_operations *iops;
    size_t dlen = (size_t)(strrchr(path, '/') - path);
    struct cfs_dirent *dir, *t;
    int r;

    r = cfs__resolve_n(path, dlen ? dlen : 1, &dres);
    if (r == 0 && dres.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r == 0) {
        r = cfs__resolve(target, &tres);
    }
    if (r == 0 && tres.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r < 0) {
        return r;
    }
    dir = dres.dir;
    t = tres.dir;
    if (!dir || !t) {
        return -ENOENT;
    }
    iops = cfs__item_ops(dir);
    if (!iops || !iops->allow_link) {
        return -EPERM;
    }
    r = cfs__link_reserve(dir); /* the link was there: no allocation */
    if (r < 0) {
        return r;
    }
    cfs__callback_enter();
    r = iops->allow_link(dir->item, t->item);
    cfs__callback_exit();
    if (r != 0) {
        return r < 0 ? r : -EPERM;
    }
    cfs__tree_wrlock();
    cfs__link_attach(link, t);
    cfs__link_insert(dir, link);
    if (before) {
        cfs__child_move_before(dir, link, before);
    }
    cfs__tree_unlock();
    return 0;
}

int cfs__do_unlink(struct cfs_txn *txn, const char *path)
{
    struct cfs_resolved res;
    struct cfs_dirent *link;
    struct cfs_dirent *dir;
    struct cfs_change *ch = NULL;
    char *tpath = NULL;
    uint64_t rev;
    int r;

    r = cfs__resolve(path, &res);
    if (r < 0) {
        return r; /* UL1 */
    }
    if (res.kind == CFS_R_DIR) {
        if (!res.dir->parent || (res.dir->parent->flags & CFS_DF_ROOT)) {
            return -EPERM; /* UL2, F2 */
        }
        return -EISDIR; /* UL1 */
    }
    if (res.kind != CFS_R_LINK) {
        return -EPERM; /* UL3: attributes are never deletable */
    }
    link = res.dir;
    dir = link->parent;
    if (txn->replay) {
        /* no record (cfs__txn_prepare() touches for the others) */
        cfs__vis_touch(txn, dir, link->name, NULL);
        cfs__vis_touch_dirent(txn, link->target);
    }
    if (!txn->undoing && !txn->replay) {
        r = cfs__dirent_path(link->target, &tpath);
        if (r == 0) {
            r = cfs__txn_prepare(
                txn, CFS_OP_UNLINK, dir, link->name, tpath, strlen(tpath), &ch);
        }
        if (r == 0 && ch && link->next) {
            ch->priv->before =
                cfs_memdup(link->next->name, link->next->name_len);
            if (!ch->priv->before) {
                cfs__txn_unprepare(txn);
                r = -ENOMEM;
            }
        }
        if (r < 0) {
            cfs_free(tpath);
            return r;
        }
    }
    if (ch) {
        ch->priv->rev_parent = dir->revision;
        ch->priv->created_self = link->created_rev;
        cfs__link_take(link); /* kept, so that undo needs no memory */
        ch->priv->link = link;
    } else {
        cfs__link_remove(link);
    }
    rev = cfs__txn_rev(txn);
    if (rev) {
        cfs__tree_wrlock();
        dir->revision = rev;
        cfs__tree_unlock();
    }
    cfs__txn_push(txn);
    cfs_free(tpath);
    return 0;
}

int cfs_readlink(const char *path, char **ret_target)
{
    struct cfs_resolved res;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_NODE);
    if (r == 0 && res.kind != CFS_R_LINK) {
        r = -EINVAL; /* readlink(2) on anything else */
    }
    if (r == 0) {
        r = cfs__dirent_path(res.dir->target, ret_target); /* RL1, RL2 */
    }
    cfs__tree_unlock();
    return r;
}

static bool in_subtree(const struct cfs_dirent *d, const struct cfs_dirent *top)
{
    for (; d; d = d->parent) {
        if (d == top) {
            return true;
        }
    }
    return false;
}

static void drop_links_walk(struct cfs_dirent *d, struct cfs_dirent *top)
{
    struct cfs_dirent *c = d->first;

    while (c) {
        struct cfs_dirent *next = c->next;

        if (c->kind == CFS_D_LINK) {
            if (in_subtree(c->target, top)) {
                cfs__link_remove(c);
            }
        } else {
            drop_links_walk(c, top);
        }
        c = next;
    }
}

static bool subtree_linked(const struct cfs_dirent *d)
{
    if (d->links_to) {
        return true;
    }
    for (const struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && subtree_linked(c)) {
            return true;
        }
    }
    return false;
}

void cfs__links_drop_into(struct cfs_dirent *d)
{
    if (subtree_linked(d)) {
        drop_links_walk(&cfs__root, d); /* from anywhere in the tree */
    }
}

/* ---- the links that hold a directory ----------------------------------- */

struct holders {
    char **paths;
    size_t n, cap;
    int err;
};

/* The links to @d and, as RM6 counts them too, to its default groups
 * (and theirs): the linked_by lists, no walk of the tree. */
static void holders_of(const struct cfs_dirent *d, struct holders *h)
{
    for (const struct cfs_dirent *l = d->linked_by; l && !h->err;
         l = l->lnext) {
        h->err = cfs_grow(&h->paths, &h->cap, h->n, sizeof(char *), 8);
        if (h->err < 0) {
            return;
        }
        h->err = cfs__dirent_path(l, &h->paths[h->n]);
        h->n += h->err == 0;
    }
    for (const struct cfs_dirent *c = d->first; c && !h->err; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            holders_of(c, h);
        }
    }
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfs_links_to(const char *path, char ***ret_paths, size_t *ret_n)
{
    struct cfs_resolved res;
    struct holders h = {0};
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_NODE);
    if (r == 0 && res.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r == 0) {
        holders_of(res.dir, &h);
        r = h.err;
    }
    cfs__tree_unlock();
    if (r < 0) {
        cfs_paths_free(h.paths, h.n);
        return r;
    }
    if (h.n > 1) {
        qsort(h.paths, h.n, sizeof(char *), by_path);
    }
    *ret_paths = h.paths;
    *ret_n = h.n;
    return 0;
}

void cfs_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cfs_free(paths[i]);
    }
    cfs_free(paths);
}
