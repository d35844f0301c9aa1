/* SPDX-License-Identifier: MIT */
/*
 * linux/atomic.h - atomic_t and its common operations.
 *
 * The kernel names that <stdatomic.h> (included by <configfs/configfs.h>)
 * already uses for its own generic macros - atomic_fetch_add,
 * atomic_fetch_sub and the other atomic_fetch_<op> on two operands - keep
 * their C11 meaning; use atomic_add_return()/atomic_sub_return() or the
 * C11 forms instead. Operations returning a value are sequentially
 * consistent, as the kernel's fully ordered ones; the others are relaxed.
 */
#ifndef CFS_COMPAT_LINUX_ATOMIC_H
#define CFS_COMPAT_LINUX_ATOMIC_H

#include <stdbool.h>

typedef struct {
    int counter;
} atomic_t;

#define ATOMIC_INIT(i)                                                         \
    {                                                                          \
        (i)                                                                    \
    }

static inline int atomic_read(const atomic_t *v)
{
    return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_set(atomic_t *v, int i)
{
    __atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_add(int i, atomic_t *v)
{
    __atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_sub(int i, atomic_t *v)
{
    __atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_inc(atomic_t *v)
{
    atomic_add(1, v);
}

static inline void atomic_dec(atomic_t *v)
{
    atomic_sub(1, v);
}

static inline int atomic_add_return(int i, atomic_t *v)
{
    return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_sub_return(int i, atomic_t *v)
{
    return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_inc_return(atomic_t *v)
{
    return atomic_add_return(1, v);
}

static inline int atomic_dec_return(atomic_t *v)
{
    return atomic_sub_return(1, v);
}

/* @return the value before the increment. */
static inline int atomic_fetch_inc(atomic_t *v)
{
    return __atomic_fetch_add(&v->counter, 1, __ATOMIC_SEQ_CST);
}

static inline int atomic_fetch_dec(atomic_t *v)
{
    return __atomic_fetch_sub(&v->counter, 1, __ATOMIC_SEQ_CST);
}

static inline bool atomic_dec_and_test(atomic_t *v)
{
    return atomic_dec_return(v) == 0;
}

static inline bool atomic_inc_and_test(atomic_t *v)
{
    return atomic_inc_return(v) == 0;
}

static inline int atomic_xchg(atomic_t *v, int i)
{
    return __atomic_exchange_n(&v->counter, i, __ATOMIC_SEQ_CST);
}

/* @return the old value; the store happened if it equals @old. */
static inline int atomic_cmpxchg(atomic_t *v, int old, int new_value)
{
    __atomic_compare_exchange_n(&v->counter,
                                &old,
                                new_value,
                                false,
                                __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return old;
}

#endif /* CFS_COMPAT_LINUX_ATOMIC_H */
