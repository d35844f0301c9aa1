/* SPDX-License-Identifier: MIT */
/*
 * test-core-oom.c - out-of-memory loops over every core operation.
 *
 * The core allocator is pointed at cmocka's allocator through a wrapper that
 * fails the Nth allocation (once, or from N on). For N = 1, 2, ... each
 * operation runs on a freshly built tree until a run completes without
 * meeting the failure. A run that met it must return -ENOMEM and leave the
 * tree exactly as it was: listing, modes, flags, revisions, show() output and
 * written values of every node, and the global revision. Every run must leak
 * nothing, and cmocka checks each test's blocks once more at its end. The
 * test subsystem allocates through cfs_zalloc() as well, so a make_item that
 * returns NULL (MK6) or a commit_item that fails (C8) is covered too.
 *
 * A failing test prints each kind of problem (wrong errno, tree changed,
 * listing order or revisions not restored, leak, abort failed) for the first
 * few N and a summary. To dig in: CFS_OOM_PRINT_MAX=n prints more,
 * CFS_OOM_STACKS=1 names the allocation site of each leaked block,
 * CFS_OOM_TRACE=1 prints the stack of every injected failure.
 */
#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

/* ---- the failing allocator --------------------------------------------- */

/*
 * Every block is one cmocka block, so cmocka reports leaks per test with a
 * "file:line" of "core-alloc:<serial>" - the serial of the allocation since
 * the program started, which identifies the leaking call when run again.
 */
static struct {
    unsigned long serial;  /* allocations ever made */
    unsigned long count;   /* allocations since arming */
    unsigned long fail_at; /* 0: disarmed */
    bool persistent;       /* fail fail_at and every allocation after it */
    bool paused;
    bool hit;
    bool trace;  /* CFS_OOM_TRACE: print the stack of each injected failure */
    bool stacks; /* CFS_OOM_STACKS: keep the stack of every live block */
    long live;   /* blocks handed out and not freed */
} oom;

static const char oom_file[] = "core-alloc";

/*
 * Live blocks, and with CFS_OOM_STACKS=1 the call stack that made each, so
 * a leak is reported as the allocation site in core (resolve the "+0x..."
 * offsets with addr2line -e <test binary>). Stacks are opt-in: taking one
 * per allocation makes the test several times slower, and runs are
 * deterministic, so a leak can be rerun with them.
 */
struct block {
    void *p;
    unsigned long serial;
    size_t size;
    int depth;
    void *stack[10];
};

static struct block *blocks;
static size_t n_blocks;
static size_t cap_blocks;

static void block_add(void *p, size_t size)
{
    struct block *b = NULL;

    if (n_blocks == cap_blocks) {
        cap_blocks = cap_blocks ? cap_blocks * 2 : 256;
        blocks = realloc(blocks, cap_blocks * sizeof(*blocks));
        if (!blocks) {
            abort();
        }
    }
    b = &blocks[n_blocks++];
    b->p = p;
    b->serial = oom.serial;
    b->size = size;
    b->depth = oom.stacks ? backtrace(b->stack, 10) : 0;
}

static struct block *block_find(const void *p)
{
    size_t i = n_blocks;

    while (i > 0) {
        if (blocks[--i].p == p) {
            return &blocks[i];
        }
    }
    return NULL;
}

static void block_del(const void *p)
{
    struct block *b = block_find(p);

    if (b) {
        *b = blocks[--n_blocks];
    }
}

/* Print the blocks made after allocation @serial that are still live. */
static void print_blocks_since(unsigned long serial)
{
    size_t i;

    if (!oom.stacks) {
        (void)fprintf(stderr, "  (rerun with CFS_OOM_STACKS=1 for where)\n");
    }
    for (i = 0; i < n_blocks; i++) {
        if (blocks[i].serial > serial) {
            (void)fprintf(stderr,
                          "  block %lu (%zu bytes)%s\n",
                          blocks[i].serial,
                          blocks[i].size,
                          blocks[i].depth ? " allocated at:" : "");
            /* Frames 0-1 are this wrapper and cfs_malloc & co. */
            backtrace_symbols_fd(blocks[i].stack + 2,
                                 blocks[i].depth > 2 ? blocks[i].depth - 2 : 0,
                                 2);
        }
    }
}

static bool oom_fail_now(void)
{
    oom.serial++;
    if (oom.fail_at == 0 || oom.paused) {
        return false;
    }
    oom.count++;
    if (oom.count == oom.fail_at ||
        (oom.persistent && oom.count > oom.fail_at)) {
        if (oom.trace && !oom.hit) {
            void *stack[12];
            int depth = backtrace(stack, 12);

            (void)fprintf(
                stderr, "injected failure of allocation %lu at:\n", oom.count);
            backtrace_symbols_fd(stack + 2, depth > 2 ? depth - 2 : 0, 2);
        }
        oom.hit = true;
        return true;
    }
    return false;
}

static void *oom_malloc(size_t size)
{
    void *p = NULL;

    if (oom_fail_now()) {
        return NULL;
    }
    p = _test_malloc(size ? size : 1, oom_file, (int)oom.serial);
    if (p) {
        oom.live++;
        block_add(p, size);
    }
    return p;
}

static void *oom_realloc(void *ptr, size_t size)
{
    void *p = NULL;

    if (!ptr) {
        return oom_malloc(size);
    }
    if (size == 0) {
        oom.live--;
        block_del(ptr);
        _test_free(ptr, oom_file, 0);
        return NULL;
    }
    if (oom_fail_now()) {
        return NULL;
    }
    p = _test_realloc(ptr, size, oom_file, (int)oom.serial);
    if (p) {
        block_del(ptr);
        block_add(p, size);
    }
    return p;
}

static void oom_free(void *ptr)
{
    if (ptr) {
        oom.live--;
        block_del(ptr);
        _test_free(ptr, oom_file, 0);
    }
}

static void oom_arm(unsigned long n, bool persistent)
{
    oom.count = 0;
    oom.fail_at = n;
    oom.persistent = persistent;
    oom.paused = false;
    oom.hit = false;
}

static void oom_disarm(void)
{
    oom.fail_at = 0;
    oom.paused = false;
}

