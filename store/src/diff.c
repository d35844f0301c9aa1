// SPDX-License-Identifier: MIT
/*
 * diff.c - the plan that turns one written state into another
 * (cfs_store_diff()), for import.
 *
 * Both trees are merged into one "logical" tree in which the items of a
 * committable group's pending/ and live/ hang together under pending/:
 * an item keeps its identity when it is committed or uncommitted, and the
 * path of every step is computed from the commit state at the moment the
 * step runs. The plan runs in phases so that every step finds what it
 * needs: unlinks, uncommits (outer items first), rmdirs (deepest first),
 * mkdirs with their stores (parents first), symlinks, commits (deepest
 * first, so an outer item has not moved yet when an inner one commits).
 *
 * Its cost follows the size of both trees, not their product: a node with
 * more than a few children finds them by name through a hash table
 * (hsearch_r(3)), so a group of 100 000 items is merged in one pass.
 */
#include <errno.h>
#include <search.h>
#include <string.h>

#include "store-internal.h"

struct dnode {
    const char *name;
    struct dnode *parent;
    /* Its real parent is pending/ or live/ of a committable group; the
     * logical parent is the pending/ node. */
    bool pair_child;
    bool pair_half; /* this is such a pending/ or live/ group */
    const struct cfs_store_node *h, *w;
    bool h_committed, w_committed;
    bool now_committed; /* as the plan has it so far */
    bool wrap;          /* uncommitted around stores of its own values */
    struct dnode **children;
    size_t n_children, cap_children;
    /* By name, once there are more than INDEX_MIN children. */
    struct hsearch_data *index;
    size_t index_cap;
};

#define INDEX_MIN 8

struct plan {
    struct cfs_store_op *ops;
    size_t n, cap;
    const char *root_path;
    struct dnode *root;
};

/* ---- building the logical tree ----------------------------------------- */

static void dnode_free(struct dnode *d)
{
    if (!d) {
        return;
    }
    for (size_t i = 0; i < d->n_children; i++) {
        dnode_free(d->children[i]);
    }
    cfs_free(d->children);
    if (d->index) {
        hdestroy_r(d->index);
        cfs_free(d->index);
    }
    cfs_free(d);
}

static struct dnode *dnode_child(const struct dnode *d, const char *name)
{
    if (d->index) {
        ENTRY e = {.key = (char *)name}, *found = NULL;

        return hsearch_r(e, FIND, &found, d->index) ? found->data : NULL;
    }
    for (size_t i = 0; i < d->n_children; i++) {
        if (strcmp(d->children[i]->name, name) == 0) {
            return d->children[i];
        }
    }
    return NULL;
}

static int index_enter(struct dnode *d, struct dnode *c)
{
    ENTRY e = {.key = (char *)c->name, .data = c}, *found = NULL;

    return hsearch_r(e, ENTER, &found, d->index) ? 0 : -ENOMEM;
}

/* Index @d's children by name, the newest one (@c) included; the table
 * is rebuilt at twice the size whenever it is half full. */
