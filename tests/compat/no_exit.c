// SPDX-License-Identifier: MIT
/*
 * no_exit.c - a module with module_init and no module_exit: like the
 * kernel, the loader refuses to unload it (EBUSY).
 */
#include <linux/init.h>
#include <linux/module.h>

static int __init no_exit_init(void)
{
    return 0;
}

module_init(no_exit_init);
MODULE_LICENSE("MIT");
