// SPDX-License-Identifier: MIT
/*
 * db.c - the SQLite side of the store: connections and their pragmas, the
 * schema with its forward migrations, and store_errno(), the only place a
 * SQLite result code turns into an errno.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sys/statvfs.h>

#include "store-internal.h"

int store_errno(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return 0;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_IOERR:
        return rc == SQLITE_IOERR_NOMEM ? -ENOMEM : -EIO;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL:
        return -EAGAIN;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return -EACCES;
    case SQLITE_CANTOPEN:
        return -ENOENT;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return -EUCLEAN;
    case SQLITE_TOOBIG:
        return -EFBIG;
    case SQLITE_INTERRUPT:
        return -EINTR;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_MISUSE:
        return -EINVAL;
    default:
        return -EIO;
    }
}

/*
 * Version 1.
 * - node: every directory the state needs, made by mkdir (created = 1) or
 *   not (a subsystem or default group that holds values or is a link
 *   target). Rowids grow with creation, so id order is creation order and
 *   parents come before children. path is the current absolute path.
 * - attr: the last value written to each attribute, clustered by
 *   directory; seq is the global write order, which replay follows.
 * - link: links by target identity (a node id), so a committed target keeps
 *   its links when it moves.
 * - journal: one row per change record, appended in revision order (the
 *   rowid order is the revision order, so history reads it backwards
 *   without an index); journal_rev maps each revision to its first row,
 *   for "before" bounds and pruning, with one small append per
 *   transaction. There is deliberately no index on path: with one, every
 *   commit dirties a leaf page per distinct path it touches (about 60 WAL
 *   frames for 40 stores instead of 8), which halves durable write
 *   throughput; history by path walks the revision order instead.
 * - state: the last durable revision, the write-order counter and how far
 *   the journal has been pruned.
 */
static const char schema_v1[] =
    "CREATE TABLE state ("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  revision INTEGER NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  history_floor INTEGER NOT NULL"
    ") STRICT;"
    "INSERT INTO state VALUES (1, 0, 0, 0);"
    "CREATE TABLE node ("
    "  id INTEGER PRIMARY KEY,"
    "  parent INTEGER,"
    "  name TEXT NOT NULL,"
    "  path TEXT NOT NULL UNIQUE,"
    "  created INTEGER NOT NULL CHECK (created BETWEEN 0 AND 1),"
    "  committed INTEGER NOT NULL DEFAULT 0 CHECK (committed BETWEEN 0 AND 1),"
    "  seq INTEGER NOT NULL,"
    "  revision INTEGER NOT NULL,"
    "  commit_seq INTEGER,"
    "  commit_rev INTEGER"
    ") STRICT;"
    "INSERT INTO node (id, parent, name, path, created, seq, revision)"
    "  VALUES (1, NULL, '', '/', 0, 0, 0);"
    "CREATE INDEX node_top ON node (parent) WHERE parent = 1;"
    "CREATE INDEX node_by_commit ON node (commit_seq)"
    "  WHERE commit_seq IS NOT NULL;"
    "CREATE TABLE attr ("
    "  node INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  revision INTEGER NOT NULL,"
    "  binary INTEGER NOT NULL CHECK (binary BETWEEN 0 AND 1),"
    "  value BLOB NOT NULL,"
    "  PRIMARY KEY (node, name)"
    ") STRICT, WITHOUT ROWID;"
    "CREATE TABLE link ("
    "  owner INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  target INTEGER NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  revision INTEGER NOT NULL,"
    "  PRIMARY KEY (owner, name)"
    ") STRICT, WITHOUT ROWID;"
    "CREATE INDEX link_by_target ON link (target);"
    "CREATE TABLE journal ("
    "  id INTEGER PRIMARY KEY,"
    "  revision INTEGER NOT NULL,"
    "  time_us INTEGER NOT NULL,"
    "  principal TEXT,"
    /* An OR chain: an IN list builds a table at every insert (5 us). */
    "  op TEXT NOT NULL CHECK (op = 'mkdir' OR op = 'rmdir' OR op = 'store'"
    "    OR op = 'symlink' OR op = 'unlink' OR op = 'rename'),"
    "  path TEXT NOT NULL,"
    "  arg BLOB,"
    "  old BLOB,"
    "  binary INTEGER NOT NULL CHECK (binary BETWEEN 0 AND 1),"
    "  write_only INTEGER NOT NULL CHECK (write_only BETWEEN 0 AND 1)"
    ") STRICT;"
    "CREATE TABLE journal_rev ("
    "  revision INTEGER PRIMARY KEY,"
    "  first_id INTEGER NOT NULL"
    ") STRICT;";

/* Version 2: the last revision that changed a directory without leaving a
 * row that replay re-makes it by (a removal inside it, an uncommit). */
static const char schema_v2[] =
    "ALTER TABLE node ADD COLUMN touch_rev INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX node_touched ON node (touch_rev) WHERE touch_rev > 0;";

const struct store_migration store_migrations[] = {
    {1, schema_v1},
    {2, schema_v2},
};
const size_t store_n_migrations =
    sizeof(store_migrations) / sizeof(store_migrations[0]);

int store_exec(sqlite3 *db, const char *sql)
{
    return store_errno(sqlite3_exec(db, sql, NULL, NULL, NULL));
}

