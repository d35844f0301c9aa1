// SPDX-License-Identifier: MIT
/*
 * store-testsys.c - the store tests' subsystem (see store-testsys.h),
 * written as a kernel client would write it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#include "store-testsys.h"

#define VAL_MAX 64

struct tsys {
    struct configfs_subsystem subsys;
    struct config_group items;
    struct config_group commit;
    char name[64];
    char note[VAL_MAX];
    char refuse_values[16];
    char refuse_names[16];
};

struct titem {
    struct config_item item;
    struct tsys *sys;
    char a[VAL_MAX], b[VAL_MAX], c[VAL_MAX], secret[VAL_MAX];
};

static atomic_long items_alive;
static char default_values[16], default_names[16];

/* What the callbacks saw, in order (callbacks run under core's mutation
 * lock, one at a time). */
static char event_log[2048];

static void log_event(const char *what, const char *arg, size_t len)
{
    size_t n = strlen(event_log);

    (void)snprintf(
        event_log + n, sizeof(event_log) - n, "%s%.*s ", what, (int)len, arg);
}

const char *tsys_events(void)
{
    return event_log;
}

void tsys_events_reset(void)
{
    event_log[0] = '\0';
}

static struct titem *to_titem(struct config_item *item)
{
    return container_of(item, struct titem, item);
}

static struct tsys *to_tsys(struct config_item *item)
{
    return container_of(
        to_configfs_subsystem(to_config_group(item)), struct tsys, subsys);
}

static ssize_t
put_value(char *dst, const char *page, size_t count, const struct tsys *sys)
{
    if (count >= VAL_MAX) {
        return -EINVAL;
    }
    if (sys && sys->refuse_values[0] &&
        strncmp(page, sys->refuse_values, strlen(sys->refuse_values)) == 0) {
        return -EINVAL;
    }
    memcpy(dst, page, count);
    dst[count] = '\0';
    log_event("store:", page, count);
    return (ssize_t)count;
}

#define TITEM_ATTR(field)                                                      \
    static ssize_t titem_##field##_show(struct config_item *item, char *page)  \
    {                                                                          \
        return sprintf(page, "%s", to_titem(item)->field);                     \
    }                                                                          \
    static ssize_t titem_##field##_store(                                      \
        struct config_item *item, const char *page, size_t count)              \
    {                                                                          \
        return put_value(                                                      \
            to_titem(item)->field, page, count, to_titem(item)->sys);          \
    }                                                                          \
    CONFIGFS_ATTR(titem_, field)

TITEM_ATTR(a);
TITEM_ATTR(b);
TITEM_ATTR(c);

static ssize_t
titem_secret_store(struct config_item *item, const char *page, size_t count)
{
    return put_value(to_titem(item)->secret, page, count, to_titem(item)->sys);
}
CONFIGFS_ATTR_WO(titem_, secret);

static struct configfs_attribute *titem_attrs[] = {
    &titem_attr_a,
    &titem_attr_b,
    &titem_attr_c,
    &titem_attr_secret,
    NULL,
};

static void titem_release(struct config_item *item)
{
    cfs_free(to_titem(item));
    atomic_fetch_sub(&items_alive, 1);
}

static int titem_allow_link(struct config_item *src, struct config_item *target)
{
    (void)src;
    log_event(
        "link:", config_item_name(target), strlen(config_item_name(target)));
    return 0;
}

static void titem_drop_link(struct config_item *src, struct config_item *target)
{
    (void)src;
    (void)target;
}

static const struct configfs_item_operations titem_ops = {
    .release = titem_release,
    .allow_link = titem_allow_link,
    .drop_link = titem_drop_link,
};

static const struct config_item_type titem_type = {
    .ct_item_ops = &titem_ops,
    .ct_attrs = titem_attrs,
    .ct_name = "test-item",
};

/* The subsystem a group (items/, commit/, pending/) belongs to. */
static struct tsys *group_tsys(struct config_group *group)
{
    return container_of(group->cg_subsys, struct tsys, subsys);
}

