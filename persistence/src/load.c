// SPDX-License-Identifier: MIT
/*
 * load.c - stream the stored state as replay steps (cfs_store_load()).
 *
 * One read transaction, three passes: directories in id order (creation
 * order, so parents first) merged with their attribute rows (clustered by
 * directory) and emitted in write order; links in creation order; commits
 * in their original order. A committed item is stored where it is, in
 * live/; replay re-makes it in pending/ (live/ accepts no mkdir), so every
 * path below a committed item that is not yet re-committed is rewritten
 * with "pending" for that "live".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define SUBTREE "(path = ?1 OR (path > ?1 || '/' AND path < ?1 || '0'))"

/* A growable byte buffer. */
struct buf {
    char *p;
    size_t len, cap;
};

static int buf_reserve(struct buf *b, size_t extra)
{
    size_t cap = b->cap ? b->cap : 256;
    char *p;

    if (b->len + extra + 1 <= b->cap) {
        return 0;
    }
    while (cap < b->len + extra + 1) {
        cap *= 2;
    }
    p = cfs_realloc(b->p, cap);
    if (!p) {
        return -ENOMEM;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_add(struct buf *b, const void *data, size_t len)
{
    int r = buf_reserve(b, len);

    if (r < 0) {
        return r;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    b->p[b->len] = '\0';
    return 0;
}

/* One attribute row of the directory being emitted; data lives in the
 * value buffer at @off. */
struct arow {
    uint64_t seq, revision;
    size_t name_off, name_len, off, len;
    bool binary;
};

struct loader {
    struct cfs_store *store;
    const char *const *subsystems;
    size_t n_subsystems;
    cfs_store_step_fn fn;
    void *data;
    /* Committed items (their stored, live paths) and those re-committed. */
    struct store_strset committed, done;
    struct buf path, values;
    struct arow *rows;
    size_t n_rows, cap_rows;
};

static bool wanted(const struct loader *l, const char *path)
{
    const char *end;
    size_t len;

    if (l->n_subsystems == 0) {
        return true;
    }
    end = strchr(path + 1, '/');
    len = end ? (size_t)(end - path - 1) : strlen(path + 1);
    for (size_t i = 0; i < l->n_subsystems; i++) {
        if (strlen(l->subsystems[i]) == len &&
            memcmp(l->subsystems[i], path + 1, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Where @path is at replay time: "live" becomes "pending" for every
 * committed item on the path that is not re-committed yet. */
static int replay_path(struct loader *l, struct buf *out, const char *path)
{
    size_t len = strlen(path);
    size_t i = 0;

    out->len = 0;
    if (l->committed.n == 0) {
        return buf_add(out, path, len);
    }
    while (i < len) {
        size_t seg = i + 1, end = seg, next_end;
        int r;

        while (end < len && path[end] != '/') {
            end++;
        }
        next_end = end + 1;
        while (next_end < len && path[next_end] != '/') {
            next_end++;
        }
        if (end - seg == 4 && memcmp(path + seg, "live", 4) == 0 && end < len &&
            store_strset_has(&l->committed, path, next_end) &&
            !store_strset_has(&l->done, path, next_end)) {
            r = buf_add(out, "/pending", 8);
        } else {
            r = buf_add(out, path + i, end - i);
        }
        if (r < 0) {
            return r;
        }
        i = end;
    }
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const struct arow *x = a, *y = b;

    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Emit the directory's step, then its values in write order. */
static int
emit_dir(struct loader *l, const char *path, bool created, uint64_t revision)
{
    struct cfs_store_step step = {
        .op = created ? CFS_STORE_STEP_MKDIR : CFS_STORE_STEP_DIR,
        .revision = revision,
    };
    size_t dlen;
    int r = replay_path(l, &l->path, path);

    if (r < 0) {
        return r;
    }
    step.path = l->path.p;
    l->fn(l->data, &step);

    if (l->n_rows > 1) {
        qsort(l->rows, l->n_rows, sizeof(*l->rows), cmp_seq);
    }
    dlen = l->path.len;
    for (size_t i = 0; i < l->n_rows; i++) {
        const struct arow *a = &l->rows[i];

        l->path.len = dlen;
        r = buf_add(&l->path, "/", 1);
        if (r == 0) {
            r = buf_add(&l->path, l->values.p + a->name_off, a->name_len);
        }
        if (r < 0) {
            return r;
        }
        step = (struct cfs_store_step){
            .op = CFS_STORE_STEP_STORE,
            .path = l->path.p,
            .arg = l->values.p + a->off,
            .arg_len = a->len,
            .binary = a->binary,
            .revision = a->revision,
        };
        l->fn(l->data, &step);
    }
    return 0;
}

static int row_add(struct loader *l, sqlite3_stmt *st)
{
    const void *name = sqlite3_column_text(st, 1);
    size_t name_len = (size_t)sqlite3_column_bytes(st, 1);
    const void *value = sqlite3_column_blob(st, 5);
    size_t len = (size_t)sqlite3_column_bytes(st, 5);
    struct arow *a;
    int r;

    if (l->n_rows == l->cap_rows) {
        size_t cap = l->cap_rows ? l->cap_rows * 2 : 16;
        struct arow *rows = cfs_realloc(l->rows, cap * sizeof(*rows));

        if (!rows) {
            return -ENOMEM;
        }
        l->rows = rows;
        l->cap_rows = cap;
    }
    a = &l->rows[l->n_rows];
    a->seq = (uint64_t)sqlite3_column_int64(st, 2);
    a->revision = (uint64_t)sqlite3_column_int64(st, 3);
    a->binary = sqlite3_column_int(st, 4) != 0;
    a->name_off = l->values.len;
    a->name_len = name_len;
    r = buf_add(&l->values, name ? name : "", name_len);
    if (r == 0) {
        /* keep a NUL after the name */
        r = buf_add(&l->values, "", 1);
    }
    a->off = l->values.len;
    a->len = len;
    if (r == 0) {
        r = buf_add(&l->values, value ? value : "", len);
    }
    if (r == 0) {
        r = buf_add(&l->values, "", 1);
    }
    if (r == 0) {
        l->n_rows++;
    }
    return r;
}

static int
prepare(sqlite3 *db, const char *sql, const char *prefix, sqlite3_stmt **ret)
{
    int r = store_errno(sqlite3_prepare_v2(db, sql, -1, ret, NULL));

    if (r == 0 && prefix) {
        r = store_bind_text(*ret, 1, prefix, strlen(prefix));
    }
    return r;
}

static int pass_dirs(struct loader *l, sqlite3 *db, const char *prefix)
{
    sqlite3_stmt *nodes = NULL, *attrs = NULL;
    int nrc, arc = SQLITE_DONE, r;

    if (prefix) {
        r = prepare(db,
                    "SELECT id, path, created, committed, revision FROM node"
                    " WHERE " SUBTREE " ORDER BY id",
                    prefix,
                    &nodes);
        if (r == 0) {
            r = prepare(
                db,
                "SELECT node, name, seq, revision, binary, value"
                " FROM attr WHERE node IN (SELECT id FROM node WHERE " SUBTREE
                ") ORDER BY node",
                prefix,
                &attrs);
        }
    } else {
        r = prepare(db,
                    "SELECT id, path, created, committed, revision FROM node"
                    " WHERE id > 1 ORDER BY id",
                    NULL,
                    &nodes);
        if (r == 0) {
            r = prepare(db,
                        "SELECT node, name, seq, revision, binary, value"
                        " FROM attr ORDER BY node",
                        NULL,
                        &attrs);
        }
    }
    if (r < 0) {
        goto out;
    }
    arc = sqlite3_step(attrs);
    while ((nrc = sqlite3_step(nodes)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(nodes, 0);
        const char *path = (const char *)sqlite3_column_text(nodes, 1);

        l->n_rows = 0;
        l->values.len = 0;
        while (arc == SQLITE_ROW && sqlite3_column_int64(attrs, 0) < id) {
            arc = sqlite3_step(attrs);
        }
        while (arc == SQLITE_ROW && sqlite3_column_int64(attrs, 0) == id) {
            r = row_add(l, attrs);
            if (r < 0) {
                goto out;
            }
            arc = sqlite3_step(attrs);
        }
        if (arc != SQLITE_ROW && arc != SQLITE_DONE) {
            break;
        }
        if (!path || !wanted(l, path)) {
            continue;
        }
        if (sqlite3_column_int(nodes, 3)) {
            r = store_strset_add(
                &l->committed, path, (size_t)sqlite3_column_bytes(nodes, 1));
            if (r < 0) {
                goto out;
            }
        }
        r = emit_dir(l,
                     path,
                     sqlite3_column_int(nodes, 2) != 0,
                     (uint64_t)sqlite3_column_int64(nodes, 4));
        if (r < 0) {
            goto out;
        }
    }
    r = store_errno(nrc);
    if (r == 0 && arc != SQLITE_ROW) {
        r = store_errno(arc);
    }
out:
    sqlite3_finalize(nodes);
    sqlite3_finalize(attrs);
    return r;
}

/* Links owned in the loaded subsystems, and (for one subsystem) links from
 * elsewhere that point into it: they could not be made before it existed. */
static int pass_links(struct loader *l, sqlite3 *db, const char *prefix)
{
    sqlite3_stmt *st = NULL;
    struct buf target = {0};
    int rc, r;

    r = prepare(db,
                prefix ? "SELECT o.path, l.name, t.path, l.revision FROM link l"
                         " JOIN node o ON o.id = l.owner"
                         " JOIN node t ON t.id = l.target"
                         " WHERE (o.path = ?1 OR (o.path > ?1 || '/' AND"
                         " o.path < ?1 || '0')) OR (t.path = ?1 OR"
                         " (t.path > ?1 || '/' AND t.path < ?1 || '0'))"
                         " ORDER BY l.seq"
                       : "SELECT o.path, l.name, t.path, l.revision FROM link l"
                         " JOIN node o ON o.id = l.owner"
                         " JOIN node t ON t.id = l.target ORDER BY l.seq",
                prefix,
                &st);
    if (r < 0) {
        goto out;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *tpath = (const char *)sqlite3_column_text(st, 2);
        struct cfs_store_step step = {.op = CFS_STORE_STEP_SYMLINK};

        if (!owner || !name || !tpath || (!prefix && !wanted(l, owner))) {
            continue;
        }
        r = replay_path(l, &l->path, owner);
        if (r == 0 && strcmp(owner, "/") != 0) {
            r = buf_add(&l->path, "/", 1);
        }
        if (r == 0) {
            r = buf_add(&l->path, name, strlen(name));
        }
        if (r == 0) {
            r = replay_path(l, &target, tpath);
        }
        if (r < 0) {
            goto out;
        }
        step.path = l->path.p;
        step.arg = target.p;
        step.arg_len = target.len;
        step.revision = (uint64_t)sqlite3_column_int64(st, 3);
        l->fn(l->data, &step);
    }
    r = store_errno(rc);
out:
    cfs_free(target.p);
    sqlite3_finalize(st);
    return r;
}

static int pass_commits(struct loader *l, sqlite3 *db, const char *prefix)
{
    sqlite3_stmt *st = NULL;
    struct buf to = {0};
    int rc, r;

    if (l->committed.n == 0) {
        return 0;
    }
    r = prepare(db,
                prefix ? "SELECT path, commit_rev FROM node WHERE " SUBTREE
                         " AND commit_seq IS NOT NULL ORDER BY commit_seq"
                       : "SELECT path, commit_rev FROM node"
                         " WHERE commit_seq IS NOT NULL ORDER BY commit_seq",
                prefix,
                &st);
    if (r < 0) {
        goto out;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        size_t len = (size_t)sqlite3_column_bytes(st, 0);
        struct cfs_store_step step = {.op = CFS_STORE_STEP_COMMIT};

        if (!path || !wanted(l, path)) {
            continue;
        }
        r = replay_path(l, &l->path, path);
        if (r == 0) {
            r = store_strset_add(&l->done, path, len);
        }
        if (r == 0) {
            r = replay_path(l, &to, path);
        }
        if (r < 0) {
            goto out;
        }
        step.path = l->path.p;
        step.arg = to.p;
        step.arg_len = to.len;
        step.revision = (uint64_t)sqlite3_column_int64(st, 1);
        l->fn(l->data, &step);
    }
    r = store_errno(rc);
out:
    cfs_free(to.p);
    sqlite3_finalize(st);
    return r;
}

int store_load(struct cfs_store *s,
               const char *const *subsystems,
               size_t n,
               bool ranged,
               cfs_store_step_fn fn,
               void *data)
{
    struct loader l = {
        .store = s,
        .subsystems = subsystems,
        .n_subsystems = n,
        .fn = fn,
        .data = data,
    };
    char *prefix = NULL;
    int r;

    if (!s || !fn || (n > 0 && !subsystems)) {
        return -EINVAL;
    }
    if (n == 1 && ranged) {
        prefix = store_asprintf("/%s", subsystems[0]);
        if (!prefix) {
            return -ENOMEM;
        }
    }
    pthread_mutex_lock(&s->r_lock);
    /* One snapshot for all three passes. */
    r = store_exec(s->rdb, "BEGIN");
    if (r == 0) {
        r = pass_dirs(&l, s->rdb, prefix);
        if (r == 0) {
            r = pass_links(&l, s->rdb, prefix);
        }
        if (r == 0) {
            r = pass_commits(&l, s->rdb, prefix);
        }
        store_exec(s->rdb, "COMMIT");
    }
    pthread_mutex_unlock(&s->r_lock);

    store_strset_free(&l.committed);
    store_strset_free(&l.done);
    cfs_free(l.path.p);
    cfs_free(l.values.p);
    cfs_free(l.rows);
    cfs_free(prefix);
    return r;
}

int cfs_store_load(struct cfs_store *s,
                   const char *const *subsystems,
                   size_t n,
                   cfs_store_step_fn fn,
                   void *data)
{
    return store_load(s, subsystems, n, n == 1, fn, data);
}
