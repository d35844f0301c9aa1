// SPDX-License-Identifier: MIT
/*
 * bad_init.c - a module whose init fails after registering its subsystem:
 * it unregisters it again and returns -ENODEV, which the load must return.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/configfs.h>

static const struct config_item_type bad_init_type = {
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem bad_init_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "bad-init",
                    .ci_type = &bad_init_type,
                },
        },
};

/* The device this module would drive is never there. */
static int bad_init_probe(void)
{
    return -ENODEV;
}

static int __init bad_init_init(void)
{
    int ret;

    config_group_init(&bad_init_subsys.su_group);
    mutex_init(&bad_init_subsys.su_mutex);
    ret = configfs_register_subsystem(&bad_init_subsys);
    if (ret) {
        goto out_mutex;
    }
    ret = bad_init_probe();
    if (ret) {
        goto out_unregister;
    }
    return 0;

out_unregister:
    configfs_unregister_subsystem(&bad_init_subsys);
out_mutex:
    mutex_destroy(&bad_init_subsys.su_mutex);
    return ret;
}

static void __exit bad_init_exit(void)
{
    configfs_unregister_subsystem(&bad_init_subsys);
    mutex_destroy(&bad_init_subsys.su_mutex);
}

module_init(bad_init_init);
module_exit(bad_init_exit);
MODULE_LICENSE("MIT");
