// SPDX-License-Identifier: MIT
/*
 * greeter.c - the smallest kernel-style module, built by the install test
 * against the INSTALLED headers alone:
 *   cc $(pkg-config --cflags configfs) -shared -fPIC -o greeter.so greeter.c
 *
 *   install-greeter/
 *     <item>/        greeting (rw text of up to 63 bytes; "hello" at mkdir)
 */
#include <linux/configfs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#define GREETING_MAX 64

struct greeter {
    struct config_item item;
    struct mutex lock; /* greeting */
    char greeting[GREETING_MAX];
};

static inline struct greeter *to_greeter(struct config_item *item)
{
    return container_of(item, struct greeter, item);
}

static ssize_t greeter_greeting_show(struct config_item *item, char *page)
{
    struct greeter *g = to_greeter(item);
    ssize_t len;

    mutex_lock(&g->lock);
    len = sprintf(page, "%s\n", g->greeting);
    mutex_unlock(&g->lock);
    return len;
}

static ssize_t
greeter_greeting_store(struct config_item *item, const char *page, size_t count)
{
    struct greeter *g = to_greeter(item);
    size_t len = count;

    if (len && page[len - 1] == '\n') {
        len--;
    }
    if (len >= GREETING_MAX) {
        return -EINVAL;
    }
    mutex_lock(&g->lock);
    memcpy(g->greeting, page, len);
    g->greeting[len] = '\0';
    mutex_unlock(&g->lock);
    return (ssize_t)count;
}

CONFIGFS_ATTR(greeter_, greeting);

static struct configfs_attribute *greeter_attrs[] = {
    &greeter_attr_greeting,
    NULL,
};

static void greeter_release(struct config_item *item)
{
    struct greeter *g = to_greeter(item);

    mutex_destroy(&g->lock);
    kfree(g);
}

static struct configfs_item_operations greeter_item_ops = {
    .release = greeter_release,
};

static const struct config_item_type greeter_type = {
    .ct_item_ops = &greeter_item_ops,
    .ct_attrs = greeter_attrs,
    .ct_owner = THIS_MODULE,
};

static struct config_item *greeters_make_item(struct config_group *group,
                                              const char *name)
{
    struct greeter *g;

    (void)group;
    g = kzalloc(sizeof(*g), GFP_KERNEL);
    if (!g) {
        return ERR_PTR(-ENOMEM);
    }
    mutex_init(&g->lock);
    strscpy(g->greeting, "hello", sizeof(g->greeting));
    config_item_init_type_name(&g->item, name, &greeter_type);
    return &g->item;
}

static struct configfs_group_operations greeters_group_ops = {
    .make_item = greeters_make_item,
};

static const struct config_item_type greeters_type = {
    .ct_group_ops = &greeters_group_ops,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem greeters = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "install-greeter",
                    .ci_type = &greeters_type,
                },
        },
};

static int __init greeters_init(void)
{
    int ret;

    config_group_init(&greeters.su_group);
    mutex_init(&greeters.su_mutex);
    ret = configfs_register_subsystem(&greeters);
    if (ret) {
        mutex_destroy(&greeters.su_mutex);
    }
    return ret;
}

static void __exit greeters_exit(void)
{
    configfs_unregister_subsystem(&greeters);
    mutex_destroy(&greeters.su_mutex);
}

module_init(greeters_init);
module_exit(greeters_exit);
MODULE_LICENSE("MIT");
MODULE_DESCRIPTION("built against the installed configfs.pc");
