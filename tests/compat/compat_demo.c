// SPDX-License-Identifier: MIT
/*
 * compat_demo.c - a configfs client written as a kernel module is, built
 * as a configfsd module against core/compat alone (no link to core: the
 * program that loads it provides the symbols). test-core-module.c loads it
 * and drives it through the operation layer.
 *
 *   compat-demo/     count (ro), names (ro), mode (rw: off|on|auto),
 *                    owner (ro: the module's name as the loader set it)
 *     <widget>/      value (rw int), enabled (rw bool), label (rw text of
 *                    up to 31 bytes), limit (rw, 0..1000), reset (wo)
 *
 * mkdir of a name that starts with "bad" fails with EINVAL.
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/configfs.h>

#define DEMO_LABEL_MAX 32
#define DEMO_LIMIT_MAX 1000

struct demo_widget {
    struct config_item item;
    struct mutex lock; /* everything below */
    int value;
    bool enabled;
    unsigned long limit;
    char *label;
};

static inline struct demo_widget *to_demo_widget(struct config_item *item)
{
    return container_of(item, struct demo_widget, item);
}

static ssize_t demo_widget_value_show(struct config_item *item, char *page)
{
    struct demo_widget *w = to_demo_widget(item);
    ssize_t len;

    mutex_lock(&w->lock);
    len = sprintf(page, "%d\n", w->value);
    mutex_unlock(&w->lock);
    return len;
}

static ssize_t demo_widget_value_store(struct config_item *item,
                                       const char *page,
                                       size_t count)
{
    struct demo_widget *w = to_demo_widget(item);
    int value;
    int ret;

    ret = kstrtoint(page, 0, &value);
    if (ret) {
        return ret;
    }
    mutex_lock(&w->lock);
    w->value = value;
    mutex_unlock(&w->lock);
    return (ssize_t)count;
}

static ssize_t demo_widget_enabled_show(struct config_item *item, char *page)
{
    struct demo_widget *w = to_demo_widget(item);
    ssize_t len;

    mutex_lock(&w->lock);
    len = sysfs_emit(page, "%d\n", w->enabled);
    mutex_unlock(&w->lock);
    return len;
}

static ssize_t demo_widget_enabled_store(struct config_item *item,
                                         const char *page,
                                         size_t count)
{
    struct demo_widget *w = to_demo_widget(item);
    bool enabled;
    int ret;

    ret = kstrtobool(page, &enabled);
    if (ret) {
        return ret;
    }
    mutex_lock(&w->lock);
    w->enabled = enabled;
    mutex_unlock(&w->lock);
    return (ssize_t)count;
}

static ssize_t demo_widget_label_show(struct config_item *item, char *page)
{
    struct demo_widget *w = to_demo_widget(item);
    ssize_t len;

    mutex_lock(&w->lock);
    len = sysfs_emit(page, "%s\n", w->label);
    mutex_unlock(&w->lock);
    return len;
}

/* White space around the label is dropped. */
static ssize_t demo_widget_label_store(struct config_item *item,
                                       const char *page,
                                       size_t count)
{
    struct demo_widget *w = to_demo_widget(item);
    char *copy;
    char *label;
    char *old;

    copy = kstrndup(page, count, GFP_KERNEL);
    if (!copy) {
        return -ENOMEM;
    }
    if (strlen(strim(copy)) >= DEMO_LABEL_MAX) {
        kfree(copy);
        return -EINVAL;
    }
    label = kstrdup(strim(copy), GFP_KERNEL);
    kfree(copy);
    if (!label) {
        return -ENOMEM;
    }
    mutex_lock(&w->lock);
    old = w->label;
    w->label = label;
    mutex_unlock(&w->lock);
    kfree(old);
    return (ssize_t)count;
}

static ssize_t demo_widget_limit_show(struct config_item *item, char *page)
{
    struct demo_widget *w = to_demo_widget(item);
    ssize_t len;

    mutex_lock(&w->lock);
    len = scnprintf(page, PAGE_SIZE, "%lu\n", w->limit);
    mutex_unlock(&w->lock);
    return len;
}

/* The old way, as the kernel's sample parses: simple_strtoul and a look
 * at what follows the digits. */
static ssize_t demo_widget_limit_store(struct config_item *item,
                                       const char *page,
                                       size_t count)
{
    struct demo_widget *w = to_demo_widget(item);
    unsigned long tmp;
    char *p = (char *)page;

    tmp = simple_strtoul(p, &p, 10);
    if (p == page || (*p && *p != '\n')) {
        return -EINVAL;
    }
    if (tmp > DEMO_LIMIT_MAX) {
        return -ERANGE;
    }
    mutex_lock(&w->lock);
    w->limit = tmp;
    mutex_unlock(&w->lock);
    return (ssize_t)count;
}

static ssize_t demo_widget_reset_store(struct config_item *item,
                                       const char *page,
                                       size_t count)
{
    struct demo_widget *w = to_demo_widget(item);

    (void)page;
    mutex_lock(&w->lock);
    w->value = 0;
    w->enabled = false;
    mutex_unlock(&w->lock);
    return (ssize_t)count;
}

CONFIGFS_ATTR(demo_widget_, value);
CONFIGFS_ATTR(demo_widget_, enabled);
CONFIGFS_ATTR(demo_widget_, label);
CONFIGFS_ATTR(demo_widget_, limit);
CONFIGFS_ATTR_WO(demo_widget_, reset);

static struct configfs_attribute *demo_widget_attrs[] = {
    &demo_widget_attr_value,
    &demo_widget_attr_enabled,
    &demo_widget_attr_label,
    &demo_widget_attr_limit,
    &demo_widget_attr_reset,
    NULL,
};

