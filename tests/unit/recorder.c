// SPDX-License-Identifier: MIT
/*
 * recorder.c - the recording fake client of recorder.h.
 *
 * Objects are looked up through a registry rather than by container_of on
 * whatever item core passes, because core also hands callbacks its own
 * groups (pending/ and live/ of a committable group) and those are not ours.
 * The trace and the allocator are behind mutexes so that the few tests that
 * use a second thread stay race-free; cmocka's allocator is not thread-safe.
 */
#include "recorder.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- allocation -------------------------------------------------------- */

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static long alloc_fail_at;
static long alloc_seen;
static bool alloc_fail_hit;

static bool alloc_should_fail(void)
{
    if (alloc_fail_at <= 0) {
        return false;
    }
    if (++alloc_seen == alloc_fail_at) {
        alloc_fail_hit = true;
        return true;
    }
    return false;
}

void *rec_malloc(size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&alloc_lock);
    if (!alloc_should_fail()) {
        p = _test_malloc(size, __FILE__, __LINE__);
    }
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

void *rec_realloc(void *ptr, size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&alloc_lock);
    if (size == 0 || !alloc_should_fail()) {
        p = _test_realloc(ptr, size, __FILE__, __LINE__);
    }
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

void rec_free(void *ptr)
{
    if (!ptr) {
        return;
    }
    pthread_mutex_lock(&alloc_lock);
    _test_free(ptr, __FILE__, __LINE__);
    pthread_mutex_unlock(&alloc_lock);
}

/* The recorder's own memory: leak-checked, never failed on purpose. */
static void *raw_zalloc(size_t size)
{
    void *p;

    pthread_mutex_lock(&alloc_lock);
    p = _test_calloc(1, size, __FILE__, __LINE__);
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

void rec_alloc_fail_nth(long nth)
{
    pthread_mutex_lock(&alloc_lock);
    alloc_fail_at = nth;
    alloc_seen = 0;
    alloc_fail_hit = false;
    pthread_mutex_unlock(&alloc_lock);
}

bool rec_alloc_failed(void)
{
    bool hit;

    pthread_mutex_lock(&alloc_lock);
    hit = alloc_fail_hit;
    pthread_mutex_unlock(&alloc_lock);
    return hit;
}

/* ---- state ------------------------------------------------------------- */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec_entry trace[REC_TRACE_MAX];
static size_t trace_n;
static bool trace_overflow;

static struct rec_type types[REC_MAX_TYPES];
static size_t types_n;

/* Registry of live objects; guarded by trace_lock. */
static struct rec_obj *objs[REC_MAX_OBJS];

static bool cleaned_up;
/* Attribute values: show and store may run at once (WR8); a client must
 * serialise its own state. */
static pthread_mutex_t value_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_hook_fn hook_fn;
static void *hook_data;

#define REC_MAX_TXNS 8
static struct cfs_txn *txns[REC_MAX_TXNS];

static void registry_add(struct rec_obj *obj)
{
    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        if (!objs[i]) {
            objs[i] = obj;
            break;
        }
    }
    pthread_mutex_unlock(&trace_lock);
}

static void registry_del(struct rec_obj *obj)
{
    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        if (objs[i] == obj) {
            objs[i] = NULL;
        }
    }
    pthread_mutex_unlock(&trace_lock);
}

struct rec_obj *rec_obj_of(struct config_item *item)
{
    struct rec_obj *found = NULL;

    if (!item) {
        return NULL;
    }
    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        if (objs[i] && &objs[i]->u.group.cg_item == item) {
            found = objs[i];
            break;
        }
    }
    pthread_mutex_unlock(&trace_lock);
    return found;
}

bool rec_is_live(const struct rec_obj *obj)
{
    bool live = false;

    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        if (obj && objs[i] == obj) {
            live = true;
        }
    }
    pthread_mutex_unlock(&trace_lock);
    return live;
}

struct rec_obj *rec_find(const char *name)
{
    struct rec_obj *found = NULL;

    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        if (objs[i] && strcmp(objs[i]->name, name) == 0) {
            found = objs[i];
        }
    }
    pthread_mutex_unlock(&trace_lock);
    return found;
}

struct config_item *rec_item(const char *name)
{
    struct rec_obj *obj = rec_find(name);

    return obj ? &obj->u.group.cg_item : NULL;
}

struct config_group *rec_group(const char *name)
{
    struct rec_obj *obj = rec_find(name);

    return obj ? &obj->u.group : NULL;
}

int rec_refs(struct config_item *item)
{
    return atomic_load(&item->ci_kref.refcount);
}

/* The nearest object of ours at or above @item (core's pending/ and live/
 * groups are not ours; their parent is). */
static struct rec_obj *owner_of(struct config_item *item)
{
    for (int depth = 0; item && depth < 128; depth++) {
        struct rec_obj *obj = rec_obj_of(item);
        if (obj) {
            return obj;
        }
        item = item->ci_parent;
    }
    return NULL;
}

const char *rec_links_to(const char *path)
{
    static char buf[512];
    char **paths = NULL;
    size_t n = 0;

    buf[0] = 0;
    assert_ok(cfs_links_to(path, &paths, &n));
    for (size_t i = 0; i < n; i++) {
        (void)snprintf(buf + strlen(buf),
                       sizeof(buf) - strlen(buf),
                       "%s%s",
                       i ? " " : "",
                       paths[i]);
    }
    cfs_paths_free(paths, n);
    return buf;
}

