/* SPDX-License-Identifier: MIT */
/*
 * configfs.h - the configfs object model's C API, with the kernel's names.
 *
 * A subsystem author embeds config_item / config_group in their own structs,
 * describes them with config_item_type, and registers a configfs_subsystem.
 * Users then create and configure objects through the operation layer
 * (configfs/cfs.h), which calls back into the subsystem exactly where the
 * kernel's configfs would. Behaviour follows docs/configfs-rules.md; locking
 * and reference ownership are written down in docs/internals/locking.md.
 */
#ifndef CONFIGFS_CONFIGFS_H
#define CONFIGFS_CONFIGFS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <configfs/list.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CFS_EXPORT       __attribute__((visibility("default")))
#define CFS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define CFS_WARN_UNUSED  __attribute__((warn_unused_result))
#else
#define CFS_EXPORT
#define CFS_PRINTF(a, b)
#define CFS_WARN_UNUSED
#endif

/* Inline storage for short names; longer names live on the heap (M2). A
 * statically declared subsystem names itself in ci_namebuf, so this is also
 * the longest such name + 1: 32, as the committable-items series proposed
 * (the kernel's 20 cannot hold "04-committable-children"). */
#define CONFIGFS_ITEM_NAME_LEN 32

/* ---- kernel-only pieces, in user space --------------------------------- */

/* kref: an atomic reference count. */
struct kref {
    atomic_int refcount;
};

/* struct mutex: a pthread mutex. Zero-initialised storage is a valid,
 * unlocked mutex on glibc (PTHREAD_MUTEX_INITIALIZER is all zeroes), so a
 * statically declared subsystem works before mutex_init() runs. */
struct mutex {
    pthread_mutex_t lock;
};

/*
 * struct module: a loaded client module (configfsd --module X.so), or NULL
 * for code linked into the program. ct_owner and ca_owner point here; every
 * item made by mkdir holds a reference on its type's module (M25), and the
 * loader refuses to unload a module while that count is non-zero.
 */
struct module {
    const char *name; /* set by the loader */
    atomic_long refcnt;
    void *cfs_private; /* loader bookkeeping */
};

#ifndef THIS_MODULE
#define THIS_MODULE ((struct module *)0)
#endif

/* ERR_PTR: make_item/make_group return a pointer, NULL, or ERR_PTR(-errno). */
#define CFS_MAX_ERRNO 4095
static inline void *ERR_PTR(long error)
{
    return (void *)error;
}
static inline long PTR_ERR(const void *ptr)
{
    return (long)ptr;
}
static inline bool IS_ERR(const void *ptr)
{
    return (uintptr_t)ptr >= (uintptr_t)-CFS_MAX_ERRNO;
}
static inline bool IS_ERR_OR_NULL(const void *ptr)
{
    return !ptr || IS_ERR(ptr);
}

/* ---- the object model -------------------------------------------------- */

struct config_item;
struct config_group;
struct configfs_subsystem;
struct configfs_attribute;
struct configfs_bin_attribute;
struct cfs_dirent;      /* core-internal: the node that shows an item */
struct cfs_commit_pair; /* core-internal: a committable group's pending/live */

struct config_item {
    char *ci_name;
    char ci_namebuf[CONFIGFS_ITEM_NAME_LEN];
    struct kref ci_kref;
    struct list_head ci_entry; /* on ci_group->cg_children; su_mutex */
    struct config_item *ci_parent;
    struct config_group *ci_group;
    const struct config_item_type *ci_type;
    struct cfs_dirent *ci_dentry; /* private to core; tree lock */
};

/*
 * The seed (2005) kept default groups in a NULL-terminated array named
 * default_groups; today's kernel keeps a list of the same name. Both work:
 * a client written against the seed defines CONFIGFS_SEED_API before it
 * includes this header and gets the array under the old name. The layout is
 * the same either way.
 */
