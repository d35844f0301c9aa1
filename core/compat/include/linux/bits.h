/* SPDX-License-Identifier: MIT */
/*
 * linux/bits.h - BIT() and GENMASK(), as in the kernel.
 */
#ifndef CFS_COMPAT_LINUX_BITS_H
#define CFS_COMPAT_LINUX_BITS_H

#define BIT(nr)     (1UL << (nr))
#define BIT_ULL(nr) (1ULL << (nr))
#define GENMASK(h, l)                                                          \
    (((~0UL) - (1UL << (l)) + 1) & (~0UL >> (8 * sizeof(long) - 1 - (h))))
#define GENMASK_ULL(h, l)                                                      \
    (((~0ULL) - (1ULL << (l)) + 1) &                                           \
     (~0ULL >> (8 * sizeof(long long) - 1 - (h))))

#endif /* CFS_COMPAT_LINUX_BITS_H */