bool rec_su_held(struct rec_obj *sub)
{
    int rc;

    if (!sub || !rec_is_live(sub) || !sub->is_subsystem) {
        return false;
    }
    rc = pthread_mutex_trylock(&sub->u.su.su_mutex.lock);
    if (rc == 0) {
        pthread_mutex_unlock(&sub->u.su.su_mutex.lock);
        return false;
    }
    return rc == EBUSY;
}

void rec_set_hook(rec_hook_fn fn, void *data)
{
    hook_fn = fn;
    hook_data = data;
}

static void
run_hook(const char *cb, struct config_item *item, struct config_item *other)
{
    if (hook_fn) {
        hook_fn(cb, item, other, hook_data);
    }
}

/* ---- trace ------------------------------------------------------------- */

static void trace_vadd(int locked, int linked, const char *fmt, va_list ap)
    CFS_PRINTF(3, 0);

static void trace_vadd(int locked, int linked, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&trace_lock);
    if (trace_n < REC_TRACE_MAX) {
        struct rec_entry *e = &trace[trace_n++];
        (void)vsnprintf(e->text, sizeof(e->text), fmt, ap);
        e->locked = locked;
        e->linked = linked;
    } else {
        trace_overflow = true;
    }
    pthread_mutex_unlock(&trace_lock);
}

static void trace_add(int locked, int linked, const char *fmt, ...)
    CFS_PRINTF(3, 4);

static void trace_add(int locked, int linked, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    trace_vadd(locked, linked, fmt, ap);
    va_end(ap);
}

void rec_add(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    trace_vadd(-1, -1, fmt, ap);
    va_end(ap);
}

void rec_clear(void)
{
    pthread_mutex_lock(&trace_lock);
    trace_n = 0;
    trace_overflow = false;
    pthread_mutex_unlock(&trace_lock);
}

size_t rec_count(void)
{
    size_t n;

    pthread_mutex_lock(&trace_lock);
    n = trace_n;
    pthread_mutex_unlock(&trace_lock);
    return n;
}

const struct rec_entry *rec_at(size_t i)
{
    return i < rec_count() ? &trace[i] : NULL;
}

int rec_index(const char *text, size_t from)
{
    size_t n = rec_count();

    for (size_t i = from; i < n; i++) {
        if (strcmp(trace[i].text, text) == 0) {
            return (int)i;
        }
    }
    return -1;
}

int rec_occurrences(const char *text)
{
    int count = 0;
    size_t n = rec_count();

    for (size_t i = 0; i < n; i++) {
        if (strcmp(trace[i].text, text) == 0) {
            count++;
        }
    }
    return count;
}

int rec_prefixed(const char *prefix)
{
    int count = 0;
    size_t n = rec_count();
    size_t len = strlen(prefix);

    for (size_t i = 0; i < n; i++) {
        if (strncmp(trace[i].text, prefix, len) == 0) {
            count++;
        }
    }
    return count;
}

void rec_print(void)
{
    size_t n = rec_count();

    print_error(
        "trace (%zu entries%s):\n", n, trace_overflow ? ", overflowed" : "");
    for (size_t i = 0; i < n; i++) {
        print_error("  [%zu] %s%s\n",
                    i,
                    trace[i].text,
                    trace[i].locked == 1 ? " [su_mutex]" : "");
    }
}

void rec_assert_trace_(const char *file, int line, ...)
{
    const char *want[REC_TRACE_MAX];
    size_t nwant = 0;
    size_t n = rec_count();
    bool same;
    va_list ap;

    va_start(ap, line);
    for (const char *s = va_arg(ap, const char *); s && nwant < REC_TRACE_MAX;
         s = va_arg(ap, const char *)) {
        want[nwant++] = s;
    }
    va_end(ap);

    same = nwant == n && !trace_overflow;
    for (size_t i = 0; same && i < n; i++) {
        same = strcmp(want[i], trace[i].text) == 0;
    }
    if (!same) {
        print_error("%s:%d: callback trace differs\n", file, line);
        print_error("expected (%zu):\n", nwant);
        for (size_t i = 0; i < nwant; i++) {
            print_error("  [%zu] %s\n", i, want[i]);
        }
        rec_print();
        _fail(file, line);
    }
}

void rec_assert_locked_(const char *file, int line, const char *entry, int held)
{
    int i = rec_index(entry, 0);

    if (i < 0) {
        print_error("%s:%d: no trace entry \"%s\"\n", file, line, entry);
        rec_print();
        _fail(file, line);
        return;
    }
    if (trace[i].locked != held) {
        print_error("%s:%d: \"%s\" ran %s su_mutex, expected %s\n",
                    file,
                    line,
                    entry,
                    trace[i].locked == 1   ? "under"
                    : trace[i].locked == 0 ? "without"
                                           : "with unknown",
                    held ? "under it" : "without it");
        _fail(file, line);
    }
}

/* ---- callbacks --------------------------------------------------------- */

static const char *nm(struct config_item *item)
{
    const char *name = item ? config_item_name(item) : NULL;

    return name ? name : "?";
}

static int linked_of(struct config_item *item)
{
    return item ? item->ci_parent != NULL : -1;
}

static struct rec_obj *sub_of(struct config_item *item)
{
    struct rec_obj *obj = owner_of(item);

    return obj ? obj->sub : NULL;
}

static int held_for(struct config_item *item)
{
    struct rec_obj *sub = sub_of(item);

    return sub ? rec_su_held(sub) : -1;
}

