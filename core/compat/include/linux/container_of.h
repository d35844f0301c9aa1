/* SPDX-License-Identifier: MIT */
/*
 * linux/container_of.h - container_of(), from <configfs/list.h>.
 */
#ifndef CFS_COMPAT_LINUX_CONTAINER_OF_H
#define CFS_COMPAT_LINUX_CONTAINER_OF_H

#include <stddef.h>

#include <configfs/list.h>

#endif /* CFS_COMPAT_LINUX_CONTAINER_OF_H */
