/* SPDX-License-Identifier: MIT */
/*
 * store.h - durable state for configfsd: SQLite today, any ordered durable
 * log tomorrow.
 *
 * The store keeps the written state of the tree (directories made by
 * mkdir, the last value written to each attribute in write order, links by
 * target identity, commit state) and a journal of every change record.
 * Front ends make a transaction durable with cfs_store_commit_txn(), which
 * shares one SQLite commit among concurrent callers (group commit). At open,
 * and whenever a subsystem registers later, the stored subtree is replayed
 * through the normal operations. docs/internals/store.md describes
 * the schema, the write path and the promises below in full.
 *
 * Promises of the interface (any backend must keep them):
 *  - Ordering: change sets become durable in the order their transactions
 *    took the tree's mutation lock, which is revision order.
 *  - Durability: cfs_store_commit_txn() and cfs_store_apply() return 0 only
 *    after the change is on stable storage (with sync FULL; NORMAL may lose
 *    the last commits on power loss, never corrupt).
 *  - Atomicity: a change set is stored entirely or not at all.
 *  - Visibility: a change is in the in-memory tree from the operation on,
 *    before it is durable, and is undone if its commit fails; the store
 *    commits the transaction (cfs_txn_commit()) only once it is durable
 *    (SQLite) or committed by etcd's quorum and applied. No reader may
 *    answer from what it read of the tree before that: readers bracket
 *    their reads with core's cfs_read_begin()/cfs_read_end() (cfs.h,
 *    "committed reads") and answer only once every transaction that
 *    changed what they read is committed, reading again when one was
 *    undone. The granularity is what a read reads (a node, a subtree, an
 *    attribute's item, or a module's whole subsystem): transactions
 *    elsewhere neither hold nor tear it. Progress: a read torn twice runs
 *    under the mutation lock and then waits for at most the commits
 *    queued before it (one group commit, or one etcd quorum round, after
 *    the last transaction that touched it settles); only undos make it read
 *    again. So every answer, and every ETag, names a committed revision
 *    (docs/DESIGN.md "Committed reads"; proven by unit.core-visible,
 *    integration.http-fault, integration.http-starve and
 *    cluster.linearize). A backend must commit or undo every transaction
 *    it was handed, in lock order, or readers of what it touched wait.
 *    Readers of the store (history, export, load) see only durable change
 *    sets. In cluster mode a read is linearizable
 *    when it first waits for cfs_store_read_index_async().
 */
#ifndef CONFIGFS_STORE_H
#define CONFIGFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <configfs/cfs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cfs_store;

/* ---- opening ----------------------------------------------------------- */

enum cfs_store_sync {
    CFS_STORE_SYNC_FULL = 0, /* fsync the WAL at every commit (default) */
    CFS_STORE_SYNC_NORMAL,   /* fsync at checkpoints only */
};

