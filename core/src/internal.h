/* SPDX-License-Identifier: MIT */
/*
 * internal.h - structures and helpers shared inside core/src only.
 *
 * The tree of cfs_dirent nodes is what users see (the kernel's dirents and
 * dentries in one); the config_item hierarchy is what subsystems see. Both
 * are kept in step by the files below (the kernel's split of fs/configfs):
 * mount.c (root, locks), dirent.c (children tables, attributes of a
 * directory), path.c, hierarchy.c (su_mutex), committable.c (pending/live),
 * dir.c (building and tearing down subtrees), mkdir.c, rmdir.c, rename.c,
 * register.c, depend.c, attr.c (the kernel's file.c), link.c (symlink.c),
 * item.c, txn.c, module.c. The lock order and what each lock protects are
 * at the top of mount.c and in docs/internals/locking.md.
 *
 * Everything declared here is private to the library and named cfs__...
 * (two underscores), the public API in core/include cfs_... (one), so a
 * call shows which side of the boundary it is on (docs/STYLE.md §2).
 */
#ifndef CFS_CORE_INTERNAL_H
#define CFS_CORE_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

/* ---- clang thread-safety annotations (no-ops elsewhere) ---------------- */
#if defined(__clang__)
#define CFS_CAPABILITY(x) __attribute__((capability(x)))
#define CFS_REQUIRES(...) __attribute__((requires_capability(__VA_ARGS__)))
#define CFS_ACQUIRE(...)  __attribute__((acquire_capability(__VA_ARGS__)))
#define CFS_RELEASE(...)  __attribute__((release_capability(__VA_ARGS__)))
#define CFS_NO_TSA        __attribute__((no_thread_safety_analysis))
#else
#define CFS_CAPABILITY(x)
#define CFS_REQUIRES(...)
#define CFS_ACQUIRE(...)
#define CFS_RELEASE(...)
#define CFS_NO_TSA
#endif

#define CFS_BUG_ON(cond)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            (void)fprintf(stderr,                                              \
                          "configfs: BUG at %s:%d: %s\n",                      \
                          __FILE__,                                            \
                          __LINE__,                                            \
                          #cond);                                              \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* ---- dirents ----------------------------------------------------------- */

enum cfs_dkind {
    CFS_D_DIR = 1,
    CFS_D_LINK,
};

/* Flags of a directory dirent. */
enum {
    CFS_DF_ROOT = 1u << 0,
    CFS_DF_SUBSYS = 1u << 1,
    CFS_DF_DEFAULT = 1u << 2, /* default, registered, pending or live */
    CFS_DF_USER = 1u << 3,    /* made by mkdir */
    CFS_DF_PENDING = 1u << 4,
    CFS_DF_LIVE = 1u << 5,
    CFS_DF_COMMITTABLE = 1u << 6,
    CFS_DF_REGISTERED = 1u << 7, /* configfs_register_group() */
    CFS_DF_GROUP = 1u << 8,      /* the item is a config_group */
};

/* Life states (T1). A dirent in the tree is READY or DROPPING; DEAD ones
 * are unlinked and wait for their last reference. */
enum cfs_dstate {
    CFS_S_READY = 1,
    CFS_S_DROPPING,
    CFS_S_DEAD,
};

/*
 * A fragment (T3): everything one mkdir or registration created shares one.
 * show/store take it "active"; rmdir marks it dead and waits until no
 * callback is active. Reference counted because readers hold it after the
 * tree lock is dropped.
 */
struct cfs_frag {
    atomic_int refs;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int active; /* lock */
    bool dead;  /* lock */
};

/* A value written to an attribute (last write of each attribute). */
struct cfs_wval {
    unsigned int idx; /* index in ct_attrs or ct_bin_attrs */
    bool bin;
    uint64_t seq;      /* write order, tree-wide */
    uint64_t revision; /* revision of that write */
    char *data;        /* len bytes + NUL */
    size_t len;
};

/*
 * A committable group G (C1) gets two default groups made by core: pending/
 * forwards mkdir, rmdir and links to G's operations with itself as the
 * group argument (C4); live/ has no group operations (C6). committable.c.
 */
