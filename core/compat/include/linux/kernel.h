/* SPDX-License-Identifier: MIT */
/*
 * linux/kernel.h - the catch-all a kernel client expects: integer limits,
 * printk, kstrto*, sprintf family, min/max, container_of, ARRAY_SIZE.
 *
 * The system's UAPI <linux/kernel.h> (which glibc's <sys/sysinfo.h>
 * includes) comes first, so shadowing it loses nothing.
 */
#ifndef CFS_COMPAT_LINUX_KERNEL_H
#define CFS_COMPAT_LINUX_KERNEL_H

#if defined(__has_include_next)
#if __has_include_next(<linux/kernel.h>)
#include_next <linux/kernel.h>
#endif
#else
#include_next <linux/kernel.h>
#endif

#include <stddef.h>

#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/kstrtox.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/sprintf.h>
#include <linux/types.h>

/* The element count of an array; a pointer argument does not compile. */
#define ARRAY_SIZE(arr)                                                        \
    (sizeof(arr) / sizeof((arr)[0]) +                                          \
     BUILD_BUG_ON_ZERO(__builtin_types_compatible_p(__typeof__(arr),           \
                                                    __typeof__(&(arr)[0]))))

#define DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))
#define round_up(x, y)     ((((x)-1) | ((__typeof__(x))(y)-1)) + 1)
#define round_down(x, y)   ((x) & ~((__typeof__(x))(y)-1))
#define sizeof_field(t, f) (sizeof(((t *)0)->f))
#define FIELD_SIZEOF(t, f) sizeof_field(t, f)
#define swap(a, b)                                                             \
    do {                                                                       \
        __typeof__(a) cfs_swap_tmp_ = (a);                                     \
        (a) = (b);                                                             \
        (b) = cfs_swap_tmp_;                                                   \
    } while (0)

/* Nothing to yield to or to check: user-space code may always sleep. */
#define might_sleep()  ((void)0)
#define cond_resched() ((void)0)

#endif /* CFS_COMPAT_LINUX_KERNEL_H */