/* The operation itself stops injecting, e.g. around an abort that is not
 * under test. */
static void oom_pause(void)
{
    oom.paused = true;
}

/* ---- the test subsystem --------------------------------------------------
 *
 * /oom-subsystem-long-name          description (ro), value, num
 *   items/                          make_item -> item
 *   groups/                         make_group -> group
 *   commit/                         committable: make_item -> item
 *     pending/ live/
 *   deep-default-group-long-name/   value; default group deeper/ (value)
 *
 * item:  description (ro), value, num; allow_link accepts anything
 * group: description (ro), value; default groups sub/ (make_item -> item)
 *        and deep-default-group-long-name/ with deeper/
 *
 * Names of 20 bytes or more live on the heap (M2), so the long names make
 * config_item_init_type_name() allocate as well.
 */

#define SYS_NAME "oom-subsystem-long-name"
#define S        "/" SYS_NAME
#define DEEP     "deep-default-group-long-name"

static int live_objects;

struct onode {
    struct config_group group; /* items use group.cg_item only */
    bool is_group;
    char *value;
    size_t value_len;
    int num;
    char *stamp; /* set by commit_item */
};

struct osys {
    struct configfs_subsystem su;
};

static struct onode *to_onode(struct config_item *item)
{
    return container_of(item, struct onode, group.cg_item);
}

static void onode_release(struct config_item *item)
{
    struct onode *n = to_onode(item);

    if (n->is_group) {
        configfs_remove_default_groups(&n->group);
    }
    cfs_free(n->value);
    cfs_free(n->stamp);
    cfs_free(n);
    live_objects--;
}

static ssize_t onode_description_show(struct config_item *item, char *page)
{
    (void)item;
    return snprintf(page, CONFIGFS_PAGE_SIZE, "oom test node\n");
}

static ssize_t onode_value_show(struct config_item *item, char *page)
{
    struct onode *n = to_onode(item);

    if (n->value_len) {
        memcpy(page, n->value, n->value_len);
    }
    return (ssize_t)n->value_len;
}

/* Allocates, so a store can fail with ENOMEM in the client too. */
static ssize_t
onode_value_store(struct config_item *item, const char *page, size_t count)
{
    struct onode *n = to_onode(item);
    char *copy = cfs_malloc(count + 1);

    if (!copy) {
        return -ENOMEM;
    }
    memcpy(copy, page, count);
    copy[count] = '\0';
    cfs_free(n->value);
    n->value = copy;
    n->value_len = count;
    return (ssize_t)count;
}

static ssize_t onode_num_show(struct config_item *item, char *page)
{
    return snprintf(page, CONFIGFS_PAGE_SIZE, "%d\n", to_onode(item)->num);
}

/* Does not allocate: the inverse steps of an abort through this attribute
 * need no client memory. */
static ssize_t
onode_num_store(struct config_item *item, const char *page, size_t count)
{
    char buf[32];
    char *end = NULL;
    long v;

    if (count == 0 || count >= sizeof(buf)) {
        return -EINVAL;
    }
    memcpy(buf, page, count);
    buf[count] = '\0';
    v = strtol(buf, &end, 10);
    if (end == buf || (*end != '\0' && strcmp(end, "\n") != 0)) {
        return -EINVAL;
    }
    to_onode(item)->num = (int)v;
    return (ssize_t)count;
}

CONFIGFS_ATTR_RO(onode_, description);
CONFIGFS_ATTR(onode_, value);
CONFIGFS_ATTR(onode_, num);

static struct configfs_attribute *item_attrs[] = {
    &onode_attr_description,
    &onode_attr_value,
    &onode_attr_num,
    NULL,
};

static struct configfs_attribute *value_attrs[] = {
    &onode_attr_value,
    NULL,
};

static struct configfs_attribute *group_attrs[] = {
    &onode_attr_description,
    &onode_attr_value,
    NULL,
};

static int onode_allow_link(struct config_item *src, struct config_item *target)
{
    (void)src;
    (void)target;
    return 0;
}

static void onode_drop_link(struct config_item *src, struct config_item *target)
{
    (void)src;
    (void)target;
}

static const struct configfs_item_operations onode_item_ops = {
    .release = onode_release,
};

static const struct configfs_item_operations item_item_ops = {
    .release = onode_release,
    .allow_link = onode_allow_link,
    .drop_link = onode_drop_link,
};

static const struct config_item_type item_type = {
    .ct_item_ops = &item_item_ops,
    .ct_attrs = item_attrs,
    .ct_name = "oom-item",
};

static const struct config_item_type leaf_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_attrs = value_attrs,
    .ct_name = "oom-leaf",
};

static const struct config_item_type deep_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_attrs = value_attrs,
    .ct_name = "oom-deep",
};

static struct onode *
onode_new(const char *name, const struct config_item_type *type, bool is_group)
{
    struct onode *n = cfs_zalloc(sizeof(*n));

    if (!n) {
        return NULL;
    }
    live_objects++;
    n->is_group = is_group;
    /* A failed name copy leaves ci_name NULL; core must turn that into
     * ENOMEM, so it is deliberately not checked here. */
    if (is_group) {
        config_group_init_type_name(&n->group, name, type);
    } else {
        config_item_init_type_name(&n->group.cg_item, name, type);
    }
    return n;
}

static int add_default(struct config_group *parent,
                       const char *name,
                       const struct config_item_type *type,
                       struct onode **ret)
{
    struct onode *d = onode_new(name, type, true);

    if (!d) {
        return -ENOMEM;
    }
    configfs_add_default_group(&d->group, parent);
    if (ret) {
        *ret = d;
    }
    return 0;
}

/* deep-default-group-long-name/ with deeper/ inside: default groups of
 * default groups (M13). */
static int add_deep(struct config_group *parent)
{
    struct onode *deep = NULL;
    int rc = add_default(parent, DEEP, &deep_type, &deep);

    if (rc == 0) {
        rc = add_default(&deep->group, "deeper", &leaf_type, NULL);
    }
    return rc;
}

static struct config_item *oom_make_item(struct config_group *parent,
                                         const char *name)
{
    struct onode *n = onode_new(name, &item_type, false);

    (void)parent;
    /* NULL on failure: core answers ENOMEM (MK6). */
    return n ? &n->group.cg_item : NULL;
}