struct cfs_commit_pair {
    struct config_group pending;
    struct config_group live;
    struct config_group *owner;
    struct config_item_type pending_type;
    struct config_item_type live_type;
    struct configfs_group_operations pending_gops;
    struct configfs_item_operations pending_iops;
    struct configfs_item_operations live_iops;
    atomic_int refs;
};

struct cfs_dirent {
    struct cfs_dirent *parent; /* NULL for the root */
    char *name;
    size_t name_len;
    uint32_t hash;
    uint8_t kind;  /* enum cfs_dkind */
    uint8_t state; /* enum cfs_dstate */
    uint16_t flags;

    /* Siblings in creation order, and the parent's hash chain. */
    struct cfs_dirent *prev, *next;
    struct cfs_dirent *hnext;

    uint64_t revision;    /* last change of this node */
    uint64_t created_rev; /* revision of its creation */

    /* CFS_D_LINK */
    struct cfs_dirent *target;
    /* the other links to the same target (its linked_by list) */
    struct cfs_dirent *lprev, *lnext;

    /* CFS_D_DIR */
    struct config_item *item; /* holds no reference: see hierarchy.c */
    struct cfs_frag *frag;
    struct cfs_dirent *first, *last;
    struct cfs_dirent **htab;
    size_t hcap, hcount;
    size_t nchildren;             /* user dirs and links (not default groups) */
    unsigned long links_to;       /* incoming symlinks (RM6) */
    struct cfs_dirent *linked_by; /* those links, newest first: used by */
    unsigned long dependents;     /* depend_item count (RM5) */
    uint8_t *hidden;              /* attrs hidden by is_visible, or NULL */
    struct cfs_wval *wvals;
    size_t n_wvals, cap_wvals;
    struct cfs_commit_pair *pair; /* committable groups: pending + live */
};

/* ---- global state (mount.c) -------------------------------------------- */

/* The mutation lock: serialises every mutation, transaction and
 * registration. Recursive for the thread that holds it, so callbacks may
 * register groups. */
struct cfs__wlock {
    pthread_mutex_t lock;
} CFS_CAPABILITY("mutex");

extern struct cfs__wlock cfs__wlock;
extern pthread_rwlock_t cfs__tree_lock;
extern struct cfs_dirent cfs__root;
extern struct config_group cfs__root_group;

void cfs__wlock_acquire(void) CFS_ACQUIRE(cfs__wlock);
void cfs__wlock_release(void) CFS_RELEASE(cfs__wlock);
bool cfs__wlock_held(void);

/* True while this thread runs a subsystem callback started by core. */
bool cfs__in_callback(void);
void cfs__callback_enter(void);
void cfs__callback_exit(void);

void cfs__tree_rdlock(void);
void cfs__tree_wrlock(void);
void cfs__tree_unlock(void);

/* ---- path resolution (path.c, dirent.c) -------------------------------- */

enum cfs_rkind {
    CFS_R_DIR = 1,
    CFS_R_LINK,
    CFS_R_ATTR,
    CFS_R_BIN_ATTR,
};

struct cfs_resolved {
    struct cfs_dirent
        *dir; /* the entry (dir or link), or the attribute's dir */
    enum cfs_rkind kind;
    unsigned int idx;     /* attributes */
    unsigned int follows; /* links followed on the way */
};

/* Resolve @path. Intermediate links are followed; the last component is
 * not. @pre the tree lock (read) or the mutation lock. */
int cfs__resolve(const char *path, struct cfs_resolved *ret);
int cfs__resolve_n(const char *path, size_t plen, struct cfs_resolved *ret);
/* What a read function reads (visible.c). */
enum cfs_read_what {
    CFS_READ_SELF, /* the node is there, under that path */
    CFS_READ_NODE, /* the node's own state (stat) */
    CFS_READ_TREE, /* the node and everything below it (a listing) */
    CFS_READ_SHOW, /* an attribute's value: its item (or its subsystem) */
};
/* cfs__resolve() for a read function: notes what it reads in this
 * thread's committed read (visible.c), found or not: a directory or link
 * as @what (CFS_READ_NODE or CFS_READ_TREE), an attribute's value
 * (@what CFS_READ_SHOW) or its stat (anything else). */
