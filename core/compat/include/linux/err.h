/* SPDX-License-Identifier: MIT */
/*
 * linux/err.h - ERR_PTR(), PTR_ERR(), IS_ERR() (from <configfs/configfs.h>)
 * and the rest of the kernel's error-pointer helpers.
 */
#ifndef CFS_COMPAT_LINUX_ERR_H
#define CFS_COMPAT_LINUX_ERR_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/errno.h>
#include <linux/export.h>

#include <configfs/configfs.h>

#define MAX_ERRNO CFS_MAX_ERRNO

#define IS_ERR_VALUE(x) ((uintptr_t)(void *)(x) >= (uintptr_t)-MAX_ERRNO)

/* Pass an error pointer on as another pointer type. */
static inline void *ERR_CAST(const void *ptr)
{
    return (void *)ptr;
}

static inline int PTR_ERR_OR_ZERO(const void *ptr)
{
    return IS_ERR(ptr) ? (int)PTR_ERR(ptr) : 0;
}

#endif /* CFS_COMPAT_LINUX_ERR_H */
