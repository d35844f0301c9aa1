// SPDX-License-Identifier: MIT
/*
 * attr.c - attributes: show, store, binary read/write, written values, and
 * the read side of the tree (stat, readdir).
 *
 * A read takes the tree lock shared just long enough to find the attribute,
 * reference the item and enter its fragment; show() then runs with no lock
 * (T9), and an rmdir waits for it (T3). A store runs under the mutation
 * lock like every mutation.
 */
#include "internal.h"

/* ---- written values ---------------------------------------------------- */

struct cfs_wval *cfs__wval_find(struct cfs_dirent *d, unsigned idx, bool bin)
{
    for (size_t i = 0; i < d->n_wvals; i++) {
        if (d->wvals[i].idx == idx && d->wvals[i].bin == bin) {
            return &d->wvals[i];
        }
    }
    return NULL;
}

int cfs__wval_reserve(struct cfs_dirent *d)
{
    struct cfs_wval *old;
    struct cfs_wval *w;
    size_t cap;

    if (d->n_wvals < d->cap_wvals) {
        return 0;
    }
    if (cfs_grow_cap(d->cap_wvals, d->n_wvals + 1, 2, sizeof(*w), &cap)) {
        return -ENOMEM;
    }
    w = cfs_malloc(cap * sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    /* readers (stat, readdir) may be walking the old array */
    cfs__tree_wrlock();
    if (d->n_wvals) {
        memcpy(w, d->wvals, d->n_wvals * sizeof(*w));
    }
    old = d->wvals;
    d->wvals = w;
    d->cap_wvals = cap;
    cfs__tree_unlock();
    cfs_free(old);
    return 0;
}

void cfs__wval_set(struct cfs_dirent *d,
                   unsigned idx,
                   bool bin,
                   char *data,
                   size_t len,
                   uint64_t seq,
                   uint64_t revision)
{
    struct cfs_wval *w = cfs__wval_find(d, idx, bin);

    if (!w) {
        CFS_BUG_ON(d->n_wvals >= d->cap_wvals);
        w = &d->wvals[d->n_wvals++];
        w->idx = idx;
        w->bin = bin;
    } else {
        cfs_free(w->data);
    }
    w->data = data;
    w->len = len;
    w->seq = seq;
    w->revision = revision;
}

void cfs__wval_remove(struct cfs_dirent *d, unsigned idx, bool bin)
{
    struct cfs_wval *w = cfs__wval_find(d, idx, bin);

    if (w) {
        cfs_free(w->data);
        *w = d->wvals[--d->n_wvals];
    }
}

void cfs__wvals_free(struct cfs_dirent *d)
{
    for (size_t i = 0; i < d->n_wvals; i++) {
        cfs_free(d->wvals[i].data);
    }
    cfs_free(d->wvals);
    d->wvals = NULL;
    d->n_wvals = d->cap_wvals = 0;
}

const char *cfs__wval_name(struct cfs_dirent *d, const struct cfs_wval *w)
{
    return w->bin ? cfs__dir_bin_attr(d, w->idx)->cb_attr.ca_name
                  : cfs__dir_attr(d, w->idx)->ca_name;
}

void cfs_values_free(struct cfs_value *values, size_t n)
{
    for (size_t i = 0; values && i < n; i++) {
        cfs_free(values[i].name);
        cfs_free(values[i].data);
    }
    cfs_free(values);
}

int cfs__wvals_export(struct cfs_dirent *d,
                      struct cfs_value **ret_values,
                      size_t *ret_n)
{
    struct cfs_value *vals;
    size_t n = d->n_wvals;
    size_t *order;

    vals = cfs_zalloc((n ? n : 1) * sizeof(*vals));
    order = cfs_malloc((n ? n : 1) * sizeof(*order));
    if (!vals || !order) {
        cfs_free(vals);
        cfs_free(order);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    for (size_t i = 1; i < n; i++) { /* by write order */
        for (size_t j = i;
             j > 0 && d->wvals[order[j - 1]].seq > d->wvals[order[j]].seq;
             j--) {
            size_t t = order[j];

            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct cfs_wval *w = &d->wvals[order[i]];

        vals[i].name = cfs_strdup(cfs__wval_name(d, w));
        vals[i].data = cfs_memdup(w->data, w->len);
        vals[i].len = w->len;
        vals[i].binary = w->bin;
        vals[i].revision = w->revision;
        if (!vals[i].name || !vals[i].data) {
            cfs_free(order);
            cfs_values_free(vals, i + 1);
            return -ENOMEM;
        }
    }
    cfs_free(order);
    *ret_values = vals;
    *ret_n = n;
    return 0;
}

int cfs_written_values(const char *path,
                       struct cfs_value **ret_values,
                       size_t *ret_n)
{
    struct cfs_resolved res;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_NODE);
    if (r == 0 && res.kind == CFS_R_LINK) {
        res.dir = res.dir->target;
        res.kind = CFS_R_DIR;
        cfs__read_note(res.dir, NULL, CFS_READ_NODE);
    }
    if (r == 0 && res.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r == 0) {
        r = cfs__wvals_export(res.dir, ret_values, ret_n);
    }
    cfs__tree_unlock();
    return r;
}

/* ---- permissions (RD1) ------------------------------------------------- */

static const struct configfs_item_operations *
attr_iops(const struct cfs_dirent *d)
{
    return d->item->ci_type ? d->item->ci_type->ct_item_ops : NULL;
}

static bool attr_readable(const struct cfs_dirent *d,
                          const struct configfs_attribute *a)
{
    const struct configfs_item_operations *iops = attr_iops(d);

    return (a->ca_mode & 0444) && (a->show || (iops && iops->show_attribute));
}

static bool attr_writable(const struct cfs_dirent *d,
                          const struct configfs_attribute *a)
{
    const struct configfs_item_operations *iops = attr_iops(d);

    return (a->ca_mode & 0222) && (a->store || (iops && iops->store_attribute));
}

static bool bin_readable(const struct configfs_bin_attribute *b)
{
    return (b->cb_attr.ca_mode & 0444) && b->read;
}

static bool bin_writable(const struct configfs_bin_attribute *b)
{
    return (b->cb_attr.ca_mode & 0222) && b->write;
}

/* ---- callbacks --------------------------------------------------------- */

int cfs__call_show(struct config_item *item,
                   struct configfs_attribute *attr,
                   char **ret_buf,
                   size_t *ret_len)
{
    const struct configfs_item_operations *iops =
        item->ci_type ? item->ci_type->ct_item_ops : NULL;
    /* A zeroed page like the kernel's, on the stack: show() is the hot
     * path of every GET, and only the bytes it reports are kept. */
    char page[CONFIGFS_PAGE_SIZE];
    char *buf;
    ssize_t n;

    memset(page, 0, sizeof(page));
    if (attr->show) {
        n = attr->show(item, page);
    } else if (iops && iops->show_attribute) {
        n = iops->show_attribute(item, attr, page);
    } else {
        n = -EACCES;
    }
    if (n < 0) {
        return (int)n; /* RD5 */
    }
    if (n > CONFIGFS_PAGE_SIZE) {
        return -EIO; /* RD5 */
    }
    buf = cfs_memdup(page, (size_t)n);
    if (!buf) {
        return -ENOMEM;
    }
    *ret_buf = buf;
    *ret_len = (size_t)n;
    return 0;
}

int cfs__call_bin_read(struct config_item *item,
                       struct configfs_bin_attribute *attr,
                       char **ret_buf,
                       size_t *ret_len)
{
    ssize_t size = attr->read(item, NULL, 0); /* BIN3: the size first */
    ssize_t n;
    char *buf;

    if (size < 0) {
        return (int)size;
    }
    if ((attr->cb_max_size && (size_t)size > attr->cb_max_size) ||
        (size_t)size > CFS_BIN_MAX) {
        return -EFBIG;
    }
    buf = cfs_zalloc((size_t)size + 1);
    if (!buf) {
        return -ENOMEM;
    }
    n = size ? attr->read(item, buf, (size_t)size) : 0;
    if (n < 0) {
        cfs_free(buf);
        return (int)n;
    }
    if (n > size) {
        n = size;
    }
    buf[n] = '\0';
    *ret_buf = buf;
    *ret_len = (size_t)n;
    return 0;
}

/* Reference the item and enter its fragment. @pre the tree lock or the
 * mutation lock. */
static int attr_pin(struct cfs_dirent *d,
                    struct config_item **ret_item,
                    struct cfs_frag **ret_frag)
{
    if (!cfs__dirent_ready(d) || !cfs__frag_enter(d->frag)) {
        return -ENOENT; /* T1, T3 */
    }
    cfs__frag_get(d->frag);
    *ret_frag = d->frag;
    *ret_item = config_item_get(d->item);
    return 0;
}

static void attr_unpin(struct config_item *item, struct cfs_frag *frag)
{
    cfs__frag_exit(frag);
    cfs__frag_put(frag);
    config_item_put(item); /* may run release(): no lock is held */
}

/* ---- show -------------------------------------------------------------- */

int cfs_show(const char *path, char **ret_buf, size_t *ret_len)
{
    struct cfs_resolved res;
    struct config_item *item = NULL;
    struct cfs_frag *frag = NULL;
    struct configfs_attribute *attr = NULL;
    struct configfs_bin_attribute *battr = NULL;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_SHOW);
    if (r == 0 && (res.kind == CFS_R_DIR || res.kind == CFS_R_LINK)) {
        r = -EISDIR;
    }
    if (r == 0 && res.kind == CFS_R_ATTR) {
        attr = cfs__dir_attr(res.dir, res.idx);
        if (!attr_readable(res.dir, attr)) {
            r = -EACCES; /* RD1 */
        }
    } else if (r == 0) {
        battr = cfs__dir_bin_attr(res.dir, res.idx);
        if (!bin_readable(battr)) {
            r = -EACCES; /* BIN1 */
        }
    }
    if (r == 0) {
        r = attr_pin(res.dir, &item, &frag);
    }
    cfs__tree_unlock();
    if (r < 0) {
        return r;
    }
    if (attr) {
        r = cfs__call_show(item, attr, ret_buf, ret_len);
    } else if (battr) {
        r = cfs__call_bin_read(item, battr, ret_buf, ret_len);
    }
    attr_unpin(item, frag);
    return r;
}

/* ---- store ------------------------------------------------------------- */

/* One store() of the whole value; a short count gets the rest in a new
 * call, as a write(2) loop would (WR2); a call that takes nothing is EIO. */
static int call_store(struct config_item *item,
                      struct configfs_attribute *attr,
                      const char *buf,
                      size_t len)
{
    const struct configfs_item_operations *iops =
        item->ci_type ? item->ci_type->ct_item_ops : NULL;
    char page[CONFIGFS_PAGE_SIZE]; /* no allocation: undo stores too */
    size_t off = 0;
    int r = 0;

    do {
        size_t rest = len - off;
        ssize_t n;

        memcpy(page, buf + off, rest);
        page[rest] = '\0'; /* WR1: NUL-terminated copy at offset 0 */
        if (attr->store) {
            n = attr->store(item, page, rest);
        } else if (iops && iops->store_attribute) {
            n = iops->store_attribute(item, attr, page, rest);
        } else {
            n = -EACCES;
        }
        if (n < 0) {
            r = (int)n;
            break;
        }
        if (n == 0 && rest > 0) {
            r = -EIO;
            break;
        }
        off += (size_t)n < rest ? (size_t)n : rest;
    } while (off < len);
    return r;
}

int cfs__do_store(struct cfs_txn *txn,
                  const char *path,
                  const void *buf,
                  size_t len)
{
    struct cfs_resolved res;
    struct cfs_dirent *d;
    struct configfs_attribute *attr = NULL;
    struct configfs_bin_attribute *battr = NULL;
    struct config_item *item = NULL;
    struct cfs_frag *frag = NULL;
    struct cfs_change *ch = NULL;
    struct cfs_wval *w;
    bool had_wval;
    uint64_t old_seq, old_wrev;
    char *old = NULL;
    size_t old_len = 0;
    bool has_old = false;
    bool readable;
    char *data = NULL;
    const char *aname;
    uint64_t rev;
    int r;

    r = cfs__resolve(path, &res);
    if (r < 0) {
        return r;
    }
    if (res.kind == CFS_R_DIR || res.kind == CFS_R_LINK) {
        return -EISDIR;
    }
    d = res.dir;
    if (!cfs__dirent_ready(d)) {
        return -ENOENT; /* WR7 */
    }
    if (res.kind == CFS_R_ATTR) {
        attr = cfs__dir_attr(d, res.idx);
        if (!attr_writable(d, attr)) {
            return -EACCES; /* RD1 */
        }
        if (len > CFS_STORE_MAX) {
            return -EFBIG; /* WR3 */
        }
        readable = attr_readable(d, attr);
        aname = attr->ca_name;
    } else {
        battr = cfs__dir_bin_attr(d, res.idx);
        if (!bin_writable(battr)) {
            return -EACCES; /* BIN1 */
        }
        if ((battr->cb_max_size && len > battr->cb_max_size) ||
            len > CFS_BIN_MAX) {
            return -EFBIG; /* BIN4 */
        }
        readable = bin_readable(battr);
        aname = battr->cb_attr.ca_name;
    }
    r = attr_pin(d, &item, &frag);
    if (r < 0) {
        return r;
    }

    /* What undo needs: the value written before, or what show() gives. */
    /* @w points into d->wvals, which cfs__wval_reserve() may move: keep
     * what undo needs now and do not use @w past the reserve. */
    w = cfs__wval_find(d, res.idx, battr != NULL);
    had_wval = w != NULL;
    old_seq = w ? w->seq : 0;
    old_wrev = w ? w->revision : 0;
    if (!txn->undoing && !txn->replay) {
        if (w) {
            old = cfs_memdup(w->data, w->len);
            old_len = w->len;
            has_old = old != NULL;
            r = old ? 0 : -ENOMEM;
        } else if (readable) {
            cfs__callback_enter();
            r = attr ? cfs__call_show(item, attr, &old, &old_len)
                     : cfs__call_bin_read(item, battr, &old, &old_len);
            cfs__callback_exit();
            has_old = r == 0;
            if (r != -ENOMEM) {
                r = 0; /* a show that fails only costs the undo */
            }
        }
    }
    if (r == 0) {
        r = cfs__txn_prepare(txn, CFS_OP_STORE, d, aname, buf, len, &ch);
    }
    if (r == 0 && !txn->undo_raw_store) {
        data = cfs_memdup(buf, len);
        r = data ? cfs__wval_reserve(d) : -ENOMEM;
    }
    if (r < 0) {
        goto out;
    }

    cfs__callback_enter();
    if (attr) {
        r = call_store(item, attr, buf, len);
    } else {
        ssize_t n = battr->write(item, buf, len); /* BIN5, error kept */

        r = n < 0 ? (int)n : 0;
    }
    cfs__callback_exit();
    if (r < 0) {
        goto out;
    }

    rev = cfs__txn_rev(txn);
    cfs__tree_wrlock();
    if (ch) {
        ch->priv->had_wval = had_wval;
        ch->priv->old_seq = old_seq;
        ch->priv->old_wrev = old_wrev;
        ch->priv->rev_self = d->revision;
        ch->old = old;
        ch->old_len = old_len;
        ch->has_old = has_old;
        ch->binary = battr != NULL;
        ch->write_only = !readable;
        old = NULL;
    }
    if (data) { /* not for a raw undo store: its caller fixes the value */
        cfs__wval_set(d,
                      res.idx,
                      battr != NULL,
                      data,
                      len,
                      cfs__next_seq(),
                      rev ? rev : d->created_rev);
        data = NULL;
    }
    if (rev) {
        d->revision = rev;
    }
    cfs__tree_unlock();
    cfs__txn_push(txn);
    ch = NULL;

out:
    if (ch) {
        cfs__txn_unprepare(txn);
    }
    cfs_free(data);
    cfs_free(old);
    attr_unpin(item, frag);
    return r;
}

/* ---- stat and readdir -------------------------------------------------- */

const char *cfs_kind_name(enum cfs_kind kind)
{
    switch (kind) {
    case CFS_KIND_ROOT:
        return "root";
    case CFS_KIND_SUBSYSTEM:
        return "subsystem";
    case CFS_KIND_GROUP:
        return "group";
    case CFS_KIND_ITEM:
        return "item";
    case CFS_KIND_ATTR:
        return "attribute";
    case CFS_KIND_BIN_ATTR:
        return "binary_attribute";
    case CFS_KIND_LINK:
        return "link";
    }
    return "unknown";
}

void cfs_entry_done(struct cfs_entry *entry)
{
    if (entry) {
        cfs_free(entry->name);
        cfs_free(entry->target);
        memset(entry, 0, sizeof(*entry));
    }
}

void cfs_entries_free(struct cfs_entry *entries, size_t n)
{
    for (size_t i = 0; entries && i < n; i++) {
        cfs_entry_done(&entries[i]);
    }
    cfs_free(entries);
}

static int fill_dir(struct cfs_dirent *d, struct cfs_entry *e)
{
    const struct configfs_group_operations *g = cfs__group_ops(d);

    memset(e, 0, sizeof(*e));
    e->name = cfs_memdup(d->name, d->name_len);
    if (!e->name) {
        return -ENOMEM;
    }
    if (d->flags & CFS_DF_ROOT) {
        e->kind = CFS_KIND_ROOT;
    } else if (d->flags & CFS_DF_SUBSYS) {
        e->kind = CFS_KIND_SUBSYSTEM;
    } else if (d->flags & CFS_DF_GROUP) {
        e->kind = CFS_KIND_GROUP;
    } else {
        e->kind = CFS_KIND_ITEM;
    }
    e->mode = 0755; /* F3 */
    e->default_group = (d->flags & CFS_DF_DEFAULT) != 0;
    e->user_created = (d->flags & CFS_DF_USER) != 0;
    e->committable = (d->flags & CFS_DF_COMMITTABLE) != 0;
    e->pending = (d->flags & CFS_DF_PENDING) != 0;
    e->live = (d->flags & CFS_DF_LIVE) ||
              (d->parent && (d->parent->flags & CFS_DF_LIVE));
    if ((d->flags & CFS_DF_GROUP) && !(d->flags & CFS_DF_COMMITTABLE) && g) {
        e->creates = g->make_group  ? CFS_KIND_GROUP
                     : g->make_item ? CFS_KIND_ITEM
                                    : 0;
    }
    e->revision = d->revision;
    e->created = d->created_rev;
    e->type_name =
        d->item && d->item->ci_type ? d->item->ci_type->ct_name : NULL;
    for (const struct cfs_dirent *c = d->first; c; c = c->next) {
        if (cfs__dirent_ready(c)) {
            e->has_children = true; /* one is enough: O(1) when non-empty */
            break;
        }
    }
    return 0;
}

static int
fill_attr(struct cfs_dirent *d, unsigned int idx, bool bin, struct cfs_entry *e)
{
    const struct cfs_wval *w = cfs__wval_find(d, idx, bin);

    memset(e, 0, sizeof(*e));
    if (bin) {
        struct configfs_bin_attribute *b = cfs__dir_bin_attr(d, idx);

        e->name = cfs_strdup(b->cb_attr.ca_name);
        e->kind = CFS_KIND_BIN_ATTR;
        e->mode = b->cb_attr.ca_mode & 07777u;
        e->readable = bin_readable(b);
        e->writable = bin_writable(b);
        e->max_size = b->cb_max_size;
    } else {
        struct configfs_attribute *a = cfs__dir_attr(d, idx);

        e->name = cfs_strdup(a->ca_name);
        e->kind = CFS_KIND_ATTR;
        e->mode = a->ca_mode & 07777u; /* F4 */
        e->readable = attr_readable(d, a);
        e->writable = attr_writable(d, a);
    }
    e->revision = w ? w->revision : d->created_rev;
    e->created = d->created_rev; /* the attribute lives as long as its dir */
    return e->name ? 0 : -ENOMEM;
}

static int fill_link(struct cfs_dirent *l, struct cfs_entry *e)
{
    memset(e, 0, sizeof(*e));
    e->name = cfs_memdup(l->name, l->name_len);
    e->kind = CFS_KIND_LINK;
    e->mode = 0777; /* F5 */
    e->revision = l->created_rev;
    e->created = l->created_rev;
    cfs__read_note(l->target, NULL, CFS_READ_SELF); /* the path it shows */
    if (!e->name || cfs__dirent_path(l->target, &e->target) < 0) {
        cfs_entry_done(e);
        return -ENOMEM;
    }
    return 0;
}

static int fill_resolved(const struct cfs_resolved *res, struct cfs_entry *e)
{
    switch (res->kind) {
    case CFS_R_DIR:
        return fill_dir(res->dir, e);
    case CFS_R_LINK:
        return fill_link(res->dir, e);
    case CFS_R_ATTR:
        return fill_attr(res->dir, res->idx, false, e);
    case CFS_R_BIN_ATTR:
        return fill_attr(res->dir, res->idx, true, e);
    }
    return -EINVAL;
}

int cfs_stat(const char *path, struct cfs_entry *ret_entry)
{
    struct cfs_resolved res;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_NODE);
    if (r == 0) {
        r = fill_resolved(&res, ret_entry);
    }
    cfs__tree_unlock();
    return r;
}