int store_user_version(sqlite3 *db, int *ret_version)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        *ret_version = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return store_errno(rc);
}

static int migrate_one(sqlite3 *db, const struct store_migration *m)
{
    char pragma[64];
    int version = 0;
    int r = store_exec(db, "BEGIN IMMEDIATE");

    if (r < 0) {
        return r;
    }
    /* Another process may have migrated while we waited for the lock. */
    r = store_user_version(db, &version);
    if (r < 0 || version >= m->version) {
        goto out;
    }
    r = store_exec(db, m->sql);
    if (r < 0) {
        goto out;
    }
    (void)snprintf(
        pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
    r = store_exec(db, pragma);
out:
    if (r < 0) {
        store_exec(db, "ROLLBACK");
        return r;
    }
    return store_exec(db, "COMMIT");
}

int store_migrate(sqlite3 *db,
                  const struct store_migration *migrations,
                  size_t n)
{
    int version = 0;
    int r = store_user_version(db, &version);

    if (r < 0) {
        return r;
    }
    if (n > 0 && version > migrations[n - 1].version) {
        return -ENOTSUP;
    }
    for (size_t i = 0; i < n; i++) {
        if (migrations[i].version <= version) {
            continue;
        }
        r = migrate_one(db, &migrations[i]);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* The errno of a failure of @db: SQLITE_CANTOPEN says only "cannot open",
 * the system's errno says why (EROFS, EACCES, ENOENT ...). */
static int open_errno(sqlite3 *db, int rc)
{
    int sys = db ? sqlite3_system_errno(db) : 0;

    return (rc & 0xff) == SQLITE_CANTOPEN && sys > 0 ? -sys : store_errno(rc);
}

/* Why a database SQLite opened read-only (it does so, silently, when the
 * file cannot be opened for writing): the file system, or the file. */
static int read_only_errno(const char *path)
{
    struct statvfs sv;

    if (statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY)) {
        return -EROFS;
    }
    return -EACCES;
}

int store_db_open(const struct cfs_store *store, sqlite3 **ret_db)
{
    sqlite3 *db = NULL;
    char pragma[96];
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    int orc = sqlite3_open_v2(store->path, &db, flags, store->vfs);
    int r = open_errno(db, orc);

    if (r < 0) {
        goto out;
    }
    /* Writable now, or refused now: not a store that starts, says it is
     * ready and then fails every commit. */
    if (sqlite3_db_readonly(db, "main") == 1) {
        r = read_only_errno(store->path);
        goto out;
    }
    sqlite3_extended_result_codes(db, 1);
    r = store_errno(sqlite3_busy_timeout(db, (int)store->busy_timeout_ms));
    if (r < 0) {
        goto out;
    }
    /* journal_mode answers with the mode it got; anything but WAL (a
     * read-only medium, an in-memory database) is refused. */
    {
        sqlite3_stmt *st = NULL;
        int rc =
            sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &st, NULL);

        if (rc == SQLITE_OK) {
            rc = sqlite3_step(st);
        }
        if (rc == SQLITE_ROW) {
            const char *mode = (const char *)sqlite3_column_text(st, 0);

            rc = mode && strcmp(mode, "wal") == 0 ? SQLITE_OK : SQLITE_CANTOPEN;
            r = rc == SQLITE_CANTOPEN ? -EINVAL : 0;
        } else {
            r = open_errno(db, rc); /* e.g. no -wal file in the folder */
        }
        sqlite3_finalize(st);
        if (r < 0) {
            goto out;
        }
    }
    (void)snprintf(pragma,
                   sizeof(pragma),
                   "PRAGMA synchronous = %s; PRAGMA temp_store = MEMORY;"
                   "PRAGMA cache_size = -65536;",
                   store->sync == CFS_STORE_SYNC_NORMAL ? "NORMAL" : "FULL");
    r = store_exec(db, pragma);
out:
    if (r < 0) {
        sqlite3_close_v2(db);
        return r;
    }
    *ret_db = db;
    return 0;
}

int store_bind_text(sqlite3_stmt *st, int idx, const char *s, size_t len)
{
    if (!s) {
        return store_errno(sqlite3_bind_null(st, idx));
    }
    return store_errno(
        sqlite3_bind_text64(st, idx, s, len, SQLITE_STATIC, SQLITE_UTF8));
}

int store_bind_blob(sqlite3_stmt *st, int idx, const void *p, size_t len)
{
    /* A NULL pointer would bind SQL NULL; a value can be empty. */
    return store_errno(
        sqlite3_bind_blob64(st, idx, p ? p : "", len, SQLITE_STATIC));
}

int store_step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    return store_errno(rc == SQLITE_ROW ? SQLITE_MISUSE : rc);
}

int store_read_state(struct cfs_store *s)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        s->wdb,
        "SELECT revision, seq, history_floor FROM state WHERE id = 1",
        -1,
        &st,
        NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        s->revision = (uint64_t)sqlite3_column_int64(st, 0);
        s->seq = (uint64_t)sqlite3_column_int64(st, 1);
        s->floor = (uint64_t)sqlite3_column_int64(st, 2);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_CORRUPT; /* the state row is made with the schema */
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) {
        return store_errno(rc);
    }
    s->j_revision = s->revision;
    return store_errno(rc);
}