static void oom_drop_item(struct config_group *parent, struct config_item *item)
{
    (void)parent;
    config_item_put(item);
}

static const struct configfs_group_operations items_group_ops = {
    .make_item = oom_make_item,
    .drop_item = oom_drop_item,
};

static const struct config_item_type items_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_group_ops = &items_group_ops,
    .ct_name = "oom-items",
};

static const struct config_item_type group_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_attrs = group_attrs,
    .ct_name = "oom-group",
};

static struct config_group *oom_make_group(struct config_group *parent,
                                           const char *name)
{
    struct onode *g = onode_new(name, &group_type, true);

    (void)parent;
    if (!g) {
        return NULL;
    }
    if (add_default(&g->group, "sub", &items_type, NULL) != 0 ||
        add_deep(&g->group) != 0) {
        /* The release drops the default groups made so far. */
        config_group_put(&g->group);
        return ERR_PTR(-ENOMEM);
    }
    return &g->group;
}

static const struct configfs_group_operations groups_group_ops = {
    .make_group = oom_make_group,
    .drop_item = oom_drop_item,
};

static const struct config_item_type groups_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_group_ops = &groups_group_ops,
    .ct_name = "oom-groups",
};

/* Allocates, so a commit can fail with ENOMEM and nothing may move (C8). */
static int oom_commit_item(struct config_item *item)
{
    struct onode *n = to_onode(item);

    n->stamp = cfs_strdup("committed");
    return n->stamp ? 0 : -ENOMEM;
}

static int oom_uncommit_item(struct config_item *item)
{
    struct onode *n = to_onode(item);

    cfs_free(n->stamp);
    n->stamp = NULL;
    return 0;
}

static const struct configfs_group_operations commit_group_ops = {
    .make_item = oom_make_item,
    .drop_item = oom_drop_item,
    .commit_item = oom_commit_item,
    .uncommit_item = oom_uncommit_item,
};

static const struct config_item_type commit_type = {
    .ct_item_ops = &onode_item_ops,
    .ct_group_ops = &commit_group_ops,
    .ct_name = "oom-commit",
};

static void osys_release(struct config_item *item)
{
    struct config_group *g = to_config_group(item);
    struct osys *s = container_of(g, struct osys, su.su_group);

    configfs_remove_default_groups(g);
    cfs_free(s);
    live_objects--;
}

static ssize_t osys_description_show(struct config_item *item, char *page)
{
    (void)item;
    return snprintf(page, CONFIGFS_PAGE_SIZE, "oom subsystem\n");
}

CONFIGFS_ATTR_RO(osys_, description);

static struct configfs_attribute *osys_attrs[] = {
    &osys_attr_description,
    NULL,
};

static const struct configfs_item_operations osys_item_ops = {
    .release = osys_release,
};

static const struct config_item_type osys_type = {
    .ct_item_ops = &osys_item_ops,
    .ct_attrs = osys_attrs,
    .ct_name = "oom-subsystem",
};

/* Build the subsystem and its default groups: everything through
 * cfs_zalloc(), so this runs under injection as part of registration. */
static int osys_build(struct osys **ret)
{
    struct osys *s = cfs_zalloc(sizeof(*s));
    struct config_group *g = NULL;
    int rc = 0;

    if (!s) {
        return -ENOMEM;
    }
    live_objects++;
    g = &s->su.su_group;
    config_group_init_type_name(g, SYS_NAME, &osys_type);
    rc = add_default(g, "items", &items_type, NULL);
    if (rc == 0) {
        rc = add_default(g, "groups", &groups_type, NULL);
    }
    if (rc == 0) {
        rc = add_default(g, "commit", &commit_type, NULL);
    }
    if (rc == 0) {
        rc = add_deep(g);
    }
    if (rc != 0) {
        config_group_put(g);
        return rc;
    }
    *ret = s;
    return 0;
}

/* The client's own reference; the release frees the default groups. */
static void osys_put(struct osys *s)
{
    if (s) {
        config_group_put(&s->su.su_group);
    }
}

/* ---- tree snapshots ---------------------------------------------------- */

struct snap {
    char *buf;
    size_t len;
    size_t cap;
};

static void snap_printf(struct snap *s, const char *fmt, ...) CFS_PRINTF(2, 3);

static void snap_printf(struct snap *s, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(s->buf ? s->buf + s->len : NULL,
                      s->buf ? s->cap - s->len : 0,
                      fmt,
                      ap);
        va_end(ap);
        assert_true(n >= 0);
        if (s->buf && s->len + (size_t)n < s->cap) {
            s->len += (size_t)n;
            return;
        }
        s->cap = (s->cap + (size_t)n + 1) * 2;
        s->buf = realloc(s->buf, s->cap);
        assert_non_null(s->buf);
    }
}

static void snap_bytes(struct snap *s, const char *p, size_t len)
{
    size_t i;

    snap_printf(s, "\"");
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];

        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            snap_printf(s, "%c", c);
        } else {
            snap_printf(s, "\\x%02x", c);
        }
    }
    snap_printf(s, "\"");
}

static void join_path(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(
        out, size, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);

    assert_true(n > 0 && (size_t)n < size);
}

/* One line per entry, recursively; values of readable attributes, link
 * targets, and the written values of every directory. */
