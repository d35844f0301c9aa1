// SPDX-License-Identifier: MIT
/*
 * configfs_sample.c - the sample subsystems, written the way a kernel
 * configfs client is written: 01-childless, 02-simple-children,
 * 03-group-children and 04-committable-children (docs/DESIGN.md §2).
 *
 * configfsd builds this file in (CFS_BUILTIN) and calls
 * cfs_samples_register(); the same file, unchanged, also builds as a
 * loadable module whose module_init registers the same four subsystems.
 */
#include <linux/atomic.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/configfs.h>

#include "samples.h"

/* storeme everywhere: a decimal integer from 0 to INT_MAX, optionally
 * followed by one newline. */
static int sample_parse_storeme(const char *page, int *ret_value)
{
    unsigned int value;
    int ret;

    ret = kstrtouint(page, 10, &value);
    if (ret) {
        return ret;
    }
    if (value > INT_MAX) {
        return -ERANGE;
    }
    *ret_value = (int)value;
    return 0;
}

/* ----------------------------------------------------------------- */

/*
 * 01-childless
 *
 * A subsystem with attributes and nothing else: no mkdir in it. The
 * subsystem is embedded in a container that holds the attribute values.
 */

struct childless {
    struct configfs_subsystem subsys;
    atomic_t showme;
    int storeme;
};

static inline struct childless *to_childless(struct config_item *item)
{
    return container_of(
        to_configfs_subsystem(to_config_group(item)), struct childless, subsys);
}

/* Each read shows how many reads came before it. */
static ssize_t childless_showme_show(struct config_item *item, char *page)
{
    return sprintf(page, "%d\n", atomic_fetch_inc(&to_childless(item)->showme));
}

static ssize_t childless_storeme_show(struct config_item *item, char *page)
{
    return sprintf(page, "%d\n", READ_ONCE(to_childless(item)->storeme));
}

static ssize_t childless_storeme_store(struct config_item *item,
                                       const char *page,
                                       size_t count)
{
    int value;
    int ret;

    ret = sample_parse_storeme(page, &value);
    if (ret) {
        return ret;
    }
    WRITE_ONCE(to_childless(item)->storeme, value);
    return (ssize_t)count;
}

static ssize_t childless_description_show(struct config_item *item, char *page)
{
    (void)item;
    return sprintf(page,
                   "[01-childless]\n"
                   "\n"
                   "The simplest subsystem: it makes no children, it only\n"
                   "has attributes. showme counts its own reads, storeme\n"
                   "keeps an integer.\n");
}

CONFIGFS_ATTR_RO(childless_, showme);
CONFIGFS_ATTR(childless_, storeme);
CONFIGFS_ATTR_RO(childless_, description);

static struct configfs_attribute *childless_attrs[] = {
    &childless_attr_showme,
    &childless_attr_storeme,
    &childless_attr_description,
    NULL,
};

static const struct config_item_type childless_type = {
    .ct_name = "childless",
    .ct_attrs = childless_attrs,
    .ct_owner = THIS_MODULE,
};

static struct childless childless_subsys = {
    .subsys =
        {
            .su_group =
                {
                    .cg_item =
                        {
                            .ci_namebuf = "01-childless",
                            .ci_type = &childless_type,
                        },
                },
        },
};

/* ----------------------------------------------------------------- */

/*
 * 02-simple-children
 *
 * mkdir in this subsystem makes an item with one read-write attribute.
 * The subsystem has no attribute values of its own, so it needs no
 * container.
 */

struct simple_child {
    struct config_item item;
    int storeme;
};

static inline struct simple_child *to_simple_child(struct config_item *item)
{
    return container_of(item, struct simple_child, item);
}

static ssize_t simple_child_storeme_show(struct config_item *item, char *page)
{
    return sprintf(page, "%d\n", READ_ONCE(to_simple_child(item)->storeme));
}

static ssize_t simple_child_storeme_store(struct config_item *item,
                                          const char *page,
                                          size_t count)
{
    int value;
    int ret;

    ret = sample_parse_storeme(page, &value);
    if (ret) {
        return ret;
    }
    WRITE_ONCE(to_simple_child(item)->storeme, value);
    return (ssize_t)count;
}

CONFIGFS_ATTR(simple_child_, storeme);

static struct configfs_attribute *simple_child_attrs[] = {
    &simple_child_attr_storeme,
    NULL,
};

static void simple_child_release(struct config_item *item)
{
    kfree(to_simple_child(item));
}

static struct configfs_item_operations simple_child_item_ops = {
    .release = simple_child_release,
};

static const struct config_item_type simple_child_type = {
    .ct_name = "simple-child",
    .ct_item_ops = &simple_child_item_ops,
    .ct_attrs = simple_child_attrs,
    .ct_owner = THIS_MODULE,
};

struct simple_children {
    struct config_group group;
};

