/* SPDX-License-Identifier: MIT */
/*
 * store-internal.h - what the store sources share: the store object,
 * its prepared statements, the schema and migration framework, and the one
 * place where SQLite result codes become errno values.
 *
 * Locks, in the order they are taken (never the reverse):
 *   the tree's mutation lock (core) -> q_lock
 *   the tree's mutation lock (core) -> r_lock -> p_lock
 *   w_lock -> p_lock
 * w_lock is held by the commit leader or cfs_store_apply() while writing;
 * r_lock guards the read connection (replay calls core under it, so no
 * code may wait for core while holding it); q_lock is never held while
 * calling into core or SQLite.
 */
#ifndef CFS_STORE_INTERNAL_H
#define CFS_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <configfs/store.h>

#if defined(__clang__)
#define CFS_STORE_CAPABILITY(x) __attribute__((capability(x)))
#define CFS_STORE_GUARDED(x)    __attribute__((guarded_by(x)))
#define CFS_STORE_REQUIRES(...)                                                \
    __attribute__((requires_capability(__VA_ARGS__)))
#define CFS_STORE_NO_TSA __attribute__((no_thread_safety_analysis))
#else
#define CFS_STORE_CAPABILITY(x)
#define CFS_STORE_GUARDED(x)
#define CFS_STORE_REQUIRES(...)
#define CFS_STORE_NO_TSA
#endif

/* Microseconds of the wall clock: the time a journal row says, on every
 * backend (SQLite: apply.c; etcd: the log entry's, etcd/append.c). */
static inline int64_t cfs_store_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Prepared statements of the write connection (apply.c). */
enum store_stmt {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_NODE_BY_PATH,
    ST_NODE_INSERT,
    ST_ATTR_UPSERT,
    ST_LINK_UPSERT,
    ST_LINK_DELETE,
    ST_SUBTREE_DEL_ATTR,
    ST_SUBTREE_DEL_LINK_OWNER,
    ST_SUBTREE_DEL_LINK_TARGET,
    ST_SUBTREE_DEL_NODE,
    ST_NODE_MOVE,
    ST_SUBTREE_REPATH,
    ST_JOURNAL_INSERT,
    ST_JOURNAL_REV,
    ST_STATE_UPDATE,
    ST_PRUNE,
    ST_PRUNE_REV,
    ST_NODE_TOUCH,
    ST_COUNT
};

/* A schema step: run @sql, then user_version becomes @version. */
struct store_migration {
    int version;
    const char *sql;
};

/* A problem as kept in the store; the subsystem it belongs to is the first
 * path component. */
struct store_problem_list {
    struct cfs_store_problem *v;
    size_t n, cap;
};

/* Directory path -> node id, for the write path (paths.c). */
struct store_idslot {
    char *path;
    size_t len;
    int64_t id;
};
struct store_idcache {
    struct store_idslot *slots;
    size_t cap, n;
};

/* One caller of cfs_store_commit_txn() waiting for durability (group-commit.c).
 */
struct store_req;
struct store_backend_ops;

struct cfs_store {
    char *path;
    char *vfs;
    enum cfs_store_sync sync;
    uint64_t history_limit;
    unsigned busy_timeout_ms;
    unsigned max_batch;

    /* Write connection: used by one thread at a time, under w_lock. */
    pthread_mutex_t w_lock;
    sqlite3 *wdb;
    sqlite3_stmt *st[ST_COUNT];
    uint64_t seq;      /* last write-order number handed out */
    uint64_t revision; /* last durable revision */
    uint64_t floor;    /* history pruned at or below */
    uint64_t since_prune;
    uint64_t j_revision;          /* the last revision in the journal */
    struct store_idcache idcache; /* what node_lookup() found or made */

    /* Read connection: history, export, load. */
    pthread_mutex_t r_lock;
    sqlite3 *rdb;

    /* Group commit (group-commit.c). */
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    struct store_req *q_head, *q_tail; /* queued, not yet written */
    struct store_req *f_head, *f_tail; /* failed, not yet aborted */
    bool leader;                       /* a thread is writing a batch */
    /* Asynchronous submissions (cfs_store_submit_async): one thread leads
     * their batches, aborts them when a commit fails and calls them back. */
    pthread_cond_t a_cond; /* work for that thread */
    pthread_t a_thread;
    bool a_started, a_stop;
    size_t n_async;                    /* submitted, not yet called back */
    struct store_req *d_head, *d_tail; /* durable, to call back */

    /* For cfs_store_info(), under q_lock. */
    uint64_t n_txns, n_commits, n_failures, n_pending;
    uint64_t info_revision, info_floor;

    /* Replay (replay.c), under p_lock. */
    pthread_mutex_t p_lock;
    struct store_problem_list problems;
    char **replayed; /* subsystems replayed and still registered */
    size_t n_replayed, cap_replayed;
    bool observing;

    /* What makes a batch durable (backend.h): store_sqlite_ops, or
     * store_etcd_ops with its state in @backend. */
    const struct store_backend_ops *ops;
    void *backend;
    bool remote_waiting; /* under q_lock: another node's batch waits to be
                            applied; local submissions fail (-ESTALE) */
    char *cache_dir;     /* the node-local cache of a cluster node */
    void (*on_applied)(void *ctx, const struct cfs_change *changes, size_t n);
    void *on_applied_ctx;
    void (*on_replay_error)(void *ctx, const struct cfs_change *c, int error);
    void *on_replay_error_ctx;
    void (*on_fell_behind)(void *ctx, uint64_t applied, uint64_t snapshot);
    void *on_fell_behind_ctx;
};

/* ---- db.c -------------------------------------------------------------- */

/** The one mapping of SQLite result codes (primary or extended) to 0 or a
 *  negative errno. */
