/* SPDX-License-Identifier: MIT */
/*
 * linux/compiler.h - attribute shorthands and READ_ONCE/WRITE_ONCE.
 *
 * Sparse annotations (__user, __iomem, __force ...) mean nothing here and
 * are empty. READ_ONCE/WRITE_ONCE are relaxed atomic accesses, so a value
 * shown by one thread while another stores it is a defined (and, for
 * ThreadSanitizer, a declared) race, as in the kernel.
 */
#ifndef CFS_COMPAT_LINUX_COMPILER_H
#define CFS_COMPAT_LINUX_COMPILER_H

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef __maybe_unused
#define __maybe_unused __attribute__((unused))
#endif
#ifndef __always_unused
#define __always_unused __attribute__((unused))
#endif
#ifndef __must_check
#define __must_check __attribute__((warn_unused_result))
#endif
#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif
#ifndef __packed
#define __packed __attribute__((packed))
#endif
#ifndef __aligned
#define __aligned(x) __attribute__((aligned(x)))
#endif
#ifndef __cold
#define __cold __attribute__((cold))
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef noinline
#define noinline __attribute__((noinline))
#endif
#ifndef fallthrough
#define fallthrough __attribute__((fallthrough))
#endif

/*
 * For the compat lock wrappers: -fsanitize=nonnull-attribute checks the
 * pthread call inside them for a NULL argument, and gcc 12 then "sees" a
 * NULL destination in a later sprintf(page, ...) of the caller and fails
 * the build (-Wformat-overflow). A NULL lock faults at once anyway.
 */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define CFS_COMPAT_LOCK_FN                                                     \
    __attribute__((no_sanitize("nonnull-attribute"))) static inline
#endif
#endif
#ifndef CFS_COMPAT_LOCK_FN
#define CFS_COMPAT_LOCK_FN static inline
#endif

#define __user
#define __kernel
#define __iomem
#define __force
#define __rcu
#define __percpu

#define barrier() __asm__ __volatile__("" ::: "memory")

#define READ_ONCE(x)       __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val) __atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

#endif /* CFS_COMPAT_LINUX_COMPILER_H */