static int index_add(struct dnode *d, struct dnode *c)
{
    if (d->n_children <= INDEX_MIN) {
        return 0;
    }
    if (d->index && d->n_children * 2 <= d->index_cap) {
        return index_enter(d, c);
    }
    if (d->index) {
        hdestroy_r(d->index);
    } else {
        d->index = cfs_zalloc(sizeof(*d->index));
        if (!d->index) {
            return -ENOMEM;
        }
    }
    *d->index = (struct hsearch_data){0};
    d->index_cap = d->n_children * 4;
    if (!hcreate_r(d->index_cap, d->index)) {
        cfs_free(d->index);
        d->index = NULL;
        return -ENOMEM;
    }
    for (size_t i = 0; i < d->n_children; i++) {
        if (index_enter(d, d->children[i]) < 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

static int dnode_add(struct dnode *d, const char *name, struct dnode **ret)
{
    struct dnode *c;

    if (cfs_grow(&d->children,
                 &d->cap_children,
                 d->n_children,
                 sizeof(struct dnode *),
                 4)) {
        return -ENOMEM;
    }
    c = cfs_zalloc(sizeof(*c));
    if (!c) {
        return -ENOMEM;
    }
    c->name = name;
    c->parent = d;
    d->children[d->n_children++] = c;
    *ret = c;
    return index_add(d, c);
}

static bool any_committed(const struct cfs_store_node *n)
{
    for (size_t i = 0; n && i < n->n_children; i++) {
        if (n->children[i].committed) {
            return true;
        }
    }
    return false;
}

static const struct cfs_store_node *side_child(const struct cfs_store_node *n,
                                               const char *name)
{
    for (size_t i = 0; n && i < n->n_children; i++) {
        if (strcmp(n->children[i].name, name) == 0) {
            return &n->children[i];
        }
    }
    return NULL;
}

/* Is child @c of a node a pending/ or live/ group of a committable one?
 * @other: the node on the other side, whose live/ counts too. */
static bool is_pair_half(const struct cfs_store_node *c,
                         const struct cfs_store_node *other)
{
    if (c->created) {
        return false;
    }
    if (strcmp(c->name, "pending") == 0) {
        return true;
    }
    return strcmp(c->name, "live") == 0 &&
           (any_committed(c) || any_committed(side_child(other, "live")));
}

static int merge(struct dnode *d, const struct cfs_store_node *n, bool want);

/* Put the items of a pending/ or live/ group under the logical pending/. */
static int merge_pair_children(struct dnode *pending,
                               const struct cfs_store_node *half,
                               bool want)
{
    for (size_t i = 0; i < half->n_children; i++) {
        const struct cfs_store_node *c = &half->children[i];
        struct dnode *dc = dnode_child(pending, c->name);
        int r;

        if (!dc) {
            r = dnode_add(pending, c->name, &dc);
            if (r < 0) {
                return r;
            }
            dc->pair_child = true;
        } else if (want ? dc->w != NULL : dc->h != NULL) {
            return -EINVAL; /* both in pending/ and in live/ */
        }
        r = merge(dc, c, want);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* Merge one side's node @n into @d. */
static int merge(struct dnode *d, const struct cfs_store_node *n, bool want)
{
    const struct cfs_store_node *other = want ? d->h : d->w;

    if (want) {
        d->w = n;
        d->w_committed = n->committed;
    } else {
        d->h = n;
        d->h_committed = n->committed;
        d->now_committed = n->committed;
    }
    for (size_t i = 0; i < n->n_children; i++) {
        const struct cfs_store_node *c = &n->children[i];
        struct dnode *dc;
        int r;

        if (is_pair_half(c, other)) {
            struct dnode *pending = dnode_child(d, "pending");

            if (!pending) {
                r = dnode_add(d, "pending", &pending);
                if (r < 0) {
                    return r;
                }
                pending->pair_half = true;
            }
            if (strcmp(c->name, "pending") == 0) {
                if (want) {
                    pending->w = c;
                } else {
                    pending->h = c;
                }
            } else {
                /* live/ itself: keep it for its own values and links */
                struct dnode *live = dnode_child(d, "live");

                if (!live) {
                    r = dnode_add(d, "live", &live);
                    if (r < 0) {
                        return r;
                    }
                    live->pair_half = true;
                }
                if (want) {
                    live->w = c;
                } else {
                    live->h = c;
                }
            }
            r = merge_pair_children(pending, c, want);
            if (r < 0) {
                return r;
            }
            continue;
        }
        dc = dnode_child(d, c->name);
        if (!dc) {
            r = dnode_add(d, c->name, &dc);
            if (r < 0) {
                return r;
            }
        }
        r = merge(dc, c, want);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* ---- paths and ops ----------------------------------------------------- */

static char *path_of(const struct plan *p, const struct dnode *d)
{
    char *parent, *s;

    if (d == p->root) {
        return cfs_strdup(p->root_path);
    }
    if (d->pair_child) {
        /* d->parent is the logical pending/; its parent the group */
        parent = path_of(p, d->parent->parent);
        if (!parent) {
            return NULL;
        }
        s = store_asprintf("%s/%s/%s",
                           strcmp(parent, "/") ? parent : "",
                           d->now_committed ? "live" : "pending",
                           d->name);
    } else {
        parent = path_of(p, d->parent);
        if (!parent) {
            return NULL;
        }
        s = store_asprintf("%s/%s", strcmp(parent, "/") ? parent : "", d->name);
    }
    cfs_free(parent);
    return s;
}

/* Append an op; @path is consumed, @arg copied. */
static int op_add(struct plan *p,
                  enum cfs_op op,
                  char *path,
                  const char *arg,
                  size_t arg_len,
                  bool binary)
{
    struct cfs_store_op *o;

    if (!path) {
        return -ENOMEM;
    }
    if (cfs_grow(&p->ops, &p->cap, p->n, sizeof(*p->ops), 16)) {
        cfs_free(path);
        return -ENOMEM;
    }
    o = &p->ops[p->n];
    *o = (struct cfs_store_op){.op = op, .path = path, .binary = binary};
    if (arg) {
        o->arg = cfs_malloc(arg_len + 1);
        if (!o->arg) {
            cfs_free(path);
            return -ENOMEM;
        }
        memcpy(o->arg, arg, arg_len);
        o->arg[arg_len] = '\0';
        o->arg_len = arg_len;
    }
    p->n++;
    return 0;
}

static int op_add_child(struct plan *p,
                        enum cfs_op op,
                        const struct dnode *d,
                        const char *name,
                        const char *arg,
                        size_t arg_len,
                        bool binary)
{
    char *dir = path_of(p, d), *path;

    if (!dir) {
        return -ENOMEM;
    }
    path = store_asprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
    cfs_free(dir);
    return op_add(p, op, path, arg, arg_len, binary);
}

static const struct cfs_store_link *link_find(const struct cfs_store_node *n,
                                              const char *name)
{
    for (size_t i = 0; n && i < n->n_links; i++) {
        if (strcmp(n->links[i].name, name) == 0) {
            return &n->links[i];
        }
    }
    return NULL;
}

static const struct cfs_store_value *value_find(const struct cfs_store_node *n,
                                                const char *name)
{
    for (size_t i = 0; n && i < n->n_values; i++) {
        if (strcmp(n->values[i].name, name) == 0) {
            return &n->values[i];
        }
    }
    return NULL;
}

/* The same bytes. Whether the attribute is binary is the tree's business,
 * not the value's: a document does not say, so it must not count. */
static bool value_same(const struct cfs_store_value *a,
                       const struct cfs_store_value *b)
{
    return a && b && a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* Must @v of the wanted side be stored into @d? A written value, unless
 * the tree holds the same bytes; a default only over other bytes the tree
 * lists for the attribute (a new directory has its defaults). */
static bool wants_store(const struct dnode *d, const struct cfs_store_value *v)
{
    const struct cfs_store_value *h = value_find(d->h, v->name);

    if (v->is_default && !h) {
        return false;
    }
    return !value_same(v, h);
}

static bool needs_stores(const struct dnode *d)
{
    for (size_t i = 0; d->w && i < d->w->n_values; i++) {
        if (wants_store(d, &d->w->values[i])) {
            return true;
        }
    }
    return false;
}

/* ---- the phases -------------------------------------------------------- */

static bool removed(const struct dnode *d, enum cfs_store_diff_mode mode)
{
    return mode == CFS_STORE_DIFF_REPLACE && d->h && !d->w;
}

static int
phase_unlinks(struct plan *p, struct dnode *d, enum cfs_store_diff_mode mode)
{
    for (size_t i = 0; d->h && i < d->h->n_links; i++) {
        const struct cfs_store_link *hl = &d->h->links[i];
        const struct cfs_store_link *wl = link_find(d->w, hl->name);
        bool drop = wl ? strcmp(wl->target, hl->target) != 0
                       : mode == CFS_STORE_DIFF_REPLACE;

        if (drop) {
            int r = op_add_child(p, CFS_OP_UNLINK, d, hl->name, NULL, 0, false);

            if (r < 0) {
                return r;
            }
        }
    }
    for (size_t i = 0; i < d->n_children; i++) {
        int r = phase_unlinks(p, d->children[i], mode);

        if (r < 0) {
            return r;
        }
    }
    return 0;
}

static int rename_op(struct plan *p, struct dnode *d, bool commit)
{
    char *from = path_of(p, d), *to;
    int r;

    if (!from) {
        return -ENOMEM;
    }
    d->now_committed = commit;
    to = path_of(p, d);
    if (!to) {
        cfs_free(from);
        return -ENOMEM;
    }
    r = op_add(p, CFS_OP_RENAME, from, to, strlen(to), false);
    cfs_free(to);
    return r;
}

static int
phase_uncommits(struct plan *p, struct dnode *d, enum cfs_store_diff_mode mode)
{
    if (d->pair_child && d->now_committed && d->h &&
        (!d->w ? mode == CFS_STORE_DIFF_REPLACE : !d->w_committed || d->wrap)) {
        int r = rename_op(p, d, false);

        if (r < 0) {
            return r;
        }
    }
    for (size_t i = 0; i < d->n_children; i++) {
        int r = phase_uncommits(p, d->children[i], mode);

        if (r < 0) {
            return r;
        }
    }
    return 0;
}

static int
phase_rmdirs(struct plan *p, struct dnode *d, enum cfs_store_diff_mode mode)
{
    for (size_t i = d->n_children; i-- > 0;) {
        int r = phase_rmdirs(p, d->children[i], mode);

        if (r < 0) {
            return r;
        }
    }
    if (removed(d, mode) && d->h->created) {
        return op_add(p, CFS_OP_RMDIR, path_of(p, d), NULL, 0, false);
    }
    return 0;
}

static int phase_make(struct plan *p, struct dnode *d)
{
    int r;

    if (!d->w && !d->pair_half) {
        return 0;
    }
    /* The logical pending/ of a document whose items are all committed
     * has no pending/ of its own (an empty one is not exported), yet
     * holds the items to make. */
    if (d->w && !d->h && d->w->created) {
        r = op_add(p, CFS_OP_MKDIR, path_of(p, d), NULL, 0, false);
        if (r < 0) {
            return r;
        }
    }
    for (size_t i = 0; d->w && i < d->w->n_values; i++) {
        const struct cfs_store_value *v = &d->w->values[i];

        if (!wants_store(d, v)) {
            continue;
        }
        r = op_add_child(
            p, CFS_OP_STORE, d, v->name, v->data, v->len, v->binary);
        if (r < 0) {
            return r;
        }
    }
    for (size_t i = 0; i < d->n_children; i++) {
        r = phase_make(p, d->children[i]);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* The node a target path names inside the diffed tree, or NULL. */
static struct dnode *resolve(const struct plan *p, const char *target)
{
    size_t rlen = strlen(p->root_path);
    const char *s;
    struct dnode *d = p->root;

    if (!store_path_under(target, p->root_path, rlen)) {
        return NULL;
    }
    s = target + (rlen == 1 ? 0 : rlen);
    while (*s == '/') {
        const char *e = strchr(s + 1, '/');
        size_t len = e ? (size_t)(e - s - 1) : strlen(s + 1);
        char *name = cfs_memdup(s + 1, len);
        struct dnode *next = name ? dnode_child(d, name) : NULL;

        cfs_free(name);
        if (next && next->pair_half) {
            /* the items of pending/ and live/ hang under pending/ */
            next = dnode_child(d, "pending");
        }
        if (!next) {
            return NULL;
        }
        d = next;
        s += len + 1;
    }
    return d;
}

static int phase_links(struct plan *p, struct dnode *d)
{
    for (size_t i = 0; d->w && i < d->w->n_links; i++) {
        const struct cfs_store_link *wl = &d->w->links[i];
        const struct cfs_store_link *hl = link_find(d->h, wl->name);
        struct dnode *t;
        char *target;
        int r;

        if (hl && strcmp(hl->target, wl->target) == 0) {
            continue;
        }
        t = resolve(p, wl->target);
        target = t ? path_of(p, t) : cfs_strdup(wl->target);
        if (!target) {
            return -ENOMEM;
        }
        r = op_add_child(
            p, CFS_OP_SYMLINK, d, wl->name, target, strlen(target), false);
        cfs_free(target);
        if (r < 0) {
            return r;
        }
    }
    for (size_t i = 0; i < d->n_children; i++) {
        int r = phase_links(p, d->children[i]);

        if (r < 0) {
            return r;
        }
    }
    return 0;
}

static int phase_commits(struct plan *p, struct dnode *d)
{
    for (size_t i = d->n_children; i-- > 0;) {
        int r = phase_commits(p, d->children[i]);

        if (r < 0) {
            return r;
        }
    }
    if (d->pair_child && d->w && d->w_committed && !d->now_committed) {
        return rename_op(p, d, true);
    }
    return 0;
}

static void mark_wraps(struct dnode *d)
{
    d->wrap =
        d->pair_child && d->h_committed && d->w_committed && needs_stores(d);
    for (size_t i = 0; i < d->n_children; i++) {
        mark_wraps(d->children[i]);
    }
}

void cfs_store_ops_free(struct cfs_store_op *ops, size_t n)
{
    if (!ops) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cfs_free(ops[i].path);
        cfs_free(ops[i].arg);
    }
    cfs_free(ops);
}

int cfs_store_diff(const struct cfs_store_node *have,
                   const struct cfs_store_node *want,
                   enum cfs_store_diff_mode mode,
                   struct cfs_store_op **ret_ops,
                   size_t *ret_n)
{
    struct plan p = {0};
    int r;

    if (!have || !want || !ret_ops || !ret_n ||
        (mode != CFS_STORE_DIFF_MERGE && mode != CFS_STORE_DIFF_REPLACE)) {
        return -EINVAL;
    }
    p.root_path = want->path ? want->path : have->path;
    if (!p.root_path || p.root_path[0] != '/') {
        return -EINVAL;
    }
    p.root = cfs_zalloc(sizeof(*p.root));
    if (!p.root) {
        return -ENOMEM;
    }
    p.root->name = "";
    r = merge(p.root, have, false);
    if (r == 0) {
        r = merge(p.root, want, true);
    }
    if (r == 0) {
        mark_wraps(p.root);
        r = phase_unlinks(&p, p.root, mode);
    }
    if (r == 0) {
        r = phase_uncommits(&p, p.root, mode);
    }
    if (r == 0 && mode == CFS_STORE_DIFF_REPLACE) {
        r = phase_rmdirs(&p, p.root, mode);
    }
    if (r == 0) {
        r = phase_make(&p, p.root);
    }
    if (r == 0) {
        r = phase_links(&p, p.root);
    }
    if (r == 0) {
        r = phase_commits(&p, p.root);
    }
    dnode_free(p.root);
    if (r < 0) {
        cfs_store_ops_free(p.ops, p.n);
        return r;
    }
    *ret_ops = p.ops;
    *ret_n = p.n;
    return 0;
}