#ifdef CONFIGFS_SEED_API
#define CFS_DEFAULT_GROUPS_LIST  cg_default_list
#define CFS_DEFAULT_GROUPS_ARRAY default_groups
#else
#define CFS_DEFAULT_GROUPS_LIST  default_groups
#define CFS_DEFAULT_GROUPS_ARRAY cg_default_groups_array
#endif

struct config_group {
    struct config_item cg_item;
    struct list_head cg_children; /* su_mutex */
    struct configfs_subsystem *cg_subsys;
    struct list_head CFS_DEFAULT_GROUPS_LIST; /* of group_entry */
    struct list_head group_entry;
    struct config_group **CFS_DEFAULT_GROUPS_ARRAY; /* NULL-terminated */
    struct cfs_commit_pair *cg_cfs_pair; /* private: pending/ and live/ */
};

struct configfs_item_operations {
    /* Runs when the last reference goes, never under a core lock. */
    void (*release)(struct config_item *item);
    /* The seed's per-type attribute methods, used for an attribute that
     * has no show/store of its own. */
    ssize_t (*show_attribute)(struct config_item *item,
                              struct configfs_attribute *attr,
                              char *page);
    ssize_t (*store_attribute)(struct config_item *item,
                               struct configfs_attribute *attr,
                               const char *page,
                               size_t count);
    int (*allow_link)(struct config_item *src, struct config_item *target);
    void (*drop_link)(struct config_item *src, struct config_item *target);
};

struct configfs_group_operations {
    struct config_item *(*make_item)(struct config_group *group,
                                     const char *name);
    struct config_group *(*make_group)(struct config_group *group,
                                       const char *name);
    /* Committable groups (rules C1-C12): both must be set. */
    int (*commit_item)(struct config_item *item);
    int (*uncommit_item)(struct config_item *item);
    void (*disconnect_notify)(struct config_group *group,
                              struct config_item *item);
    void (*drop_item)(struct config_group *group, struct config_item *item);
    bool (*is_visible)(struct config_item *item,
                       struct configfs_attribute *attr,
                       int n);
    bool (*is_bin_visible)(struct config_item *item,
                           struct configfs_bin_attribute *attr,
                           int n);
};

struct config_item_type {
    struct module *ct_owner;
    const struct configfs_item_operations *ct_item_ops;
    const struct configfs_group_operations *ct_group_ops;
    struct configfs_attribute **ct_attrs;         /* NULL-terminated */
    struct configfs_bin_attribute **ct_bin_attrs; /* NULL-terminated */
    /* configfsd extension: the type's name as shown to clients ("type" in
     * the node JSON). Optional; kernel clients leave it NULL. */
    const char *ct_name;
};

struct configfs_attribute {
    const char *ca_name;
    struct module *ca_owner;
    unsigned short ca_mode;
    ssize_t (*show)(struct config_item *item, char *page);
    ssize_t (*store)(struct config_item *item, const char *page, size_t count);
};

struct configfs_bin_attribute {
    struct configfs_attribute cb_attr;
    void *cb_private;
    size_t cb_max_size; /* 0: no limit but memory */
    ssize_t (*read)(struct config_item *item, void *buf, size_t size);
    ssize_t (*write)(struct config_item *item, const void *buf, size_t size);
};

struct configfs_subsystem {
    struct config_group su_group;
    struct mutex su_mutex;
    /* configfsd: every show() of an item's attribute reads only that
     * item's state, so a committed read of it waits only for changes to
     * that item (false: show() may read any of the module's state, and a
     * read waits for changes anywhere in the subsystem). */
    bool su_show_item_local;
};

/* Size of the show() page and the store() limit (SIMPLE_ATTR_SIZE). */
#define CONFIGFS_PAGE_SIZE 4096

/* ---- attribute macros (the kernel's, with numeric modes) --------------- */

#define CFS_STRINGIFY_(x) #x
#define CFS_STRINGIFY(x)  CFS_STRINGIFY_(x)

#define CONFIGFS_ATTR(_pfx, _name)                                             \
    static struct configfs_attribute _pfx##attr_##_name = {                    \
        .ca_name = CFS_STRINGIFY(_name),                                       \
        .ca_mode = 0644,                                                       \
        .ca_owner = THIS_MODULE,                                               \
        .show = _pfx##_name##_show,                                            \
        .store = _pfx##_name##_store,                                          \
    }

