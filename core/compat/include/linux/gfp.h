/* SPDX-License-Identifier: MIT */
/*
 * linux/gfp.h - allocation flags. Only __GFP_ZERO changes anything (it
 * zeroes, as kzalloc does); user-space allocation may always sleep.
 */
#ifndef CFS_COMPAT_LINUX_GFP_H
#define CFS_COMPAT_LINUX_GFP_H

#include <linux/types.h>

#define __GFP_ZERO         ((gfp_t)0x100u)
#define __GFP_NOWARN       ((gfp_t)0x200u)
#define __GFP_NOFAIL       ((gfp_t)0x400u)
#define GFP_KERNEL         ((gfp_t)0x1u)
#define GFP_ATOMIC         ((gfp_t)0x2u)
#define GFP_NOWAIT         ((gfp_t)0x4u)
#define GFP_NOIO           ((gfp_t)0x8u)
#define GFP_NOFS           ((gfp_t)0x10u)
#define GFP_USER           ((gfp_t)0x20u)
#define GFP_KERNEL_ACCOUNT GFP_KERNEL

#endif /* CFS_COMPAT_LINUX_GFP_H */
