// SPDX-License-Identifier: MIT
/*
 * history.c - journal queries, newest first, by path prefix and revision
 * bound, served from the read connection (they never wait for a commit).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store-internal.h"

#define HISTORY_DEFAULT_LIMIT 100
#define HISTORY_MAX_LIMIT     10000

/* The journal spells operations as cfs_op_name() does. */
static enum cfs_op op_parse(const char *s)
{
    for (int i = CFS_OP_MKDIR; s && i <= CFS_OP_RENAME; i++) {
        if (strcmp(cfs_op_name((enum cfs_op)i), s) == 0) {
            return (enum cfs_op)i;
        }
    }
    return (enum cfs_op)0;
}

/* Copy column @col (text or blob, possibly NULL) with a NUL after it. */
static int column_dup(sqlite3_stmt *st, int col, char **ret, size_t *ret_len)
{
    const void *p;
    size_t len;
    char *copy;

    *ret = NULL;
    if (ret_len) {
        *ret_len = 0;
    }
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        return 0;
    }
    p = sqlite3_column_blob(st, col);
    len = (size_t)sqlite3_column_bytes(st, col);
    copy = cfs_malloc(len + 1);
    if (!copy) {
        return -ENOMEM;
    }
    if (len) {
        memcpy(copy, p, len);
    }
    copy[len] = '\0';
    *ret = copy;
    if (ret_len) {
        *ret_len = len;
    }
    return 0;
}

static int entry_read(sqlite3_stmt *st, struct cfs_store_history_entry *e)
{
    int r;

    e->revision = (uint64_t)sqlite3_column_int64(st, 0);
    e->time_us = sqlite3_column_int64(st, 1);
    e->op = op_parse((const char *)sqlite3_column_text(st, 3));
    e->binary = sqlite3_column_int(st, 7) != 0;
    e->write_only = sqlite3_column_int(st, 8) != 0;
    r = column_dup(st, 2, &e->principal, NULL);
    if (r == 0) {
        r = column_dup(st, 4, &e->path, NULL);
    }
    if (r == 0) {
        r = column_dup(st, 5, &e->arg, &e->arg_len);
    }
    if (r == 0) {
        r = column_dup(st, 6, &e->old, &e->old_len);
    }
    return r;
}

/* ---- following a directory through commits ------------------------------
 * History by path follows a directory that a rename (commit or uncommit)
 * brought under the path: rows older than the rename are matched at the
 * directory's earlier place too, up to that place's mkdir (an older
 * directory of the same name is another one). So a committed item's
 * history holds its mkdir and stores from pending/, not just its commit.
 */

struct prefix {
    char *p;
    size_t len;
    bool until_mkdir; /* followed: ends at the mkdir of exactly @p */
};

struct prefixes {
    struct prefix *v;
    size_t n, cap;
};

/* @s, @len bytes, is @q or under it. */
static bool under(const char *s, size_t len, const char *q, size_t qlen)
{
    return len >= qlen && memcmp(s, q, qlen) == 0 &&
           (len == qlen || s[qlen] == '/');
}

static bool prefixes_match(const struct prefixes *ps, const char *s)
{
    size_t len = s ? strlen(s) : 0;

    for (size_t i = 0; s && i < ps->n; i++) {
        if (under(s, len, ps->v[i].p, ps->v[i].len)) {
            return true;
        }
    }
    return false;
}

static int prefixes_add(
    struct prefixes *ps, const char *a, size_t alen, const char *b, size_t blen)
{
    struct prefix *x;
    char *p;

    for (size_t i = 0; i < ps->n; i++) {
        if (ps->v[i].len == alen + blen && memcmp(ps->v[i].p, a, alen) == 0 &&
            memcmp(ps->v[i].p + alen, b, blen) == 0) {
            return 0;
        }
    }
    if (cfs_grow(&ps->v, &ps->cap, ps->n, sizeof(*ps->v), 4)) {
        return -ENOMEM;
    }
    p = cfs_malloc(alen + blen + 1);
    if (!p) {
        return -ENOMEM;
    }
    memcpy(p, a, alen);
    memcpy(p + alen, b, blen);
    p[alen + blen] = '\0';
    x = &ps->v[ps->n++];
    *x = (struct prefix){.p = p, .len = alen + blen, .until_mkdir = true};
    return 0;
}

static void prefixes_free(struct prefixes *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        cfs_free(ps->v[i].p);
    }
    cfs_free(ps->v);
}

/* Walking back past "rename @from @to": what was under @to was at @from. */
static int
prefixes_rename(struct prefixes *ps, const char *from, const char *to)
{
    size_t flen = from ? strlen(from) : 0, tlen = to ? strlen(to) : 0;
    size_t n = ps->n;
    int r = 0;

    for (size_t i = 0; i < n && r == 0 && flen && tlen; i++) {
        const char *q = ps->v[i].p;
        size_t qlen = ps->v[i].len;

        if (under(q, qlen, to, tlen)) {
            r = prefixes_add(ps, from, flen, q + tlen, qlen - tlen);
        } else if (under(to, tlen, q, qlen) && !prefixes_match(ps, from)) {
            r = prefixes_add(ps, from, flen, "", 0);
        }
    }
    return r;
}

