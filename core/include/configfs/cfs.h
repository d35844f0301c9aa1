/* SPDX-License-Identifier: MIT */
/*
 * cfs.h - the operation layer: what the kernel's VFS does for configfs.
 *
 * Front ends (the HTTP server, replay, tests) never touch items directly:
 * they resolve paths and call cfs_mkdir(), cfs_write() and friends, which
 * run the checks of docs/configfs-rules.md in kernel order, call the
 * subsystems' callbacks, and return 0 or a negative errno. Every successful
 * mutation appends one change record to a transaction; a transaction either
 * stands or is undone through inverse operations in reverse order.
 */
#ifndef CONFIGFS_CFS_H
#define CONFIGFS_CFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <configfs/configfs.h>
#include <configfs/limits.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- allocation hook --------------------------------------------------- */

/**
 * Route every allocation core makes (and the compat kzalloc/kfree) through
 * these functions; tests point them at cmocka's test_malloc family so every
 * unit test is a leak test, and fail the Nth call for out-of-memory loops.
 * Pass NULLs to restore libc. Call only while nothing is allocated.
 */
CFS_EXPORT void cfs_set_alloc_funcs(void *(*malloc_fn)(size_t),
                                    void *(*realloc_fn)(void *, size_t),
                                    void (*free_fn)(void *));
CFS_EXPORT void *cfs_malloc(size_t size);
CFS_EXPORT void *cfs_zalloc(size_t size);
CFS_EXPORT void *cfs_realloc(void *ptr, size_t size);
CFS_EXPORT void cfs_free(void *ptr);
CFS_EXPORT char *cfs_strdup(const char *s);
CFS_EXPORT void *cfs_memdup(const void *p, size_t len);

/**
 * The capacity a growing array of @cap elements of @size bytes should take
 * to hold at least @need: twice @cap (@first when @cap is 0), or @need if
 * that is more. Checked: an element count or a byte size that does not fit
 * in size_t is -ENOMEM, as kmalloc_array() and calloc() answer.
 * @return 0 with *@ret_cap set, or -ENOMEM.
 */
CFS_EXPORT int cfs_grow_cap(
    size_t cap, size_t need, size_t first, size_t size, size_t *ret_cap);

/**
 * Make room for one more element in a growing array: when @n has reached
 * *@cap, reallocate the array through cfs_realloc() to cfs_grow_cap()'s
 * capacity. @arrp is the address of the array pointer (`&v`, v any object
 * pointer type). The array and *@cap change only on success; on failure
 * the old array stays valid and owned by the caller.
 * @return 0 or -ENOMEM.
 */
CFS_EXPORT int
cfs_grow(void *arrp, size_t *cap, size_t n, size_t size, size_t first);

/* ---- names ------------------------------------------------------------- */

/** Check one path component: 1..CFS_NAME_MAX bytes of valid UTF-8, no '/',
 *  no C0 control byte or DEL, not "." or "..".
 *  @return 0, -EINVAL or -ENAMETOOLONG. */
CFS_EXPORT int cfs_name_check(const char *name, size_t len);

/** @len bytes of well-formed UTF-8: no overlong forms, surrogates or code
 *  points past U+10FFFF (NUL bytes are well-formed). */
CFS_EXPORT bool cfs_utf8_valid(const char *s, size_t len);

/* ---- change records ---------------------------------------------------- */

enum cfs_op {
    CFS_OP_MKDIR = 1,
    CFS_OP_RMDIR,
    CFS_OP_STORE, /* text store or binary write */
    CFS_OP_SYMLINK,
    CFS_OP_UNLINK,
    CFS_OP_RENAME,
};

/** "mkdir", "rmdir", "store", "symlink", "unlink", "rename". */
CFS_EXPORT const char *cfs_op_name(enum cfs_op op);

/* One written attribute value, as kept for undo and export. */
struct cfs_value {
    char *name; /* attribute name */
    char *data; /* bytes, with a NUL after them */
    size_t len;
    bool binary;
    uint64_t revision; /* revision of the write */
};

