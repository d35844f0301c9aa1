// SPDX-License-Identifier: MIT
/*
 * apply.c - turn change records into rows: the current state (node, attr,
 * link) and the journal, for any number of change sets in one SQLite
 * transaction. Applying is total: a record that names something the
 * database does not hold (an anchor directory never written before) makes
 * what it needs, so that one odd record never fails a whole batch; only
 * storage errors do.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "store-internal.h"

#define SUBTREE "(path = ?1 OR (path > ?1 || '/' AND path < ?1 || '0'))"

static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_NODE_BY_PATH] = "SELECT id FROM node WHERE path = ?1",
    [ST_NODE_INSERT] = "INSERT INTO node (parent, name, path, created, seq,"
                       " revision) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_ATTR_UPSERT] =
        "INSERT INTO attr (node, name, seq, revision, binary, value)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (node, name) DO UPDATE"
        " SET seq = excluded.seq, revision = excluded.revision,"
        " binary = excluded.binary, value = excluded.value",
    [ST_LINK_UPSERT] = "INSERT OR REPLACE INTO link (owner, name, target, seq,"
                       " revision) VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_LINK_DELETE] = "DELETE FROM link WHERE owner = ?1 AND name = ?2",
    [ST_SUBTREE_DEL_ATTR] =
        "DELETE FROM attr WHERE node IN (SELECT id FROM node WHERE " SUBTREE
        ")",
    [ST_SUBTREE_DEL_LINK_OWNER] =
        "DELETE FROM link WHERE owner IN (SELECT id FROM node WHERE " SUBTREE
        ")",
    [ST_SUBTREE_DEL_LINK_TARGET] =
        "DELETE FROM link WHERE target IN (SELECT id FROM node WHERE " SUBTREE
        ")",
    [ST_SUBTREE_DEL_NODE] = "DELETE FROM node WHERE " SUBTREE,
    [ST_NODE_MOVE] = "UPDATE node SET parent = ?2, name = ?3, committed = ?4,"
                     " commit_seq = ?5, commit_rev = ?6 WHERE id = ?1",
    [ST_SUBTREE_REPATH] = "UPDATE node SET path = ?2 || substr(path,"
                          " length(?1) + 1) WHERE " SUBTREE,
    [ST_JOURNAL_INSERT] =
        "INSERT INTO journal (revision, time_us, principal, op, path, arg,"
        " old, binary, write_only) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_JOURNAL_REV] = "INSERT OR IGNORE INTO journal_rev (revision, first_id)"
                       " VALUES (?1, ?2)",
    [ST_STATE_UPDATE] = "UPDATE state SET revision = ?1, seq = ?2,"
                        " history_floor = ?3 WHERE id = 1",
    [ST_PRUNE] = "DELETE FROM journal WHERE id < coalesce((SELECT first_id"
                 " FROM journal_rev WHERE revision > ?1 ORDER BY revision"
                 " LIMIT 1), (SELECT max(id) + 1 FROM journal), 0)",
    [ST_PRUNE_REV] = "DELETE FROM journal_rev WHERE revision <= ?1",
    [ST_NODE_TOUCH] = "UPDATE node SET touch_rev = ?2"
                      " WHERE path = ?1 AND touch_rev < ?2",
};

/* Prune the journal once per this many commits: it keeps the delete off
 * the common path while bounding how far past the limit it grows. */
#define PRUNE_EVERY 64

int store_prepare_write(struct cfs_store *store)
{
    for (int i = 0; i < ST_COUNT; i++) {
        int rc = sqlite3_prepare_v3(store->wdb,
                                    stmt_sql[i],
                                    -1,
                                    SQLITE_PREPARE_PERSISTENT,
                                    &store->st[i],
                                    NULL);

        if (rc != SQLITE_OK) {
            return store_errno(rc);
        }
    }
    return 0;
}

void store_finalize_write(struct cfs_store *store)
{
    store_idcache_free(&store->idcache);
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(store->st[i]);
        store->st[i] = NULL;
    }
}

