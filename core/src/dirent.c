// SPDX-License-Identifier: MIT
/*
 * dirent.c - dirents: children tables, attributes of a directory, life.
 *
 * A directory's children sit in a hash table by name (lookups are O(1) in
 * the number of siblings) and in a list in creation order (listings).
 * Attributes are not dirents: they are found through the item's type,
 * minus those is_visible hid. Allocation, freeing and states of dirents.
 */
#include "internal.h"

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* Make room for one more child, so that the insert cannot fail. The new
 * table is filled and swapped in under the tree lock: readers may be
 * walking the old one. @pre the mutation lock, not the tree lock. */
int cfs__child_reserve(struct cfs_dirent *dir)
{
    struct cfs_dirent **tab;
    struct cfs_dirent **old;
    size_t cap;

    if (dir->hcount + 1 <= dir->hcap) {
        return 0;
    }
    /* a power of two: buckets are picked by masking the hash */
    if (cfs_grow_cap(dir->hcap, 0, 8, sizeof(struct cfs_dirent *), &cap)) {
        return -ENOMEM;
    }
    tab = cfs_zalloc(cap * sizeof(struct cfs_dirent *));
    if (!tab) {
        return -ENOMEM;
    }
    cfs__tree_wrlock();
    for (size_t i = 0; i < dir->hcap; i++) {
        struct cfs_dirent *d = dir->htab[i];

        while (d) {
            struct cfs_dirent *next = d->hnext;
            size_t b = d->hash & (cap - 1);

            d->hnext = tab[b];
            tab[b] = d;
            d = next;
        }
    }
    old = dir->htab;
    dir->htab = tab;
    dir->hcap = cap;
    cfs__tree_unlock();
    cfs_free(old);
    return 0;
}

/* The root is static: leave nothing allocated behind it once it is empty,
 * so that a program (or a test) ends with nothing allocated by core. */
void cfs__root_trim(void)
{
    if (cfs__root.hcount == 0 && cfs__root.htab) {
        cfs_free(cfs__root.htab);
        cfs__root.htab = NULL;
        cfs__root.hcap = 0;
    }
}

/* Dirents in the tree, for the metrics (cfs_tree_nodes). */
static atomic_uint_fast64_t tree_nodes;

uint64_t cfs_tree_nodes(void)
{
    return atomic_load(&tree_nodes);
}

void cfs__child_insert(struct cfs_dirent *dir, struct cfs_dirent *d)
{
    atomic_fetch_add(&tree_nodes, 1);
    size_t b = d->hash & (dir->hcap - 1);

    d->parent = dir;
    d->hnext = dir->htab[b];
    dir->htab[b] = d;
    dir->hcount++;
    d->next = NULL;
    d->prev = dir->last;
    if (dir->last) {
        dir->last->next = d;
    } else {
        dir->first = d;
    }
    dir->last = d;
    if (!(d->flags & CFS_DF_DEFAULT)) {
        dir->nchildren++;
    }
}

void cfs__child_remove(struct cfs_dirent *dir, struct cfs_dirent *d)
{
    atomic_fetch_sub(&tree_nodes, 1);
    struct cfs_dirent **pp = &dir->htab[d->hash & (dir->hcap - 1)];

    while (*pp != d) {
        pp = &(*pp)->hnext;
    }
    *pp = d->hnext;
    d->hnext = NULL;
    dir->hcount--;
    if (d->prev) {
        d->prev->next = d->next;
    } else {
        dir->first = d->next;
    }
    if (d->next) {
        d->next->prev = d->prev;
    } else {
        dir->last = d->prev;
    }
    d->prev = d->next = NULL;
    if (!(d->flags & CFS_DF_DEFAULT)) {
        dir->nchildren--;
    }
    cfs__root_trim();
}

int cfs__link_reserve(struct cfs_dirent *dir)
{
    return cfs__child_reserve(dir);
}

void cfs__link_insert(struct cfs_dirent *dir, struct cfs_dirent *link)
{
    link->hash = name_hash(link->name, link->name_len);
    cfs__child_insert(dir, link);
}

void cfs__link_detach(struct cfs_dirent *dir, struct cfs_dirent *link)
{
    cfs__child_remove(dir, link);
}

struct cfs_dirent *
cfs__dir_lookup(struct cfs_dirent *dir, const char *name, size_t len)
{
    uint32_t h;

    if (!dir->hcap) {
        return NULL;
    }
    h = name_hash(name, len);
    for (struct cfs_dirent *d = dir->htab[h & (dir->hcap - 1)]; d;
         d = d->hnext) {
        if (d->hash == h && d->name_len == len &&
            memcmp(d->name, name, len) == 0) {
            return d;
        }
    }
    return NULL;
}