struct cfs_change_private;

/*
 * One successful mutation. Everything is owned by the transaction that
 * produced it; strings are NUL-terminated.
 *   mkdir   path = new directory
 *   rmdir   path = removed directory; dropped = the values that had been
 *           written to it, in write order (undo replays them)
 *   store   path = attribute; arg = bytes stored; old = the previous written
 *           value (has_old) or, for the first store, what show() returned
 *   symlink path = link; arg = absolute target path
 *   unlink  path = link; arg = absolute target path it had
 *   rename  path = source; arg = destination
 */
struct cfs_change {
    enum cfs_op op;
    uint64_t revision;
    char *path;
    char *arg;
    size_t arg_len;
    char *old;
    size_t old_len;
    bool has_old;
    bool binary;     /* store: a binary attribute */
    bool write_only; /* store: the attribute cannot be read back (mode) */
    struct cfs_value *dropped;
    size_t n_dropped;
    struct cfs_change_private *priv;
};

/* ---- transactions ------------------------------------------------------ */

struct cfs_txn;

/**
 * Start a transaction: takes the tree's mutation lock, which serialises
 * every mutation and registration, until cfs_txn_seal() or the end.
 * Must not be called from inside a configfs callback (-EDEADLK).
 * Ownership: *ret_txn is new; end it with commit or abort.
 */
CFS_EXPORT int cfs_txn_begin(struct cfs_txn **ret_txn);

/**
 * Start a replay transaction (the store, at start-up or when a subsystem
 * registers): operations run through the same checks and callbacks, but
 * record nothing and take no revision; nodes are stamped with the revision
 * set by cfs_txn_set_stamp() (the one stored with them). Commit it at the
 * end; it cannot be aborted.
 */
CFS_EXPORT int cfs_txn_begin_replay(struct cfs_txn **ret_txn);

/** Replay: the revision the next operations stamp on the nodes they touch. */
CFS_EXPORT void cfs_txn_set_stamp(struct cfs_txn *txn, uint64_t revision);

/**
 * Replay: raise the revision of the directory at @path to the stamp, for a
 * change that left nothing to replay it by (a removal inside it, an
 * uncommit). Never lowers it; changes nothing else.
 * @return 0, -EINVAL (not a replay transaction), -ENOENT, -ENOTDIR.
 */
CFS_EXPORT int cfs_replay_touch(struct cfs_txn *txn, const char *path);

/** The change records so far, oldest first. Borrowed: valid until the
 *  transaction ends. */
CFS_EXPORT const struct cfs_change *cfs_txn_changes(const struct cfs_txn *txn,
                                                    size_t *ret_n);

/** The revision the transaction's changes carry; 0 while it has none. */
CFS_EXPORT uint64_t cfs_txn_revision(const struct cfs_txn *txn);

/**
 * Release the mutation lock but keep the records, so the caller can make
 * them durable while other writers go on (group commit). A sealed
 * transaction accepts no more operations. Sealed transactions that fail to
 * become durable must be aborted newest first.
 */
CFS_EXPORT void cfs_txn_seal(struct cfs_txn *txn);

/** Keep every change and free the transaction (NULL-safe). */
CFS_EXPORT void cfs_txn_commit(struct cfs_txn *txn);

/**
 * Undo every change, newest first, through the inverse operations (rmdir
 * for mkdir, a store of the old value for a store, mkdir plus the written
 * values for rmdir, ...) and the same callbacks, then free the transaction.
 * Revisions of the touched nodes are restored.
 * @return 0, or the first errno of an inverse step that failed (a callback
 * that now refuses); the remaining steps are still attempted.
 */
CFS_EXPORT int cfs_txn_abort(struct cfs_txn *txn);

/** The last revision handed out. */
CFS_EXPORT uint64_t cfs_revision(void);

/** Set the revision counter (the store, at start-up). */
CFS_EXPORT void cfs_revision_set(uint64_t revision);