static void free_obj(struct rec_obj *obj)
{
    registry_del(obj);
    for (size_t i = 0; i < REC_MAX_BINS; i++) {
        rec_free(obj->blob[i]);
    }
    rec_free(obj);
}

/* M14: default groups are the client's to drop. */
static void drop_defaults(struct rec_obj *obj)
{
    if (obj->type && obj->type->seed_defaults) {
        for (size_t i = 0; obj->seed[i]; i++) {
            config_group_put(obj->seed[i]);
            obj->seed[i] = NULL;
        }
    } else {
        configfs_remove_default_groups(&obj->u.group);
    }
}

static void rec_release(struct config_item *item)
{
    struct rec_obj *obj = rec_obj_of(item);
    int held = -1;

    if (!obj) {
        trace_add(-1, -1, "release(<foreign item>)");
        return;
    }
    held = obj->sub ? rec_su_held(obj->sub) : -1;
    trace_add(held, linked_of(item), "release(%s)", obj->name);
    run_hook("release", item, NULL);
    drop_defaults(obj);
    free_obj(obj);
}

static struct rec_type *type_of_dir(struct config_group *group)
{
    struct rec_obj *obj = owner_of(group ? &group->cg_item : NULL);

    return obj ? obj->type : NULL;
}

static struct config_item *
make_common(struct config_group *group, const char *name, const char *cb)
{
    struct config_item *parent = group ? &group->cg_item : NULL;
    struct rec_type *t = type_of_dir(group);
    struct rec_obj *sub = sub_of(parent);
    struct rec_obj *obj;

    trace_add(held_for(parent), -1, "%s(%s,%s)", cb, nm(parent), name);
    if (!t) {
        return ERR_PTR(-ENOSYS);
    }
    if (t->make_err == REC_MAKE_NULL) {
        run_hook(cb, NULL, parent);
        return NULL;
    }
    if (t->make_err < 0) {
        run_hook(cb, NULL, parent);
        return ERR_PTR(t->make_err);
    }
    obj = rec_obj_new(
        t->child ? t->child : t, t->make_name ? t->make_name : name, sub);
    if (!obj) {
        return NULL;
    }
    if (t->make_untyped) {
        obj->u.group.cg_item.ci_type = NULL;
    }
    run_hook(cb, &obj->u.group.cg_item, parent);
    return &obj->u.group.cg_item;
}

static struct config_item *rec_make_item(struct config_group *group,
                                         const char *name)
{
    return make_common(group, name, "make_item");
}

static struct config_group *rec_make_group(struct config_group *group,
                                           const char *name)
{
    struct config_item *item = make_common(group, name, "make_group");

    if (IS_ERR_OR_NULL(item)) {
        return (struct config_group *)item;
    }
    return to_config_group(item);
}

static void rec_disconnect_notify(struct config_group *group,
                                  struct config_item *item)
{
    trace_add(held_for(&group->cg_item),
              linked_of(item),
              "disconnect_notify(%s,%s)",
              nm(&group->cg_item),
              nm(item));
    run_hook("disconnect_notify", item, &group->cg_item);
}

static void rec_drop_item(struct config_group *group, struct config_item *item)
{
    trace_add(held_for(&group->cg_item),
              linked_of(item),
              "drop_item(%s,%s)",
              nm(&group->cg_item),
              nm(item));
    run_hook("drop_item", item, &group->cg_item);
    config_item_put(item);
}

static int rec_allow_link(struct config_item *src, struct config_item *target)
{
    struct rec_obj *owner = owner_of(src);

    trace_add(held_for(src),
              linked_of(src),
              "allow_link(%s,%s)",
              nm(src),
              nm(target));
    run_hook("allow_link", src, target);
    return owner ? owner->type->allow_err : 0;
}

static void rec_drop_link(struct config_item *src, struct config_item *target)
{
    trace_add(
        held_for(src), linked_of(src), "drop_link(%s,%s)", nm(src), nm(target));
    run_hook("drop_link", src, target);
}

/* The committable type an item in pending/ or live/ belongs to. */
static struct rec_type *committable_of(struct config_item *item)
{
    for (struct config_item *it = item ? item->ci_parent : NULL; it;
         it = it->ci_parent) {
        struct rec_obj *obj = rec_obj_of(it);
        if (obj && (obj->type->committable || obj->type->commit_only)) {
            return obj->type;
        }
    }
    return NULL;
}

static int rec_commit_item(struct config_item *item)
{
    struct rec_type *t = committable_of(item);

    trace_add(held_for(item), linked_of(item), "commit_item(%s)", nm(item));
    run_hook("commit_item", item, item->ci_parent);
    return t ? t->commit_err : 0;
}

static int rec_uncommit_item(struct config_item *item)
{
    struct rec_type *t = committable_of(item);

    trace_add(held_for(item), linked_of(item), "uncommit_item(%s)", nm(item));
    run_hook("uncommit_item", item, item->ci_parent);
    return t ? t->uncommit_err : 0;
}

static bool
rec_is_visible(struct config_item *item, struct configfs_attribute *attr, int n)
{
    struct rec_obj *obj = rec_obj_of(item);
    bool visible = true;

    trace_add(held_for(item),
              linked_of(item),
              "is_visible(%s,%s,%d)",
              nm(item),
              attr ? attr->ca_name : "?",
              n);
    run_hook("is_visible", item, NULL);
    if (obj && n >= 0 && n < REC_MAX_ATTRS) {
        visible = !(obj->type->attrs[n].flags & REC_HIDDEN);
    }
    return visible;
}

