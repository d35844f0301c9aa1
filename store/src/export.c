// SPDX-License-Identifier: MIT
/*
 * export.c - the written state as a tree of plain C structures, from the
 * database (a durable, consistent snapshot) or from the live tree. The
 * server turns either into the export JSON document; tests compare the two
 * to prove that tree and database agree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define SUBTREE "(path = ?1 OR (path > ?1 || '/' AND path < ?1 || '0'))"

/* ---- freeing ----------------------------------------------------------- */

static void node_done(struct cfs_store_node *n)
{
    for (size_t i = 0; i < n->n_values; i++) {
        cfs_free(n->values[i].name);
        cfs_free(n->values[i].data);
    }
    cfs_free(n->values);
    for (size_t i = 0; i < n->n_links; i++) {
        cfs_free(n->links[i].name);
        cfs_free(n->links[i].target);
    }
    cfs_free(n->links);
    for (size_t i = 0; i < n->n_children; i++) {
        node_done(&n->children[i]);
    }
    cfs_free(n->children);
    cfs_free(n->name);
    cfs_free(n->path);
    cfs_free(n->type);
    *n = (struct cfs_store_node){0};
}

void cfs_store_export_free(struct cfs_store_export *e)
{
    if (!e) {
        return;
    }
    node_done(&e->root);
    cfs_free(e);
}

static char *memdup0(const void *p, size_t len)
{
    char *s = cfs_malloc(len + 1);

    if (s) {
        if (len) {
            memcpy(s, p, len);
        }
        s[len] = '\0';
    }
    return s;
}

/* ---- defaults ---------------------------------------------------------- */

