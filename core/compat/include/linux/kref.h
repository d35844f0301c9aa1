/* SPDX-License-Identifier: MIT */
/*
 * linux/kref.h - kref operations on struct kref (an atomic int, from
 * <configfs/configfs.h>), for a client's own reference-counted objects.
 */
#ifndef CFS_COMPAT_LINUX_KREF_H
#define CFS_COMPAT_LINUX_KREF_H

#include <stdatomic.h>
#include <stdlib.h>

#include <linux/export.h>

#include <configfs/configfs.h>

#define KREF_INIT(n)                                                           \
    {                                                                          \
        .refcount = (n)                                                        \
    }

static inline void kref_init(struct kref *kref)
{
    atomic_init(&kref->refcount, 1);
}

static inline unsigned int kref_read(const struct kref *kref)
{
    return (unsigned int)atomic_load((atomic_int *)&kref->refcount);
}

static inline void kref_get(struct kref *kref)
{
    atomic_fetch_add(&kref->refcount, 1);
}

/* Drop a reference; the last one calls @release. A put on zero is a bug
 * and aborts. @return 1 if @release ran. */
static inline int kref_put(struct kref *kref,
                           void (*release)(struct kref *kref))
{
    int old = atomic_fetch_sub(&kref->refcount, 1);

    if (old <= 0) {
        abort();
    }
    if (old == 1) {
        release(kref);
        return 1;
    }
    return 0;
}

/* @return 1 with a new reference, or 0 if the count already reached 0. */
static inline int kref_get_unless_zero(struct kref *kref)
{
    int old = atomic_load(&kref->refcount);

    while (old != 0) {
        if (atomic_compare_exchange_weak(&kref->refcount, &old, old + 1)) {
            return 1;
        }
    }
    return 0;
}

#endif /* CFS_COMPAT_LINUX_KREF_H */