bool cfs__dirent_ready(const struct cfs_dirent *d)
{
    return d->state == CFS_S_READY;
}

const struct config_item_type *cfs__dir_type(const struct cfs_dirent *d)
{
    return d->item ? d->item->ci_type : NULL;
}

unsigned int cfs__n_attrs(const struct config_item_type *t)
{
    unsigned int n = 0;

    if (t && t->ct_attrs) {
        while (t->ct_attrs[n]) {
            n++;
        }
    }
    return n;
}

unsigned int cfs__n_bin_attrs(const struct config_item_type *t)
{
    unsigned int n = 0;

    if (t && t->ct_bin_attrs) {
        while (t->ct_bin_attrs[n]) {
            n++;
        }
    }
    return n;
}

bool cfs__attr_hidden(const struct cfs_dirent *d, unsigned int bit)
{
    return d->hidden && (d->hidden[bit / 8] & (1u << (bit % 8)));
}

struct configfs_attribute *cfs__dir_attr(struct cfs_dirent *d, unsigned idx)
{
    return cfs__dir_type(d)->ct_attrs[idx];
}

struct configfs_bin_attribute *cfs__dir_bin_attr(struct cfs_dirent *d,
                                                 unsigned idx)
{
    return cfs__dir_type(d)->ct_bin_attrs[idx];
}

int cfs__attr_lookup(struct cfs_dirent *dir,
                     const char *name,
                     size_t len,
                     unsigned int *ret_idx)
{
    const struct config_item_type *t = cfs__dir_type(dir);
    unsigned int na = cfs__n_attrs(t);
    unsigned int nb = cfs__n_bin_attrs(t);

    for (unsigned int i = 0; i < na; i++) {
        const char *an = t->ct_attrs[i]->ca_name;

        if (!cfs__attr_hidden(dir, i) && strlen(an) == len &&
            memcmp(an, name, len) == 0) {
            *ret_idx = i;
            return 1;
        }
    }
    for (unsigned int i = 0; i < nb; i++) {
        const char *an = t->ct_bin_attrs[i]->cb_attr.ca_name;

        if (!cfs__attr_hidden(dir, na + i) && strlen(an) == len &&
            memcmp(an, name, len) == 0) {
            *ret_idx = i;
            return 2;
        }
    }
    return 0;
}

struct cfs_dirent *cfs__dirent_new(const char *name,
                                   size_t len,
                                   enum cfs_dkind kind,
                                   unsigned int flags)
{
    struct cfs_dirent *d = cfs_zalloc(sizeof(*d));

    if (!d) {
        return NULL;
    }
    d->name = cfs_memdup(name, len);
    if (!d->name) {
        cfs_free(d);
        return NULL;
    }
    d->name_len = len;
    d->hash = name_hash(name, len);
    d->kind = (uint8_t)kind;
    d->flags = (uint16_t)flags;
    return d;
}

/* Free @d and its subtree. Items are not touched: their hierarchy links
 * and references are handled by the caller. */
void cfs__dirent_free_tree(struct cfs_dirent *d)
{
    struct cfs_dirent *c = d->first;

    while (c) {
        struct cfs_dirent *next = c->next;

        cfs__dirent_free_tree(c);
        atomic_fetch_sub(&tree_nodes, 1); /* inserted, never removed */
        c = next;
    }
    if (d->kind == CFS_D_LINK && d->target) {
        cfs__link_unattach(d);
    }
    cfs__wvals_free(d);
    cfs__frag_put(d->frag);
    cfs_free(d->hidden);
    cfs_free(d->htab);
    cfs_free(d->name);
    cfs_free(d);
}

/* Items forget the dirents of a subtree that is going away. */
void cfs__dirent_unhook(struct cfs_dirent *d)
{
    if (d->kind != CFS_D_DIR) {
        return;
    }
    if (d->item && d->item->ci_dentry == d) {
        d->item->ci_dentry = NULL;
    }
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        cfs__dirent_unhook(c);
    }
}

void cfs__dirent_set_state(struct cfs_dirent *d, enum cfs_dstate state)
{
    if (d->kind != CFS_D_DIR) {
        return;
    }
    d->state = (uint8_t)state;
    for (struct cfs_dirent *c = d->first; c; c = c->next) {
        cfs__dirent_set_state(c, state);
    }
}