/* ---- directories ------------------------------------------------------- */

/* The id of the directory at @path (@len bytes; 0 bytes is the root), or 0
 * in *ret_id if the database has none. */
static int
node_lookup(struct cfs_store *s, const char *path, size_t len, int64_t *ret_id)
{
    sqlite3_stmt *st = s->st[ST_NODE_BY_PATH];
    int rc;

    if (len == 0) {
        *ret_id = 1;
        return 0;
    }
    *ret_id = store_idcache_get(&s->idcache, path, len);
    if (*ret_id) {
        return 0;
    }
    rc = store_bind_text(st, 1, path, len);
    if (rc < 0) {
        return rc;
    }
    rc = sqlite3_step(st);
    *ret_id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (*ret_id) {
        store_idcache_put(&s->idcache, path, len, *ret_id);
    }
    return store_errno(rc);
}

static int node_insert(struct cfs_store *s,
                       int64_t parent,
                       const char *path,
                       size_t len,
                       bool created,
                       uint64_t revision,
                       int64_t *ret_id)
{
    sqlite3_stmt *st = s->st[ST_NODE_INSERT];
    size_t dlen = store_dirname_len(path, len);
    int r;

    sqlite3_bind_int64(st, 1, parent);
    r = store_bind_text(st, 2, path + dlen + 1, len - dlen - 1);
    if (r == 0) {
        r = store_bind_text(st, 3, path, len);
    }
    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    sqlite3_bind_int(st, 4, created);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)++s->seq);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)revision);
    r = store_step_done(st);
    if (r == 0) {
        int64_t id = sqlite3_last_insert_rowid(s->wdb);

        store_idcache_put(&s->idcache, path, len, id);
        if (ret_id) {
            *ret_id = id;
        }
    }
    return r;
}

/* The directory at @path, made as an anchor (with its missing parents) if
 * the database has none: a subsystem or default group that now holds a
 * value, a link or a child. */
static int node_ensure(struct cfs_store *s,
                       const char *path,
                       size_t len,
                       uint64_t revision,
                       int64_t *ret_id)
{
    int64_t id = 0, parent = 0;
    int r = node_lookup(s, path, len, &id);

    if (r < 0 || id) {
        *ret_id = id;
        return r;
    }
    r = node_ensure(s, path, store_dirname_len(path, len), revision, &parent);
    if (r < 0) {
        return r;
    }
    return node_insert(s, parent, path, len, false, revision, ret_id);
}

/* Remove the directory at @path and everything under it, with the links
 * that point into it (only left-overs of a failed replay can). */
static int subtree_delete(struct cfs_store *s, const char *path, size_t len)
{
    static const enum store_stmt order[] = {
        ST_SUBTREE_DEL_ATTR,
        ST_SUBTREE_DEL_LINK_OWNER,
        ST_SUBTREE_DEL_LINK_TARGET,
        ST_SUBTREE_DEL_NODE,
    };

    store_idcache_clear(&s->idcache);
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        sqlite3_stmt *st = s->st[order[i]];
        int r = store_bind_text(st, 1, path, len);

        if (r == 0) {
            r = store_step_done(st);
        }
        if (r < 0) {
            sqlite3_reset(st);
            return r;
        }
    }
    return 0;
}

/* Remember that revision @c changed the directory at @path (@len bytes)
 * in a way replay cannot re-make (a removal inside it, an uncommit), so
 * that its revision survives a restart. */
static int
touch_dir(struct cfs_store *s, const char *path, size_t len, uint64_t rev)
{
    sqlite3_stmt *st = s->st[ST_NODE_TOUCH];
    int r = store_bind_text(st, 1, len ? path : "/", len ? len : 1);

    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
    return store_step_done(st);
}

static bool is_name(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(s, name, len) == 0;
}

/* ---- one record each --------------------------------------------------- */