/* ---- mutations -------------------------------------------------------------
 * Each takes @txn, or NULL for a transaction of its own that is committed at
 * once. Paths are absolute, '/'-separated, relative to the configfs root;
 * a trailing '/' is accepted. On error nothing changed and no record was
 * added. Errors are those of docs/configfs-rules.md for the operation; besides
 * them: -EINVAL / -ENAMETOOLONG for a bad name, -ENOMEM, -EDEADLK when
 * called from inside a callback.
 */

/** mkdir (MK1-MK14, C3-C5). */
CFS_EXPORT int cfs_mkdir(struct cfs_txn *txn, const char *path);

/** rmdir (RM1-RM13, C6, C10). */
CFS_EXPORT int cfs_rmdir(struct cfs_txn *txn, const char *path);

/**
 * Store @len bytes into a text attribute (WR1-WR8): one store() of the whole
 * value, raw; a short count calls store() again with the rest; a store that
 * consumes nothing fails -EIO. @len must be below CONFIGFS_PAGE_SIZE
 * (-EFBIG). Binary attributes get one write() of the whole buffer, whose
 * error is returned (BIN5), within cb_max_size (-EFBIG).
 */
CFS_EXPORT int
cfs_write(struct cfs_txn *txn, const char *path, const void *buf, size_t len);

/** symlink (SL1-SL10): @target is an absolute path to a directory. */
CFS_EXPORT int
cfs_symlink(struct cfs_txn *txn, const char *path, const char *target);

/** unlink (UL1-UL4). */
CFS_EXPORT int cfs_unlink(struct cfs_txn *txn, const char *path);

/** rename: commit (pending -> live) or uncommit (live -> pending) (C7, C8);
 *  anything else -EPERM (RN1). Renaming onto itself is a no-op. */
CFS_EXPORT int
cfs_rename(struct cfs_txn *txn, const char *from, const char *to);

/* ---- reads ------------------------------------------------------------- */

enum cfs_kind {
    CFS_KIND_ROOT = 1,
    CFS_KIND_SUBSYSTEM,
    CFS_KIND_GROUP,
    CFS_KIND_ITEM,
    CFS_KIND_ATTR,
    CFS_KIND_BIN_ATTR,
    CFS_KIND_LINK,
};

CFS_EXPORT const char *cfs_kind_name(enum cfs_kind kind);

/* What stat/readdir tell about one entry. Owned by the caller: release with
 * cfs_entry_done() / cfs_entries_free(). */
struct cfs_entry {
    char *name;
    enum cfs_kind kind;
    unsigned int mode;  /* attributes: permission bits; dirs 0755; links 0777 */
    bool readable;      /* attributes: a read bit and a show/read method */
    bool writable;      /* attributes: a write bit and a store/write method */
    bool default_group; /* a default, registered, pending or live group */
    bool user_created;  /* made by mkdir */
    bool committable;   /* a group with commit_item/uncommit_item */
    bool pending;       /* the pending/ group of a committable group */
    bool live;          /* the live/ group, or an item in it */
    int creates;        /* dirs: 0 none, CFS_KIND_ITEM or CFS_KIND_GROUP */
    uint64_t revision;  /* last change of this node (attributes: last store) */
    size_t max_size;    /* binary attributes: cb_max_size */
    char *target;       /* links: absolute target path */
    const char *type_name; /* dirs: ct_name or NULL; borrowed from the type,
                              which lives while its subsystem is registered */
    bool has_children;     /* dirs: holds a folder or a link (default groups
                              count), read under the same lock as the rest */
    /* The revision this node was made at (an attribute: its directory's),
     * put back when a removal is undone: with the path, which incarnation
     * of a name this is. An item removed and made again under the same
     * name has a new one (the mount's open files keep theirs, WR7). */
    uint64_t created;
};

CFS_EXPORT void cfs_entry_done(struct cfs_entry *entry);
CFS_EXPORT void cfs_entries_free(struct cfs_entry *entries, size_t n);

/** Describe the entry at @path (links are not followed). */
CFS_EXPORT int cfs_stat(const char *path, struct cfs_entry *ret_entry);