static inline struct simple_children *
to_simple_children(struct config_item *item)
{
    return container_of(to_config_group(item), struct simple_children, group);
}

static struct config_item *simple_children_make_item(struct config_group *group,
                                                     const char *name)
{
    struct simple_child *simple_child;

    (void)group;
    simple_child = kzalloc(sizeof(*simple_child), GFP_KERNEL);
    if (!simple_child) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(&simple_child->item, name, &simple_child_type);
    return &simple_child->item;
}

static ssize_t simple_children_description_show(struct config_item *item,
                                                char *page)
{
    (void)item;
    return sprintf(page,
                   "[02-simple-children]\n"
                   "\n"
                   "mkdir here makes an item with one attribute, storeme,\n"
                   "readable and writable.\n");
}

CONFIGFS_ATTR_RO(simple_children_, description);

static struct configfs_attribute *simple_children_attrs[] = {
    &simple_children_attr_description,
    NULL,
};

static void simple_children_release(struct config_item *item)
{
    kfree(to_simple_children(item));
}

static struct configfs_item_operations simple_children_item_ops = {
    .release = simple_children_release,
};

/* No drop_item: configfs drops the creator's reference itself. */
static struct configfs_group_operations simple_children_group_ops = {
    .make_item = simple_children_make_item,
};

/* The groups 03-group-children makes, allocated by make_group. */
static const struct config_item_type simple_children_type = {
    .ct_name = "simple-children",
    .ct_item_ops = &simple_children_item_ops,
    .ct_group_ops = &simple_children_group_ops,
    .ct_attrs = simple_children_attrs,
    .ct_owner = THIS_MODULE,
};

/* The subsystem is static, so its type has no release. */
static const struct config_item_type simple_children_subsys_type = {
    .ct_name = "simple-children",
    .ct_group_ops = &simple_children_group_ops,
    .ct_attrs = simple_children_attrs,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem simple_children_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "02-simple-children",
                    .ci_type = &simple_children_subsys_type,
                },
        },
};

/* ----------------------------------------------------------------- */

/*
 * 03-group-children
 *
 * mkdir in this subsystem makes a group shaped like 02-simple-children,
 * in which mkdir makes simple_child items in turn.
 */

static struct config_group *
group_children_make_group(struct config_group *group, const char *name)
{
    struct simple_children *simple_children;

    (void)group;
    simple_children = kzalloc(sizeof(*simple_children), GFP_KERNEL);
    if (!simple_children) {
        return ERR_PTR(-ENOMEM);
    }
    config_group_init_type_name(
        &simple_children->group, name, &simple_children_type);
    return &simple_children->group;
}

static ssize_t group_children_description_show(struct config_item *item,
                                               char *page)
{
    (void)item;
    return sprintf(page,
                   "[03-group-children]\n"
                   "\n"
                   "mkdir here makes a group like 02-simple-children, in\n"
                   "which mkdir makes items with a storeme attribute.\n");
}

CONFIGFS_ATTR_RO(group_children_, description);

static struct configfs_attribute *group_children_attrs[] = {
    &group_children_attr_description,
    NULL,
};

static struct configfs_group_operations group_children_group_ops = {
    .make_group = group_children_make_group,
};

static const struct config_item_type group_children_type = {
    .ct_name = "group-children",
    .ct_group_ops = &group_children_group_ops,
    .ct_attrs = group_children_attrs,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem group_children_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "03-group-children",
                    .ci_type = &group_children_type,
                },
        },
};

/* ----------------------------------------------------------------- */

/*
 * 04-committable-children
 *
 * A committable group: mkdir in its pending/ directory makes an item;
 * renaming the item to live/ commits it (commit_item), renaming it back
 * uncommits it. A committed item refuses changes to storeme with EBUSY
 * and shows committed as 1.
 */

struct committable_child {
    struct config_item item;
    int storeme;
    bool committed; /* written under su_mutex (commit/uncommit) */
};

static struct configfs_subsystem committable_children_subsys;

static inline struct committable_child *
to_committable_child(struct config_item *item)
{
    return container_of(item, struct committable_child, item);
}

static ssize_t committable_child_storeme_show(struct config_item *item,
                                              char *page)
{
    return sprintf(
        page, "%d\n", READ_ONCE(to_committable_child(item)->storeme));
}

/* Takes su_mutex, which commit_item and uncommit_item run under, so a
 * store and a commit cannot interleave. */
static ssize_t committable_child_storeme_store(struct config_item *item,
                                               const char *page,
                                               size_t count)
{
    struct committable_child *child = to_committable_child(item);
    ssize_t ret;
    int value;

    ret = sample_parse_storeme(page, &value);
    if (ret) {
        return ret;
    }
    mutex_lock(&committable_children_subsys.su_mutex);
    if (child->committed) {
        ret = -EBUSY;
    } else {
        WRITE_ONCE(child->storeme, value);
        ret = (ssize_t)count;
    }
    mutex_unlock(&committable_children_subsys.su_mutex);
    return ret;
}