static int
apply_mkdir(struct cfs_store *s, const struct cfs_change *c, size_t len)
{
    const char *path = c->path;
    size_t dlen = store_dirname_len(path, len);
    size_t ddlen = store_dirname_len(path, dlen);
    int64_t id = 0, parent = 0;
    int r = node_lookup(s, path, len, &id);

    /* Something stored here that the tree did not have (a step that failed
     * at replay): the new directory replaces it. */
    if (r == 0 && id) {
        r = subtree_delete(s, path, len);
    }
    /* The same for a left-over committed twin in live/ (C5 keeps the tree
     * from having both). */
    if (r == 0 && dlen > 0 &&
        is_name(path + ddlen + 1, dlen - ddlen - 1, "pending")) {
        char *twin =
            store_asprintf("%.*s/live%s", (int)ddlen, path, path + dlen);
        int64_t tid = 0;

        if (!twin) {
            return -ENOMEM;
        }
        r = node_lookup(s, twin, strlen(twin), &tid);
        if (r == 0 && tid) {
            r = subtree_delete(s, twin, strlen(twin));
        }
        cfs_free(twin);
    }
    if (r == 0) {
        r = node_ensure(s, path, dlen, c->revision, &parent);
    }
    if (r == 0) {
        r = node_insert(s, parent, path, len, true, c->revision, NULL);
    }
    return r;
}

static int
apply_store(struct cfs_store *s, const struct cfs_change *c, size_t len)
{
    sqlite3_stmt *st = s->st[ST_ATTR_UPSERT];
    size_t dlen = store_dirname_len(c->path, len);
    int64_t dir = 0;
    int r = node_ensure(s, c->path, dlen, c->revision, &dir);

    if (r < 0) {
        return r;
    }
    sqlite3_bind_int64(st, 1, dir);
    r = store_bind_text(st, 2, c->path + dlen + 1, len - dlen - 1);
    if (r == 0) {
        r = store_bind_blob(st, 6, c->arg, c->arg_len);
    }
    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    sqlite3_bind_int64(st, 3, (sqlite3_int64)++s->seq);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)c->revision);
    sqlite3_bind_int(st, 5, c->binary);
    return store_step_done(st);
}

/* Bind a link's key: ?1 its owner node, ?2 its name, the last component
 * of @c's path (@dlen bytes of directory before it). Resets @st on error. */
static int bind_link_key(sqlite3_stmt *st,
                         int64_t owner,
                         const struct cfs_change *c,
                         size_t len,
                         size_t dlen)
{
    int r;

    sqlite3_bind_int64(st, 1, owner);
    r = store_bind_text(st, 2, c->path + dlen + 1, len - dlen - 1);
    if (r < 0) {
        sqlite3_reset(st);
    }
    return r;
}

static int
apply_symlink(struct cfs_store *s, const struct cfs_change *c, size_t len)
{
    sqlite3_stmt *st = s->st[ST_LINK_UPSERT];
    size_t dlen = store_dirname_len(c->path, len);
    size_t tlen = store_path_norm(c->arg);
    int64_t owner = 0, target = 0;
    int r;

    if (tlen == 0) {
        return 0; /* not an absolute target: nothing the state can hold */
    }
    r = node_ensure(s, c->path, dlen, c->revision, &owner);
    if (r == 0) {
        r = node_ensure(s, c->arg, tlen == 1 ? 0 : tlen, c->revision, &target);
    }
    if (r < 0) {
        return r;
    }
    r = bind_link_key(st, owner, c, len, dlen);
    if (r < 0) {
        return r;
    }
    sqlite3_bind_int64(st, 3, target);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)++s->seq);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)c->revision);
    return store_step_done(st);
}

static int
apply_unlink(struct cfs_store *s, const struct cfs_change *c, size_t len)
{
    sqlite3_stmt *st = s->st[ST_LINK_DELETE];
    size_t dlen = store_dirname_len(c->path, len);
    int64_t owner = 0;
    int r = node_lookup(s, c->path, dlen, &owner);

    if (r < 0 || !owner) {
        return r;
    }
    r = bind_link_key(st, owner, c, len, dlen);
    return r < 0 ? r : store_step_done(st);
}