/**
 * List a directory: attributes in declaration order (text, then binary),
 * then default groups, children and links in creation order, oldest first.
 * @return 0, -ENOENT, -ENOTDIR. Ownership: *ret_entries is new.
 */
CFS_EXPORT int
cfs_readdir(const char *path, struct cfs_entry **ret_entries, size_t *ret_n);

/**
 * show() a text attribute (RD1-RD7) or read() a binary one (BIN3): the
 * whole value, NUL-terminated. -EACCES without a read bit or method,
 * -ENOENT once the item is gone (T3), -EIO for a show over 4096 bytes.
 * Ownership: *ret_buf is new (cfs_free()).
 */
CFS_EXPORT int cfs_show(const char *path, char **ret_buf, size_t *ret_len);

/** readlink: the target's absolute path, computed now (docs/DESIGN.md §8).
 *  Ownership: *ret_target is new. */
CFS_EXPORT int cfs_readlink(const char *path, char **ret_target);

/**
 * The values written to the attributes of the directory at @path, in write
 * order (the last write of each attribute counts). For export and replay.
 * Ownership: *ret_values is new; free with cfs_values_free().
 */
CFS_EXPORT int cfs_written_values(const char *path,
                                  struct cfs_value **ret_values,
                                  size_t *ret_n);
CFS_EXPORT void cfs_values_free(struct cfs_value *values, size_t n);

/**
 * The links that point at the directory at @path or at one of its default
 * groups: what holds it against rmdir (EBUSY, RM6), sorted by path. Links
 * are kept by target identity, so a moved (committed) item keeps them;
 * each target keeps the links to it, so this costs the links found (and
 * the node's default groups), not a walk of the tree.
 * @return 0, -ENOENT, -ENOTDIR, -ENOMEM. Ownership: *ret_paths is new;
 * free with cfs_paths_free().
 */
CFS_EXPORT int cfs_links_to(const char *path, char ***ret_paths, size_t *ret_n);
CFS_EXPORT void cfs_paths_free(char **paths, size_t n);

/**
 * How many configfs_depend_item() references hold the item at @path
 * against rmdir (EBUSY, RM5). Only a count: the API does not say who
 * took them, so neither can this.
 * @return 0, -ENOENT, -ENOTDIR. *ret_count is set on success.
 */
CFS_EXPORT int cfs_dependents(const char *path, unsigned long *ret_count);

/** Directories and links in the tree now (for monitoring). */
CFS_EXPORT uint64_t cfs_tree_nodes(void);

/** The absolute path of a live item. Ownership: *ret_path is new.
 *  @return 0 or -ENOENT if the item is not in the tree. */
CFS_EXPORT int cfs_item_path(struct config_item *item, char **ret_path);

/* ---- committed reads ----------------------------------------------------
 * A transaction changes the tree in place before it is committed (the store
 * commits it once durable, or once etcd's quorum took it) and is undone if
 * that fails. A reader that must answer only with committed state brackets
 * its reads: cfs_read_begin(), read (cfs_stat(), cfs_readdir(), cfs_show(),
 * cfs_readlink(), cfs_links_to(), cfs_written_values(), cfs_dependents(),
 * in the same thread: each notes what it reads), cfs_read_end(). What it
 * read is committed once every transaction that changed what it read and
 * began before the read ended is committed; it is whole if no other
 * thread changed what it read while it read, and nothing it read was
 * undone since. Transactions elsewhere in the tree neither hold nor tear
 * it (docs/DESIGN.md, "Committed reads").
 */
#define CFS_READ_MARK_MAX  48 /* stripes a mark names; more: the whole tree */
#define CFS_READ_MARK_SUBS 8  /* subtrees it remembers as read whole */
struct cfs_read_stripe {
    uint64_t seq, undone; /* when noted (undone: own undos added at end) */
    uint32_t idx;
    uint32_t own_seq, own_undone; /* its own thread's moves since */
};
struct cfs_read_mark {
    uint64_t ticket; /* set by the first cfs_read_end() */
    uint64_t world, world_undone;
    uint32_t own_world, own_world_undone;
    bool torn;       /* something it read changed, or was changing */
    bool whole;      /* it read more than it can name: the whole tree */
    bool whole_torn; /* the tree was changing as it began */
    bool ended;      /* cfs_read_end() was called */
    unsigned n, n_sub;
    uint64_t sub[CFS_READ_MARK_SUBS];
    struct cfs_read_stripe e[CFS_READ_MARK_MAX];
};