static void snap_dir(struct snap *s, const char *path, bool revisions)
{
    struct cfs_entry *ents = NULL;
    struct cfs_value *vals = NULL;
    size_t n = 0;
    size_t nv = 0;
    size_t i;
    int rc;

    rc = cfs_readdir(path, &ents, &n);
    assert_int_equal(rc, 0);
    for (i = 0; i < n; i++) {
        const struct cfs_entry *e = &ents[i];
        char child[CFS_PATH_MAX];

        join_path(child, sizeof(child), path, e->name);
        snap_printf(s,
                    "%s kind=%s mode=%o r%d w%d d%d u%d c%d p%d l%d "
                    "creates=%d type=%s",
                    child,
                    cfs_kind_name(e->kind),
                    e->mode,
                    e->readable,
                    e->writable,
                    e->default_group,
                    e->user_created,
                    e->committable,
                    e->pending,
                    e->live,
                    e->creates,
                    e->type_name ? e->type_name : "-");
        if (revisions) {
            snap_printf(s, " rev=%" PRIu64, e->revision);
        }
        if (e->kind == CFS_KIND_LINK) {
            char *target = NULL;

            assert_int_equal(cfs_readlink(child, &target), 0);
            snap_printf(s,
                        " target=%s readlink=%s",
                        e->target ? e->target : "(null)",
                        target);
            cfs_free(target);
        }
        if ((e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR) &&
            e->readable) {
            char *buf = NULL;
            size_t len = 0;

            assert_int_equal(cfs_show(child, &buf, &len), 0);
            snap_printf(s, " = ");
            snap_bytes(s, buf, len);
            cfs_free(buf);
        }
        snap_printf(s, "\n");
        if (e->kind == CFS_KIND_SUBSYSTEM || e->kind == CFS_KIND_GROUP ||
            e->kind == CFS_KIND_ITEM) {
            snap_dir(s, child, revisions);
        }
    }
    cfs_entries_free(ents, n);

    if (strcmp(path, "/") == 0) {
        return;
    }
    rc = cfs_written_values(path, &vals, &nv);
    assert_int_equal(rc, 0);
    for (i = 0; i < nv; i++) {
        snap_printf(s,
                    "%s written %s%s = ",
                    path,
                    vals[i].name,
                    vals[i].binary ? " (bin)" : "");
        snap_bytes(s, vals[i].data, vals[i].len);
        snap_printf(s, "\n");
    }
    cfs_values_free(vals, nv);
}

/* The whole tree as text; the caller frees it with free(). */
static char *snapshot(bool revisions)
{
    struct snap s = {.buf = malloc(256), .len = 0, .cap = 256};

    assert_non_null(s.buf);
    s.buf[0] = '\0';
    snap_dir(&s, "/", revisions);
    return s.buf;
}

/*
 * Problems are gathered, not fatal at once: the loop goes on to the next N
 * (each run has its own tree), so one run shows every distinct failure.
 * The first few of each kind are printed in full, the rest counted; the
 * test fails at its end with a summary per kind.
 */
enum problem_kind {
    PK_ERRNO,     /* a failed run returned something else than -ENOMEM */
    PK_TREE,      /* the tree is not as it should be */
    PK_ORDER,     /* ... but only in listing order */
    PK_REVISIONS, /* ... but only in node revisions */
    PK_LEAK,      /* blocks or objects left after teardown */
    PK_ABORT,     /* cfs_txn_abort() failed */
    PK_N
};

static const char *const problem_names[PK_N] = {
    "wrong errno",
    "tree changed",
    "listing order not restored",
    "revisions not restored",
    "leak",
    "abort failed",
};

/* Problems of each kind printed in full; CFS_OOM_PRINT_MAX changes it. */
static int print_max = 3;

static int n_problems;
static struct {
    int count;
    unsigned long first_n;
    unsigned long last_n;
} problems[PK_N];
static unsigned long current_n;

static void problems_reset(void)
{
    n_problems = 0;
    memset(problems, 0, sizeof(problems));
}

/* @return whether this one is printed (callers print details then). */
static bool problem(enum problem_kind kind, const char *fmt, ...)
    CFS_PRINTF(2, 3);

static bool problem(enum problem_kind kind, const char *fmt, ...)
{
    va_list ap;

    n_problems++;
    if (problems[kind].count++ == 0) {
        problems[kind].first_n = current_n;
    }
    problems[kind].last_n = current_n;
    if (problems[kind].count > print_max) {
        return false;
    }
    (void)fprintf(stderr, "PROBLEM (%s): ", problem_names[kind]);
    va_start(ap, fmt);
    (void)vfprintf(stderr, fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "\n");
    return true;
}

static void problems_summary(const char *what)
{
    int k;

    for (k = 0; k < PK_N; k++) {
        if (problems[k].count) {
            (void)fprintf(stderr,
                          "SUMMARY %s: %s: %d runs (N=%lu..%lu)\n",
                          what,
                          problem_names[k],
                          problems[k].count,
                          problems[k].first_n,
                          problems[k].last_n);
        }
    }
}

static bool has_line(const char *text, const char *line, size_t len)
{
    const char *p = text;

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) : strlen(p);

        if (l == len && memcmp(p, line, len) == 0) {
            return true;
        }
        p += l + (eol ? 1 : 0);
    }
    return false;
}

/* Whether every line of each is in the other (order aside). */
static bool same_lines(const char *a, const char *b)
{
    const char *p = a;

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) : strlen(p);

        if (!has_line(b, p, l)) {
            return false;
        }
        p += l + (eol ? 1 : 0);
    }
    return strlen(a) == strlen(b);
}

/* Print the lines of @a missing from @b with @mark; @return how many. */
static int print_missing(const char *a, const char *b, char mark)
{
    const char *p = a;
    int n = 0;

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) : strlen(p);

        if (!has_line(b, p, l)) {
            (void)fprintf(stderr, "  %c %.*s\n", mark, (int)l, p);
            n++;
        }
        p += l + (eol ? 1 : 0);
    }
    return n;
}

/* The same lines in another order: show where the order first differs. */
static void print_order(const char *a, const char *b)
{
    const char *pa = a;
    const char *pb = b;
    int shown = 0;

    while (*pa && *pb && shown < 4) {
        const char *ea = strchr(pa, '\n');
        const char *eb = strchr(pb, '\n');
        size_t la = ea ? (size_t)(ea - pa) : strlen(pa);
        size_t lb = eb ? (size_t)(eb - pb) : strlen(pb);

        if (la != lb || memcmp(pa, pb, la) != 0) {
            (void)fprintf(
                stderr, "  - %.*s\n  + %.*s\n", (int)la, pa, (int)lb, pb);
            shown++;
        }
        pa += la + (ea ? 1 : 0);
        pb += lb + (eb ? 1 : 0);
    }
}

/* Compare trees; when they differ, @kind says whether the difference is
 * structural or in revisions only (the caller compared without them). */
