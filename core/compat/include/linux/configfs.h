/* SPDX-License-Identifier: MIT */
/*
 * linux/configfs.h - the configfs API for kernel-style clients.
 *
 * Includes <linux/module.h> first, so that THIS_MODULE is this module's
 * own struct module (or NULL for CFS_BUILTIN code) before
 * <configfs/configfs.h> is read, then what the kernel's <linux/configfs.h>
 * brings in for its clients (kernel.h, err.h, list.h, mutex.h, slab.h ...),
 * so a kernel client compiles with its includes unchanged.
 */
#ifndef CFS_COMPAT_LINUX_CONFIGFS_H
#define CFS_COMPAT_LINUX_CONFIGFS_H

#include <linux/module.h>

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/types.h>

#include <configfs/configfs.h>

_Static_assert(PAGE_SIZE == CONFIGFS_PAGE_SIZE,
               "show() pages are CONFIGFS_PAGE_SIZE bytes");

static inline void configfs_undepend_item_unlocked(struct config_item *target)
{
    configfs_undepend_item(target);
}

#endif /* CFS_COMPAT_LINUX_CONFIGFS_H */
