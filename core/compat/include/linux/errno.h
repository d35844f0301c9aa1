/* SPDX-License-Identifier: MIT */
/*
 * linux/errno.h - the errno values, from the system, never redefined.
 *
 * glibc's own <errno.h> includes <linux/errno.h> for its numbers, so this
 * header must yield exactly the system's: it includes the UAPI header it
 * shadows, then libc's <errno.h>, and adds only the kernel-internal codes
 * user space never defines (a client may return them; they reach the
 * caller as unknown errnos).
 */
#ifndef CFS_COMPAT_LINUX_ERRNO_H
#define CFS_COMPAT_LINUX_ERRNO_H

#if defined(__has_include_next)
#if __has_include_next(<linux/errno.h>)
#include_next <linux/errno.h>
#endif
#else
#include_next <linux/errno.h>
#endif

#include <errno.h>

#ifndef ERESTARTSYS
#define ERESTARTSYS 512
#endif
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif
#ifndef EPROBE_DEFER
#define EPROBE_DEFER 517
#endif

#endif /* CFS_COMPAT_LINUX_ERRNO_H */