int cfs__read_resolve(const char *path,
                      struct cfs_resolved *ret,
                      enum cfs_read_what what);

/* Split @path into its parent (resolved) and last name.
 * @pre the mutation lock. */
int cfs__resolve_parent(const char *path,
                        struct cfs_dirent **ret_parent,
                        const char **ret_name,
                        size_t *ret_len);

struct cfs_dirent *
cfs__dir_lookup(struct cfs_dirent *dir, const char *name, size_t len);
/* Attribute index by name: 0 none, 1 text (idx set), 2 binary. */
int cfs__attr_lookup(struct cfs_dirent *dir,
                     const char *name,
                     size_t len,
                     unsigned int *ret_idx);
bool cfs__dirent_ready(const struct cfs_dirent *d);
int cfs__dirent_path(const struct cfs_dirent *d, char **ret_path);

/* Attributes of a type (0 for none), and whether is_visible hid one
 * (bit: text index, or text count + binary index). */
unsigned int cfs__n_attrs(const struct config_item_type *t);
unsigned int cfs__n_bin_attrs(const struct config_item_type *t);
bool cfs__attr_hidden(const struct cfs_dirent *d, unsigned int bit);

struct configfs_attribute *cfs__dir_attr(struct cfs_dirent *d, unsigned idx);
struct configfs_bin_attribute *cfs__dir_bin_attr(struct cfs_dirent *d,
                                                 unsigned idx);

/* The type of the item directory @d shows, or NULL. */
const struct config_item_type *cfs__dir_type(const struct cfs_dirent *d);

/* The group operations that apply in directory @d (pending/ forwards to
 * its committable group). committable.c. */
const struct configfs_group_operations *cfs__group_ops(struct cfs_dirent *d);
const struct configfs_item_operations *cfs__item_ops(struct cfs_dirent *d);
/* The operations that drop an item from @parent: the owner's for live/. */
const struct configfs_group_operations *
cfs__drop_ops(struct cfs_dirent *parent);
/* Whether a type is committable (C1), and a new pending/live pair for
 * @owner holding two references (one per group), or NULL. */
bool cfs__type_committable(const struct config_item_type *t);
struct cfs_commit_pair *cfs__pair_new(struct config_group *owner);

/* ---- children tables and dirents (dirent.c) ---------------------------- */

/* Make room for one more child of @dir, so the insert cannot fail.
 * @pre the mutation lock, not the tree lock. */
int cfs__child_reserve(struct cfs_dirent *dir);
/* Link @d as the newest child of @dir, or take it out. @pre
 * cfs__child_reserve(dir) succeeded (insert); tree lock exclusive, or
 * @dir not yet visible. */
void cfs__child_insert(struct cfs_dirent *dir, struct cfs_dirent *d);
void cfs__child_remove(struct cfs_dirent *dir, struct cfs_dirent *d);
/* Free the root's empty children table, so core ends holding nothing. */
void cfs__root_trim(void);

/* A new dirent, in no tree, with a copy of @name; NULL on ENOMEM. */
struct cfs_dirent *cfs__dirent_new(const char *name,
                                   size_t len,
                                   enum cfs_dkind kind,
                                   unsigned int flags);
/* Free @d and its subtree; items are the caller's business. */
void cfs__dirent_free_tree(struct cfs_dirent *d);
/* Items forget the dirents of a subtree that is going away. */
void cfs__dirent_unhook(struct cfs_dirent *d);
/* Set the state of the directories of a subtree. */
void cfs__dirent_set_state(struct cfs_dirent *d, enum cfs_dstate state);

/* ---- the client-visible hierarchy (hierarchy.c) ------------------------ */

/* Lock the su_mutex of @group's subsystem; returns what to unlock (NULL
 * for none), since unlinking may clear cg_subsys in between. */