static bool same_tree(const char *what,
                      enum problem_kind kind,
                      const char *expected,
                      const char *got)
{
    if (strcmp(expected, got) == 0) {
        return true;
    }
    if (kind == PK_TREE && same_lines(expected, got)) {
        kind = PK_ORDER;
    }
    if (problem(kind,
                "%s: N=%lu: the tree is not as expected (- expected, + got):",
                what,
                current_n)) {
        if (print_missing(expected, got, '-') +
                print_missing(got, expected, '+') ==
            0) {
            (void)fprintf(stderr,
                          "  (same entries, listed in another order)\n");
            print_order(expected, got);
        }
    }
    return false;
}

/* ---- fixture --------------------------------------------------------------
 *
 * The tree every operation starts from:
 *   items/item-x         value "hello\n", num 5; links to-g -> groups/group-g,
 *                        to-q -> commit/live/q-two
 *   items/item-y         never written
 *   items/item-w         value and num written (rmdir drops them)
 *   groups/group-g       value written; sub/child-c with value written
 *   groups/group-h       empty group with default groups
 *   commit/pending/p-one
 *   commit/live/q-two    committed
 */

struct fx {
    struct osys *sys;
    bool registered;
    unsigned long serial; /* allocations made before the fixture */
};

/* The fixture of the running test, so that the cmocka teardown can clean
 * up after an assertion left it half done. */
static struct fx *current_fx;

static void must(int rc, const char *what)
{
    if (rc != 0) {
        fail_msg("fixture: %s: %d (%s)", what, rc, strerror(-rc));
    }
}

static void store_str(const char *path, const char *value)
{
    must(cfs_write(NULL, path, value, strlen(value)), path);
}

static void fx_register(struct fx *f)
{
    must(osys_build(&f->sys), "build");
    must(configfs_register_subsystem(&f->sys->su), "register");
    f->registered = true;
}

static void fx_populate(void)
{
    must(cfs_mkdir(NULL, S "/items/item-x"), "mkdir item-x");
    store_str(S "/items/item-x/value", "hello\n");
    store_str(S "/items/item-x/num", "5");
    must(cfs_mkdir(NULL, S "/items/item-y"), "mkdir item-y");
    must(cfs_mkdir(NULL, S "/items/item-w"), "mkdir item-w");
    store_str(S "/items/item-w/num", "17\n");
    store_str(S "/items/item-w/value", "w-value");
    store_str(S "/items/item-w/num", "18\n");
    must(cfs_mkdir(NULL, S "/groups/group-g"), "mkdir group-g");
    store_str(S "/groups/group-g/value", "g");
    must(cfs_mkdir(NULL, S "/groups/group-g/sub/child-c"), "mkdir child-c");
    store_str(S "/groups/group-g/sub/child-c/value", "c\n");
    must(cfs_mkdir(NULL, S "/groups/group-h"), "mkdir group-h");
    must(cfs_mkdir(NULL, S "/commit/pending/p-one"), "mkdir p-one");
    must(cfs_mkdir(NULL, S "/commit/pending/q-two"), "mkdir q-two");
    must(cfs_rename(NULL, S "/commit/pending/q-two", S "/commit/live/q-two"),
         "commit q-two");
    must(cfs_symlink(NULL, S "/items/item-x/to-g", S "/groups/group-g"),
         "link to-g");
    must(cfs_symlink(NULL, S "/items/item-x/to-q", S "/commit/live/q-two"),
         "link to-q");
}

static void fx_setup(struct fx *f, bool registered)
{
    memset(f, 0, sizeof(*f));
    oom_disarm();
    current_fx = f;
    f->serial = oom.serial;
    if (registered) {
        fx_register(f);
        fx_populate();
    }
}

/* Unregister and drop; report (not fail) objects never released and blocks
 * not freed since @live_before, and return whether all was clean. With
 * @what NULL nothing is checked. */
static bool
fx_teardown(struct fx *f, long live_before, const char *what, unsigned long n)
{
    bool clean = true;

    oom_disarm();
    if (f->registered) {
        configfs_unregister_subsystem(&f->sys->su);
    }
    osys_put(f->sys);
    f->sys = NULL;
    f->registered = false;
    current_fx = NULL;
    if (!what) {
        return true; /* unchecked */
    }
    if (live_objects != 0) {
        problem(PK_LEAK,
                "%s: N=%lu: %d objects of the test subsystem never released",
                what,
                n,
                live_objects);
        live_objects = 0;
        clean = false;
    }
    if (oom.live != live_before) {
        if (problem(PK_LEAK,
                    "%s: N=%lu: %ld core blocks leaked",
                    what,
                    n,
                    oom.live - live_before)) {
            print_blocks_since(f->serial);
        }
        clean = false;
    }
    return clean;
}

static int test_teardown(void **state)
{
    (void)state;
    if (current_fx) {
        fx_teardown(current_fx, oom.live, "cleanup", 0);
    }
    oom_disarm();
    return 0;
}

/* ---- operations -------------------------------------------------------- */

struct oom_op {
    const char *name;
    bool registered;          /* start from the populated tree */
    bool restores;            /* success leaves the tree as it was */
    int (*run)(struct fx *f); /* 0 or a negative errno */
};

static int op_register(struct fx *f)
{
    struct osys *s = NULL;
    int rc = osys_build(&s);

    if (rc != 0) {
        return rc;
    }
    rc = configfs_register_subsystem(&s->su);
    if (rc != 0) {
        /* Not registered: the client's reference is the last one. */
        osys_put(s);
        return rc;
    }
    f->sys = s;
    f->registered = true;
    return 0;
}

static int op_mkdir_item(struct fx *f)
{
    (void)f;
    return cfs_mkdir(NULL, S "/items/a-long-item-name-for-oom-runs");
}

static int op_mkdir_item_short(struct fx *f)
{
    (void)f;
    return cfs_mkdir(NULL, S "/items/z");
}

static int op_mkdir_group(struct fx *f)
{
    (void)f;
    return cfs_mkdir(NULL, S "/groups/a-long-group-name-for-oom-runs");
}

static int op_mkdir_in_default_group(struct fx *f)
{
    (void)f;
    return cfs_mkdir(NULL, S "/groups/group-g/sub/another-child-long-name");
}

