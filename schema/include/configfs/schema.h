/* SPDX-License-Identifier: MIT */
/*
 * schema.h - declarative subsystems: configfs subsystems described in JSON.
 *
 * A schema file (docs/DESIGN.md §5, docs/schemas.md) describes one
 * subsystem as item types: typed attributes validated in store(), what
 * mkdir creates where, default groups, which link targets allow_link
 * accepts, committable groups, child limits. This library loads and checks
 * such files and registers each as an ordinary configfs_subsystem through
 * the public C API of configfs/configfs.h: no special path through core.
 */
#ifndef CONFIGFS_SCHEMA_H
#define CONFIGFS_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <configfs/configfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ------------------------------------------------------------ */

/* Bytes in one schema file; a larger file is refused (-EFBIG). */
#define CFS_SCHEMA_FILE_MAX ((size_t)1024 * 1024)
/* Buffers of struct cfs_schema_error; longer text is cut with "...". */
#define CFS_SCHEMA_ERROR_FILE_LEN 1024
#define CFS_SCHEMA_ERROR_PATH_LEN 512
#define CFS_SCHEMA_ERROR_TEXT_LEN 512
/* Bytes of a store/commit/mkdir/link detail, NUL included. */
#define CFS_SCHEMA_DETAIL_LEN 1024

/* ---- load errors ------------------------------------------------------- */

/*
 * Why a schema could not be loaded or registered, in the spirit of
 * jansson's json_error_t. Filled by every function below that takes one,
 * on failure only (it is cleared on entry); a NULL pointer is accepted
 * where nobody wants the text.
 */
struct cfs_schema_error {
    /* The file (or directory) at fault, as given to the loader. */
    char file[CFS_SCHEMA_ERROR_FILE_LEN];
    /* JSONPath of the offending member: "$.types.lun.attributes.size.max";
     * keys that are not plain identifiers are bracketed:
     * "$.types[\"lun.0\"]". "$" is the whole document; empty for errors
     * that are not about the content (a file that cannot be read). */
    char path[CFS_SCHEMA_ERROR_PATH_LEN];
    /* What is wrong, in English: "must be at least min (10)". */
    char reason[CFS_SCHEMA_ERROR_TEXT_LEN];
    /* 1-based position of a JSON syntax error (duplicate keys included);
     * 0 for errors found after parsing. */
    int line;
    int column;
};

/**
 * Format @err as one line: "FILE:LINE:COLUMN: PATH: REASON" (line and
 * column only when known), the form start-up prints. Always NUL-terminates
 * @buf when @size > 0. @return @buf.
 */
CFS_EXPORT char *cfs_schema_error_format(const struct cfs_schema_error *err,
                                         char *buf,
                                         size_t size);

/* ---- one schema -------------------------------------------------------- */

struct cfs_schema;

/**
 * Parse and check one schema from memory. @file names it in errors (it is
 * copied; NULL reads "<buffer>"). Strict: unknown keys, duplicate keys,
 * wrong JSON types, undefined type names, name clashes, bad defaults and
 * bad patterns are all errors (docs/schemas.md lists every rule).
 * @return 0; -EINVAL for a bad schema (@err says where and why); -ENOMEM.
 * Ownership: *ret_schema is new; free it with cfs_schema_free().
 */
CFS_EXPORT int cfs_schema_load_buffer(const char *buf,
                                      size_t len,
                                      const char *file,
                                      struct cfs_schema **ret_schema,
                                      struct cfs_schema_error *err);

/**
 * Read @path and load it as cfs_schema_load_buffer() does.
 * @return as cfs_schema_load_buffer(); besides: -ENOENT, -EACCES, -EISDIR
 * and other errnos of open/read; -EFBIG over CFS_SCHEMA_FILE_MAX.
 */
CFS_EXPORT int cfs_schema_load_file(const char *path,
                                    struct cfs_schema **ret_schema,
                                    struct cfs_schema_error *err);

/**
 * Unregister @schema if it is registered, then drop the caller's
 * reference. Items a subsystem made keep the type descriptions alive until
 * their own last reference goes, so freeing is safe whenever the caller is
 * done. NULL-safe. Must not be called from inside a configfs callback.
 */
CFS_EXPORT void cfs_schema_free(struct cfs_schema *schema);

/** The subsystem name ("subsystem" in the file). Borrowed: valid while
 *  @schema is. */
CFS_EXPORT const char *cfs_schema_name(const struct cfs_schema *schema);

/** The file name given when loading. Borrowed: valid while @schema is. */
CFS_EXPORT const char *cfs_schema_file(const struct cfs_schema *schema);