pthread_mutex_t *cfs__su_lock(struct config_group *group);
void cfs__su_unlock(pthread_mutex_t *m);
/* Link @item (@group with its default groups and pending/live) under its
 * parent, or unlink it. @pre su_mutex of the subsystem. */
void cfs__link_obj(struct config_item *parent_item, struct config_item *item);
void cfs__unlink_obj(struct config_item *item);
void cfs__link_group(struct config_group *parent_group,
                     struct config_group *group);
void cfs__unlink_group(struct config_group *group);
/* Drop core's references on the pending/live groups in @group's subtree
 * (after cfs__unlink_group). */
void cfs__put_pairs(struct config_group *group);
/* disconnect_notify, unlink, drop_item (or a put), under su_mutex (MK11,
 * RM11). */
void cfs__drop_from_hierarchy(struct config_group *pgroup,
                              const struct configfs_group_operations *ops,
                              struct config_item *item,
                              bool is_group);

/* ---- subtrees (dir.c) -------------------------------------------------- */

/* Build the whole dirent subtree of @item, not yet linked into @parent
 * (MK9, C2); all or nothing. @pre the mutation lock; @item is linked
 * into the hierarchy. */
int cfs__build_dir(struct cfs_dirent *parent,
                   struct config_item *item,
                   const char *name,
                   unsigned int flags,
                   struct cfs_frag *frag,
                   uint64_t rev,
                   bool is_group,
                   struct cfs_dirent **ret);
/* Take @d out of the tree; callbacks in flight finish first (RM10, T3). */
void cfs__detach_dirent(struct cfs_dirent *d);
/* Take the user-made directory @d out of the tree and the hierarchy
 * (RM11): detach it, then disconnect_notify, unlink and drop_item with
 * @ops, free its dirents, unpin its module. @return its item with a
 * working reference, which the caller drops (release() usually runs then).
 * @pre the mutation lock; @d has no registered groups left inside. */
struct config_item *
cfs__remove_dir(struct cfs_dirent *d,
                const struct configfs_group_operations *ops);
/* Remove the registered groups inside a subtree about to go. */
void cfs__drop_registered(struct cfs_dirent *d);
/* Kernel-side removal of a subsystem or registered group (T7). */
void cfs__unregister_dir(struct cfs_dirent *d);

/* ---- fragments --------------------------------------------------------- */

struct cfs_frag *cfs__frag_new(void);
void cfs__frag_get(struct cfs_frag *frag);
void cfs__frag_put(struct cfs_frag *frag);
/* Enter an attribute callback: false if the fragment is dead. */
bool cfs__frag_enter(struct cfs_frag *frag);
void cfs__frag_exit(struct cfs_frag *frag);
/* Mark dead and wait for running callbacks to finish (RM10). */
void cfs__frag_kill(struct cfs_frag *frag);

/* ---- written values (attr.c) ------------------------------------------- */

struct cfs_wval *cfs__wval_find(struct cfs_dirent *d, unsigned idx, bool bin);
/* Make room for one more written value. @pre the mutation lock, not the
 * tree lock (the array is swapped under it). */
int cfs__wval_reserve(struct cfs_dirent *d);
/* Set a value; consumes @data (len bytes + NUL, from cfs_malloc).
 * @pre cfs__wval_reserve() succeeded; tree lock exclusive. */
void cfs__wval_set(struct cfs_dirent *d,
                   unsigned idx,
                   bool bin,
                   char *data,
                   size_t len,
                   uint64_t seq,
                   uint64_t revision);
void cfs__wval_remove(struct cfs_dirent *d, unsigned idx, bool bin);
void cfs__wvals_free(struct cfs_dirent *d);
/* Copy the written values in write order. */
int cfs__wvals_export(struct cfs_dirent *d,
                      struct cfs_value **ret_values,
                      size_t *ret_n);
/* The attribute's name for a written value. */
const char *cfs__wval_name(struct cfs_dirent *d, const struct cfs_wval *w);

/* ---- transactions (txn.c) ---------------------------------------------- */

/* visible.c: stripes of the tree's keys; stripes one transaction names
 * before it takes the whole tree. */