#define CONFIGFS_ATTR_RO(_pfx, _name)                                          \
    static struct configfs_attribute _pfx##attr_##_name = {                    \
        .ca_name = CFS_STRINGIFY(_name),                                       \
        .ca_mode = 0444,                                                       \
        .ca_owner = THIS_MODULE,                                               \
        .show = _pfx##_name##_show,                                            \
    }

#define CONFIGFS_ATTR_WO(_pfx, _name)                                          \
    static struct configfs_attribute _pfx##attr_##_name = {                    \
        .ca_name = CFS_STRINGIFY(_name),                                       \
        .ca_mode = 0200,                                                       \
        .ca_owner = THIS_MODULE,                                               \
        .store = _pfx##_name##_store,                                          \
    }

#define CONFIGFS_BIN_ATTR(_pfx, _name, _priv, _maxsz)                          \
    static struct configfs_bin_attribute _pfx##attr_##_name = {                \
        .cb_attr =                                                             \
            {                                                                  \
                .ca_name = CFS_STRINGIFY(_name),                               \
                .ca_mode = 0644,                                               \
                .ca_owner = THIS_MODULE,                                       \
            },                                                                 \
        .cb_private = _priv,                                                   \
        .cb_max_size = _maxsz,                                                 \
        .read = _pfx##_name##_read,                                            \
        .write = _pfx##_name##_write,                                          \
    }

#define CONFIGFS_BIN_ATTR_RO(_pfx, _name, _priv, _maxsz)                       \
    static struct configfs_bin_attribute _pfx##attr_##_name = {                \
        .cb_attr =                                                             \
            {                                                                  \
                .ca_name = CFS_STRINGIFY(_name),                               \
                .ca_mode = 0444,                                               \
                .ca_owner = THIS_MODULE,                                       \
            },                                                                 \
        .cb_private = _priv,                                                   \
        .cb_max_size = _maxsz,                                                 \
        .read = _pfx##_name##_read,                                            \
    }

#define CONFIGFS_BIN_ATTR_WO(_pfx, _name, _priv, _maxsz)                       \
    static struct configfs_bin_attribute _pfx##attr_##_name = {                \
        .cb_attr =                                                             \
            {                                                                  \
                .ca_name = CFS_STRINGIFY(_name),                               \
                .ca_mode = 0200,                                               \
                .ca_owner = THIS_MODULE,                                       \
            },                                                                 \
        .cb_private = _priv,                                                   \
        .cb_max_size = _maxsz,                                                 \
        .write = _pfx##_name##_write,                                          \
    }

/* ---- items and groups -------------------------------------------------- */

/** Reset the reference count to 1 and the child-list entry. Keeps ci_name,
 *  ci_namebuf and ci_type, so a statically initialised item stays named. */
CFS_EXPORT void config_item_init(struct config_item *item);

/** Name and type an item; the count becomes 1 (the caller's reference).
 *  The name is copied. On allocation failure the name stays NULL and
 *  mkdir/registration fail with ENOMEM. */
CFS_EXPORT void config_item_init_type_name(struct config_item *item,
                                           const char *name,
                                           const struct config_item_type *type);

/** config_item_init() plus empty child and default-group lists; keeps a
 *  statically set name and type. */
CFS_EXPORT void config_group_init(struct config_group *group);

CFS_EXPORT void
config_group_init_type_name(struct config_group *group,
                            const char *name,
                            const struct config_item_type *type);

/** Set the name from a format. @return 0 or -ENOMEM (M2, H15). */
CFS_EXPORT int config_item_set_name(struct config_item *item,
                                    const char *fmt,
                                    ...) CFS_PRINTF(2, 3);

static inline char *config_item_name(struct config_item *item)
{
    return item->ci_name;
}

/** @return @item with one more reference (NULL-safe). */
CFS_EXPORT struct config_item *config_item_get(struct config_item *item);

