/* SPDX-License-Identifier: MIT */
/*
 * linux/types.h - the kernel's short integer names and friends.
 *
 * The system's UAPI <linux/types.h> (the __u8 family, which glibc and other
 * UAPI headers rely on) is included first, so shadowing it loses nothing;
 * this header only adds the kernel-internal names. u64/s64 are long long,
 * as in the kernel, so "%llu" fits them on every target.
 */
#ifndef CFS_COMPAT_LINUX_TYPES_H
#define CFS_COMPAT_LINUX_TYPES_H

#if defined(__has_include_next)
#if __has_include_next(<linux/types.h>)
#include_next <linux/types.h>
#endif
#else
#include_next <linux/types.h>
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;

typedef unsigned short umode_t;
typedef unsigned int gfp_t;

#endif /* CFS_COMPAT_LINUX_TYPES_H */