static struct config_item *make_titem(struct config_group *group,
                                      const char *name)
{
    struct tsys *sys = group_tsys(group);
    struct titem *t;

    if (sys->refuse_names[0] &&
        strncmp(name, sys->refuse_names, strlen(sys->refuse_names)) == 0) {
        return ERR_PTR(-ENOSPC);
    }
    t = cfs_zalloc(sizeof(*t));
    if (!t) {
        return ERR_PTR(-ENOMEM);
    }
    t->sys = sys;
    config_item_init_type_name(&t->item, name, &titem_type);
    log_event("mkdir:", name, strlen(name));
    atomic_fetch_add(&items_alive, 1);
    return &t->item;
}

static void drop_titem(struct config_group *group, struct config_item *item)
{
    (void)group;
    config_item_put(item);
}

static int commit_titem(struct config_item *item)
{
    log_event(
        "commit:", config_item_name(item), strlen(config_item_name(item)));
    return 0;
}

static const struct configfs_group_operations items_group_ops = {
    .make_item = make_titem,
    .drop_item = drop_titem,
};

static const struct config_item_type items_type = {
    .ct_group_ops = &items_group_ops,
    .ct_name = "test-items",
};

static const struct configfs_group_operations commit_group_ops = {
    .make_item = make_titem,
    .drop_item = drop_titem,
    .commit_item = commit_titem,
    .uncommit_item = commit_titem,
};

static const struct configfs_item_operations commit_item_ops = {
    .allow_link = titem_allow_link,
    .drop_link = titem_drop_link,
};

static const struct config_item_type commit_type = {
    .ct_item_ops = &commit_item_ops,
    .ct_group_ops = &commit_group_ops,
    .ct_name = "test-commit",
};

static ssize_t tsys_note_show(struct config_item *item, char *page)
{
    return sprintf(page, "%s", to_tsys(item)->note);
}

static ssize_t
tsys_note_store(struct config_item *item, const char *page, size_t count)
{
    return put_value(to_tsys(item)->note, page, count, to_tsys(item));
}
CONFIGFS_ATTR(tsys_, note);

static struct configfs_attribute *tsys_attrs[] = {
    &tsys_attr_note,
    NULL,
};

static const struct config_item_type tsys_type = {
    .ct_attrs = tsys_attrs,
    .ct_name = "test-subsystem",
};

int tsys_register(const char *name, struct tsys **ret)
{
    struct tsys *sys = cfs_zalloc(sizeof(*sys));
    int r;

    if (!sys) {
        return -ENOMEM;
    }
    snprintf(sys->name, sizeof(sys->name), "%s", name);
    memcpy(sys->refuse_values, default_values, sizeof(default_values));
    memcpy(sys->refuse_names, default_names, sizeof(default_names));
    config_group_init_type_name(&sys->subsys.su_group, sys->name, &tsys_type);
    config_group_init_type_name(&sys->items, "items", &items_type);
    config_group_init_type_name(&sys->commit, "commit", &commit_type);
    configfs_add_default_group(&sys->items, &sys->subsys.su_group);
    configfs_add_default_group(&sys->commit, &sys->subsys.su_group);
    r = configfs_register_subsystem(&sys->subsys);
    if (r < 0) {
        cfs_free(sys);
        return r;
    }
    *ret = sys;
    return 0;
}

void tsys_unregister(struct tsys *sys)
{
    if (!sys) {
        return;
    }
    configfs_unregister_subsystem(&sys->subsys);
    cfs_free(sys);
}

void tsys_refuse_values(struct tsys *sys, const char *prefix)
{
    snprintf(sys->refuse_values,
             sizeof(sys->refuse_values),
             "%s",
             prefix ? prefix : "");
}

void tsys_refuse_names(struct tsys *sys, const char *prefix)
{
    snprintf(sys->refuse_names,
             sizeof(sys->refuse_names),
             "%s",
             prefix ? prefix : "");
}

void tsys_default_refusals(const char *values, const char *names)
{
    snprintf(
        default_values, sizeof(default_values), "%s", values ? values : "");
    snprintf(default_names, sizeof(default_names), "%s", names ? names : "");
}

long tsys_items_alive(void)
{
    return atomic_load(&items_alive);
}