static int op_mkdir_pending(struct fx *f)
{
    (void)f;
    return cfs_mkdir(NULL, S "/commit/pending/a-long-pending-item-name");
}

static int op_store_first(struct fx *f)
{
    static const char v[] = "first value\n";

    (void)f;
    return cfs_write(NULL, S "/items/item-y/value", v, sizeof(v) - 1);
}

static int op_store_again(struct fx *f)
{
    static const char v[] = "second value\n";

    (void)f;
    return cfs_write(NULL, S "/items/item-x/value", v, sizeof(v) - 1);
}

static int op_store_num(struct fx *f)
{
    (void)f;
    return cfs_write(NULL, S "/items/item-x/num", "42", 2);
}

static int op_store_default_group(struct fx *f)
{
    (void)f;
    return cfs_write(NULL, S "/" DEEP "/deeper/value", "d", 1);
}

static int op_symlink(struct fx *f)
{
    (void)f;
    return cfs_symlink(NULL,
                       S "/items/item-y/a-long-link-name-for-oom-runs",
                       S "/items/item-x");
}

static int op_unlink(struct fx *f)
{
    (void)f;
    return cfs_unlink(NULL, S "/items/item-x/to-g");
}

static int op_rename_commit(struct fx *f)
{
    (void)f;
    return cfs_rename(NULL, S "/commit/pending/p-one", S "/commit/live/p-one");
}

static int op_rename_uncommit(struct fx *f)
{
    (void)f;
    return cfs_rename(NULL, S "/commit/live/q-two", S "/commit/pending/q-two");
}

static int op_rmdir_item(struct fx *f)
{
    (void)f;
    return cfs_rmdir(NULL, S "/items/item-w");
}

static int op_rmdir_group(struct fx *f)
{
    (void)f;
    return cfs_rmdir(NULL, S "/groups/group-h");
}

static int op_rmdir_pending(struct fx *f)
{
    (void)f;
    return cfs_rmdir(NULL, S "/commit/pending/p-one");
}

/*
 * The batch every transaction test runs. With @with_client_allocs, it also
 * has steps whose inverse needs memory in the client (a store of a heap
 * value, an rmdir undone by make_item); without, no inverse step needs
 * client memory, so an abort has no excuse to fail.
 */
static int txn_ops(struct cfs_txn *txn, bool with_client_allocs)
{
    int rc;

    rc = cfs_mkdir(txn, S "/items/txn-item-with-a-long-name");
    if (rc == 0) {
        rc = cfs_write(txn, S "/items/txn-item-with-a-long-name/num", "9", 1);
    }
    if (rc == 0) {
        rc = cfs_symlink(
            txn, S "/items/txn-item-with-a-long-name/to-x", S "/items/item-x");
    }
    if (rc == 0) {
        rc = cfs_mkdir(txn, S "/groups/txn-group-with-a-long-name");
    }
    if (rc == 0) {
        rc = cfs_write(txn, S "/items/item-x/num", "77", 2);
    }
    if (rc == 0) {
        rc = cfs_rename(txn, S "/commit/pending/p-one", S "/commit/live/p-one");
    }
    if (rc == 0) {
        rc = cfs_unlink(txn, S "/items/item-x/to-g");
    }
    if (rc == 0 && with_client_allocs) {
        /* its inverse is a commit, and commit_item allocates */
        rc = cfs_rename(txn, S "/commit/live/q-two", S "/commit/pending/q-two");
    }
    if (rc == 0 && with_client_allocs) {
        rc = cfs_write(txn, S "/items/item-x/value", "txn\n", 4);
    }
    if (rc == 0 && with_client_allocs) {
        rc = cfs_rmdir(txn, S "/items/item-w");
    }
    if (rc == 0 && with_client_allocs) {
        rc = cfs_rmdir(txn, S "/groups/group-h");
    }
    return rc;
}

/* Ops under injection; the abort is not (it may need the client's memory to
 * re-make what the batch removed). Success means the tree is as before. */
static int op_txn_abort(struct fx *f)
{
    struct cfs_txn *txn = NULL;
    int rc = cfs_txn_begin(&txn);
    int arc;

    (void)f;
    if (rc != 0) {
        return rc;
    }
    rc = txn_ops(txn, true);
    oom_pause();
    arc = cfs_txn_abort(txn);
    if (arc != 0) {
        problem(PK_ABORT,
                "txn abort (not injected) returned %d (%s) at N=%lu",
                arc,
                strerror(-arc),
                current_n);
    }
    return rc;
}

/* Ops and abort both under injection: none of the inverse steps needs
 * client memory, so the abort must succeed whatever allocation fails. */
static int op_txn_abort_strict(struct fx *f)
{
    struct cfs_txn *txn = NULL;
    int rc = cfs_txn_begin(&txn);
    int arc;

    (void)f;
    if (rc != 0) {
        return rc;
    }
    rc = txn_ops(txn, false);
    arc = cfs_txn_abort(txn);
    if (arc != 0) {
        problem(PK_ABORT,
                "txn abort under injection returned %d (%s) at N=%lu "
                "(batch rc %d)",
                arc,
                strerror(-arc),
                current_n,
                rc);
    }
    return rc;
}

/* The batch stands when every op succeeded; otherwise the caller aborts
 * (not injected) and the tree is as before. */
static int op_txn_commit(struct fx *f)
{
    struct cfs_txn *txn = NULL;
    int rc = cfs_txn_begin(&txn);

    (void)f;
    if (rc != 0) {
        return rc;
    }
    rc = txn_ops(txn, true);
    if (rc != 0) {
        int arc;

        oom_pause();
        arc = cfs_txn_abort(txn);
        if (arc != 0) {
            problem(PK_ABORT,
                    "txn abort after a failed op returned %d at N=%lu",
                    arc,
                    current_n);
        }
        return rc;
    }
    cfs_txn_commit(txn);
    return 0;
}

static int op_readdir(struct fx *f)
{
    static const char *const dirs[] = {
        "/",
        S,
        S "/items/item-x",
        S "/commit/live",
        S "/groups/group-g/sub",
    };
    size_t i;

    (void)f;
    for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        struct cfs_entry *ents = NULL;
        size_t n = 0;
        int rc = cfs_readdir(dirs[i], &ents, &n);

        if (rc != 0) {
            return rc;
        }
        assert_true(n > 0);
        cfs_entries_free(ents, n);
    }
    return 0;
}

