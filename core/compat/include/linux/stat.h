/* SPDX-License-Identifier: MIT */
/*
 * linux/stat.h - file mode bits, and the kernel's S_IRUGO family.
 *
 * glibc's <sys/stat.h> includes <linux/stat.h> for struct statx, so the
 * system's UAPI header is included first; the mode bits come from libc.
 */
#ifndef CFS_COMPAT_LINUX_STAT_H
#define CFS_COMPAT_LINUX_STAT_H

#if defined(__has_include_next)
#if __has_include_next(<linux/stat.h>)
#include_next <linux/stat.h>
#endif
#else
#include_next <linux/stat.h>
#endif

#include <sys/stat.h>

#define S_IRWXUGO (S_IRWXU | S_IRWXG | S_IRWXO)
#define S_IALLUGO (S_ISUID | S_ISGID | S_ISVTX | S_IRWXUGO)
#define S_IRUGO   (S_IRUSR | S_IRGRP | S_IROTH)
#define S_IWUGO   (S_IWUSR | S_IWGRP | S_IWOTH)
#define S_IXUGO   (S_IXUSR | S_IXGRP | S_IXOTH)

#endif /* CFS_COMPAT_LINUX_STAT_H */
