/* SPDX-License-Identifier: MIT */
/*
 * linux/slab.h - kmalloc(), kzalloc(), kfree() and friends.
 *
 * Every allocation goes through the core allocator (cfs_malloc() and
 * friends of <configfs/cfs.h>), so a module's memory is seen by the same
 * hook as core's: tests count it, fail it on purpose, and check it was
 * freed. The gfp flags are accepted and, except __GFP_ZERO, ignored.
 */
#ifndef CFS_COMPAT_LINUX_SLAB_H
#define CFS_COMPAT_LINUX_SLAB_H

#include <stddef.h>
#include <stdint.h>

#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/types.h>

#include <configfs/cfs.h>

static inline void *kmalloc(size_t size, gfp_t flags)
{
    return (flags & __GFP_ZERO) ? cfs_zalloc(size) : cfs_malloc(size);
}

static inline void *kzalloc(size_t size, gfp_t flags)
{
    (void)flags;
    return cfs_zalloc(size);
}

static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
    if (size != 0 && n > SIZE_MAX / size) {
        return NULL;
    }
    return kmalloc(n * size, flags);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
    return kmalloc_array(n, size, flags | __GFP_ZERO);
}

/* Unlike realloc(), krealloc(p, 0) keeps nothing and returns NULL. */
static inline void *krealloc(const void *p, size_t new_size, gfp_t flags)
{
    (void)flags;
    if (new_size == 0) {
        cfs_free((void *)p);
        return NULL;
    }
    return cfs_realloc((void *)p, new_size);
}

static inline void kfree(const void *p)
{
    cfs_free((void *)p);
}

static inline void kfree_sensitive(const void *p)
{
    cfs_free((void *)p);
}

static inline void *kvmalloc(size_t size, gfp_t flags)
{
    return kmalloc(size, flags);
}

static inline void *kvzalloc(size_t size, gfp_t flags)
{
    return kzalloc(size, flags);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t flags)
{
    return kcalloc(n, size, flags);
}

static inline void kvfree(const void *p)
{
    kfree(p);
}

#endif /* CFS_COMPAT_LINUX_SLAB_H */
