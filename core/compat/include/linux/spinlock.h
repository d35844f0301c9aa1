/* SPDX-License-Identifier: MIT */
/*
 * linux/spinlock.h - spinlock_t as a pthread mutex.
 *
 * There are no interrupts to disable, so the _irq/_irqsave/_bh variants
 * are the plain lock; flags are set to 0 so they count as used.
 */
#ifndef CFS_COMPAT_LINUX_SPINLOCK_H
#define CFS_COMPAT_LINUX_SPINLOCK_H

#include <pthread.h>
#include <stdlib.h>

#include <linux/compiler.h>

typedef struct {
    pthread_mutex_t lock;
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED(name)                                             \
    {                                                                          \
        PTHREAD_MUTEX_INITIALIZER                                              \
    }
#define DEFINE_SPINLOCK(name) spinlock_t name = __SPIN_LOCK_UNLOCKED(name)

CFS_COMPAT_LOCK_FN void spin_lock_init(spinlock_t *lock)
{
    if (pthread_mutex_init(&lock->lock, NULL) != 0) {
        abort();
    }
}

CFS_COMPAT_LOCK_FN void spin_lock(spinlock_t *lock)
{
    if (pthread_mutex_lock(&lock->lock) != 0) {
        abort();
    }
}

CFS_COMPAT_LOCK_FN int spin_trylock(spinlock_t *lock)
{
    return pthread_mutex_trylock(&lock->lock) == 0;
}

CFS_COMPAT_LOCK_FN void spin_unlock(spinlock_t *lock)
{
    if (pthread_mutex_unlock(&lock->lock) != 0) {
        abort();
    }
}

#define spin_lock_irq(lock)   spin_lock(lock)
#define spin_unlock_irq(lock) spin_unlock(lock)
#define spin_lock_bh(lock)    spin_lock(lock)
#define spin_unlock_bh(lock)  spin_unlock(lock)
#define spin_lock_irqsave(lock, flags)                                         \
    do {                                                                       \
        (flags) = 0;                                                           \
        spin_lock(lock);                                                       \
    } while (0)
#define spin_unlock_irqrestore(lock, flags)                                    \
    do {                                                                       \
        (void)(flags);                                                         \
        spin_unlock(lock);                                                     \
    } while (0)

#endif /* CFS_COMPAT_LINUX_SPINLOCK_H */