struct cfs_store_options {
    const char *path;         /* database file; created if missing */
    enum cfs_store_sync sync; /* --sync=full|normal */
    uint64_t history_limit;   /* journal revisions kept; 0 keeps all */
    unsigned busy_timeout_ms; /* wait for a lock held by another process
                                 before -EAGAIN; 0 means 5000 */
    unsigned max_batch;       /* transactions per shared commit; 0 means
                                 1024; 1 turns group commit off */
    const char *vfs;          /* SQLite VFS name; NULL for the default */
    bool no_replay;           /* open for reading/writing only: no replay,
                                 no observer (tools, export, tests) */
    bool integrity_check;     /* PRAGMA integrity_check at open (-EUCLEAN
                                 if it fails); costs a full read */
    /* Cluster mode: "etcd://HOST:PORT[,HOST:PORT...][/PREFIX]" (etcds://
     * for TLS). The etcd
     * cluster holds the one log every node shares; @path is then ignored
     * and the node keeps its cache in a private temporary directory
     * (docs/cluster.md). NULL: SQLite alone. */
    const char *etcd;
    /* Cluster mode over TLS ("etcds://..."): the CA that signed the
     * members' certificates, and this node's client certificate and key
     * (as etcdctl's --cacert, --cert, --key); each may be NULL. */
    const char *etcd_cacert;
    const char *etcd_cert;
    const char *etcd_key;
    /* etcd authentication (etcdctl's --user); NULL: none. */
    const char *etcd_user;
    const char *etcd_password;
    /* Cluster mode: called, in the store's applier thread and with no lock
     * held, with each change set another node made once it is applied
     * here (for the event stream). May be NULL. */
    void (*on_applied)(void *ctx, const struct cfs_change *changes, size_t n);
    void *on_applied_ctx;
    /* Cluster mode: called in the store's applier thread, with the tree's
     * replay transaction open (do not touch the tree), for each change of
     * another node's change set that a callback refused here with @error
     * (-errno); it is also kept as a replay problem (cfs_store_problems()).
     * May be NULL. */
    void (*on_replay_error)(void *ctx,
                            const struct cfs_change *change,
                            int error);
    void *on_replay_error_ctx;
    /* Cluster mode: write a snapshot of the cache to etcd each time this
     * node has applied this many revisions past the last snapshot (one
     * node writes a given snapshot), then trim the log below it; 0 writes
     * none (a snapshot written by another node is still loaded at start). */
    uint64_t snapshot_every;
    /* ... and only once the log since the last snapshot holds at least
     * this percentage of its size (a snapshot carries the journal, so by
     * revisions alone each would cost more than the last): 100 keeps the
     * bytes of snapshots written at most those of the log; 0: by
     * revisions alone. */
    uint64_t snapshot_growth;
    /* Cluster mode: called once, in the store's applier thread with no
     * lock held, when this node can no longer follow the log: the next
     * change set it needs (after @applied) was trimmed, below the snapshot
     * at revision @snapshot. The node stops applying (cfs_store_stale()
     * turns true); its tree can only be rebuilt by opening the store
     * again, which loads the snapshot (the caller restarts). May be NULL. */
    void (*on_fell_behind)(void *ctx, uint64_t applied, uint64_t snapshot);
    void *on_fell_behind_ctx;
};

/**
 * Open (or create) the database, migrate its schema forward, set the tree's
 * revision counter to the stored revision (cfs_revision_set()), then, unless
 * @opts->no_replay, replay the stored state of every registered subsystem
 * and install the tree observer that replays subsystems registering later.
 * Replay failures do not fail the open: see cfs_store_problems().
 * Must not be called with a transaction open.
 * @return 0; -ENOTSUP for a database written by a newer schema; -EUCLEAN for
 * a corrupt one; -EINVAL for bad options; -EROFS (a read-only file system)
 * or -EACCES (a file or folder the process may not write) when the
 * database cannot be written: it is never opened read-only; other errors
 * of the file system (-ENOENT for a missing folder ...).
 * Ownership: *ret_store is new; release with cfs_store_close().
 */
CFS_EXPORT int cfs_store_open(const struct cfs_store_options *opts,
                              struct cfs_store **ret_store);

/**
 * Remove the observer, checkpoint and close. No commit may be running.
 * NULL-safe.
 */
CFS_EXPORT void cfs_store_close(struct cfs_store *store);

/* ---- the write path ---------------------------------------------------- */

/**
 * Make an open transaction durable and end it. Seals @txn (other writers go
 * on), hands its change records to the store, which writes them together
 * with those of concurrent callers in one SQLite transaction, then commits
 * @txn on success or aborts it on failure. A caller alone commits inline,
 * in its own thread; callers arriving during a commit form the next batch.
 * If a commit fails, that batch and every transaction sealed after it are
 * aborted, newest first, so the tree and the database agree.
 *
 * @principal: who made the change, for the journal; may be NULL; borrowed
 * until the change is stored (cfs_store_commit_txn() or cfs_store_wait()
 * returns, or @done is called).
 * @ret_revision: optional; the transaction's revision (0 if it had no
 * change), set only on success.
 * @return 0; -ENOSPC (disk full), -EIO (I/O error), -EAGAIN (database
 * locked past busy_timeout_ms), -ENOMEM. @txn is consumed in every case.
 * Locks: call with no lock held and never from a configfs callback.
 */
CFS_EXPORT int cfs_store_commit_txn(struct cfs_store *store,
                                    struct cfs_txn *txn,
                                    const char *principal,
                                    uint64_t *ret_revision);

/**
 * cfs_store_commit_txn() in two halves, for front ends that must not block
 * the thread that holds the transaction (an event loop): submit queues the
 * records in revision order and seals @txn (releasing the mutation lock, so
 * call it in the thread that began @txn); wait, in any thread, blocks until
 * the shared commit is done and commits or aborts @txn. Every ticket must
 * be waited for, exactly once.
 * @return submit: 0 with *ret_ticket (NULL if @txn had no change: it is
 * then committed), or the errno of a commit failing meanwhile (@txn was
 * aborted). wait: as cfs_store_commit_txn(); NULL waits for nothing.
 */