static bool rec_is_bin_visible(struct config_item *item,
                               struct configfs_bin_attribute *attr,
                               int n)
{
    struct rec_obj *obj = rec_obj_of(item);
    bool visible = true;

    trace_add(held_for(item),
              linked_of(item),
              "is_bin_visible(%s,%s,%d)",
              nm(item),
              attr ? attr->cb_attr.ca_name : "?",
              n);
    run_hook("is_bin_visible", item, NULL);
    if (obj && n >= 0 && n < REC_MAX_BINS) {
        visible = !(obj->type->bins[n].flags & REC_HIDDEN);
    }
    return visible;
}

static ssize_t
show_common(struct config_item *item, int i, char *page, const char *cb)
{
    struct rec_obj *obj = rec_obj_of(item);
    struct rec_attr_spec *spec;
    bool zeroed = true;
    size_t n;

    if (!obj) {
        trace_add(-1, -1, "%s(<foreign item>)", cb);
        return -ENXIO;
    }
    spec = &obj->type->attrs[i];
    for (size_t k = 0; k < CONFIGFS_PAGE_SIZE && zeroed; k++) {
        zeroed = page[k] == 0;
    }
    obj->last_show_page_zeroed = zeroed;
    trace_add(held_for(item),
              linked_of(item),
              "%s(%s,%s)",
              cb,
              obj->name,
              spec->name);
    run_hook(cb, item, NULL);
    if (spec->show_err) {
        return spec->show_err;
    }
    if (spec->show_fill) {
        n = spec->show_fill < CONFIGFS_PAGE_SIZE ? spec->show_fill
                                                 : CONFIGFS_PAGE_SIZE;
        memset(page, 'v', n);
        return spec->show_len > 0 ? spec->show_len : (ssize_t)n;
    }
    pthread_mutex_lock(&value_lock);
    memcpy(page, obj->val[i], obj->val_len[i]);
    n = obj->val_len[i];
    pthread_mutex_unlock(&value_lock);
    if (spec->show_len > 0) {
        return spec->show_len;
    }
    return (ssize_t)n;
}

static ssize_t store_common(struct config_item *item,
                            int i,
                            const char *page,
                            size_t count,
                            const char *cb)
{
    struct rec_obj *obj = rec_obj_of(item);
    struct rec_attr_spec *spec;
    size_t n = count;

    if (!obj) {
        trace_add(-1, -1, "%s(<foreign item>)", cb);
        return -ENXIO;
    }
    spec = &obj->type->attrs[i];
    trace_add(held_for(item),
              linked_of(item),
              "%s(%s,%s,%zu)",
              cb,
              obj->name,
              spec->name,
              count);
    /* WR1: the buffer carries a NUL after the bytes given. */
    obj->last_store_nul = page && page[count] == '\0';
    run_hook(cb, item, NULL);
    if (spec->store_err) {
        return spec->store_err;
    }
    if (spec->store_zero) {
        return 0;
    }
    if (spec->store_max && n > spec->store_max) {
        n = spec->store_max;
    }
    if (n >= CONFIGFS_PAGE_SIZE) {
        n = CONFIGFS_PAGE_SIZE - 1;
    }
    pthread_mutex_lock(&value_lock);
    if (n && page) {
        memcpy(obj->val[i], page, n);
    }
    obj->val_len[i] = n;
    pthread_mutex_unlock(&value_lock);
    return (ssize_t)n;
}

#define REC_ATTR_FNS(i)                                                        \
    static ssize_t rec_show_##i(struct config_item *item, char *page)          \
    {                                                                          \
        return show_common(item, i, page, "show");                             \
    }                                                                          \
    static ssize_t rec_store_##i(                                              \
        struct config_item *item, const char *page, size_t count)              \
    {                                                                          \
        return store_common(item, i, page, count, "store");                    \
    }

REC_ATTR_FNS(0)
REC_ATTR_FNS(1)
REC_ATTR_FNS(2)
REC_ATTR_FNS(3)
REC_ATTR_FNS(4)
REC_ATTR_FNS(5)
REC_ATTR_FNS(6)
REC_ATTR_FNS(7)

static ssize_t (*const show_fns[REC_MAX_ATTRS])(struct config_item *,
                                                char *) = {
    rec_show_0,
    rec_show_1,
    rec_show_2,
    rec_show_3,
    rec_show_4,
    rec_show_5,
    rec_show_6,
    rec_show_7,
};

static ssize_t (*const store_fns[REC_MAX_ATTRS])(struct config_item *,
                                                 const char *,
                                                 size_t) = {
    rec_store_0,
    rec_store_1,
    rec_store_2,
    rec_store_3,
    rec_store_4,
    rec_store_5,
    rec_store_6,
    rec_store_7,
};

static int attr_index(struct config_item *item, struct configfs_attribute *attr)
{
    struct rec_obj *obj = rec_obj_of(item);

    for (int i = 0; obj && i < REC_MAX_ATTRS; i++) {
        if (&obj->type->ca[i] == attr) {
            return i;
        }
    }
    return -1;
}

static ssize_t rec_show_attribute(struct config_item *item,
                                  struct configfs_attribute *attr,
                                  char *page)
{
    int i = attr_index(item, attr);

    if (i < 0) {
        trace_add(-1, -1, "show_attribute(<foreign attribute>)");
        return -ENXIO;
    }
    return show_common(item, i, page, "show_attribute");
}

