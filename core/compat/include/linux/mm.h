/* SPDX-License-Identifier: MIT */
/*
 * linux/mm.h - PAGE_SIZE: the size of the buffer show() writes into.
 *
 * Fixed at 4096 whatever the machine's page size, like configfs's
 * SIMPLE_ATTR_SIZE, so that <linux/configfs.h> can check it against
 * CONFIGFS_PAGE_SIZE.
 */
#ifndef CFS_COMPAT_LINUX_MM_H
#define CFS_COMPAT_LINUX_MM_H

#ifndef PAGE_SHIFT
#define PAGE_SHIFT 12
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#endif

#endif /* CFS_COMPAT_LINUX_MM_H */