static bool has_value(const struct cfs_store_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_values; i++) {
        if (strcmp(n->values[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* Append to @n what each readable and writable attribute never written
 * shows now (is_default), in declaration order; then the same for the
 * children. A directory gone from the tree, or an attribute whose show
 * fails, adds nothing. */
static int add_defaults(struct cfs_store_node *n)
{
    struct cfs_entry *entries = NULL;
    size_t ne = 0;
    int r = 0;

    if (cfs_readdir(n->path, &entries, &ne) == 0) {
        for (size_t i = 0; i < ne && r == 0; i++) {
            const struct cfs_entry *a = &entries[i];
            struct cfs_store_value *v;
            char *apath, *buf = NULL;
            size_t len = 0;

            if ((a->kind != CFS_KIND_ATTR && a->kind != CFS_KIND_BIN_ATTR) ||
                !a->readable || !a->writable || has_value(n, a->name)) {
                continue;
            }
            apath = strcmp(n->path, "/") == 0
                        ? store_asprintf("/%s", a->name)
                        : store_asprintf("%s/%s", n->path, a->name);
            if (!apath) {
                r = -ENOMEM;
                break;
            }
            if (cfs_show(apath, &buf, &len) < 0) {
                cfs_free(apath);
                continue;
            }
            cfs_free(apath);
            v = cfs_realloc(n->values, (n->n_values + 1) * sizeof(*n->values));
            if (!v) {
                cfs_free(buf);
                r = -ENOMEM;
                break;
            }
            n->values = v;
            v = &n->values[n->n_values++];
            *v = (struct cfs_store_value){
                .name = cfs_strdup(a->name),
                .data = buf,
                .len = len,
                .binary = a->kind == CFS_KIND_BIN_ATTR,
                .is_default = true,
            };
            if (!v->name) {
                r = -ENOMEM;
            }
        }
        cfs_entries_free(entries, ne);
    }
    for (size_t i = 0; i < n->n_children && r == 0; i++) {
        r = add_defaults(&n->children[i]);
    }
    return r;
}

/* ---- from the database ------------------------------------------------- */

/* A directory row while the tree is put together. */
struct drow {
    int64_t id, parent;
    char *name, *path;
    bool created, committed, included;
    size_t first_child, next_sibling, last_child; /* indexes + 1; 0: none */
    size_t n_children;
    struct cfs_store_value *values;
    size_t n_values, cap_values;
    uint64_t *value_seq;
    struct cfs_store_link *links;
    size_t n_links, cap_links;
};

struct drows {
    struct drow *v;
    size_t n, cap;
};

static void drows_free(struct drows *d)
{
    for (size_t i = 0; i < d->n; i++) {
        struct drow *r = &d->v[i];

        cfs_free(r->name);
        cfs_free(r->path);
        for (size_t k = 0; k < r->n_values; k++) {
            cfs_free(r->values[k].name);
            cfs_free(r->values[k].data);
        }
        cfs_free(r->values);
        cfs_free(r->value_seq);
        for (size_t k = 0; k < r->n_links; k++) {
            cfs_free(r->links[k].name);
            cfs_free(r->links[k].target);
        }
        cfs_free(r->links);
    }
    cfs_free(d->v);
}

/* Rows are read in id order, so a binary search finds one. */
static struct drow *drow_find(struct drows *d, int64_t id)
{
    size_t lo = 0, hi = d->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (d->v[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < d->n && d->v[lo].id == id ? &d->v[lo] : NULL;
}

static int
read_dirs(sqlite3 *db, const char *path, size_t plen, struct drows *d)
{
    sqlite3_stmt *st = NULL;
    int rc, r;

    r = store_errno(sqlite3_prepare_v2(
        db,
        plen == 1
            ? "SELECT id, parent, name, path, created, committed FROM node"
              " ORDER BY id"
            : "SELECT id, parent, name, path, created, committed FROM node"
              " WHERE " SUBTREE " ORDER BY id",
        -1,
        &st,
        NULL));
    if (r == 0 && plen > 1) {
        r = store_bind_text(st, 1, path, plen);
    }
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct drow *row;

        if (cfs_grow(&d->v, &d->cap, d->n, sizeof(*d->v), 64)) {
            r = -ENOMEM;
            break;
        }
        row = &d->v[d->n++];
        *row = (struct drow){
            .id = sqlite3_column_int64(st, 0),
            .parent = sqlite3_column_int64(st, 1),
            .created = sqlite3_column_int(st, 4) != 0,
            .committed = sqlite3_column_int(st, 5) != 0,
        };
        row->name = memdup0(sqlite3_column_text(st, 2),
                            (size_t)sqlite3_column_bytes(st, 2));
        row->path = memdup0(sqlite3_column_text(st, 3),
                            (size_t)sqlite3_column_bytes(st, 3));
        if (!row->name || !row->path) {
            r = -ENOMEM;
        }
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

/* Run @sql_all over the whole tree, or @sql_sub over the subtree at @path
 * (bound to ?1), and hand each row whose first column is a node of @d to
 * @add. */
static int read_rows(sqlite3 *db,
                     const char *sql_all,
                     const char *sql_sub,
                     const char *path,
                     size_t plen,
                     struct drows *d,
                     int (*add)(struct drow *row, sqlite3_stmt *st))
{
    sqlite3_stmt *st = NULL;
    int rc, r;

    r = store_errno(
        sqlite3_prepare_v2(db, plen == 1 ? sql_all : sql_sub, -1, &st, NULL));
    if (r == 0 && plen > 1) {
        r = store_bind_text(st, 1, path, plen);
    }
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct drow *row = drow_find(d, sqlite3_column_int64(st, 0));

        if (row) {
            r = add(row, st);
        }
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

/* (node, name, seq, binary, value) */
static int add_value(struct drow *row, sqlite3_stmt *st)
{
    struct cfs_store_value *val;

    if (cfs_grow(&row->values,
                 &row->cap_values,
                 row->n_values,
                 sizeof(*row->values),
                 4)) {
        return -ENOMEM;
    }
    val = &row->values[row->n_values++];
    *val = (struct cfs_store_value){
        .binary = sqlite3_column_int(st, 3) != 0,
        .len = (size_t)sqlite3_column_bytes(st, 4),
    };
    val->name = memdup0(sqlite3_column_text(st, 1),
                        (size_t)sqlite3_column_bytes(st, 1));
    val->data = memdup0(sqlite3_column_blob(st, 4), val->len);
    return val->name && val->data ? 0 : -ENOMEM;
}

/* (owner, name, target path) */
static int add_link(struct drow *row, sqlite3_stmt *st)
{
    struct cfs_store_link *link;

    if (cfs_grow(&row->links,
                 &row->cap_links,
                 row->n_links,
                 sizeof(*row->links),
                 4)) {
        return -ENOMEM;
    }
    link = &row->links[row->n_links++];
    link->name = memdup0(sqlite3_column_text(st, 1),
                         (size_t)sqlite3_column_bytes(st, 1));
    link->target = memdup0(sqlite3_column_text(st, 2),
                           (size_t)sqlite3_column_bytes(st, 2));
    return link->name && link->target ? 0 : -ENOMEM;
}

static int
read_values(sqlite3 *db, const char *path, size_t plen, struct drows *d)
{
    return read_rows(db,
                     "SELECT node, name, seq, binary, value FROM attr"
                     " ORDER BY node, seq",
                     "SELECT node, name, seq, binary, value FROM attr"
                     " WHERE node IN (SELECT id FROM node WHERE " SUBTREE ")"
                     " ORDER BY node, seq",
                     path,
                     plen,
                     d,
                     add_value);
}

static int
read_links(sqlite3 *db, const char *path, size_t plen, struct drows *d)
{
    return read_rows(db,
                     "SELECT l.owner, l.name, t.path FROM link l"
                     " JOIN node t ON t.id = l.target ORDER BY l.seq",
                     "SELECT l.owner, l.name, t.path FROM link l"
                     " JOIN node t ON t.id = l.target WHERE l.owner IN"
                     " (SELECT id FROM node WHERE " SUBTREE ") ORDER BY l.seq",
                     path,
                     plen,
                     d,
                     add_link);
}

/* Move row @i into @out, with its included children. */
static int build(struct drows *d, size_t i, struct cfs_store_node *out)
{
    struct drow *row;
    size_t k = 0;

    if (!d->v || i >= d->n) {
        return -EINVAL; /* a child index out of the rows: never */
    }
    row = &d->v[i];

    out->name = row->name;
    out->path = row->path;
    out->created = row->created;
    out->committed = row->committed;
    out->values = row->values;
    out->n_values = row->n_values;
    out->links = row->links;
    out->n_links = row->n_links;
    row->name = row->path = NULL;
    row->values = NULL;
    row->links = NULL;
    row->n_values = row->n_links = 0;
    if (row->n_children == 0) {
        return 0;
    }
    out->children = cfs_zalloc(row->n_children * sizeof(*out->children));
    if (!out->children) {
        return -ENOMEM;
    }
    for (size_t c = row->first_child; c; c = d->v[c - 1].next_sibling) {
        int r = build(d, c - 1, &out->children[k]);

        out->n_children = ++k;
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* Fill in types from the live tree where the directory exists. */
static void add_types(struct cfs_store_node *n)
{
    struct cfs_entry entry;

    if (cfs_stat(n->path, &entry) == 0) {
        if (entry.type_name) {
            n->type = cfs_strdup(entry.type_name);
        }
        cfs_entry_done(&entry);
    }
    for (size_t i = 0; i < n->n_children; i++) {
        add_types(&n->children[i]);
    }
}

int cfs_store_export(struct cfs_store *s,
                     const char *path,
                     struct cfs_store_export **ret_export)
{
    struct cfs_store_export *e = NULL;
    struct drows d = {0};
    size_t plen = store_path_norm(path);
    int r;

    if (!s || !ret_export || plen == 0) {
        return -EINVAL;
    }
    e = cfs_zalloc(sizeof(*e));
    if (!e) {
        return -ENOMEM;
    }
    e->format = CFS_STORE_EXPORT_FORMAT;

    pthread_mutex_lock(&s->r_lock);
    r = store_exec(s->rdb, "BEGIN");
    if (r == 0) {
        sqlite3_stmt *st = NULL;

        r = store_errno(sqlite3_prepare_v2(
            s->rdb, "SELECT revision FROM state WHERE id = 1", -1, &st, NULL));
        if (r == 0 && sqlite3_step(st) == SQLITE_ROW) {
            e->revision = (uint64_t)sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        if (r == 0) {
            r = read_dirs(s->rdb, path, plen, &d);
        }
        if (r == 0) {
            r = read_values(s->rdb, path, plen, &d);
        }
        if (r == 0) {
            r = read_links(s->rdb, path, plen, &d);
        }
        store_exec(s->rdb, "COMMIT");
    }
    pthread_mutex_unlock(&s->r_lock);
    if (r == 0 && d.n == 0) {
        r = -ENOENT;
    }
    if (r < 0) {
        goto out;
    }

    /* Include what holds something, and its ancestors. A commit can move
     * a directory under a newer parent, so walk up instead of relying on
     * id order. */
    for (size_t i = 1; i < d.n; i++) {
        struct drow *row = &d.v[i];

        if (!(row->created || row->n_values || row->n_links)) {
            continue;
        }
        while (row && row != &d.v[0] && !row->included) {
            row->included = true;
            row = drow_find(&d, row->parent);
        }
    }
    /* Children in id (creation) order. */
    for (size_t i = 1; i < d.n; i++) {
        struct drow *row = &d.v[i];
        struct drow *parent = row->included ? drow_find(&d, row->parent) : NULL;

        if (!parent) {
            continue;
        }
        if (parent->last_child) {
            d.v[parent->last_child - 1].next_sibling = i + 1;
        } else {
            parent->first_child = i + 1;
        }
        parent->last_child = i + 1;
        parent->n_children++;
    }
    r = build(&d, 0, &e->root);
    if (r == 0) {
        add_types(&e->root);
        r = add_defaults(&e->root);
    }
out:
    drows_free(&d);
    if (r < 0) {
        cfs_store_export_free(e);
        return r;
    }
    *ret_export = e;
    return 0;
}

/* ---- changes since a snapshot ----------------------------------------- */

int cfs_store_touched_since(struct cfs_store *s,
                            const char *path,
                            uint64_t revision,
                            bool *ret_touched)
{
    /* The rows after @revision (journal_rev finds the first), and among
     * them one at or under the path, as source or as target. */
    static const char sql[] =
        "SELECT (SELECT history_floor FROM state WHERE id = 1) > ?1"
        " OR EXISTS (SELECT 1 FROM journal WHERE id >= coalesce("
        "  (SELECT first_id FROM journal_rev WHERE revision > ?1"
        "   ORDER BY revision LIMIT 1), (SELECT max(id) + 1 FROM journal), 0)"
        " AND (?2 = '/' OR path = ?2 OR (path > ?2 || '/' AND path < ?2 || '0')"
        "  OR ((op = 'rename' OR op = 'symlink') AND (CAST(arg AS TEXT) = ?2"
        "   OR (CAST(arg AS TEXT) > ?2 || '/'"
        "       AND CAST(arg AS TEXT) < ?2 || '0')))))";
    sqlite3_stmt *st = NULL;
    size_t plen = store_path_norm(path);
    int r;

    if (!s || !ret_touched || plen == 0) {
        return -EINVAL;
    }
    pthread_mutex_lock(&s->r_lock);
    r = store_errno(sqlite3_prepare_v2(s->rdb, sql, -1, &st, NULL));
    if (r == 0) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)revision);
        r = store_bind_text(st, 2, path, plen);
    }
    if (r == 0) {
        int rc = sqlite3_step(st);

        if (rc == SQLITE_ROW) {
            *ret_touched = sqlite3_column_int(st, 0) != 0;
        } else {
            r = store_errno(rc == SQLITE_DONE ? SQLITE_CORRUPT : rc);
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->r_lock);
    return r;
}

/* ---- from the live tree ------------------------------------------------ */

static bool is_dir(enum cfs_kind kind)
{
    return kind == CFS_KIND_ROOT || kind == CFS_KIND_SUBSYSTEM ||
           kind == CFS_KIND_GROUP || kind == CFS_KIND_ITEM;
}

/* Fill @out for the directory at @path described by @entry; @in_live: its
 * parent is a live/ group. */
static int tree_node(const char *path,
                     const struct cfs_entry *entry,
                     bool in_live,
                     struct cfs_store_node *out)
{
    struct cfs_entry *entries = NULL;
    struct cfs_value *values = NULL;
    size_t n = 0, n_values = 0, n_dirs = 0, n_links = 0;
    int r;

    out->path = cfs_strdup(path);
    out->name = cfs_strdup(entry->kind == CFS_KIND_ROOT ? "" : entry->name);
    out->type = entry->type_name ? cfs_strdup(entry->type_name) : NULL;
    out->created = entry->user_created;
    out->committed = entry->user_created && in_live;
    if (!out->path || !out->name || (entry->type_name && !out->type)) {
        return -ENOMEM;
    }
    r = cfs_written_values(path, &values, &n_values);
    if (r < 0) {
        return r;
    }
    if (n_values > 0) {
        out->values = cfs_zalloc(n_values * sizeof(*out->values));
        if (!out->values) {
            r = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < n_values; i++) {
            struct cfs_store_value *v = &out->values[i];

            v->name = cfs_strdup(values[i].name);
            v->data = memdup0(values[i].data, values[i].len);
            v->len = values[i].len;
            v->binary = values[i].binary;
            out->n_values++;
            if (!v->name || !v->data) {
                r = -ENOMEM;
                goto out;
            }
        }
    }
    r = cfs_readdir(path, &entries, &n);
    if (r < 0) {
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        n_dirs += is_dir(entries[i].kind);
        n_links += entries[i].kind == CFS_KIND_LINK;
    }
    if (n_links > 0) {
        out->links = cfs_zalloc(n_links * sizeof(*out->links));
        if (!out->links) {
            r = -ENOMEM;
            goto out;
        }
    }
    if (n_dirs > 0) {
        out->children = cfs_zalloc(n_dirs * sizeof(*out->children));
        if (!out->children) {
            r = -ENOMEM;
            goto out;
        }
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        const struct cfs_entry *c = &entries[i];
        char *cpath;

        if (c->kind == CFS_KIND_LINK) {
            struct cfs_store_link *l = &out->links[out->n_links++];

            l->name = cfs_strdup(c->name);
            l->target = c->target ? cfs_strdup(c->target) : NULL;
            if (!l->name || !l->target) {
                r = -ENOMEM;
            }
            continue;
        }
        if (!is_dir(c->kind)) {
            continue;
        }
        cpath = strcmp(path, "/") == 0 ? store_asprintf("/%s", c->name)
                                       : store_asprintf("%s/%s", path, c->name);
        if (!cpath) {
            r = -ENOMEM;
            break;
        }
        {
            struct cfs_store_node *child = &out->children[out->n_children];

            r = tree_node(cpath, c, entry->live && entry->default_group, child);
            out->n_children++;
            if (r == 0 && !child->created && !child->n_values &&
                !child->n_links && !child->n_children) {
                /* holds nothing written: not part of the export */
                node_done(child);
                out->n_children--;
            }
        }
        cfs_free(cpath);
    }
out:
    cfs_entries_free(entries, n);
    cfs_values_free(values, n_values);
    return r;
}

int cfs_store_export_tree(const char *path,
                          struct cfs_store_export **ret_export)
{
    struct cfs_store_export *e = NULL;
    struct cfs_entry entry;
    size_t plen = store_path_norm(path);
    char *norm = NULL;
    int r;

    if (!ret_export || plen == 0) {
        return -EINVAL;
    }
    norm = memdup0(path, plen);
    if (!norm) {
        return -ENOMEM;
    }
    r = cfs_stat(norm, &entry);
    if (r < 0) {
        cfs_free(norm);
        return r;
    }
    if (!is_dir(entry.kind)) {
        r = -ENOTDIR;
        goto out;
    }
    e = cfs_zalloc(sizeof(*e));
    if (!e) {
        r = -ENOMEM;
        goto out;
    }
    e->format = CFS_STORE_EXPORT_FORMAT;
    e->revision = cfs_revision();
    {
        /* Whether the exported directory itself sits in a live/ group. */
        bool in_live = false;
        size_t dlen = store_dirname_len(norm, plen);

        if (entry.user_created && dlen > 0) {
            struct cfs_entry parent;
            char *ppath = memdup0(norm, dlen);

            if (ppath && cfs_stat(ppath, &parent) == 0) {
                in_live = parent.live && parent.default_group;
                cfs_entry_done(&parent);
            }
            cfs_free(ppath);
        }
        r = tree_node(norm, &entry, in_live, &e->root);
    }
    if (r == 0) {
        r = add_defaults(&e->root);
    }
out:
    cfs_entry_done(&entry);
    cfs_free(norm);
    if (r < 0) {
        cfs_store_export_free(e);
        return r;
    }
    *ret_export = e;
    return 0;
}
