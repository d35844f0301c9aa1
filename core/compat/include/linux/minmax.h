/* SPDX-License-Identifier: MIT */
/*
 * linux/minmax.h - min(), max(), clamp() and the _t variants.
 *
 * Like the kernel's, min() and max() evaluate each argument once and refuse
 * (a distinct-pointer comparison warning) arguments of different types; the
 * _t variants convert both to the type given. Locals get unique names so
 * that nesting does not trip -Wshadow.
 */
#ifndef CFS_COMPAT_LINUX_MINMAX_H
#define CFS_COMPAT_LINUX_MINMAX_H

#define CFS_MINMAX_PASTE_(a, b) a##b
#define CFS_MINMAX_PASTE(a, b)  CFS_MINMAX_PASTE_(a, b)

#define cfs_cmp_(x, y, op, a, b)                                               \
    ({                                                                         \
        __typeof__(x) a = (x);                                                 \
        __typeof__(y) b = (y);                                                 \
        (void)(&a == &b);                                                      \
        a op b ? a : b;                                                        \
    })
#define cfs_cmp_unique_(x, y, op)                                              \
    cfs_cmp_(x,                                                                \
             y,                                                                \
             op,                                                               \
             CFS_MINMAX_PASTE(cfs_cmp_x_, __COUNTER__),                        \
             CFS_MINMAX_PASTE(cfs_cmp_y_, __COUNTER__))

#define min(x, y)                  cfs_cmp_unique_(x, y, <)
#define max(x, y)                  cfs_cmp_unique_(x, y, >)
#define min_t(type, x, y)          cfs_cmp_unique_((type)(x), (type)(y), <)
#define max_t(type, x, y)          cfs_cmp_unique_((type)(x), (type)(y), >)
#define clamp(val, lo, hi)         min(max(val, lo), hi)
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi)     clamp_t(__typeof__(val), val, lo, hi)

#endif /* CFS_COMPAT_LINUX_MINMAX_H */