#define CFS_VIS_N       65536u
#define CFS_VIS_TXN_MAX 96

struct cfs_change_private {
    uint64_t rev_self;
    uint64_t created_self;
    uint64_t rev_parent;
    uint64_t rev_other;
    /* store: the written-value state before */
    char *before; /* rmdir, unlink: the next sibling's name, for order */
    struct cfs_dirent *link; /* unlink: the detached link, kept for undo */
    uint64_t *dg_revs; /* rmdir: (revision, created) of each default group,
                          pre-order, for undo */
    size_t n_dg_revs;
    bool had_wval;
    uint64_t old_seq;
    uint64_t old_wrev;
};

struct cfs_txn {
    struct cfs_change *changes;
    size_t n, cap;
    uint64_t revision;
    bool sealed;
    bool implicit; /* made by a mutation called with txn == NULL */
    bool undoing;  /* inverse operations: record nothing, stamp nothing */
    bool replay;   /* replay: record nothing, stamp @stamp */
    bool prepared; /* changes[n] holds a prepared record */
    uint64_t stamp;
    const char *insert_before; /* undoing an rmdir: keep sibling order */
    bool undo_raw_store;       /* undoing a store: leave written values be */
    uint64_t ticket;           /* visible.c: its place among open ones */
    struct cfs_txn *vprev, *vnext; /* visible.c: the open transactions */
    /* visible.c: the stripes it touched (odd while it holds the lock);
     * vis_big: more than that, the whole tree */
    uint32_t vis_idx[CFS_VIS_TXN_MAX];
    size_t vis_n;
    bool vis_big;
};

/* visible.c: a transaction begins (under the mutation lock) / ends,
 * committed or undone. */
void cfs__vis_open(struct cfs_txn *txn);
void cfs__vis_close(struct cfs_txn *txn);
/* visible.c: before an operation of @txn changes the node @name of
 * @parent (@name NULL: @parent itself), and the node at path @other too
 * (a link's target, a rename's destination) when not NULL. */
void cfs__vis_touch(struct cfs_txn *txn,
                    const struct cfs_dirent *parent,
                    const char *name,
                    const char *other);
void cfs__vis_touch_dirent(struct cfs_txn *txn, const struct cfs_dirent *d);
/* visible.c: @txn lets go of the mutation lock (sealed, committed, or
 * undone: @undone); it takes it again to be undone (retouch). */
void cfs__vis_release(struct cfs_txn *txn, bool undone);
void cfs__vis_retouch(struct cfs_txn *txn);
/* visible.c: a registration changes the tree outside any transaction. */
void cfs__vis_world_begin(void);
void cfs__vis_world_end(void);
/* visible.c: the mutation lock went (readers look again). */
void cfs__vis_unlocked(void);
/* visible.c: the stripe of a key, the key of a child (tests). A node's
 * keys: its subtree (anything at or below it), its self (it is there
 * under that name), its own state (its children, revision, written
 * values, linked_by). */
enum cfs_vis_key { CFS_VIS_SUB, CFS_VIS_SELF, CFS_VIS_OWN };
uint32_t cfs__vis_stripe(uint64_t key, enum cfs_vis_key kind);
uint64_t cfs__vis_key_child(uint64_t parent, const char *name, size_t len);
/* visible.c: what a read function reads, noted in this thread's read (if
 * any: cfs_read_begin()). */
/* Note the node @d, or its attribute @attr (not NULL). */
void cfs__read_note(const struct cfs_dirent *d,
                    const char *attr,
                    enum cfs_read_what what);
/* The self keys of a path as given (links on it; a name not found). */
void cfs__read_note_path(const char *path, size_t plen);

/* Begin/end an operation: takes the mutation lock and, for txn == NULL,
 * a private transaction. */
int cfs__op_begin(struct cfs_txn **txn) CFS_NO_TSA;
int cfs__op_end(struct cfs_txn *txn, int ret) CFS_NO_TSA;

/* The revision this transaction stamps on nodes (allocated on first use);
 * 0 while undoing (nothing is stamped). */
uint64_t cfs__txn_rev(struct cfs_txn *txn);
uint64_t cfs__next_seq(void);