static ssize_t rec_store_attribute(struct config_item *item,
                                   struct configfs_attribute *attr,
                                   const char *page,
                                   size_t count)
{
    int i = attr_index(item, attr);

    if (i < 0) {
        trace_add(-1, -1, "store_attribute(<foreign attribute>)");
        return -ENXIO;
    }
    return store_common(item, i, page, count, "store_attribute");
}

static ssize_t
bin_read_common(struct config_item *item, int i, void *buf, size_t size)
{
    struct rec_obj *obj = rec_obj_of(item);
    struct rec_bin_spec *spec;
    size_t n;

    if (!obj) {
        return -ENXIO;
    }
    spec = &obj->type->bins[i];
    trace_add(held_for(item),
              linked_of(item),
              "read(%s,%s,%zu%s)",
              obj->name,
              spec->name,
              size,
              buf ? "" : ",NULL");
    run_hook("read", item, NULL);
    if (spec->read_err) {
        return spec->read_err;
    }
    if (!buf) {
        return spec->size_set ? spec->size : (ssize_t)obj->blob_len[i];
    }
    n = size < obj->blob_len[i] ? size : obj->blob_len[i];
    if (n) {
        memcpy(buf, obj->blob[i], n);
    }
    return (ssize_t)n;
}

static ssize_t
bin_write_common(struct config_item *item, int i, const void *buf, size_t size)
{
    struct rec_obj *obj = rec_obj_of(item);
    struct rec_bin_spec *spec;
    char *copy = NULL;

    if (!obj) {
        return -ENXIO;
    }
    spec = &obj->type->bins[i];
    trace_add(held_for(item),
              linked_of(item),
              "write(%s,%s,%zu)",
              obj->name,
              spec->name,
              size);
    run_hook("write", item, NULL);
    if (spec->write_err) {
        return spec->write_err;
    }
    if (size) {
        copy = raw_zalloc(size);
        memcpy(copy, buf, size);
    }
    rec_free(obj->blob[i]);
    obj->blob[i] = copy;
    obj->blob_len[i] = size;
    return (ssize_t)size;
}

#define REC_BIN_FNS(i)                                                         \
    static ssize_t rec_read_##i(                                               \
        struct config_item *item, void *buf, size_t size)                      \
    {                                                                          \
        return bin_read_common(item, i, buf, size);                            \
    }                                                                          \
    static ssize_t rec_write_##i(                                              \
        struct config_item *item, const void *buf, size_t size)                \
    {                                                                          \
        return bin_write_common(item, i, buf, size);                           \
    }

REC_BIN_FNS(0)
REC_BIN_FNS(1)
REC_BIN_FNS(2)
REC_BIN_FNS(3)

static ssize_t (*const read_fns[REC_MAX_BINS])(struct config_item *,
                                               void *,
                                               size_t) = {
    rec_read_0,
    rec_read_1,
    rec_read_2,
    rec_read_3,
};

static ssize_t (*const write_fns[REC_MAX_BINS])(struct config_item *,
                                                const void *,
                                                size_t) = {
    rec_write_0,
    rec_write_1,
    rec_write_2,
    rec_write_3,
};

/* ---- types and objects ------------------------------------------------- */

struct rec_type *rec_type_new(const char *name)
{
    struct rec_type *t;

    if (types_n >= REC_MAX_TYPES) {
        fail_msg("recorder: too many types");
    }
    t = &types[types_n++];
    memset(t, 0, sizeof(*t));
    t->name = name;
    return t;
}

int rec_attr(struct rec_type *t,
             const char *name,
             unsigned short mode,
             unsigned int flags)
{
    for (int i = 0; i < REC_MAX_ATTRS; i++) {
        if (!t->attrs[i].name) {
            t->attrs[i].name = name;
            t->attrs[i].mode = mode;
            t->attrs[i].flags = flags;
            return i;
        }
    }
    fail_msg("recorder: too many attributes");
    return -1;
}

int rec_bin(struct rec_type *t,
            const char *name,
            unsigned short mode,
            size_t max_size)
{
    for (int i = 0; i < REC_MAX_BINS; i++) {
        if (!t->bins[i].name) {
            t->bins[i].name = name;
            t->bins[i].mode = mode;
            t->bins[i].max_size = max_size;
            return i;
        }
    }
    fail_msg("recorder: too many binary attributes");
    return -1;
}

void rec_default(struct rec_type *t, const char *name, struct rec_type *type)
{
    for (int i = 0; i < REC_MAX_DEFAULTS; i++) {
        if (!t->defaults[i].name) {
            t->defaults[i].name = name;
            t->defaults[i].type = type;
            return;
        }
    }
    fail_msg("recorder: too many default groups");
}