struct cfs_store_ticket;
CFS_EXPORT int cfs_store_submit(struct cfs_store *store,
                                struct cfs_txn *txn,
                                const char *principal,
                                struct cfs_store_ticket **ret_ticket);
CFS_EXPORT int cfs_store_wait(struct cfs_store_ticket *ticket,
                              uint64_t *ret_revision);

/**
 * cfs_store_commit_txn() without a waiting thread, for event loops with
 * many requests in flight: submit queues the records in revision order and
 * seals @txn (call it in the thread that began @txn); the store's own
 * commit thread (started on first use, ended by cfs_store_close()) writes
 * the batch, commits or aborts @txn, and then calls @done(@ctx, err,
 * revision) -- err 0 when durable, or the errno of the failed commit, the
 * change having been undone. Callbacks run in revision order, in that
 * thread, with no lock of the store held; they must not block for long and
 * must not call into the store or begin a transaction.
 * @return 0: queued, @done will be called exactly once; 1: @txn had no
 * change and was committed, @done is not called; a negative errno (a
 * commit failing meanwhile, -ENOMEM, -EAGAIN when the thread cannot be
 * started): @txn was aborted, @done is not called.
 */
typedef void (*cfs_store_done_fn)(void *ctx, int err, uint64_t revision);
CFS_EXPORT int cfs_store_submit_async(struct cfs_store *store,
                                      struct cfs_txn *txn,
                                      const char *principal,
                                      cfs_store_done_fn done,
                                      void *ctx);

/* One transaction's change records, as cfs_txn_changes() returns them. */
struct cfs_store_changeset {
    const struct cfs_change *changes; /* borrowed; oldest first */
    size_t n;
    const char *principal; /* may be NULL */
};

/**
 * The backend primitive under cfs_store_commit_txn(): store @n change sets,
 * given in revision order, as one durable commit (all or none). Records of
 * a set are applied to the current state and appended to the journal.
 * Callers must not mix it with concurrent cfs_store_commit_txn() calls for
 * changes that depend on each other (ordering is theirs to keep).
 * @return 0, -ENOSPC, -EIO, -EAGAIN, -ENOMEM. Parameters are borrowed.
 */
CFS_EXPORT int cfs_store_apply(struct cfs_store *store,
                               const struct cfs_store_changeset *sets,
                               size_t n);

/* ---- replay ------------------------------------------------------------ */

enum cfs_store_step_op {
    CFS_STORE_STEP_MKDIR = 1, /* make a user directory */
    CFS_STORE_STEP_DIR,       /* a directory that must already exist (a
                                 subsystem or default group holding data) */
    CFS_STORE_STEP_STORE,     /* write an attribute */
    CFS_STORE_STEP_SYMLINK,   /* make a link; arg = target path */
    CFS_STORE_STEP_COMMIT,    /* rename pending -> live; arg = destination */
    CFS_STORE_STEP_SUBSYSTEM, /* problems only: stored data of a subsystem
                                 that is not registered */
    CFS_STORE_STEP_UNDO,      /* problems only: a failed commit could not be
                                 undone in the tree */
    CFS_STORE_STEP_LOG,       /* problems only (cluster mode): a change set
                                 in the shared log this node cannot read (a
                                 newer format, or damaged); it applies
                                 nothing after it */
};

/** "mkdir", "dir", "store", "symlink", "commit", "subsystem", "undo",
 *  "log". */
CFS_EXPORT const char *cfs_store_step_name(enum cfs_store_step_op op);

/* One replay step. Paths are where the step applies at replay time: an item
 * that was committed is re-made in pending/ and moved by a COMMIT step. */
struct cfs_store_step {
    enum cfs_store_step_op op;
    const char *path;
    const char *arg; /* STORE: value; SYMLINK: target; COMMIT: destination */
    size_t arg_len;
    bool binary;       /* STORE: a binary attribute */
    uint64_t revision; /* revision of the change the step re-makes */
};

/* Return 0 or a negative errno; the loader goes on either way. */
typedef int (*cfs_store_step_fn)(void *data, const struct cfs_store_step *step);