/*
 * Recording is two-phase so that nothing can fail after an operation took
 * effect: prepare allocates the record (path = parent's path + "/" + name,
 * a copy of @arg) and room for it before any callback runs; push makes it
 * count; unprepare drops it. While undoing or replaying, prepare yields
 * NULL and push/unprepare do nothing.
 */
int cfs__txn_prepare(struct cfs_txn *txn,
                     enum cfs_op op,
                     struct cfs_dirent *parent,
                     const char *name,
                     const void *arg,
                     size_t arg_len,
                     struct cfs_change **ret_change);
void cfs__txn_push(struct cfs_txn *txn);
/* @parent's path + "/" + @name, new. */
char *cfs__join_path(struct cfs_dirent *parent, const char *name);
void cfs__txn_unprepare(struct cfs_txn *txn);

/* ---- operations without locking or recording (dir.c, attr.c, link.c) ---- */

int cfs__do_mkdir(struct cfs_txn *txn, const char *path);
int cfs__do_rmdir(struct cfs_txn *txn, const char *path);
int cfs__do_store(struct cfs_txn *txn,
                  const char *path,
                  const void *buf,
                  size_t len);
int cfs__do_symlink(struct cfs_txn *txn, const char *path, const char *target);
int cfs__do_unlink(struct cfs_txn *txn, const char *path);
int cfs__do_rename(struct cfs_txn *txn, const char *from, const char *to);

/* Call a text attribute's show into a fresh 4097-byte buffer.
 * @pre the item is referenced and its fragment entered. */
int cfs__call_show(struct config_item *item,
                   struct configfs_attribute *attr,
                   char **ret_buf,
                   size_t *ret_len);
int cfs__call_bin_read(struct config_item *item,
                       struct configfs_bin_attribute *attr,
                       char **ret_buf,
                       size_t *ret_len);

/* A link's place in its directory (dirent.c): reserve before allow_link,
 * insert/detach with the tree lock exclusive. */
int cfs__link_reserve(struct cfs_dirent *dir);
void cfs__link_insert(struct cfs_dirent *dir, struct cfs_dirent *link);
void cfs__link_detach(struct cfs_dirent *dir, struct cfs_dirent *link);

/* rmdir and its undo: the revisions of an item's default groups. */
int cfs__dg_revs_save(struct cfs_dirent *d, uint64_t **ret, size_t *ret_n);
void cfs__dg_revs_restore(struct cfs_dirent *d, uint64_t *revs, size_t n);

/* Undo: move the newest child @d of @parent back before the sibling
 * named @before. @pre tree lock exclusive. */
void cfs__child_move_before(struct cfs_dirent *parent,
                            struct cfs_dirent *d,
                            const char *before);

/* Point @link at @t / at nothing, kept in @t's linked_by list and
 * links_to count: the reverse index of links by target identity, so
 * that cfs_links_to() costs the links to the node, not a walk of the
 * tree. Tree lock held for writing. */
void cfs__link_attach(struct cfs_dirent *link, struct cfs_dirent *t);
void cfs__link_unattach(struct cfs_dirent *link);

/* Remove every link whose target is in the subtree of @d (unregister). */
void cfs__links_drop_into(struct cfs_dirent *d);
/* Remove a link dirent: unlink it from its directory and call drop_link.
 * cfs__link_remove() frees it; cfs__link_take() keeps it for undo. */
void cfs__link_remove(struct cfs_dirent *link);
void cfs__link_take(struct cfs_dirent *link);
void cfs__link_free(struct cfs_dirent *link);
/* Undo an unlink without allocating: allow_link, then put the kept link
 * back where it was. */
int cfs__link_restore(struct cfs_dirent *link,
                      const char *path,
                      const char *target,
                      const char *before);

/* Module pinning (M25). */
void cfs__module_get(struct module *mod);
void cfs__module_put(struct module *mod);

/* Observer (mount.c). */
extern struct cfs_observer cfs__observer_cb;
extern bool cfs__observer_set;

#endif /* CFS_CORE_INTERNAL_H */