void rec_type_build(struct rec_type *t)
{
    bool type_methods = false;
    bool visibility = t->visibility;
    size_t n = 0;

    memset(&t->iops, 0, sizeof(t->iops));
    memset(&t->gops, 0, sizeof(t->gops));
    memset(&t->ct, 0, sizeof(t->ct));

    for (int i = 0; i < REC_MAX_ATTRS && t->attrs[i].name; i++) {
        struct rec_attr_spec *s = &t->attrs[i];
        struct configfs_attribute *ca = &t->ca[i];

        memset(ca, 0, sizeof(*ca));
        ca->ca_name = s->name;
        ca->ca_mode = s->mode;
        ca->ca_owner = t->owner;
        if (s->flags & REC_TYPE_METHODS) {
            type_methods = true;
        } else {
            ca->show = (s->flags & REC_NO_SHOW) ? NULL : show_fns[i];
            ca->store = (s->flags & REC_NO_STORE) ? NULL : store_fns[i];
        }
        if (s->flags & REC_HIDDEN) {
            visibility = true;
        }
        t->ca_ptrs[n++] = ca;
    }
    t->ca_ptrs[n] = NULL;

    n = 0;
    for (int i = 0; i < REC_MAX_BINS && t->bins[i].name; i++) {
        struct rec_bin_spec *s = &t->bins[i];
        struct configfs_bin_attribute *cb = &t->cb[i];

        memset(cb, 0, sizeof(*cb));
        cb->cb_attr.ca_name = s->name;
        cb->cb_attr.ca_mode = s->mode;
        cb->cb_attr.ca_owner = t->owner;
        cb->cb_max_size = s->max_size;
        cb->read = (s->flags & REC_NO_SHOW) ? NULL : read_fns[i];
        cb->write = (s->flags & REC_NO_STORE) ? NULL : write_fns[i];
        if (s->flags & REC_HIDDEN) {
            visibility = true;
        }
        t->cb_ptrs[n++] = cb;
    }
    t->cb_ptrs[n] = NULL;

    if (!t->no_release) {
        t->iops.release = rec_release;
    }
    if (type_methods) {
        t->iops.show_attribute = rec_show_attribute;
        t->iops.store_attribute = rec_store_attribute;
    }
    if (t->links) {
        t->iops.allow_link = rec_allow_link;
        if (!t->no_drop_link) {
            t->iops.drop_link = rec_drop_link;
        }
    }

    if (t->make == REC_MAKE_ITEM || t->make == REC_MAKE_BOTH) {
        t->gops.make_item = rec_make_item;
    }
    if (t->make == REC_MAKE_GROUP || t->make == REC_MAKE_BOTH) {
        t->gops.make_group = rec_make_group;
    }
    if (t->committable || t->commit_only) {
        t->gops.commit_item = rec_commit_item;
    }
    if (t->committable) {
        t->gops.uncommit_item = rec_uncommit_item;
    }
    if (!t->no_disconnect) {
        t->gops.disconnect_notify = rec_disconnect_notify;
    }
    if (!t->no_drop_item) {
        t->gops.drop_item = rec_drop_item;
    }
    if (visibility) {
        t->gops.is_visible = rec_is_visible;
        t->gops.is_bin_visible = rec_is_bin_visible;
    }

    t->ct.ct_owner = t->owner;
    t->ct.ct_name = t->name;
    t->ct.ct_item_ops = t->no_item_ops ? NULL : &t->iops;
    t->ct.ct_group_ops = t->no_group_ops ? NULL : &t->gops;
    t->ct.ct_attrs = t->ca_ptrs[0] ? t->ca_ptrs : NULL;
    t->ct.ct_bin_attrs = t->cb_ptrs[0] ? t->cb_ptrs : NULL;
    t->built = true;
}

static void build_all_types(void)
{
    for (size_t i = 0; i < types_n; i++) {
        rec_type_build(&types[i]);
    }
}

static struct rec_obj *obj_new(struct rec_type *t,
                               const char *name,
                               struct rec_obj *sub,
                               bool is_subsystem)
{
    struct rec_obj *obj = raw_zalloc(sizeof(*obj));

    if (!obj) {
        return NULL;
    }
    if (!t->built) {
        rec_type_build(t);
    }
    obj->type = t;
    obj->is_subsystem = is_subsystem;
    obj->sub = is_subsystem ? obj : sub;
    (void)snprintf(obj->name, sizeof(obj->name), "%s", name);
    config_group_init_type_name(&obj->u.group, name, &t->ct);
    for (int i = 0; i < REC_MAX_ATTRS && t->attrs[i].name; i++) {
        const char *init = t->attrs[i].init ? t->attrs[i].init : "";
        size_t len = strlen(init);
        memcpy(obj->val[i], init, len);
        obj->val_len[i] = len;
    }
    registry_add(obj);
    for (int i = 0; i < REC_MAX_DEFAULTS && t->defaults[i].name; i++) {
        struct rec_obj *d =
            obj_new(t->defaults[i].type, t->defaults[i].name, obj->sub, false);
        obj->defaults[i] = d;
        if (t->seed_defaults) {
            obj->seed[i] = &d->u.group;
        } else {
            configfs_add_default_group(&d->u.group, &obj->u.group);
        }
    }
    if (t->seed_defaults) {
        obj->u.group.cg_default_groups_array = obj->seed;
    }
    return obj;
}

struct rec_obj *
rec_obj_new(struct rec_type *t, const char *name, struct rec_obj *sub)
{
    return obj_new(t, name, sub, false);
}

int rec_register_rc(const char *name, struct rec_type *t, struct rec_obj **ret)
{
    struct rec_obj *obj;
    int rc;

    build_all_types();
    obj = obj_new(t, name, NULL, true);
    if (!obj) {
        return -ENOMEM;
    }
    obj->u.su.su_show_item_local = t->show_item_local;
    rc = configfs_register_subsystem(&obj->u.su);
    if (rc) {
        config_item_put(&obj->u.group.cg_item);
        return rc;
    }
    obj->registered = true;
    if (ret) {
        *ret = obj;
    }
    return 0;
}

void rec_tree(struct rec_type **ret_s,
              struct rec_type **ret_g,
              struct rec_type **ret_i)
{
    struct rec_type *s = rec_type_new("s");
    struct rec_type *g = rec_type_new("g");
    struct rec_type *i = rec_type_new("i");