/**
 * Stream the stored state in replay order: directories in creation order
 * (parents first), each followed by its written values in write order;
 * then links in creation order; then commits in their original order.
 * @subsystems: names to load (@n of them); @n == 0 loads everything.
 * Everything passed to @fn is borrowed for the duration of the call.
 * Reads a consistent snapshot of durable state; does not lock the tree.
 * Errors returned by @fn do not stop the load (the caller decides what a
 * failed step means for the steps below it).
 * @return 0 or a storage errno (-EIO, -ENOMEM, -EUCLEAN ...).
 */
CFS_EXPORT int cfs_store_load(struct cfs_store *store,
                              const char *const *subsystems,
                              size_t n,
                              cfs_store_step_fn fn,
                              void *data);

/* A replay step that failed; its stored data is kept. */
struct cfs_store_problem {
    char *path;
    enum cfs_store_step_op op;
    int error;        /* negative errno */
    uint64_t skipped; /* steps below @path not tried because this failed */
};

/**
 * The replay problems now standing (those of a subsystem are replaced when
 * it registers again). Ownership: *ret_problems is new (may be NULL with
 * *ret_n == 0); free with cfs_store_problems_free().
 */
CFS_EXPORT int cfs_store_problems(struct cfs_store *store,
                                  struct cfs_store_problem **ret_problems,
                                  size_t *ret_n);
CFS_EXPORT void cfs_store_problems_free(struct cfs_store_problem *problems,
                                        size_t n);

/* ---- revisions and history --------------------------------------------- */

struct cfs_store_info {
    uint64_t revision;      /* last durable revision */
    uint64_t history_floor; /* journal rows at or below it were pruned */
    uint64_t txns;          /* transactions made durable since open */
    uint64_t commits;       /* SQLite commits since open */
    uint64_t failures;      /* failed commits since open */
    uint64_t pending;       /* transactions handed to the store and not yet
                               durable or failed */
};

CFS_EXPORT int cfs_store_info(struct cfs_store *store,
                              struct cfs_store_info *ret_info);

struct cfs_store_history_query {
    const char *path; /* matches this path and everything under it; NULL
                         or "/" for all */
    uint64_t before;  /* revisions below it; 0 for no bound */
    size_t limit;     /* at most this many rows; 0 means 100; capped at
                         10000 */
};

/* One journal row. write_only rows carry neither arg nor old. */
struct cfs_store_history_entry {
    uint64_t revision;
    int64_t time_us; /* wall clock, microseconds since the epoch */
    char *principal; /* NULL if none */
    enum cfs_op op;
    char *path;
    char *arg; /* NULL if none; NUL-terminated */
    size_t arg_len;
    char *old; /* NULL if none; NUL-terminated */
    size_t old_len;
    bool binary;
    bool write_only;
};

/**
 * Journal rows newest first (revision, then record order, descending).
 * Ownership: *ret_entries is new; free with cfs_store_history_free().
 * @return 0, -EINVAL for a relative path, storage errors.
 */
CFS_EXPORT int cfs_store_history(struct cfs_store *store,
                                 const struct cfs_store_history_query *query,
                                 struct cfs_store_history_entry **ret_entries,
                                 size_t *ret_n);
CFS_EXPORT void cfs_store_history_free(struct cfs_store_history_entry *entries,
                                       size_t n);

/* ---- cluster mode ------------------------------------------------------ */

/** Called once by cfs_store_catch_up_async(): @err 0 (caught up),
 *  -ETIMEDOUT, or -ECANCELED (the store stops). From a thread of the
 *  store, with none of its locks held. */
typedef void (*cfs_store_caught_up_fn)(void *ctx, int err);

/**
 * Wait until this node has applied @revision and everything the shared log
 * held when the wait began (read-your-writes on another node; a request
 * that lost a race catching up before it runs again), without blocking
 * the caller: a server worker goes on serving its other connections
 * meanwhile. @done(@ctx, err) is called once that is so, but not before
 * @delay_us (a back-off), or after @timeout_ms (counted from now) with
 * -ETIMEDOUT. @return 1 when caught up already and no delay is asked; 0 when
 * @done will be called; -ETIMEDOUT without a cluster when the tree is not at
 * @revision (at once); -ECANCELED when the store stops; -ENOMEM. @done is
 * called only after 0.
 */
CFS_EXPORT int cfs_store_catch_up_async(struct cfs_store *store,
                                        uint64_t revision,
                                        unsigned delay_us,
                                        unsigned timeout_ms,
                                        cfs_store_caught_up_fn done,
                                        void *ctx);