/* Walking back past "mkdir @path": a followed place ends there. */
static void prefixes_mkdir(struct prefixes *ps, const char *path)
{
    size_t len;

    if (!path) {
        return;
    }
    len = strlen(path);
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->v[i].until_mkdir && ps->v[i].len == len &&
            memcmp(ps->v[i].p, path, len) == 0) {
            cfs_free(ps->v[i].p);
            ps->v[i] = ps->v[--ps->n];
            return;
        }
    }
}

/* Apply the renames and mkdirs at or after revision @before (not shown,
 * but they tell where the path's directories were). @pre r_lock */
static int
prefixes_seed(struct cfs_store *s, struct prefixes *ps, uint64_t before)
{
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE;
    int r = store_errno(sqlite3_prepare_v2(
        s->rdb,
        "SELECT op, path, CAST(arg AS TEXT) FROM journal"
        " WHERE id >= coalesce((SELECT first_id FROM journal_rev"
        " WHERE revision >= ?1 ORDER BY revision LIMIT 1), ?2)"
        " AND (op = 'rename' OR op = 'mkdir') ORDER BY id DESC",
        -1,
        &st,
        NULL));

    if (r == 0) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)before);
        sqlite3_bind_int64(st, 2, INT64_MAX);
    }
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *op = (const char *)sqlite3_column_text(st, 0);
        const char *path = (const char *)sqlite3_column_text(st, 1);

        if (op && strcmp(op, "rename") == 0) {
            r = prefixes_rename(
                ps, path, (const char *)sqlite3_column_text(st, 2));
        } else {
            prefixes_mkdir(ps, path);
        }
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

int cfs_store_history(struct cfs_store *s,
                      const struct cfs_store_history_query *q,
                      struct cfs_store_history_entry **ret_entries,
                      size_t *ret_n)
{
    static const char sql[] =
        "SELECT revision, time_us, principal, op, path, arg, old, binary,"
        " write_only FROM journal"
        /* Rows are in revision order: "before" is the first row of the
         * first revision at or after it. A path filter walks that order
         * backwards (no path index: see db.c). */
        " WHERE id < coalesce((SELECT first_id FROM journal_rev"
        " WHERE revision >= ?1 ORDER BY revision LIMIT 1), ?2)"
        " ORDER BY id DESC";
    struct cfs_store_history_entry *v = NULL;
    struct prefixes ps = {0};
    sqlite3_stmt *st = NULL;
    size_t limit, n = 0, plen = 0;
    const char *path = NULL;
    uint64_t before;
    int rc = SQLITE_DONE, r;

    if (!s || !q || !ret_entries || !ret_n) {
        return -EINVAL;
    }
    if (q->path && q->path[0] != '\0') {
        plen = store_path_norm(q->path);
        if (plen == 0) {
            return -EINVAL;
        }
        if (plen > 1) {
            path = q->path;
        }
    }
    limit = q->limit ? q->limit : HISTORY_DEFAULT_LIMIT;
    if (limit > HISTORY_MAX_LIMIT) {
        limit = HISTORY_MAX_LIMIT;
    }
    before = q->before ? q->before : INT64_MAX;
    v = cfs_zalloc(limit * sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    if (path) {
        /* the asked path itself: not ended by a mkdir */
        r = prefixes_add(&ps, path, plen, "", 0);
        if (r < 0) {
            cfs_free(v);
            return r;
        }
        ps.v[0].until_mkdir = false;
    }

    pthread_mutex_lock(&s->r_lock);
    r = store_exec(s->rdb, "BEGIN"); /* one snapshot for both reads */
    if (r == 0 && path) {
        r = prefixes_seed(s, &ps, before);
    }
    if (r == 0) {
        r = store_errno(sqlite3_prepare_v2(s->rdb, sql, -1, &st, NULL));
    }
    if (r == 0) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)before);
        sqlite3_bind_int64(st, 2, INT64_MAX);
        while (n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *op = (const char *)sqlite3_column_text(st, 3);
            const char *rp = (const char *)sqlite3_column_text(st, 4);
            bool ren = op && strcmp(op, "rename") == 0;
            const char *arg = NULL;

            if (path) {
                if (ren || (op && strcmp(op, "symlink") == 0)) {
                    arg = (const char *)sqlite3_column_text(st, 5);
                }
                if (!prefixes_match(&ps, rp) && !prefixes_match(&ps, arg)) {
                    continue;
                }
            }
            r = entry_read(st, &v[n++]);
            if (r == 0 && path && ren) {
                r = prefixes_rename(&ps, v[n - 1].path, v[n - 1].arg);
            } else if (r == 0 && path && op && strcmp(op, "mkdir") == 0) {
                prefixes_mkdir(&ps, v[n - 1].path);
            }
            if (r < 0) {
                break;
            }
        }
        if (r == 0 && n < limit) {
            r = store_errno(rc);
        }
    }
    sqlite3_finalize(st);
    store_exec(s->rdb, "COMMIT");
    pthread_mutex_unlock(&s->r_lock);
    prefixes_free(&ps);

    if (r < 0) {
        cfs_store_history_free(v, n);
        return r;
    }
    if (n == 0) {
        cfs_free(v);
        v = NULL;
    }
    *ret_entries = v;
    *ret_n = n;
    return 0;
}

void cfs_store_history_free(struct cfs_store_history_entry *entries, size_t n)
{
    if (!entries) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cfs_free(entries[i].principal);
        cfs_free(entries[i].path);
        cfs_free(entries[i].arg);
        cfs_free(entries[i].old);
    }
    cfs_free(entries);
}