static int op_show(struct fx *f)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    (void)f;
    rc = cfs_show(S "/items/item-x/value", &buf, &len);
    if (rc != 0) {
        return rc;
    }
    assert_int_equal(len, 6);
    assert_memory_equal(buf, "hello\n", 6);
    cfs_free(buf);
    rc = cfs_show(S "/items/item-x/num", &buf, &len);
    if (rc != 0) {
        return rc;
    }
    assert_string_equal(buf, "5\n");
    cfs_free(buf);
    return 0;
}

static int op_other_reads(struct fx *f)
{
    struct cfs_entry e;
    struct cfs_value *vals = NULL;
    size_t nv = 0;
    char *target = NULL;
    char *path = NULL;
    int rc;

    (void)f;
    memset(&e, 0, sizeof(e));
    rc = cfs_stat(S "/items/item-x/to-q", &e);
    if (rc != 0) {
        return rc;
    }
    assert_int_equal(e.kind, CFS_KIND_LINK);
    cfs_entry_done(&e);
    rc = cfs_readlink(S "/items/item-x/to-q", &target);
    if (rc != 0) {
        return rc;
    }
    assert_string_equal(target, S "/commit/live/q-two");
    cfs_free(target);
    rc = cfs_written_values(S "/items/item-w", &vals, &nv);
    if (rc != 0) {
        return rc;
    }
    assert_int_equal(nv, 2);
    cfs_values_free(vals, nv);
    /* cfs_item_path needs an item: the subsystem's own group will do. */
    rc = cfs_item_path(&f->sys->su.su_group.cg_item, &path);
    if (rc != 0) {
        return rc;
    }
    assert_string_equal(path, S);
    cfs_free(path);
    return 0;
}

/* ---- the loop ---------------------------------------------------------- */

#define OOM_MAX_N 100000ul

/* The tree must be @expected (with revisions) and @expected_norev
 * (without): a difference without revisions is structural, one only with
 * them is a revision that was not restored. */
static void
expect_tree(const char *what, const char *expected, const char *expected_norev)
{
    char *got = snapshot(true);
    char *got_norev = snapshot(false);

    bool same = same_tree(what, PK_TREE, expected_norev, got_norev);

    /* Revisions are compared as a set of lines, so that a listing order
     * problem does not hide them. */
    if (expected && (same || same_lines(expected_norev, got_norev)) &&
        !same_lines(expected, got) &&
        problem(PK_REVISIONS,
                "%s: N=%lu: revisions differ (- expected, + got):",
                what,
                current_n)) {
        print_missing(expected, got, '-');
        print_missing(got, expected, '+');
    }
    free(got);
    free(got_norev);
}

static void oom_loop(const struct oom_op *op, bool persistent)
{
    const char *mode = persistent ? "persistent" : "one-shot";
    char what[96];
    struct fx f;
    char *s0 = NULL;
    char *s0_norev = NULL;
    char *s1 = NULL;
    long live_before = oom.live;
    unsigned long n;
    unsigned long failures = 0;
    int rc;

    (void)snprintf(what, sizeof(what), "%s %s", op->name, mode);

    /* Reference run: what success looks like. */
    current_n = 0;
    fx_setup(&f, op->registered);
    rc = op->run(&f);
    oom_disarm();
    if (rc != 0) {
        fail_msg("%s: fails without injection: %d (%s)",
                 op->name,
                 rc,
                 strerror(-rc));
    }
    s1 = snapshot(false);
    if (!fx_teardown(&f, live_before, op->name, 0)) {
        fail_msg("%s: the run without injection is not clean", op->name);
    }

    for (n = 1; n <= OOM_MAX_N; n++) {
        long live_run = oom.live; /* per run: a leak is reported once */
        uint64_t rev_before;
        bool hit;

        current_n = n;
        fx_setup(&f, op->registered);
        s0 = snapshot(true);
        s0_norev = snapshot(false);
        rev_before = cfs_revision();

        oom_arm(n, persistent);
        rc = op->run(&f);
        hit = oom.hit;
        oom_disarm();

        if (rc != 0) {
            failures++;
            if (!hit) {
                problem(PK_ERRNO,
                        "%s: N=%lu: returned %d (%s) but no allocation "
                        "failed",
                        what,
                        n,
                        rc,
                        strerror(-rc));
            } else if (rc != -ENOMEM) {
                problem(PK_ERRNO,
                        "%s: N=%lu: returned %d (%s), expected -ENOMEM",
                        what,
                        n,
                        rc,
                        strerror(-rc));
            }
            expect_tree(what, s0, s0_norev);
            if (cfs_revision() != rev_before && !op->restores) {
                problem(PK_REVISIONS,
                        "%s: N=%lu: revision counter moved from %" PRIu64
                        " to %" PRIu64 " on a failed run",
                        what,
                        n,
                        rev_before,
                        cfs_revision());
            }
        } else if (hit && oom.trace) {
            (void)fprintf(
                stderr, "%s: N=%lu: succeeded despite the failure\n", what, n);
        }
        if (rc == 0 && op->restores) {
            /* Reads and aborted batches leave the tree as it was. */
            expect_tree(what, s0, s0_norev);
        } else if (rc == 0) {
            /* Either the failure was not met, or core survived it: the
             * result must be the reference result either way. */
            expect_tree(what, NULL, s1);
        }
        free(s0);
        s0 = NULL;
        free(s0_norev);
        s0_norev = NULL;
        fx_teardown(&f, live_run, what, n);
        if (!hit) {
            break;
        }
    }
    free(s1);
    if (n > OOM_MAX_N) {
        fail_msg("%s: still failing after %lu allocations", op->name, n);
    }
    print_message("# %-34s %-10s %4lu allocations, %4lu failed runs\n",
                  op->name,
                  mode,
                  n - 1,
                  failures);
}

/* One cmocka test per operation (its state is the operation), so a failure
 * names the operation and the leak check is per operation. */