/**
 * Register @schema as a configfs subsystem: its root group with its
 * attributes and default groups (recursively) appears under the configfs
 * root, and mkdir, store, symlink and rename inside it follow the schema.
 * Persistence's observer, if any, replays stored state into it here.
 * @return 0; -EBUSY if it is already registered; the errors of
 * configfs_register_subsystem() (-EEXIST for a taken name); -ENOMEM.
 * Must not be called from inside a configfs callback, nor concurrently
 * with another register, unregister or free of the same @schema.
 */
CFS_EXPORT int cfs_schema_register(struct cfs_schema *schema);

/** Remove the subsystem and everything users made in it (through the
 *  usual callbacks, T7). No-op when not registered. */
CFS_EXPORT void cfs_schema_unregister(struct cfs_schema *schema);

/** Whether @schema is registered now. */
CFS_EXPORT bool cfs_schema_registered(const struct cfs_schema *schema);

/**
 * Describe the subsystem's item types for clients (what
 * GET /api/v1/schema/{subsystem} serves): per type, its attributes as a
 * JSON Schema object (type, minimum, maximum, maxLength, pattern, enum,
 * format, default, readOnly, writeOnly), what mkdir creates, default
 * groups, allowed link target types, committable and max_children. The
 * shape is in docs/schemas.md.
 * @return 0 or -ENOMEM. Ownership: *ret_json is a new reference.
 */
CFS_EXPORT int cfs_schema_describe(const struct cfs_schema *schema,
                                   json_t **ret_json);

/* ---- a directory of schemas (--schema-dir) ----------------------------- */

struct cfs_schema_set;

/**
 * Load every "*.json" file of @dir (not those whose name starts with '.'),
 * in byte order of their names. Two files naming the same subsystem are an
 * error of the second. All or nothing: the first bad file stops loading.
 * An empty directory gives an empty set.
 * @return 0; the errors of cfs_schema_load_file() for the bad file; the
 * errors of opendir (-ENOENT, -ENOTDIR, -EACCES) with @err->file = @dir.
 * Ownership: *ret_set is new; free it with cfs_schema_set_free().
 */
CFS_EXPORT int cfs_schema_load_dir(const char *dir,
                                   struct cfs_schema_set **ret_set,
                                   struct cfs_schema_error *err);

/** Number of schemas in @set. */
CFS_EXPORT size_t cfs_schema_set_count(const struct cfs_schema_set *set);

/** The @i-th schema (file name order), or NULL. Borrowed. */
CFS_EXPORT struct cfs_schema *
cfs_schema_set_get(const struct cfs_schema_set *set, size_t i);

/** The schema of subsystem @name, or NULL. Borrowed. */
CFS_EXPORT struct cfs_schema *
cfs_schema_set_find(const struct cfs_schema_set *set, const char *name);

/**
 * Register every schema of @set, in order; all or nothing (those already
 * registered by this call are unregistered again on failure).
 * @return 0 or the first error of cfs_schema_register(); @err names the
 * file, path "$.subsystem" and the reason.
 */
CFS_EXPORT int cfs_schema_set_register(struct cfs_schema_set *set,
                                       struct cfs_schema_error *err);

/** Unregister every registered schema of @set, newest first. */
CFS_EXPORT void cfs_schema_set_unregister(struct cfs_schema_set *set);

/** Unregister and free every schema, then the set. NULL-safe. */
CFS_EXPORT void cfs_schema_set_free(struct cfs_schema_set *set);

/* ---- why a callback refused -------------------------------------------- */

/**
 * The human explanation of the last refusal by a schema callback on the
 * calling thread: a store that failed validation ("size: at most 65535",
 * "device: must match ^/dev/"), a commit with unset attributes ("required
 * before commit: target, device"), a mkdir beyond max_children ("at most
 * 16 children"), a link to a type not allowed ("links in lun may point
 * only at: device"). Callbacks run on the thread that called cfs_write(),
 * cfs_mkdir(), cfs_symlink() or cfs_rename(), so after such a call fails
 * the caller reads the reason here (the server puts it in the problem
 * "detail"). Every schema callback clears it when it starts, so a failure
 * that did not come from a schema callback (a bad path, a mode refused by
 * core) leaves "" if the caller cleared it first with
 * cfs_schema_clear_detail().
 * @return "" when there is none. Borrowed: thread-local, valid until the
 * next operation on this thread.
 */
CFS_EXPORT const char *cfs_schema_last_detail(void);

/** Forget the detail of the calling thread. */
CFS_EXPORT void cfs_schema_clear_detail(void);

#ifdef __cplusplus
}
#endif

#endif /* CONFIGFS_SCHEMA_H */
