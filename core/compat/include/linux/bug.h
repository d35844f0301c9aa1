/* SPDX-License-Identifier: MIT */
/*
 * linux/bug.h - BUG(), WARN_ON() and BUILD_BUG_ON().
 *
 * BUG() aborts the program (a kernel oops has no gentler equivalent);
 * WARN_ON() reports the place on stderr and returns the condition, so the
 * kernel idiom "if (WARN_ON(x)) return -EINVAL;" works unchanged.
 */
#ifndef CFS_COMPAT_LINUX_BUG_H
#define CFS_COMPAT_LINUX_BUG_H

#include <stdlib.h>

#include <linux/compiler.h>
#include <linux/printk.h>

#define BUG()                                                                  \
    do {                                                                       \
        printk(KERN_CRIT "BUG at %s:%d\n", __FILE__, __LINE__);                \
        abort();                                                               \
    } while (0)

#define BUG_ON(cond)                                                           \
    do {                                                                       \
        if (unlikely(cond)) {                                                  \
            BUG();                                                             \
        }                                                                      \
    } while (0)

#define WARN_ON(cond)                                                          \
    ({                                                                         \
        int cfs_warn_on_ = !!(cond);                                           \
        if (unlikely(cfs_warn_on_)) {                                          \
            printk(KERN_WARNING "WARNING at %s:%d\n", __FILE__, __LINE__);     \
        }                                                                      \
        unlikely(cfs_warn_on_);                                                \
    })

#define WARN(cond, fmt, ...)                                                   \
    ({                                                                         \
        int cfs_warn_ = !!(cond);                                              \
        if (unlikely(cfs_warn_)) {                                             \
            printk(KERN_WARNING "WARNING at %s:%d: " fmt,                      \
                   __FILE__,                                                   \
                   __LINE__,                                                   \
                   ##__VA_ARGS__);                                             \
        }                                                                      \
        unlikely(cfs_warn_);                                                   \
    })

#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define WARN_ONCE          WARN

#define BUILD_BUG_ON(cond)   _Static_assert(!(cond), "BUILD_BUG_ON: " #cond)
#define BUILD_BUG_ON_ZERO(e) ((int)(sizeof(struct { int : (-!!(e)); })))

#endif /* CFS_COMPAT_LINUX_BUG_H */