static ssize_t committable_child_committed_show(struct config_item *item,
                                                char *page)
{
    return sprintf(
        page, "%d\n", READ_ONCE(to_committable_child(item)->committed) ? 1 : 0);
}

CONFIGFS_ATTR(committable_child_, storeme);
CONFIGFS_ATTR_RO(committable_child_, committed);

static struct configfs_attribute *committable_child_attrs[] = {
    &committable_child_attr_storeme,
    &committable_child_attr_committed,
    NULL,
};

static void committable_child_release(struct config_item *item)
{
    kfree(to_committable_child(item));
}

static struct configfs_item_operations committable_child_item_ops = {
    .release = committable_child_release,
};

static const struct config_item_type committable_child_type = {
    .ct_name = "committable-child",
    .ct_item_ops = &committable_child_item_ops,
    .ct_attrs = committable_child_attrs,
    .ct_owner = THIS_MODULE,
};

static struct config_item *
committable_children_make_item(struct config_group *group, const char *name)
{
    struct committable_child *child;

    (void)group;
    child = kzalloc(sizeof(*child), GFP_KERNEL);
    if (!child) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(&child->item, name, &committable_child_type);
    return &child->item;
}

/* Called under su_mutex. */
static int committable_children_commit_item(struct config_item *item)
{
    WRITE_ONCE(to_committable_child(item)->committed, true);
    return 0;
}

/* Called under su_mutex. */
static int committable_children_uncommit_item(struct config_item *item)
{
    WRITE_ONCE(to_committable_child(item)->committed, false);
    return 0;
}

static ssize_t committable_children_description_show(struct config_item *item,
                                                     char *page)
{
    (void)item;
    return sprintf(page,
                   "[04-committable-children]\n"
                   "\n"
                   "A committable group. mkdir in pending/ makes an item\n"
                   "with storeme and committed; renaming it into live/\n"
                   "commits it, and storeme is then refused (EBUSY) until\n"
                   "it is renamed back into pending/.\n");
}

CONFIGFS_ATTR_RO(committable_children_, description);

static struct configfs_attribute *committable_children_attrs[] = {
    &committable_children_attr_description,
    NULL,
};

static struct configfs_group_operations committable_children_group_ops = {
    .make_item = committable_children_make_item,
    .commit_item = committable_children_commit_item,
    .uncommit_item = committable_children_uncommit_item,
};

static const struct config_item_type committable_children_type = {
    .ct_name = "committable-children",
    .ct_group_ops = &committable_children_group_ops,
    .ct_attrs = committable_children_attrs,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem committable_children_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "04-committable-children",
                    .ci_type = &committable_children_type,
                },
        },
};

/* ----------------------------------------------------------------- */

static struct configfs_subsystem *example_subsys[] = {
    &childless_subsys.subsys,
    &simple_children_subsys,
    &group_children_subsys,
    &committable_children_subsys,
    NULL,
};

static int __init configfs_example_init(void)
{
    struct configfs_subsystem *subsys;
    int ret;
    int i;

    for (i = 0; example_subsys[i]; i++) {
        subsys = example_subsys[i];

        config_group_init(&subsys->su_group);
        mutex_init(&subsys->su_mutex);
        ret = configfs_register_subsystem(subsys);
        if (ret) {
            pr_err("error %d while registering subsystem %s\n",
                   ret,
                   config_item_name(&subsys->su_group.cg_item));
            goto out_unregister;
        }
    }
    return 0;

out_unregister:
    mutex_destroy(&example_subsys[i]->su_mutex);
    for (i--; i >= 0; i--) {
        configfs_unregister_subsystem(example_subsys[i]);
        mutex_destroy(&example_subsys[i]->su_mutex);
    }
    return ret;
}

static void __exit configfs_example_exit(void)
{
    int i;

    for (i = 0; example_subsys[i]; i++) {
        configfs_unregister_subsystem(example_subsys[i]);
        mutex_destroy(&example_subsys[i]->su_mutex);
    }
}

module_init(configfs_example_init);
module_exit(configfs_example_exit);
MODULE_LICENSE("MIT");
MODULE_DESCRIPTION("configfs sample subsystems");

#ifdef CFS_BUILTIN

static bool samples_registered;

int cfs_samples_register(void)
{
    int ret;

    if (samples_registered) {
        return -EEXIST;
    }
    ret = configfs_example_init();
    if (ret == 0) {
        samples_registered = true;
    }
    return ret;
}

void cfs_samples_unregister(void)
{
    if (samples_registered) {
        configfs_example_exit();
        samples_registered = false;
    }
}

#endif /* CFS_BUILTIN */
