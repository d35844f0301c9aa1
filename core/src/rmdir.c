// SPDX-License-Identifier: MIT
/*
 * rmdir.c - rmdir: the checks in kernel order, and what undo needs.
 *
 * RM3, RM5, RM6, RM7 in that order, no callback on a failed check (RM9);
 * the written values and default-group revisions a transaction keeps to
 * undo an rmdir.
 */
#include "internal.h"

/* RM6, RM7 on the default groups of @d, recursively: with @links, an
 * incoming link on one is EBUSY; without, a user child or an outgoing link
 * in one is ENOTEMPTY. */
static int check_defaults(struct cfs_dirent *d, bool links)
{
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        if (c->kind == CFS_D_DIR && (c->flags & CFS_DF_DEFAULT)) {
            if (links ? c->links_to != 0 : c->nchildren != 0) {
                return links ? -EBUSY : -ENOTEMPTY;
            }
            int r = check_defaults(c, links);

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
    r = check_defaults(d, true);
    if (r == 0) {
        r = check_defaults(d, false);
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

        size_t vcap = *cap;
        size_t scap = *cap; /* two arrays, one count */

        if (cfs_grow(vals, &vcap, *n, sizeof(**vals), 4) ||
            cfs_grow(seqs, &scap, *n, sizeof(**seqs), 4)) {
            return -ENOMEM;
        }
        *cap = vcap;
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

int cfs__do_rmdir(struct cfs_txn *txn, const char *path)
{
    struct cfs_resolved res;
    struct cfs_dirent *d;
    struct cfs_dirent *parent;
    struct cfs_change *ch = NULL;
    struct config_item *item;
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
    if (!cfs__dir_type(parent)) {
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
        cfs__dirent_set_state(d, CFS_S_DROPPING); /* depend_item now fails */
    }
    cfs__tree_unlock();
    if (r < 0) {
        if (ch) {
            cfs__txn_unprepare(txn);
        }
        return r; /* RM9: no callback */
    }

    cfs__drop_registered(d);
    item = cfs__remove_dir(d, cfs__group_ops(parent));
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