static int
list_dir(struct cfs_dirent *d, struct cfs_entry **ret_entries, size_t *ret_n)
{
    const struct config_item_type *t = d->item ? d->item->ci_type : NULL;
    unsigned int na = cfs__n_attrs(t);
    unsigned int nb = cfs__n_bin_attrs(t);
    struct cfs_entry *es;
    size_t n = 0, cap;
    int r = 0;

    cap = na + nb + d->hcount;
    es = cfs_zalloc((cap ? cap : 1) * sizeof(*es));
    if (!es) {
        return -ENOMEM;
    }
    for (unsigned int i = 0; r == 0 && i < na; i++) {
        if (!cfs__attr_hidden(d, i)) {
            r = fill_attr(d, i, false, &es[n]);
            n += r == 0;
        }
    }
    for (unsigned int i = 0; r == 0 && i < nb; i++) {
        if (!cfs__attr_hidden(d, na + i)) {
            r = fill_attr(d, i, true, &es[n]);
            n += r == 0;
        }
    }
    for (struct cfs_dirent *c = d->first; r == 0 && c; c = c->next) {
        r = c->kind == CFS_D_LINK ? fill_link(c, &es[n]) : fill_dir(c, &es[n]);
        n += r == 0;
    }
    if (r < 0) {
        cfs_entries_free(es, n);
        return r;
    }
    *ret_entries = es;
    *ret_n = n;
    return 0;
}

int cfs_readdir(const char *path, struct cfs_entry **ret_entries, size_t *ret_n)
{
    struct cfs_resolved res;
    int r;

    cfs__tree_rdlock();
    r = cfs__read_resolve(path, &res, CFS_READ_TREE);
    if (r == 0 && res.kind == CFS_R_LINK) {
        res.dir = res.dir->target; /* ls link/ lists the target */
        res.kind = CFS_R_DIR;
        cfs__read_note(res.dir, NULL, CFS_READ_TREE);
    }
    if (r == 0 && res.kind != CFS_R_DIR) {
        r = -ENOTDIR;
    }
    if (r == 0 && !cfs__dirent_ready(res.dir)) {
        r = -ENOENT; /* D1 */
    }
    if (r == 0) {
        r = list_dir(res.dir, ret_entries, ret_n);
    }
    cfs__tree_unlock();
    return r;
}