/* Commit (pending -> live) or uncommit (live -> pending): the directory
 * keeps its id, so links to it follow it. */
static int
apply_rename(struct cfs_store *s, const struct cfs_change *c, size_t len)
{
    const char *to = c->arg;
    size_t tlen = store_path_norm(to);
    size_t tdlen, tddlen;
    int64_t id = 0, other = 0, parent = 0;
    sqlite3_stmt *st;
    bool committed;
    int r;

    if (tlen <= 1 || (tlen == len && memcmp(to, c->path, len) == 0)) {
        return 0;
    }
    r = node_lookup(s, c->path, len, &id);
    if (r < 0 || !id) {
        return r; /* nothing stored there: nothing to move */
    }
    store_idcache_clear(&s->idcache); /* paths under it change */
    r = node_lookup(s, to, tlen, &other);
    if (r == 0 && other) {
        r = subtree_delete(s, to, tlen);
    }
    tdlen = store_dirname_len(to, tlen);
    tddlen = store_dirname_len(to, tdlen);
    if (r == 0) {
        r = node_ensure(s, to, tdlen, c->revision, &parent);
    }
    if (r < 0) {
        return r;
    }
    committed =
        tdlen > 0 && is_name(to + tddlen + 1, tdlen - tddlen - 1, "live");
    st = s->st[ST_NODE_MOVE];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, parent);
    r = store_bind_text(st, 3, to + tdlen + 1, tlen - tdlen - 1);
    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    sqlite3_bind_int(st, 4, committed);
    if (committed) {
        sqlite3_bind_int64(st, 5, (sqlite3_int64)++s->seq);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)c->revision);
    } else {
        sqlite3_bind_null(st, 5);
        sqlite3_bind_null(st, 6);
    }
    r = store_step_done(st);
    if (r < 0) {
        return r;
    }
    st = s->st[ST_SUBTREE_REPATH];
    r = store_bind_text(st, 1, c->path, len);
    if (r == 0) {
        r = store_bind_text(st, 2, to, tlen);
    }
    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    r = store_step_done(st);
    /* both parents and the item itself, now at @to */
    if (r == 0) {
        r = touch_dir(s, c->path, store_dirname_len(c->path, len), c->revision);
    }
    if (r == 0) {
        r = touch_dir(s, to, tdlen, c->revision);
    }
    if (r == 0) {
        r = touch_dir(s, to, tlen, c->revision);
    }
    return r;
}

static int journal_insert(struct cfs_store *s,
                          const struct cfs_change *c,
                          size_t len,
                          const char *principal,
                          int64_t time_us)
{
    sqlite3_stmt *st = s->st[ST_JOURNAL_INSERT];
    bool secret = c->op == CFS_OP_STORE && c->write_only;
    int r;

    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->revision);
    sqlite3_bind_int64(st, 2, time_us);
    r = store_bind_text(st, 3, principal, principal ? strlen(principal) : 0);
    if (r == 0) {
        r = store_bind_text(
            st, 4, cfs_op_name(c->op), strlen(cfs_op_name(c->op)));
    }
    if (r == 0) {
        r = store_bind_text(st, 5, c->path, len);
    }
    if (r == 0 && c->arg && !secret) {
        size_t alen = c->op == CFS_OP_STORE ? c->arg_len : strlen(c->arg);

        r = store_bind_blob(st, 6, c->arg, alen);
    } else if (r == 0) {
        sqlite3_bind_null(st, 6);
    }
    if (r == 0 && c->has_old && !secret) {
        r = store_bind_blob(st, 7, c->old, c->old_len);
    } else if (r == 0) {
        sqlite3_bind_null(st, 7);
    }
    if (r < 0) {
        sqlite3_reset(st);
        return r;
    }
    sqlite3_bind_int(st, 8, c->binary);
    sqlite3_bind_int(st, 9, secret);
    r = store_step_done(st);
    /* The first row of a revision is where history "before" it ends. */
    if (r == 0 && c->revision != s->j_revision) {
        st = s->st[ST_JOURNAL_REV];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)c->revision);
        sqlite3_bind_int64(st, 2, sqlite3_last_insert_rowid(s->wdb));
        r = store_step_done(st);
        s->j_revision = c->revision;
    }
    return r;
}

