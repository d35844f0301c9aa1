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

int cfs_store_history(struct cfs_store *s,
                      const struct cfs_store_history_query *q,
                      struct cfs_store_history_entry **ret_entries,
                      size_t *ret_n)
{
    static const char cols[] = "SELECT revision, time_us, principal, op, path,"
                               " arg, old, binary, write_only FROM journal";
    struct cfs_store_history_entry *v = NULL;
    sqlite3_stmt *st = NULL;
    size_t limit, n = 0, plen = 0;
    const char *path = NULL;
    char sql[1024];
    int rc, r;

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
    snprintf(sql,
             sizeof(sql),
             /* Rows are in revision order: "before" is the first row of
              * the first revision at or after it. A path filter walks
              * that order backwards (no path index: see db.c). */
             "%s WHERE id < coalesce((SELECT first_id FROM journal_rev"
             " WHERE revision >= ?2 ORDER BY revision LIMIT 1), ?4)"
             " %s ORDER BY id DESC LIMIT ?3",
             cols,
             /* as the event stream's filter: a rename's destination
              * and a link's target count as paths of the record too */
             path ? "AND (path = ?1 OR (path > ?1 || '/' AND"
                    " path < ?1 || '0') OR (op IN ('rename', 'symlink')"
                    " AND (CAST(arg AS TEXT) = ?1 OR"
                    " (CAST(arg AS TEXT) > ?1 || '/' AND"
                    " CAST(arg AS TEXT) < ?1 || '0'))))"
                  : "");
    v = cfs_zalloc(limit * sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }

    pthread_mutex_lock(&s->r_lock);
    r = store_errno(sqlite3_prepare_v2(s->rdb, sql, -1, &st, NULL));
    if (r == 0 && path) {
        r = store_bind_text(st, 1, path, plen);
    }
    if (r == 0) {
        sqlite3_bind_int64(
            st, 2, q->before ? (sqlite3_int64)q->before : INT64_MAX);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)limit);
        sqlite3_bind_int64(st, 4, INT64_MAX);
        while (n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            r = entry_read(st, &v[n++]);
            if (r < 0) {
                break;
            }
        }
        if (r == 0 && n < limit) {
            r = store_errno(rc);
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->r_lock);

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
