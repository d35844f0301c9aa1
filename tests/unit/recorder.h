/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - a configurable fake configfs client that records callbacks.
 *
 * Tests describe item types (what mkdir makes, attributes, default groups,
 * which callbacks exist, which failures to inject), register subsystems of
 * those types, drive core through the operation layer (cfs.h), and assert
 * on the trace: every callback appends one entry such as
 * "make_group(sub,x)", "drop_item(sub,x)" or "release(x)", together with
 * whether the subsystem's su_mutex was held and whether the item was still
 * linked (ci_parent set) at that moment. The fixture also points core's
 * allocator at cmocka's, so every test is a leak test, and can fail the Nth
 * allocation for out-of-memory loops.
 *
 * Callbacks never assert (an assertion longjmps, which must not happen while
 * core holds its locks); they only record. Everything here is for one test
 * at a time: rec_setup() resets it, rec_teardown() unregisters what is left.
 */
#ifndef CFS_TESTS_RECORDER_H
#define CFS_TESTS_RECORDER_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#define REC_MAX_ATTRS    8
#define REC_MAX_BINS     4
#define REC_MAX_DEFAULTS 4
#define REC_MAX_TYPES    24
#define REC_MAX_OBJS     512
#define REC_TRACE_MAX    512
#define REC_TRACE_LEN    160

/* What mkdir in a directory of a type makes (M8). */
enum rec_make {
    REC_MAKE_NONE = 0, /* group ops without make_* */
    REC_MAKE_ITEM,
    REC_MAKE_GROUP,
    REC_MAKE_BOTH, /* both set: configfs must call make_group */
};

/* Attribute flags. */
#define REC_NO_SHOW  0x01u /* show (bin: read) is NULL */
#define REC_NO_STORE 0x02u /* store (bin: write) is NULL */
#define REC_TYPE_METHODS                                                       \
    0x04u                /* no own show/store: the type's                      \
                            show_attribute/store_attribute serve it */
#define REC_HIDDEN 0x08u /* is_visible answers false */

/* make_err value that makes make_* return NULL (MK6: ENOMEM). */
#define REC_MAKE_NULL 1

struct rec_attr_spec {
    const char *name;
    unsigned short mode;
    unsigned int flags;
    const char *init; /* what show() returns before any store; NULL: "" */
    /* Behaviour; a test may change these at any time. */
    size_t store_max; /* consume at most this many bytes per call; 0: all */
    bool store_zero;  /* return 0 */
    int store_err;    /* return this negative errno */
    int show_err;     /* return this negative errno */
    ssize_t show_len; /* > 0: return this length (beyond the value: zeroes) */
    size_t show_fill; /* > 0: show this many 'v' bytes (up to the page) */
};

struct rec_bin_spec {
    const char *name;
    unsigned short mode;
    unsigned int flags; /* REC_NO_SHOW: no read; REC_NO_STORE: no write */
    size_t max_size;
    int read_err;  /* read() returns this */
    bool size_set; /* the size probe returns size instead of the length */
    ssize_t size;
    int write_err; /* write() returns this */
};

struct rec_default_spec {
    const char *name;
    struct rec_type *type;
};

/*
 * One item type. Get it from rec_type_new(), set fields, register. The
 * config_item_type is built from the fields by rec_type_build(), which
 * rec_register() runs for every type and the first object of a type runs
 * for it; call it again after changing which callbacks or attributes exist.
 * Injected failures and attribute behaviour are read at call time.
 */
struct rec_type {
    const char *name;
    struct module *owner;

    /* group operations */
    enum rec_make make;
    struct rec_type *child; /* what make_* makes */
    bool no_group_ops;      /* ct_group_ops = NULL */
    bool no_item_ops;       /* ct_item_ops = NULL */
    bool no_drop_item;
    bool no_disconnect;
    bool no_release;      /* objects of this type are freed by teardown */
    bool links;           /* allow_link + drop_link */
    bool no_drop_link;    /* with links: allow_link only */
    bool committable;     /* commit_item + uncommit_item */
    bool commit_only;     /* commit_item without uncommit_item (C1) */
    bool visibility;      /* is_visible/is_bin_visible even if none is
                             hidden (they are also set when one is) */
    bool show_item_local; /* a subsystem's su_show_item_local */