static int apply_change(struct cfs_store *s,
                        const struct cfs_change *c,
                        const char *principal,
                        int64_t time_us)
{
    size_t len = store_path_norm(c->path);
    int r = 0;

    if (len <= 1) {
        return 0; /* the root itself never changes */
    }
    switch (c->op) {
    case CFS_OP_MKDIR:
        r = apply_mkdir(s, c, len);
        break;
    case CFS_OP_RMDIR:
    case CFS_OP_UNLINK: /* either changes its parent */
        r = c->op == CFS_OP_RMDIR ? subtree_delete(s, c->path, len)
                                  : apply_unlink(s, c, len);
        if (r == 0) {
            r = touch_dir(
                s, c->path, store_dirname_len(c->path, len), c->revision);
        }
        break;
    case CFS_OP_STORE:
        r = apply_store(s, c, len);
        break;
    case CFS_OP_SYMLINK:
        r = apply_symlink(s, c, len);
        break;
    case CFS_OP_RENAME:
        r = apply_rename(s, c, len);
        break;
    default:
        return 0;
    }
    if (r == 0) {
        r = journal_insert(s, c, len, principal, time_us);
    }
    return r;
}

static int write_state(struct cfs_store *s, uint64_t revision, uint64_t floor)
{
    sqlite3_stmt *st = s->st[ST_STATE_UPDATE];

    sqlite3_bind_int64(st, 1, (sqlite3_int64)revision);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)s->seq);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)floor);
    return store_step_done(st);
}

int store_write_sets(struct cfs_store *s,
                     const struct cfs_store_changeset *sets,
                     size_t n,
                     int64_t time_us)
{
    const uint64_t seq0 = s->seq, since0 = s->since_prune;
    const uint64_t jrev0 = s->j_revision;
    uint64_t revision = s->revision, floor = s->floor;
    int r = store_step_done(s->st[ST_BEGIN]);

    if (r < 0) {
        return r;
    }
    if (time_us == 0) {
        time_us = cfs_store_wall_us();
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        for (size_t j = 0; j < sets[i].n && r == 0; j++) {
            const struct cfs_change *c = &sets[i].changes[j];

            r = apply_change(s, c, sets[i].principal, time_us);
            if (c->revision > revision) {
                revision = c->revision;
            }
        }
    }
    if (r == 0 && s->history_limit && revision > s->history_limit &&
        ++s->since_prune >= PRUNE_EVERY) {
        uint64_t cut = revision - s->history_limit;

        s->since_prune = 0;
        if (cut > floor) {
            sqlite3_bind_int64(s->st[ST_PRUNE], 1, (sqlite3_int64)cut);
            r = store_step_done(s->st[ST_PRUNE]);
            if (r == 0) {
                sqlite3_bind_int64(s->st[ST_PRUNE_REV], 1, (sqlite3_int64)cut);
                r = store_step_done(s->st[ST_PRUNE_REV]);
            }
            floor = cut;
        }
    }
    if (r == 0) {
        r = write_state(s, revision, floor);
    }
    if (r == 0) {
        r = store_step_done(s->st[ST_COMMIT]);
    }
    if (r < 0) {
        /* A failed COMMIT may leave the transaction open (or SQLite may
         * have rolled it back already). */
        if (!sqlite3_get_autocommit(s->wdb)) {
            store_step_done(s->st[ST_ROLLBACK]);
        }
        s->seq = seq0;
        s->since_prune = since0;
        s->j_revision = jrev0;
        store_idcache_clear(&s->idcache); /* ids made by the rolled-back
                                             transaction are gone */
        return r;
    }
    s->revision = revision;
    s->floor = floor;
    return 0;
}