/** Before reading, in the thread that reads. */
CFS_EXPORT void cfs_read_begin(struct cfs_read_mark *mark);

/**
 * After reading (and again after waiting). @return 0: what was read is
 * committed, answer it; -EINPROGRESS: a transaction that changed it is
 * open, or is changing it now: wait (cfs_read_wait(), or until a hook is
 * called) and ask again; -EAGAIN: it was torn, or a transaction that
 * touched it was undone since the read began: read again from
 * cfs_read_begin(). The first call must be made in the thread that read.
 */
CFS_EXPORT int cfs_read_end(struct cfs_read_mark *mark);

/** cfs_read_end(), blocking while it would say -EINPROGRESS. */
CFS_EXPORT int cfs_read_wait(struct cfs_read_mark *mark);

/** The thread gives up its read without cfs_read_end() (nothing noted
 * after this). */
CFS_EXPORT void cfs_read_stop(void);

/**
 * Read under the mutation lock (between cfs_read_begin() and the first
 * cfs_read_end()): no transaction changes the tree meanwhile, so the read
 * cannot be torn; the way a read that was torn again and again completes.
 * Hold it briefly: writers wait.
 */
CFS_EXPORT void cfs_read_lock(void);
CFS_EXPORT void cfs_read_unlock(void);

/** Whether this thread holds the mutation lock (a transaction, a
 * registration, or cfs_read_lock()): for assertions and tests. */
CFS_EXPORT bool cfs_mutation_lock_held(void);

/**
 * Call @fn(@arg) whenever a transaction ends (committed or undone) or the
 * mutation lock is let go, from that thread, which may hold the mutation
 * lock: @fn must not
 * call the operation layer, only wake whoever waits (a server resumes the
 * reads whose answers it holds). At most 8 hooks. @return 0, -ENOSPC.
 */
CFS_EXPORT int cfs_read_hook_add(void (*fn)(void *arg), void *arg);
CFS_EXPORT void cfs_read_hook_remove(void (*fn)(void *arg), void *arg);

/* ---- tree observers ---------------------------------------------------- */

/*
 * Told when a subsystem appears or goes (the store replays stored state
 * into a subsystem that registers). Called with the mutation lock held and
 * no other; subsystem_registered gets a replay transaction (see
 * cfs_txn_begin_replay()) that core commits when the callback returns.
 */
struct cfs_observer {
    void (*subsystem_registered)(void *data,
                                 struct cfs_txn *txn,
                                 const char *name);
    void (*subsystem_unregistered)(void *data, const char *name);
    void *data;
};

/** Install (or, with NULL, remove) the observer. There is one. */
CFS_EXPORT void cfs_set_observer(const struct cfs_observer *observer);

/* ---- modules ----------------------------------------------------------- */

/**
 * Load a client module built against core/compat (configfsd --module):
 * dlopen it, run its module_init function (which registers its subsystems).
 * @return 0; -ENOENT / -ENOEXEC if it cannot be loaded or has no
 * module_init; the errno module_init returned.
 * Ownership: *ret_module is borrowed; it stays valid until unloaded.
 */
CFS_EXPORT int cfs_module_load(const char *path, struct module **ret_module);

/** Run module_exit and unload. -EBUSY while items of the module exist
 *  (M25). */
CFS_EXPORT int cfs_module_unload(struct module *module);

/** Shutdown: unload every module, newest first, whatever their counts
 *  (module_exit unregisters the subsystems, which removes their items). */
CFS_EXPORT void cfs_module_unload_all(void);

#ifdef __cplusplus
}
#endif

#endif /* CONFIGFS_CFS_H */
