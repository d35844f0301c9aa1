/* SPDX-License-Identifier: MIT */
/*
 * linux/init.h - section markers of kernel init and exit code.
 *
 * User space has no init sections to discard, so the markers are empty;
 * module_init() and module_exit() come from <linux/module.h>, included at
 * the end so that a client including only this header still has them.
 */
#ifndef CFS_COMPAT_LINUX_INIT_H
#define CFS_COMPAT_LINUX_INIT_H

#define __init
#define __exit
#define __initdata
#define __exitdata
#define __initconst
#define __init_or_module
#define __exit_p(x) (x)

#include <linux/module.h>

#endif /* CFS_COMPAT_LINUX_INIT_H */