/**
 * Cluster mode, a linearizable read: ask etcd (a quorum read made after this
 * call) where the shared log ends, then wait until this node has applied
 * it, without blocking the caller. A read made after @done(@ctx, 0) sees
 * every change committed before this call. @done gets 0, -ETIMEDOUT (not
 * applied within @timeout_ms of the answer), -ECANCELED (the store
 * stops), or the errno of etcd's failure (no quorum: the read cannot be
 * linearizable). Concurrent calls share one etcd request. @return 1
 * without a cluster (a lone node's tree is the log: nothing to wait for),
 * 0 when @done will be called, -ECANCELED, -ENOMEM.
 */
CFS_EXPORT int cfs_store_read_index_async(struct cfs_store *store,
                                          unsigned timeout_ms,
                                          cfs_store_caught_up_fn done,
                                          void *ctx);

struct cfs_store_cluster_info {
    uint64_t applied;       /* last revision applied on this node */
    uint64_t head;          /* last revision known to be in the shared log */
    bool watching;          /* the watch on etcd is connected */
    uint64_t requests;      /* etcd requests made */
    uint64_t failures;      /* of which failed (unreachable, no quorum) */
    uint64_t rtt_us;        /* sum of their round trips */
    uint64_t conflicts;     /* appends that lost the race (CAS failed) */
    uint64_t remote;        /* change sets of other nodes applied */
    uint64_t replay_errors; /* of their operations refused here */
    size_t endpoints;
    char error[256]; /* the last etcd failure; "" once a request worked */
    uint64_t snapshot_revision; /* of the last snapshot known here (0: none) */
    uint64_t snapshots_loaded;  /* at start */
    uint64_t snapshots_written; /* by this node, and published */
    uint64_t trimmed;           /* log entries this node deleted */
    bool fell_behind; /* the log this node needs was trimmed: it waits to
                         be restarted (on_fell_behind) */
    char writer[512]; /* URL of the node that appends for the others, ""
                         while none is known */
    bool writer_self; /* ... and it is this node */
    /* cfs_store_catch_up_async() waiting, not called back yet */
    uint64_t catch_up_waiting;
};

/**
 * Cluster mode: where this node should send its writes. One node at a
 * time holds the writer's role (under its etcd lease, taken by the first
 * node with an advertised URL that finds it free); the others forward
 * their write requests to it, so that their appends do not race. Only an
 * optimisation: a node that appends itself is still correct (the CAS on
 * the head), only slower under contention.
 * @return 1 with @url (of @size bytes) the writer's URL when another node
 * is the writer; 0 when this node is, none is known, or without a
 * cluster.
 */
CFS_EXPORT int
cfs_store_writer(struct cfs_store *store, char *url, size_t size);

/**
 * Cluster mode: this node takes part in forwarding: from now on it follows
 * which node is the writer (cfs_store_writer(); a node that does not call
 * this never reads it, and cfs_store_writer() says none). With @url
 * ("http://HOST:PORT"), where other nodes reach this node's HTTP API, it
 * also stands as the writer; NULL: it never does. Call once serving.
 * @return 0; -ENOTSUP without a cluster; -EINVAL for a URL over 400
 * bytes or with a space; -ENOMEM.
 */
CFS_EXPORT int cfs_store_advertise(struct cfs_store *store, const char *url);

/** @return 0; -ENOTSUP when the store is not in cluster mode. */
CFS_EXPORT int cfs_store_cluster(struct cfs_store *store,
                                 struct cfs_store_cluster_info *ret_info);

/** Cluster mode: this node cannot follow the shared log now (the last etcd
 * request failed, or the watch is down), so what it serves may be stale.
 * Always false for a single-node store; cheap enough for every answer. */
CFS_EXPORT bool cfs_store_stale(struct cfs_store *store);

/**
 * Cluster mode: compare this node's set of subsystems (@set: text, one
 * line per subsystem, schema or module with its content hash, as the
 * caller builds it) with the set recorded in etcd; the first node records
 * it. @return 0 when equal or recorded now; -EEXIST when different, with
 * *ret_cluster_set the recorded set (free()); -ENOTSUP without a cluster;
 * etcd errnos.
 */
CFS_EXPORT int cfs_store_cluster_subsystems(struct cfs_store *store,
                                            const char *set,
                                            char **ret_cluster_set);