    s->make = REC_MAKE_GROUP;
    s->child = g;
    g->make = REC_MAKE_ITEM;
    g->child = i;
    g->links = true;
    rec_attr(i, "v", 0644, 0);
    *ret_s = s;
    *ret_g = g;
    *ret_i = i;
}

struct rec_obj *rec_register(const char *name, struct rec_type *t)
{
    struct rec_obj *obj = NULL;
    int rc = rec_register_rc(name, t, &obj);

    if (rc) {
        print_error("registering %s: %s\n", name, rec_errname(rc));
        fail();
    }
    return obj;
}

void rec_unregister(struct rec_obj *sub)
{
    if (!sub || !sub->registered) {
        return;
    }
    configfs_unregister_subsystem(&sub->u.su);
    sub->registered = false;
    config_item_put(&sub->u.group.cg_item);
}

/* ---- fixture ----------------------------------------------------------- */

int rec_setup(void **state)
{
    (void)state;
    rec_alloc_fail_nth(0);
    /* CFS_TEST_LIBC_ALLOC=1 leaves core on libc, so that ASan sees each of
     * its blocks (cmocka's guard bytes hide small overflows from it). */
    if (!getenv("CFS_TEST_LIBC_ALLOC")) {
        cfs_set_alloc_funcs(rec_malloc, rec_realloc, rec_free);
    }
    rec_clear();
    types_n = 0;
    memset(types, 0, sizeof(types));
    memset(objs, 0, sizeof(objs));
    memset(txns, 0, sizeof(txns));
    cleaned_up = false;
    hook_fn = NULL;
    hook_data = NULL;
    return 0;
}

/* Undo what a test left: open transactions, subsystems, objects.
 * @return the number of objects the test still held references to. */
static int cleanup(void)
{
    int leftovers = 0;

    rec_alloc_fail_nth(0);
    hook_fn = NULL;
    for (size_t i = REC_MAX_TXNS; i-- > 0;) {
        if (txns[i]) {
            cfs_txn_abort(txns[i]);
            txns[i] = NULL;
        }
    }
    /* Newest subsystem first. */
    for (size_t i = REC_MAX_OBJS; i-- > 0;) {
        struct rec_obj *obj = objs[i];
        if (obj && obj->is_subsystem && obj->registered) {
            rec_unregister(obj);
        }
    }
    /* Items whose release never runs (no type, or a type without release)
     * still own their default groups. */
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        struct rec_obj *obj = objs[i];
        if (obj && rec_refs(&obj->u.group.cg_item) == 0) {
            drop_defaults(obj);
        }
    }
    /* What is left was never released: types without release or items
     * without a type (count 0), or references the test still holds. */
    for (size_t i = 0; i < REC_MAX_OBJS; i++) {
        struct rec_obj *obj = objs[i];
        if (!obj) {
            continue;
        }
        if (rec_refs(&obj->u.group.cg_item) > 0 &&
            !(obj->type && obj->type->no_release)) {
            print_error("cleanup: %s still has %d reference(s)\n",
                        obj->name,
                        rec_refs(&obj->u.group.cg_item));
            leftovers++;
        }
        free_obj(obj);
    }
    cleaned_up = true;
    return leftovers;
}

void rec_body(void **state)
{
    const struct rec_case *c = *state;

    cleaned_up = false;
    c->fn(state);
    if (cleanup()) {
        fail_msg("objects still referenced after the test");
    }
}

int rec_teardown(void **state)
{
    (void)state;
    if (!cleaned_up) {
        cleanup();
    }
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return 0;
}

/* ---- global state probe ----------------------------------------------------
 * Core must hold no allocation once every subsystem is gone, or no unit
 * test can be a leak test. The probe registers and unregisters a subsystem
 * on a counting libc allocator before the group runs; what core keeps is
 * reported by rec_global_leftovers() (test_item_no_global_allocations
 * asserts it is zero) and, being libc memory, stays out of the way of
 * cmocka's leak check for the rest of the group. */

static long probe_live;

static void *probe_malloc(size_t size)
{
    void *p = malloc(size);

    if (p) {
        probe_live++;
    }
    return p;
}

static void *probe_realloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size);

    if (p && !ptr) {
        probe_live++;
    }
    return p;
}

static void probe_free(void *ptr)
{
    if (ptr) {
        probe_live--;
    }
    free(ptr);
}

static long global_leftovers = -1;

long rec_global_leftovers(void)
{
    return global_leftovers;
}

static void probe_globals(void)
{
    struct rec_type *t;
    struct rec_obj *sub = NULL;

    if (global_leftovers >= 0) {
        return;
    }
    memset(types, 0, sizeof(types));
    types_n = 0;
    t = rec_type_new("probe");
    t->make = REC_MAKE_ITEM;
    t->child = t;
    rec_attr(t, "a", 0644, 0);
    probe_live = 0;
    cfs_set_alloc_funcs(probe_malloc, probe_realloc, probe_free);
    if (rec_register_rc("probe", t, &sub) == 0) {
        cfs_mkdir(NULL, "/probe/x");
        rec_store_str("/probe/x/a", "1");
        cfs_rmdir(NULL, "/probe/x");
        rec_unregister(sub);
    }
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    global_leftovers = probe_live;
    memset(objs, 0, sizeof(objs));
    rec_clear();
}

int rec_run_(const char *name, const struct CMUnitTest *tests, size_t n)
{
    static struct CMUnitTest picked[256];
    const char *filter = getenv("CFS_TEST_FILTER");
    size_t k = 0;

    probe_globals();
    if (!filter || !*filter || n > 256) {
        return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        if (strstr(tests[i].name, filter)) {
            picked[k++] = tests[i];
        }
    }
    return _cmocka_run_group_tests(name, picked, k, NULL, NULL);
}