    /* default groups, made with each object of this type (M13) */
    struct rec_default_spec defaults[REC_MAX_DEFAULTS];
    bool seed_defaults; /* the seed's NULL-terminated array, not the list */

    struct rec_attr_spec attrs[REC_MAX_ATTRS];
    struct rec_bin_spec bins[REC_MAX_BINS];

    /* injected failures of this type's callbacks */
    long make_err;         /* make_*: negative errno, or REC_MAKE_NULL */
    bool make_untyped;     /* make_* returns an item without a type (MK8) */
    const char *make_name; /* make_* names the item this (M3) */
    int allow_err;         /* allow_link returns this */
    int commit_err;        /* commit_item returns this */
    int uncommit_err;      /* uncommit_item returns this */

    /* built by rec_type_build() */
    bool built;
    struct config_item_type ct;
    struct configfs_item_operations iops;
    struct configfs_group_operations gops;
    struct configfs_attribute ca[REC_MAX_ATTRS];
    struct configfs_attribute *ca_ptrs[REC_MAX_ATTRS + 1];
    struct configfs_bin_attribute cb[REC_MAX_BINS];
    struct configfs_bin_attribute *cb_ptrs[REC_MAX_BINS + 1];
};

/* One object the recorder made: an item, a group or a subsystem. */
struct rec_obj {
    union {
        struct config_group group; /* group.cg_item for plain items */
        struct configfs_subsystem su;
    } u;
    struct rec_type *type;
    struct rec_obj *sub; /* the subsystem it belongs to */
    char name[CFS_NAME_MAX + 1];
    bool is_subsystem;
    bool registered;
    struct config_group *seed[REC_MAX_DEFAULTS + 1];
    struct rec_obj *defaults[REC_MAX_DEFAULTS];
    /* attribute values */
    char val[REC_MAX_ATTRS][CONFIGFS_PAGE_SIZE];
    size_t val_len[REC_MAX_ATTRS];
    bool last_store_nul; /* the last store's buffer had a NUL after count */
    bool last_show_page_zeroed;
    char *blob[REC_MAX_BINS];
    size_t blob_len[REC_MAX_BINS];
};

/* One trace entry. */
struct rec_entry {
    char text[REC_TRACE_LEN];
    int locked; /* su_mutex held: 1, not held: 0, unknown subsystem: -1 */
    int linked; /* the item's ci_parent was set: 1, not: 0, n/a: -1 */
};

/* Called after a callback recorded itself: cb is the entry's name
 * ("make_group", "show", ...), item the item concerned (for make_*, the new
 * one), other the parent (make, drop, disconnect) or the link target. */
typedef void (*rec_hook_fn)(const char *cb,
                            struct config_item *item,
                            struct config_item *other,
                            void *data);

/* ---- fixture ----------------------------------------------------------- */

int rec_setup(void **state);
int rec_teardown(void **state);

/*
 * cmocka checks for leaks right after a test function returns, so the
 * test function is rec_body(), which runs the test and then unregisters
 * every subsystem and frees every object; whatever core still holds then
 * is a leak. After a failed assertion rec_teardown() does that cleanup.
 */
struct rec_case {
    void (*fn)(void **state);
};
void rec_body(void **state);
#define REC_TEST(f)                                                            \
    {                                                                          \
        .name = #f, .test_func = rec_body, .setup_func = rec_setup,            \
        .teardown_func = rec_teardown, .initial_state = &(struct rec_case){f}, \
    }

/* Run a group; CFS_TEST_FILTER=substring runs only the matching tests. */
int rec_run_(const char *name, const struct CMUnitTest *tests, size_t n);
#define rec_run(name, tests)                                                   \
    rec_run_(name, tests, sizeof(tests) / sizeof((tests)[0]))

/* Blocks core still held after a subsystem was registered and removed
 * again, measured before the group ran (0 when core cleans up). */
long rec_global_leftovers(void);

/* ---- allocation -------------------------------------------------------- */

void *rec_malloc(size_t size);
void *rec_realloc(void *ptr, size_t size);
void rec_free(void *ptr);
/* Fail the @nth allocation from now on (1-based); 0 disables. */
void rec_alloc_fail_nth(long nth);
/* Whether the armed failure happened. */
bool rec_alloc_failed(void);

/* ---- types, subsystems, objects ---------------------------------------- */

struct rec_type *rec_type_new(const char *name);
/* Add an attribute; @return its index. */
int rec_attr(struct rec_type *t,
             const char *name,
             unsigned short mode,
             unsigned int flags);