/* ---- export and diff --------------------------------------------------- */

#define CFS_STORE_EXPORT_FORMAT 1

struct cfs_store_value {
    char *name;
    char *data; /* len bytes and a NUL */
    size_t len;
    bool binary;
    /* Never written: what the attribute shows now (its default), listed
     * after the written values for every readable and writable attribute
     * of an exported directory, so that a restore can put it back. */
    bool is_default;
};

struct cfs_store_link {
    char *name;
    char *target; /* absolute path */
};

/*
 * A directory of the written state. Export includes every user-made
 * directory and every other directory (subsystem, default group) that holds
 * written values, links or included children.
 */
struct cfs_store_node {
    char *name; /* "" for the root */
    char *path;
    char *type;     /* the item type's ct_name, or NULL if unknown */
    bool created;   /* made by mkdir (false: subsystem or default group) */
    bool committed; /* a committable item in live/ */
    struct cfs_store_value *values; /* write order */
    size_t n_values;
    struct cfs_store_link *links; /* creation order */
    size_t n_links;
    struct cfs_store_node *children; /* creation order */
    size_t n_children;
};

struct cfs_store_export {
    int format; /* CFS_STORE_EXPORT_FORMAT */
    uint64_t revision;
    struct cfs_store_node root; /* the node at the exported path */
};

/**
 * Export the durable written state at or under @path ("/" for everything)
 * as one consistent snapshot. Types, and the values of readable and
 * writable attributes never written (is_default), are filled in from the
 * live tree where the directory exists there.
 * @return 0, -ENOENT if nothing is stored at @path, -EINVAL, storage errors.
 * Ownership: *ret_export is new; free with cfs_store_export_free().
 */
CFS_EXPORT int cfs_store_export(struct cfs_store *store,
                                const char *path,
                                struct cfs_store_export **ret_export);

/**
 * The same structure built from the live tree (cfs_readdir(),
 * cfs_written_values(), cfs_readlink()): what is in memory now, durable or
 * not. Not a snapshot if writers run meanwhile.
 */
CFS_EXPORT int cfs_store_export_tree(const char *path,
                                     struct cfs_store_export **ret_export);

CFS_EXPORT void cfs_store_export_free(struct cfs_store_export *export);

/**
 * Whether a durable change after revision @revision touched @path or
 * anything under it (a rename or symlink whose source or target is there
 * counts): *ret_touched. Costs the journal rows after @revision, not the
 * journal. When those rows may have been pruned (the history floor is
 * past @revision) the answer is "touched".
 * @return 0, -EINVAL, storage errors.
 */
CFS_EXPORT int cfs_store_touched_since(struct cfs_store *store,
                                       const char *path,
                                       uint64_t revision,
                                       bool *ret_touched);

enum cfs_store_diff_mode {
    CFS_STORE_DIFF_MERGE = 1, /* add and change; remove nothing */
    CFS_STORE_DIFF_REPLACE,   /* also remove directories and links */
};

/* One operation of a plan, for cfs_mkdir() and friends. */
struct cfs_store_op {
    enum cfs_op op;
    char *path; /* rename: source */
    char *arg;  /* store: value (arg_len bytes); symlink: target;
                   rename: destination; else NULL */
    size_t arg_len;
    bool binary;
};

/**
 * The operations that turn @have into @want, both nodes describing the same
 * path, in an order the operation layer accepts: unlinks; uncommits
 * (live -> pending); rmdirs bottom-up; mkdirs top-down, each followed by
 * its stores; symlinks (after their targets exist); commits. Items are
 * made and written in pending/ and committed last, as replay does. An
 * attribute written in @have but absent from @want is left alone (a value
 * cannot be unwritten). A value of @want marked is_default is stored only
 * where @have lists the attribute (written or default) with other bytes:
 * a directory the plan makes has its defaults already. Only the bytes of
 * two values decide whether they differ.
 * @return 0, -EINVAL for a document that names an item both in pending/ and
 * live/, -ENOMEM. Ownership: *ret_ops is new; cfs_store_ops_free().
 */
CFS_EXPORT int cfs_store_diff(const struct cfs_store_node *have,
                              const struct cfs_store_node *want,
                              enum cfs_store_diff_mode mode,
                              struct cfs_store_op **ret_ops,
                              size_t *ret_n);
CFS_EXPORT void cfs_store_ops_free(struct cfs_store_op *ops, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CONFIGFS_STORE_H */