/* ---- operation helpers ------------------------------------------------- */

const char *rec_errname(int err)
{
    static const struct {
        int e;
        const char *name;
    } names[] = {
        {0, "0"},
        {-EPERM, "-EPERM"},
        {-ENOENT, "-ENOENT"},
        {-EINTR, "-EINTR"},
        {-EIO, "-EIO"},
        {-ENXIO, "-ENXIO"},
        {-E2BIG, "-E2BIG"},
        {-EAGAIN, "-EAGAIN"},
        {-ENOMEM, "-ENOMEM"},
        {-EACCES, "-EACCES"},
        {-EFAULT, "-EFAULT"},
        {-EBUSY, "-EBUSY"},
        {-EEXIST, "-EEXIST"},
        {-EXDEV, "-EXDEV"},
        {-ENODEV, "-ENODEV"},
        {-ENOTDIR, "-ENOTDIR"},
        {-EISDIR, "-EISDIR"},
        {-EINVAL, "-EINVAL"},
        {-ETXTBSY, "-ETXTBSY"},
        {-EFBIG, "-EFBIG"},
        {-ENOSPC, "-ENOSPC"},
        {-ERANGE, "-ERANGE"},
        {-EDEADLK, "-EDEADLK"},
        {-ENAMETOOLONG, "-ENAMETOOLONG"},
        {-ENOSYS, "-ENOSYS"},
        {-ENOTEMPTY, "-ENOTEMPTY"},
        {-ELOOP, "-ELOOP"},
        {-EOPNOTSUPP, "-EOPNOTSUPP"},
        {-ESTALE, "-ESTALE"},
    };
    static _Thread_local char other[32];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].e == err) {
            return names[i].name;
        }
    }
    (void)snprintf(other, sizeof(other), "%d", err);
    return other;
}

void rec_assert_rc_(
    long got, long want, const char *expr, const char *file, int line)
{
    if (got != want) {
        print_error("%s:%d: %s = %s (%ld), expected %s (%ld)\n",
                    file,
                    line,
                    expr,
                    rec_errname((int)got),
                    got,
                    rec_errname((int)want),
                    want);
        _fail(file, line);
    }
}

#define RING   8
#define RINGSZ 8192
static char ring[RING][RINGSZ];
static unsigned ring_i;

static char *ring_next(void)
{
    char *b = ring[ring_i++ % RING];

    b[0] = '\0';
    return b;
}

const char *rec_ls(const char *path)
{
    struct cfs_entry *entries = NULL;
    size_t n = 0;
    char *b = ring_next();
    size_t used = 0;
    int rc = cfs_readdir(path, &entries, &n);

    if (rc) {
        (void)snprintf(b, RINGSZ, "E%s", rec_errname(rc));
        return b;
    }
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(
            b + used, RINGSZ - used, "%s%s", i ? " " : "", entries[i].name);
        if (w < 0 || (size_t)w >= RINGSZ - used) {
            break;
        }
        used += (size_t)w;
    }
    cfs_entries_free(entries, n);
    return b;
}

const char *rec_cat(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    char *b = ring_next();
    int rc = cfs_show(path, &buf, &len);

    if (rc) {
        (void)snprintf(b, RINGSZ, "E%s", rec_errname(rc));
        return b;
    }
    if (len >= RINGSZ) {
        len = RINGSZ - 1;
    }
    memcpy(b, buf, len);
    b[len] = '\0';
    cfs_free(buf);
    return b;
}

int rec_store_str(const char *path, const char *value)
{
    return cfs_write(NULL, path, value, strlen(value));
}

int rec_txn_store_str(struct cfs_txn *txn, const char *path, const char *value)
{
    return cfs_write(txn, path, value, strlen(value));
}

const char *rec_values(const char *path)
{
    struct cfs_value *values = NULL;
    size_t n = 0;
    char *b = ring_next();
    size_t used = 0;
    int rc = cfs_written_values(path, &values, &n);

    if (rc) {
        (void)snprintf(b, RINGSZ, "E%s", rec_errname(rc));
        return b;
    }
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(b + used,
                         RINGSZ - used,
                         "%s%s=%.*s",
                         i ? " " : "",
                         values[i].name,
                         (int)values[i].len,
                         values[i].data);
        if (w < 0 || (size_t)w >= RINGSZ - used) {
            break;
        }
        used += (size_t)w;
    }
    cfs_values_free(values, n);
    return b;
}

struct cfs_txn *rec_txn_begin(void)
{
    struct cfs_txn *txn = NULL;
    int rc = cfs_txn_begin(&txn);

    if (rc) {
        print_error("cfs_txn_begin: %s\n", rec_errname(rc));
        fail();
    }
    for (size_t i = 0; i < REC_MAX_TXNS; i++) {
        if (!txns[i]) {
            txns[i] = txn;
            break;
        }
    }
    return txn;
}

static void txn_forget(struct cfs_txn *txn)
{
    for (size_t i = 0; i < REC_MAX_TXNS; i++) {
        if (txns[i] == txn) {
            txns[i] = NULL;
        }
    }
}

void rec_txn_commit(struct cfs_txn *txn)
{
    txn_forget(txn);
    cfs_txn_commit(txn);
}

int rec_txn_abort(struct cfs_txn *txn)
{
    txn_forget(txn);
    return cfs_txn_abort(txn);
}
