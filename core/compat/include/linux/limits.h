/* SPDX-License-Identifier: MIT */
/*
 * linux/limits.h - INT_MAX and the kernel's U8_MAX ... S64_MAX.
 *
 * glibc's own <limits.h> includes <linux/limits.h> for NAME_MAX and
 * PATH_MAX, so this header starts with the system's UAPI one and only adds
 * names. The kernel's type-suffixed limits are plain integer constants here,
 * so they also work in #if.
 */
#ifndef CFS_COMPAT_LINUX_LIMITS_H
#define CFS_COMPAT_LINUX_LIMITS_H

#if defined(__has_include_next)
#if __has_include_next(<linux/limits.h>)
#include_next <linux/limits.h>
#endif
#else
#include_next <linux/limits.h>
#endif

#include <limits.h>
#include <stdint.h>

#define U8_MAX  0xffU
#define S8_MAX  0x7f
#define S8_MIN  (-S8_MAX - 1)
#define U16_MAX 0xffffU
#define S16_MAX 0x7fff
#define S16_MIN (-S16_MAX - 1)
#define U32_MAX 0xffffffffU
#define S32_MAX 0x7fffffff
#define S32_MIN (-S32_MAX - 1)
#define U64_MAX 0xffffffffffffffffULL
#define S64_MAX 0x7fffffffffffffffLL
#define S64_MIN (-S64_MAX - 1)

#endif /* CFS_COMPAT_LINUX_LIMITS_H */