int store_errno(int rc);

/** The schema, newest last. */
extern const struct store_migration store_migrations[];
extern const size_t store_n_migrations;

/**
 * Bring @db to the last version of @migrations, one transaction per step.
 * @return 0; -ENOTSUP if the database is newer than the last step; storage
 * errors (the failing step is rolled back, earlier ones stay).
 */
int store_migrate(sqlite3 *db,
                  const struct store_migration *migrations,
                  size_t n);

/** Open one connection with the store's pragmas (WAL, sync, busy timeout). */
int store_db_open(const struct cfs_store *store, sqlite3 **ret_db);

/** sqlite3_exec() with errno mapping. */
int store_exec(sqlite3 *db, const char *sql);

/** Read PRAGMA user_version. */
int store_user_version(sqlite3 *db, int *ret_version);

/** Bind helpers: text of @len bytes; a blob that is never NULL. */
int store_bind_text(sqlite3_stmt *st, int idx, const char *s, size_t len);
int store_bind_blob(sqlite3_stmt *st, int idx, const void *p, size_t len);

/** Step a statement that returns no row, then reset it. */
int store_step_done(sqlite3_stmt *st);

/** (Re)read the state row (revision, write order, history floor) into
 *  @store. @pre w_lock or no other user of the write connection. */
int store_read_state(struct cfs_store *store) CFS_STORE_NO_TSA;

/* ---- apply.c ----------------------------------------------------------- */

int store_prepare_write(struct cfs_store *store);
void store_finalize_write(struct cfs_store *store);

/**
 * Write @n change sets in one SQLite transaction and make it durable,
 * journaled at @time_us (microseconds since the epoch; 0: now).
 * @pre w_lock held. On failure everything is rolled back, including the
 * in-memory counters.
 */
int store_write_sets(struct cfs_store *store,
                     const struct cfs_store_changeset *sets,
                     size_t n,
                     int64_t time_us) CFS_STORE_NO_TSA;

/* ---- group-commit.c
 * ---------------------------------------------------------- */

/** Wait until nothing is queued or being written (returns at once while
 *  failed transactions wait to be aborted). @pre no q_lock. */
void store_drain(struct cfs_store *store);
/* End the commit thread of asynchronous submissions once every one of
 * them was called back. @pre no lock. */
void store_stop_async(struct cfs_store *store);

/* ---- stream-state.c
 * ------------------------------------------------------------ */

/**
 * cfs_store_load() with the choice of plan: @ranged reads one subsystem
 * through the path index (sorted: good for a small part of a big table);
 * otherwise one pass over the whole tables in id order, filtered.
 */
int store_load(struct cfs_store *store,
               const char *const *subsystems,
               size_t n,
               bool ranged,
               cfs_store_step_fn fn,
               void *data);

/* ---- replay.c ---------------------------------------------------------- */

/** Replay every registered subsystem, install the observer. */
int store_replay_open(struct cfs_store *store);
void store_replay_close(struct cfs_store *store);

/* ---- problems.c -------------------------------------------------------- */

/** Add a problem to a list (@path copied). @return 0 or -ENOMEM. */
int store_plist_add(struct store_problem_list *l,
                    const char *path,
                    enum cfs_store_step_op op,
                    int error);
void store_plist_free(struct store_problem_list *l);
/** Remove the problems at or under @path. @pre p_lock */
void store_plist_remove_under(struct store_problem_list *l, const char *path);

void store_problems_clear(struct cfs_store *store);
/** Drop the problems that the directories made by @sets replaced. */
void store_problems_forget(struct cfs_store *store,
                           const struct cfs_store_changeset *sets,
                           size_t n);
/** Record a problem (path copied). */
void store_problem_add(struct cfs_store *store,
                       const char *path,
                       enum cfs_store_step_op op,
                       int error);

/* ---- paths.c ----------------------------------------------------------- */

/** A set of strings (open addressing), for replay bookkeeping. */
struct store_strset {
    char **slots;
    size_t cap, n;
};
int store_strset_add(struct store_strset *set, const char *s, size_t len);
bool store_strset_has(const struct store_strset *set,
                      const char *s,
                      size_t len);
void store_strset_free(struct store_strset *set);

/**
 * The id cached for directory @path (@len bytes), or 0. Entries stay valid
 * until a directory is removed or moved, or a transaction rolls back: then
 * the cache is cleared. Bounded: when full it starts over.
 */
int64_t
store_idcache_get(const struct store_idcache *c, const char *path, size_t len);
/** Remember an id; best effort (an allocation failure only costs a
 *  lookup later). */
void store_idcache_put(struct store_idcache *c,
                       const char *path,
                       size_t len,
                       int64_t id);
void store_idcache_clear(struct store_idcache *c);
/** Clear and release the table. */
void store_idcache_free(struct store_idcache *c);

/** Byte length of the directory part of @path ("/a/b" -> 2, "/a" -> 0). */
size_t store_dirname_len(const char *path, size_t len);

/** Normalise an absolute path: strip trailing '/', except for "/".
 *  @return its length, or 0 if @path is not absolute. */
size_t store_path_norm(const char *path);

/** True if @path is @prefix or below it ("/" is above everything). */
bool store_path_under(const char *path, const char *prefix, size_t plen);

/** A growable byte buffer, NUL-terminated past @n once written to
 *  (cfs_realloc(): free @p with cfs_free()). */
struct store_buf {
    char *p;
    size_t n, cap;
};
/** Append @len bytes. @return 0 or -ENOMEM (@b unchanged). */
int store_buf_add(struct store_buf *b, const void *data, size_t len);

/** printf into a fresh cfs_malloc()ed string. */
char *store_asprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#endif /* CFS_STORE_INTERNAL_H */
