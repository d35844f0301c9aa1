/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the loaded form of a schema, shared inside declarative/src only.
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

enum sch_kind {
    SCH_STRING = 1,
    SCH_INT,
    SCH_UINT,
    SCH_BOOL,
    SCH_ENUM,
    SCH_IPV4,
    SCH_IPV6,
    SCH_MAC,
    SCH_UUID,
    SCH_HOSTNAME,
};

/* "string", "int", ... as written in schema files. */
const char *cfs_schema_kind_name(enum sch_kind kind);

struct sch_type;

struct sch_attr {
    struct configfs_attribute ca; /* ca_name = name; no show/store: the
                                     type's show_attribute does the work */
    struct sch_type *type;        /* owning type */
    unsigned int index;           /* in type->attrs */
    char *name;
    enum sch_kind kind;
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

struct sch_default_group {
    char *name;
    struct sch_type *type;
};

enum sch_make {
    SCH_MAKE_NONE = 0,
    SCH_MAKE_ITEM,
    SCH_MAKE_GROUP,
};

struct sch_type {
    struct config_item_type ct; /* ct_name = name; first, see type_of() */
    struct configfs_item_operations iops;
    struct configfs_group_operations gops;
    struct cfs_schema *schema;
    char *name;

    struct sch_attr *attrs;
    size_t n_attrs;
    struct configfs_attribute **ct_attrs; /* NULL-terminated, for ct */

    /* creates: mkdir in this group makes @creates */
    enum sch_make creates_kind;
    struct sch_type *creates;

    struct sch_default_group *dgroups;
    size_t n_dgroups;

    /* links: absent -> no allow_link (EPERM); else these target types */
    bool has_links;
    struct sch_type **allow;
    size_t n_allow;

    /* committable: mkdir in pending/ makes @commit_type */
    struct sch_type *commit_type;
    enum sch_make commit_kind;
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
    struct sch_type *root;
    struct sch_type *types;
    size_t n_types;
    struct sch_obj *root_obj; /* while registered */
};

/*
 * One object of the tree: the subsystem's root group, a default group, or
 * something mkdir made. Every object embeds a whole configfs_subsystem so
 * that the root can be one; the others use only its su_group.
 */
struct sch_obj {
    struct configfs_subsystem su;
    struct sch_type *type;
    /* The group whose max_children this object counts in (the creating
     * group; for pending/ and live/ the committable group); NULL for the
     * root and default groups. */
    struct sch_obj *counted_in;
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
int cfs_schema_value_check(const struct sch_attr *a,
                           const char *in,
                           size_t len,
                           char **ret_canon,
                           char *why,
                           size_t why_size);

/* ---- detail.c ---------------------------------------------------------- */

void cfs_schema_set_detail(const char *fmt, ...) CFS_PRINTF(1, 2);

/* ---- subsys.c ---------------------------------------------------------- */

/* Fill in the operations of every type (after loading). */
void cfs_schema_wire_types(struct cfs_schema *schema);

/* Drop a reference; the last frees the schema. */
void cfs_schema_put(struct cfs_schema *schema);

/* Free what load.c built (the last reference went). */
void cfs_schema_destroy(struct cfs_schema *schema);

/* ---- jpath.c ----------------------------------------------------------- */

/* A JSONPath being built while walking a document. */
struct sch_jpath {
    char buf[CFS_SCHEMA_ERROR_PATH_LEN];
    size_t len;
    bool cut; /* ran out of room */
};

void cfs_schema_jpath_init(struct sch_jpath *p);
/* Append ".key" or "[\"key\"]"; @return the length to go back to. */
size_t cfs_schema_jpath_key(struct sch_jpath *p, const char *key);
size_t cfs_schema_jpath_index(struct sch_jpath *p, size_t index);
void cfs_schema_jpath_pop(struct sch_jpath *p, size_t len);

/* The JSONPath of the member being parsed at byte @offset of a document
 * (for jansson's syntax errors, which only carry a position). */
void cfs_schema_jpath_at(const char *text,
                         size_t len,
                         size_t offset,
                         struct sch_jpath *p);

/* Copy with truncation marked by "...". */
void cfs_schema_strlcpy(char *dst, const char *src, size_t size);

#endif /* CFS_SCHEMA_INTERNAL_H */
