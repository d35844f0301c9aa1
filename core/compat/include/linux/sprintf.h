/* SPDX-License-Identifier: MIT */
/*
 * linux/sprintf.h - sprintf() and snprintf() from libc, plus the kernel's
 * scnprintf() (returns what was written, never more than size - 1) and
 * kasprintf() (allocates through kmalloc, free with kfree).
 */
#ifndef CFS_COMPAT_LINUX_SPRINTF_H
#define CFS_COMPAT_LINUX_SPRINTF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <linux/slab.h>

__attribute__((format(printf, 3, 0))) static inline int
vscnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
    int len;

    if (size == 0) {
        return 0;
    }
    len = vsnprintf(buf, size, fmt, args);
    if (len < 0) {
        buf[0] = '\0';
        return 0;
    }
    if ((size_t)len >= size) {
        return (int)(size - 1);
    }
    return len;
}

__attribute__((format(printf, 3, 4))) static inline int
scnprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list args;
    int len;

    va_start(args, fmt);
    len = vscnprintf(buf, size, fmt, args);
    va_end(args);
    return len;
}

__attribute__((format(printf, 2, 0))) static inline char *
kvasprintf(gfp_t gfp, const char *fmt, va_list args)
{
    va_list measure;
    char *buf;
    int len;

    va_copy(measure, args);
    len = vsnprintf(NULL, 0, fmt, measure);
    va_end(measure);
    if (len < 0) {
        return NULL;
    }
    buf = kmalloc((size_t)len + 1, gfp);
    if (buf) {
        (void)vsnprintf(buf, (size_t)len + 1, fmt, args);
    }
    return buf;
}

__attribute__((format(printf, 2, 3))) static inline char *
kasprintf(gfp_t gfp, const char *fmt, ...)
{
    va_list args;
    char *buf;

    va_start(args, fmt);
    buf = kvasprintf(gfp, fmt, args);
    va_end(args);
    return buf;
}

#endif /* CFS_COMPAT_LINUX_SPRINTF_H */
