/* SPDX-License-Identifier: MIT */
/*
 * linux/sysfs.h - sysfs_emit() and sysfs_emit_at(), the kernel's preferred
 * way to fill a show() page: never more than PAGE_SIZE bytes, NUL included,
 * and the number of bytes written (without the NUL) returned.
 */
#ifndef CFS_COMPAT_LINUX_SYSFS_H
#define CFS_COMPAT_LINUX_SYSFS_H

#include <stdarg.h>

#include <linux/mm.h>
#include <linux/sprintf.h>
#include <linux/string.h>

__attribute__((format(printf, 2, 3))) static inline int
sysfs_emit(char *buf, const char *fmt, ...)
{
    va_list args;
    int len;

    if (!buf) {
        return 0;
    }
    va_start(args, fmt);
    len = vscnprintf(buf, PAGE_SIZE, fmt, args);
    va_end(args);
    return len;
}

/* Append at offset @at of the page. */
__attribute__((format(printf, 3, 4))) static inline int
sysfs_emit_at(char *buf, int at, const char *fmt, ...)
{
    va_list args;
    int len;

    if (!buf || at < 0 || (unsigned long)at >= PAGE_SIZE) {
        return 0;
    }
    va_start(args, fmt);
    len = vscnprintf(buf + at, PAGE_SIZE - (unsigned long)at, fmt, args);
    va_end(args);
    return len;
}

#endif /* CFS_COMPAT_LINUX_SYSFS_H */