int rec_bin(struct rec_type *t,
            const char *name,
            unsigned short mode,
            size_t max_size);
void rec_default(struct rec_type *t, const char *name, struct rec_type *type);
void rec_type_build(struct rec_type *t);

/*
 * The types most core tests start from: "s", a subsystem whose mkdir makes
 * groups of type "g"; "g", whose mkdir makes items of type "i" and which
 * accepts links; "i", with one attribute "v" (0644). A test adds its own
 * attributes, default groups and flags to them, then registers *@ret_s.
 */
void rec_tree(struct rec_type **ret_s,
              struct rec_type **ret_g,
              struct rec_type **ret_i);

/* Register a subsystem of type @t. rec_register asserts success. */
int rec_register_rc(const char *name, struct rec_type *t, struct rec_obj **ret);
struct rec_obj *rec_register(const char *name, struct rec_type *t);
/* Unregister and drop the recorder's reference. */
void rec_unregister(struct rec_obj *sub);

/* Make an object as make_* would (for registered groups and direct API
 * tests); the caller owns the one reference. */
struct rec_obj *
rec_obj_new(struct rec_type *t, const char *name, struct rec_obj *sub);

/* The newest live object named @name, or NULL. Borrowed. */
struct rec_obj *rec_find(const char *name);
struct config_item *rec_item(const char *name);
struct config_group *rec_group(const char *name);
bool rec_is_live(const struct rec_obj *obj);
int rec_refs(struct config_item *item);
struct rec_obj *rec_obj_of(struct config_item *item);
/* Whether @sub's su_mutex is held by anyone right now. */
bool rec_su_held(struct rec_obj *sub);
/* The paths cfs_links_to(@path) gives, sorted, joined by spaces ("" for
 * none); a static buffer, good until the next call. Fails the test if the
 * call fails. */
const char *rec_links_to(const char *path);

void rec_set_hook(rec_hook_fn fn, void *data);

/* ---- trace ------------------------------------------------------------- */

void rec_clear(void);
size_t rec_count(void);
const struct rec_entry *rec_at(size_t i);
/* Index of the first entry equal to @text at or after @from, or -1. */
int rec_index(const char *text, size_t from);
/* How many entries equal @text. */
int rec_occurrences(const char *text);
/* How many entries start with @prefix. */
int rec_prefixed(const char *prefix);
void rec_add(const char *fmt, ...) CFS_PRINTF(1, 2);
void rec_print(void);

/* Assert the trace is exactly the given entries. */
void rec_assert_trace_(const char *file, int line, ...);
#define rec_assert_trace(...)                                                  \
    rec_assert_trace_(__FILE__, __LINE__, __VA_ARGS__, NULL)
/* Assert the trace is empty. */
#define rec_assert_no_trace() rec_assert_trace_(__FILE__, __LINE__, NULL)
/* Assert @entry is in the trace and was recorded with su_mutex held (1) or
 * not (0). */
void rec_assert_locked_(const char *file,
                        int line,
                        const char *entry,
                        int held);
#define rec_assert_locked(entry, held)                                         \
    rec_assert_locked_(__FILE__, __LINE__, entry, held)

/* ---- operation helpers ------------------------------------------------- */

const char *rec_errname(int err);
void rec_assert_rc_(
    long got, long want, const char *expr, const char *file, int line);
#define assert_rc(expr, want)                                                  \
    rec_assert_rc_((long)(expr), (long)(want), #expr, __FILE__, __LINE__)
#define assert_ok(expr) assert_rc(expr, 0)

/* The names cfs_readdir lists, space-separated, or "E<errno name>". The
 * result lives in a ring of static buffers. */
const char *rec_ls(const char *path);
/* show() the attribute, or "E<errno name>"; static ring buffer. */
const char *rec_cat(const char *path);
int rec_store_str(const char *path, const char *value);
int rec_txn_store_str(struct cfs_txn *txn, const char *path, const char *value);
/* The written values of @path as "a=v b=w" (static ring buffer). */
const char *rec_values(const char *path);

/* A transaction the teardown aborts if the test did not end it. */
struct cfs_txn *rec_txn_begin(void);
void rec_txn_commit(struct cfs_txn *txn);
int rec_txn_abort(struct cfs_txn *txn);

#endif /* CFS_TESTS_RECORDER_H */
