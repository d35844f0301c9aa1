/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the loaded form of a schema, shared inside schema/src only.
 *
 * load.c turns a JSON document into a struct cfs_schema of types and
 * attributes; value.c validates values against an attribute; subsys.c
 * builds config_items from the types and answers core's callbacks;
 * describe.c renders the types as JSON Schema.
 */
#ifndef CFS_SCHEMA_INTERNAL_H
#define CFS_SCHEMA_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>
#include <configfs/schema.h>

enum schema_kind {
    SCHEMA_STRING = 1,
    SCHEMA_INT,
    SCHEMA_UINT,
    SCHEMA_BOOL,
    SCHEMA_ENUM,
    SCHEMA_IPV4,
    SCHEMA_IPV6,
    SCHEMA_MAC,
    SCHEMA_UUID,
    SCHEMA_HOSTNAME,
};

/* "string", "int", ... as written in schema files. */
const char *schema_kind_name(enum schema_kind kind);

struct schema_type;

struct schema_attr {
    struct configfs_attribute ca; /* ca_name = name; no show/store: the
                                     type's show_attribute does the work */
    struct schema_type *type;     /* owning type */
    unsigned int index;           /* in type->attrs */
    char *name;
    enum schema_kind kind;
    unsigned int mode;
    char *def; /* canonical default, NULL when none */
    /* string */
    bool has_max_length;
    size_t max_length;
    char *pattern;
    regex_t re;
    bool has_re;
    /* int, uint: bounds as given (uint bounds are non-negative) */
    bool has_min, has_max;
    int64_t min, max;
    bool display_hex; /* "display": "hex": a hint for forms, not a rule */
    /* "format": how the value is kept and shown, one printf conversion
     * as the kernel's show() prints it ("0x%04x"); format NULL: decimal.
     * Parsed: zero padding, the conversion (d, u, x or X), the width, the
     * text before and after. */
    bool fmt_zero;
    char fmt_conv;
    int fmt_width;
    char *format;
    char *fmt_pre, *fmt_post;
    /* enum */
    char **values;
    size_t n_values;
};

struct schema_default_group {
    char *name;
    struct schema_type *type;
};

enum schema_make {
    SCHEMA_MAKE_NONE = 0,
    SCHEMA_MAKE_ITEM,
    SCHEMA_MAKE_GROUP,
};

struct schema_type {
    struct config_item_type ct; /* ct_name = name; first, see type_of() */
    struct configfs_item_operations iops;
    struct configfs_group_operations gops;
    struct cfs_schema *schema;
    char *name;

    struct schema_attr *attrs;
    size_t n_attrs;
    struct configfs_attribute **ct_attrs; /* NULL-terminated, for ct */

    /* creates: mkdir in this group makes @creates */
    enum schema_make creates_kind;
    struct schema_type *creates;

    struct schema_default_group *dgroups;
    size_t n_dgroups;

    /* links: absent -> no allow_link (EPERM); else these target types */
    bool has_links;
    struct schema_type **allow;
    size_t n_allow;

    /* committable: mkdir in pending/ makes @commit_type */
    struct schema_type *commit_type;
    enum schema_make commit_kind;
    unsigned int *required; /* indices into commit_type->attrs */
    size_t n_required;

    bool has_max_children;
    uint64_t max_children;

    /* "name": the names of objects of this type (mkdir checks the
     * pattern; the examples are for forms) */
    char *name_pattern;
    char **name_examples;
    size_t n_name_examples;
    regex_t name_re;

    /* "summary": a one-line template of an object of this type for
     * listings ("{attr}" its values, "{@links}" its links' targets);
     * checked at load, served as is */
    char *summary;

    int visit;        /* load time: default-group cycle check */
    bool has_name_re; /* name_re is compiled */
};

struct cfs_schema {
    atomic_long refs; /* the owner's + one per live object */
    char *file;
    char *subsystem;
    char *description;
    struct schema_type *root;
    struct schema_type *types;
    size_t n_types;
    struct schema_obj *root_obj; /* while registered */
};

/*
 * One object of the tree: the subsystem's root group, a default group, or
 * something mkdir made. Every object embeds a whole configfs_subsystem so
 * that the root can be one; the others use only its su_group.
 */
struct schema_obj {
    struct configfs_subsystem su;
    struct schema_type *type;
    /* The group whose max_children this object counts in (the creating
     * group; for pending/ and live/ the committable group); NULL for the
     * root and default groups. */
    struct schema_obj *counted_in;
    uint64_t nchildren;    /* su_mutex: objects counted in this one */
    bool live;             /* committed; changed under the mutation lock */
    pthread_mutex_t vlock; /* values: stores run under the mutation lock,
                              shows under no core lock */
    char **values;         /* per attribute, NUL-terminated */
    size_t *lens;
};

/* ---- value.c ----------------------------------------------------------- */

/*
 * Check @len bytes of @in against @a (no newline stripping here) and
 * produce the value as show() will print it (without the newline).
 * @return 0; -EINVAL or -ERANGE with a reason in @why (without the
 * attribute name); -ENOMEM. Ownership: *ret_canon is new (cfs_free()).
 */
int schema_value_check(const struct schema_attr *a,
                       const char *in,
                       size_t len,
                       char **ret_canon,
                       char *why,
                       size_t why_size);

/*
 * The number @s (NUL-terminated) holds, read as a store of kind int or
 * uint of @a reads it (docs/schemas.md, "format": the shown form first).
 * *@ret_s is the value for kind int, *@ret_u for uint; both written only
 * on success. @return 0, -EINVAL or -ERANGE.
 */
int schema_value_int(const struct schema_attr *a,
                     const char *s,
                     int64_t *ret_s,
                     uint64_t *ret_u);

/* ---- detail.c ---------------------------------------------------------- */

void schema_set_detail(const char *fmt, ...) CFS_PRINTF(1, 2);

/* ---- subsys.c ---------------------------------------------------------- */

/* Fill in the operations of every type (after loading). */
void schema_wire_types(struct cfs_schema *schema);

/* Drop a reference; the last frees the schema. */
void schema_put(struct cfs_schema *schema);

/* Free what load.c built (the last reference went). */
void schema_destroy(struct cfs_schema *schema);

/* ---- jpath.c ----------------------------------------------------------- */

/* A JSONPath being built while walking a document. */
struct schema_jpath {
    char buf[CFS_SCHEMA_ERROR_PATH_LEN];
    size_t len;
    bool cut; /* ran out of room */
};

void schema_jpath_init(struct schema_jpath *p);
/* Append ".key" or "[\"key\"]"; @return the length to go back to. */
size_t schema_jpath_key(struct schema_jpath *p, const char *key);
size_t schema_jpath_index(struct schema_jpath *p, size_t index);
void schema_jpath_pop(struct schema_jpath *p, size_t len);

/* The JSONPath of the member being parsed at byte @offset of a document
 * (for jansson's syntax errors, which only carry a position). */
void schema_jpath_at(const char *text,
                     size_t len,
                     size_t offset,
                     struct schema_jpath *p);

/* Copy with truncation marked by "...". */
void schema_strlcpy(char *dst, const char *src, size_t size);

#endif /* CFS_SCHEMA_INTERNAL_H */