static void demo_widget_release(struct config_item *item)
{
    struct demo_widget *w = to_demo_widget(item);

    mutex_destroy(&w->lock);
    kfree(w->label);
    kfree(w);
}

static struct configfs_item_operations demo_widget_item_ops = {
    .release = demo_widget_release,
};

static const struct config_item_type demo_widget_type = {
    .ct_item_ops = &demo_widget_item_ops,
    .ct_attrs = demo_widget_attrs,
    .ct_owner = THIS_MODULE,
};

/* ----------------------------------------------------------------- */

struct demo {
    struct configfs_subsystem subsys;
    int mode; /* index in demo_modes; su_mutex */
};

static const char *const demo_modes[] = {"off", "on", "auto"};

static inline struct demo *to_demo(struct config_item *item)
{
    return container_of(
        to_configfs_subsystem(to_config_group(item)), struct demo, subsys);
}

static struct config_item *demo_make_item(struct config_group *group,
                                          const char *name)
{
    struct demo_widget *w;

    (void)group;
    if (strstarts(name, "bad")) {
        return ERR_PTR(-EINVAL);
    }
    w = kzalloc(sizeof(*w), GFP_KERNEL);
    if (!w) {
        return ERR_PTR(-ENOMEM);
    }
    w->label = kstrdup("unnamed", GFP_KERNEL);
    if (!w->label) {
        kfree(w);
        return ERR_PTR(-ENOMEM);
    }
    mutex_init(&w->lock);
    config_item_init_type_name(&w->item, name, &demo_widget_type);
    return &w->item;
}

static void demo_drop_item(struct config_group *group, struct config_item *item)
{
    (void)group;
    config_item_put(item);
}

/* The widgets, counted by walking cg_children under su_mutex (M23). */
static ssize_t demo_count_show(struct config_item *item, char *page)
{
    struct demo *demo = to_demo(item);
    struct config_item *child;
    int n = 0;

    mutex_lock(&demo->subsys.su_mutex);
    list_for_each_entry(child, &demo->subsys.su_group.cg_children, ci_entry) {
        n++;
    }
    mutex_unlock(&demo->subsys.su_mutex);
    return sprintf(page, "%d\n", n);
}

static ssize_t demo_names_show(struct config_item *item, char *page)
{
    struct demo *demo = to_demo(item);
    struct config_item *child;
    int len = 0;

    mutex_lock(&demo->subsys.su_mutex);
    list_for_each_entry(child, &demo->subsys.su_group.cg_children, ci_entry) {
        len += sysfs_emit_at(page, len, "%s\n", config_item_name(child));
    }
    mutex_unlock(&demo->subsys.su_mutex);
    return len;
}

static ssize_t demo_mode_show(struct config_item *item, char *page)
{
    struct demo *demo = to_demo(item);
    int mode;

    mutex_lock(&demo->subsys.su_mutex);
    mode = demo->mode;
    mutex_unlock(&demo->subsys.su_mutex);
    return sysfs_emit(page, "%s\n", demo_modes[mode]);
}

static ssize_t
demo_mode_store(struct config_item *item, const char *page, size_t count)
{
    struct demo *demo = to_demo(item);
    int mode;

    mode = sysfs_match_string(demo_modes, page);
    if (mode < 0) {
        return mode;
    }
    mutex_lock(&demo->subsys.su_mutex);
    demo->mode = mode;
    mutex_unlock(&demo->subsys.su_mutex);
    return (ssize_t)count;
}

static ssize_t demo_owner_show(struct config_item *item, char *page)
{
    (void)item;
    return sysfs_emit(page, "%s\n", module_name(THIS_MODULE));
}

CONFIGFS_ATTR_RO(demo_, count);
CONFIGFS_ATTR_RO(demo_, names);
CONFIGFS_ATTR(demo_, mode);
CONFIGFS_ATTR_RO(demo_, owner);

static struct configfs_attribute *demo_attrs[] = {
    &demo_attr_count,
    &demo_attr_names,
    &demo_attr_mode,
    &demo_attr_owner,
    NULL,
};

static struct configfs_group_operations demo_group_ops = {
    .make_item = demo_make_item,
    .drop_item = demo_drop_item,
};

static const struct config_item_type demo_type = {
    .ct_group_ops = &demo_group_ops,
    .ct_attrs = demo_attrs,
    .ct_owner = THIS_MODULE,
};

static struct demo demo = {
    .subsys =
        {
            .su_group =
                {
                    .cg_item =
                        {
                            .ci_namebuf = "compat-demo",
                            .ci_type = &demo_type,
                        },
                },
        },
};

static int __init demo_init(void)
{
    int ret;

    config_group_init(&demo.subsys.su_group);
    mutex_init(&demo.subsys.su_mutex);
    ret = configfs_register_subsystem(&demo.subsys);
    if (ret) {
        pr_err("compat-demo: error %d while registering\n", ret);
        mutex_destroy(&demo.subsys.su_mutex);
        return ret;
    }
    pr_debug("compat-demo: loaded as %s\n", module_name(THIS_MODULE));
    return 0;
}

static void __exit demo_exit(void)
{
    configfs_unregister_subsystem(&demo.subsys);
    mutex_destroy(&demo.subsys.su_mutex);
}

module_init(demo_init);
module_exit(demo_exit);
MODULE_LICENSE("MIT");
MODULE_AUTHOR("configfsd");
MODULE_DESCRIPTION("a kernel-style configfs client for the module tests");