/** @return @item with one more reference, or NULL if its count already
 *  reached zero (release is running or ran). */
CFS_EXPORT struct config_item *
config_item_get_unless_zero(struct config_item *item);

/** Drop a reference; the last one frees a heap name, runs release() and
 *  then drops the references on ci_group/ci_parent if still set (M19).
 *  A put on a zero count is a bug: it aborts. NULL-safe. */
CFS_EXPORT void config_item_put(struct config_item *item);

static inline struct config_group *to_config_group(struct config_item *item)
{
    return item ? container_of(item, struct config_group, cg_item) : NULL;
}

static inline struct config_group *config_group_get(struct config_group *group)
{
    return group ? to_config_group(config_item_get(&group->cg_item)) : NULL;
}

static inline void config_group_put(struct config_group *group)
{
    if (group) {
        config_item_put(&group->cg_item);
    }
}

/** Find a child by ci_name. @pre the subsystem's su_mutex is held (M21).
 *  @return a new reference, or NULL. */
CFS_EXPORT struct config_item *config_group_find_item(struct config_group *,
                                                      const char *name);

static inline void configfs_add_default_group(struct config_group *new_group,
                                              struct config_group *group)
{
    list_add_tail(&new_group->group_entry, &group->CFS_DEFAULT_GROUPS_LIST);
}

/** Drop the client's reference on every default group of @group (M14). */
CFS_EXPORT void configfs_remove_default_groups(struct config_group *group);

static inline struct configfs_subsystem *
to_configfs_subsystem(struct config_group *group)
{
    return group ? container_of(group, struct configfs_subsystem, su_group)
                 : NULL;
}

/* ---- registration ------------------------------------------------------ */

/**
 * Register a subsystem: it appears under the root with its attributes and
 * default groups. Sets ci_name to ci_namebuf if it is unset (a statically
 * declared subsystem).
 * @return 0; -EEXIST for a taken name; -EINVAL for a missing type or bad
 * name; -EEXIST for a default group named like an attribute; -ENOMEM.
 */
CFS_EXPORT int configfs_register_subsystem(struct configfs_subsystem *subsys);

/**
 * Remove a subsystem and everything under it. Never fails (T7). Items users
 * made are removed bottom-up through the usual callbacks (links first, with
 * drop_link; then disconnect_notify and drop_item), and links from other
 * subsystems into it are removed. No change records are produced: stored
 * state of the subsystem is kept for a later registration.
 */
CFS_EXPORT void
configfs_unregister_subsystem(struct configfs_subsystem *subsys);

/** Add @group under the live group @parent_group at run time (M15); it is a
 *  default group: users cannot rmdir it. @return 0 or negative errno. */
CFS_EXPORT int configfs_register_group(struct config_group *parent_group,
                                       struct config_group *group);
CFS_EXPORT void configfs_unregister_group(struct config_group *group);

/** Allocate, initialise and register a default group (M15).
 *  @return the group or ERR_PTR(-errno). */
CFS_EXPORT struct config_group *
configfs_register_default_group(struct config_group *parent_group,
                                const char *name,
                                const struct config_item_type *item_type);
CFS_EXPORT void configfs_unregister_default_group(struct config_group *group);

/* ---- dependencies (M16, M17) ------------------------------------------- */

/** Pin @target: rmdir of it fails EBUSY until configfs_undepend_item().
 *  @return 0; -ENOENT if @subsys is not registered, @target is not in its
 *  tree, or is being created or removed. */
CFS_EXPORT int configfs_depend_item(struct configfs_subsystem *subsys,
                                    struct config_item *target);
CFS_EXPORT void configfs_undepend_item(struct config_item *target);

/** The variant for use inside callbacks (a store, for instance).
 *  @return as configfs_depend_item(); -EINVAL for the root. */
CFS_EXPORT int
configfs_depend_item_unlocked(struct configfs_subsystem *caller_subsys,
                              struct config_item *target);

#ifdef __cplusplus
}
#endif

#endif /* CONFIGFS_CONFIGFS_H */
