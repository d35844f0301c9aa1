// SPDX-License-Identifier: MIT
/*
 * picky_module.c - the non-deterministic module of docs/cluster.md, for the
 * cluster suite: the same code (so the same content hash) on every node,
 * but its store callback refuses one value on the node whose environment
 * says so.
 *
 *   picky/
 *     <item>/   value (rw): any text, except that a node started with
 *               CFS_PICKY_REFUSE=TEXT refuses TEXT (EINVAL)
 *
 * A write of TEXT on another node is accepted there and refused here when
 * this node applies it: a replay problem on this node.
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/configfs.h>

#include <stdlib.h>

#define PICKY_VALUE_MAX 256

struct picky_item {
    struct config_item item;
    struct mutex lock; /* value, len */
    char value[PICKY_VALUE_MAX];
    size_t len;
};

static inline struct picky_item *to_picky(struct config_item *item)
{
    return container_of(item, struct picky_item, item);
}

static ssize_t picky_value_show(struct config_item *item, char *page)
{
    struct picky_item *p = to_picky(item);
    size_t len;

    mutex_lock(&p->lock);
    len = p->len;
    memcpy(page, p->value, len);
    mutex_unlock(&p->lock);
    return (ssize_t)len;
}

/* The value without one trailing newline equals $CFS_PICKY_REFUSE. */
static bool picky_refused(const char *page, size_t count)
{
    const char *refuse = getenv("CFS_PICKY_REFUSE");

    if (!refuse || !refuse[0]) {
        return false;
    }
    if (count > 0 && page[count - 1] == '\n') {
        count--;
    }
    return strlen(refuse) == count && memcmp(refuse, page, count) == 0;
}

static ssize_t
picky_value_store(struct config_item *item, const char *page, size_t count)
{
    struct picky_item *p = to_picky(item);

    if (count > sizeof(p->value)) {
        return -EINVAL;
    }
    if (picky_refused(page, count)) {
        return -EINVAL;
    }
    mutex_lock(&p->lock);
    memcpy(p->value, page, count);
    p->len = count;
    mutex_unlock(&p->lock);
    return (ssize_t)count;
}

CONFIGFS_ATTR(picky_, value);

static struct configfs_attribute *picky_attrs[] = {
    &picky_attr_value,
    NULL,
};

static void picky_release(struct config_item *item)
{
    struct picky_item *p = to_picky(item);

    mutex_destroy(&p->lock);
    kfree(p);
}

static struct configfs_item_operations picky_item_ops = {
    .release = picky_release,
};

static const struct config_item_type picky_item_type = {
    .ct_item_ops = &picky_item_ops,
    .ct_attrs = picky_attrs,
    .ct_owner = THIS_MODULE,
};

static struct config_item *picky_make_item(struct config_group *group,
                                           const char *name)
{
    struct picky_item *p;

    (void)group;
    p = kzalloc(sizeof(*p), GFP_KERNEL);
    if (!p) {
        return ERR_PTR(-ENOMEM);
    }
    mutex_init(&p->lock);
    config_item_init_type_name(&p->item, name, &picky_item_type);
    return &p->item;
}

static void picky_drop_item(struct config_group *group,
                            struct config_item *item)
{
    (void)group;
    config_item_put(item);
}

static struct configfs_group_operations picky_group_ops = {
    .make_item = picky_make_item,
    .drop_item = picky_drop_item,
};

static const struct config_item_type picky_subsys_type = {
    .ct_group_ops = &picky_group_ops,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem picky_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "picky",
                    .ci_type = &picky_subsys_type,
                },
        },
};

static int __init picky_init(void)
{
    int ret;

    config_group_init(&picky_subsys.su_group);
    mutex_init(&picky_subsys.su_mutex);
    ret = configfs_register_subsystem(&picky_subsys);
    if (ret) {
        mutex_destroy(&picky_subsys.su_mutex);
    }
    return ret;
}

static void __exit picky_exit(void)
{
    configfs_unregister_subsystem(&picky_subsys);
    mutex_destroy(&picky_subsys.su_mutex);
}

module_init(picky_init);
module_exit(picky_exit);
MODULE_LICENSE("MIT");
MODULE_AUTHOR("configfsd");
MODULE_DESCRIPTION("a store callback that refuses one value on one node");