static void test_oom_op(void **state)
{
    const struct oom_op *op = *state;

    problems_reset();
    oom_loop(op, false);
    oom_loop(op, true);
    problems_summary(op->name);
    if (n_problems) {
        fail_msg("%s: %d problems (printed above)", op->name, n_problems);
    }
}

/* configfs_unregister_subsystem() returns nothing and never fails (T7): under
 * any failing allocation it must still remove the whole populated tree
 * through the callbacks and leak nothing. */
static void test_oom_unregister(void **state)
{
    unsigned long n;
    int persistent;

    (void)state;
    problems_reset();
    for (persistent = 0; persistent < 2; persistent++) {
        for (n = 1; n <= OOM_MAX_N; n++) {
            long live_run = oom.live;
            struct fx f;
            char *after = NULL;
            bool hit;

            fx_setup(&f, true);
            oom_arm(n, persistent);
            configfs_unregister_subsystem(&f.sys->su);
            hit = oom.hit;
            oom_disarm();
            f.registered = false;
            after = snapshot(true);
            if (after[0] != '\0') {
                problem(PK_TREE,
                        "unregister: N=%lu: the root still lists:\n%s",
                        n,
                        after);
            }
            free(after);
            fx_teardown(&f, live_run, "unregister", n);
            if (!hit) {
                break;
            }
        }
        assert_true(n <= OOM_MAX_N);
        print_message("# %-34s %-10s %4lu allocations\n",
                      "test_oom_unregister",
                      persistent ? "persistent" : "one-shot",
                      n - 1);
    }
    problems_summary("test_oom_unregister");
    if (n_problems) {
        fail_msg("unregister: %d problems (printed above)", n_problems);
    }
}

/*
 * With every subsystem unregistered, core holds no memory: a program can
 * switch allocators again ("call only while nothing is allocated") and a
 * leak checker sees nothing. main() has registered and unregistered a
 * subsystem once already, so this holds whatever order tests run in.
 */
static void test_oom_nothing_held_when_empty(void **state)
{
    struct fx f;

    long live_before = oom.live;

    (void)state;
    problems_reset();
    fx_setup(&f, true);
    fx_teardown(&f, live_before, "fixture", 0);
    assert_int_equal(n_problems, 0);
    if (oom.live != 0) {
        fail_msg("core holds %ld blocks with no subsystem registered",
                 oom.live);
    }
}

/* One registration before the tests, outside cmocka's per-test leak checks:
 * whatever core allocates once for good is then not charged to the first
 * test that registers (test_oom_nothing_held_when_empty checks that there
 * is nothing of the kind). */
static void warm_up(void)
{
    struct fx f;

    fx_setup(&f, true);
    /* What it keeps is the subject of test_oom_nothing_held_when_empty. */
    fx_teardown(&f, -1, NULL, 0);
    problems_reset();
}

/* Rules each operation's failure paths exercise are in the comments. */
#define OOM_OP(fn, reg)                                                        \
    {                                                                          \
        .name = "test_oom_" #fn, .registered = (reg), .run = op_##fn           \
    }
#define OOM_OP_RESTORES(fn)                                                    \
    {                                                                          \
        .name = "test_oom_" #fn, .registered = true, .restores = true,         \
        .run = op_##fn                                                         \
    }

static const struct oom_op ops[] = {
    OOM_OP(register, false),              /* M9, M13, MK9 */
    OOM_OP(mkdir_item, true),             /* MK5, MK6 (NULL), MK11 */
    OOM_OP(mkdir_item_short, true),       /* MK6, MK9 */
    OOM_OP(mkdir_group, true),            /* MK7, MK9, MK11, M13 */
    OOM_OP(mkdir_in_default_group, true), /* MK7 */
    OOM_OP(mkdir_pending, true),          /* C4 */
    OOM_OP(store_first, true),            /* WR1, WR2 */
    OOM_OP(store_again, true),            /* WR1 */
    OOM_OP(store_num, true),              /* WR1 */
    OOM_OP(store_default_group, true),    /* M13 */
    OOM_OP(symlink, true),                /* SL7, SL8 */
    OOM_OP(unlink, true),                 /* UL4 */
    OOM_OP(rename_commit, true),          /* C7, C8 */
    OOM_OP(rename_uncommit, true),        /* C8 */
    OOM_OP(rmdir_item, true),             /* RM9, RM11 */
    OOM_OP(rmdir_group, true),            /* RM7a, RM12 */
    OOM_OP(rmdir_pending, true),          /* C4 */
    OOM_OP_RESTORES(txn_abort),
    OOM_OP_RESTORES(txn_abort_strict),
    OOM_OP(txn_commit, true),
    OOM_OP_RESTORES(readdir), /* D2 */
    OOM_OP_RESTORES(show),    /* RD2 */
    OOM_OP_RESTORES(other_reads),
};

#define N_OPS (sizeof(ops) / sizeof(ops[0]))

int main(void)
{
    struct CMUnitTest tests[N_OPS + 2];
    size_t i;
    int failed;

    memset(tests, 0, sizeof(tests));
    tests[0].name = "test_oom_nothing_held_when_empty";
    tests[0].test_func = test_oom_nothing_held_when_empty;
    for (i = 0; i < N_OPS; i++) {
        tests[i + 1].name = ops[i].name;
        tests[i + 1].test_func = test_oom_op;
        tests[i + 1].initial_state = (void *)&ops[i];
    }
    tests[N_OPS + 1].name = "test_oom_unregister";
    tests[N_OPS + 1].test_func = test_oom_unregister;
    for (i = 0; i < N_OPS + 2; i++) {
        tests[i].teardown_func = test_teardown;
    }

    if (getenv("CFS_OOM_PRINT_MAX")) {
        print_max = (int)strtol(getenv("CFS_OOM_PRINT_MAX"), NULL, 10);
    }
    oom.trace = getenv("CFS_OOM_TRACE") != NULL;
    oom.stacks = getenv("CFS_OOM_STACKS") != NULL;
    cfs_set_alloc_funcs(oom_malloc, oom_realloc, oom_free);
    warm_up();
    failed = _cmocka_run_group_tests("core-oom", tests, N_OPS + 2, NULL, NULL);
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return failed;
}
