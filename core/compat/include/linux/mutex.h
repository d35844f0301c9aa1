/* SPDX-License-Identifier: MIT */
/*
 * linux/mutex.h - struct mutex (a pthread mutex, from <configfs/configfs.h>)
 * and the kernel's operations on it.
 *
 * A zero-filled struct mutex is already a valid unlocked mutex, so a
 * statically declared subsystem works before mutex_init(). Locking errors
 * that pthreads reports (a corrupt mutex) abort, since the kernel API has
 * no way to return them. The interruptible variants cannot be interrupted.
 */
#ifndef CFS_COMPAT_LINUX_MUTEX_H
#define CFS_COMPAT_LINUX_MUTEX_H

#include <pthread.h>
#include <stdlib.h>

#include <linux/compiler.h>

#include <linux/export.h>

#include <configfs/configfs.h>

#define DEFINE_MUTEX(name) struct mutex name = {PTHREAD_MUTEX_INITIALIZER}

CFS_COMPAT_LOCK_FN void mutex_init(struct mutex *lock)
{
    if (pthread_mutex_init(&lock->lock, NULL) != 0) {
        abort();
    }
}

CFS_COMPAT_LOCK_FN void mutex_destroy(struct mutex *lock)
{
    pthread_mutex_destroy(&lock->lock);
}

CFS_COMPAT_LOCK_FN void mutex_lock(struct mutex *lock)
{
    if (pthread_mutex_lock(&lock->lock) != 0) {
        abort();
    }
}

static inline int mutex_lock_interruptible(struct mutex *lock)
{
    mutex_lock(lock);
    return 0;
}

static inline int mutex_lock_killable(struct mutex *lock)
{
    mutex_lock(lock);
    return 0;
}

/* @return 1 if the lock was taken, 0 if it is held elsewhere. */
CFS_COMPAT_LOCK_FN int mutex_trylock(struct mutex *lock)
{
    return pthread_mutex_trylock(&lock->lock) == 0;
}

CFS_COMPAT_LOCK_FN void mutex_unlock(struct mutex *lock)
{
    if (pthread_mutex_unlock(&lock->lock) != 0) {
        abort();
    }
}

#define lockdep_assert_held(lock) ((void)(lock))

#endif /* CFS_COMPAT_LINUX_MUTEX_H */
