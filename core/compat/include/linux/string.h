/* SPDX-License-Identifier: MIT */
/*
 * linux/string.h - libc's <string.h> plus the kernel's string helpers.
 *
 * libc's header is included, never re-implemented; the system's UAPI
 * <linux/string.h> this one shadows only includes it too. Added: strscpy,
 * strim/skip_spaces, sysfs_streq (equal but for one trailing newline),
 * (sysfs_)match_string, strstarts, and the allocating kstrdup family
 * (through kmalloc, free with kfree).
 */
#ifndef CFS_COMPAT_LINUX_STRING_H
#define CFS_COMPAT_LINUX_STRING_H

#if defined(__has_include_next)
#if __has_include_next(<linux/string.h>)
#include_next <linux/string.h>
#endif
#else
#include_next <linux/string.h>
#endif

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include <linux/slab.h>

static inline bool cfs_string_isspace_(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Copy at most @count - 1 bytes and a NUL. @return the length copied, or
 * -E2BIG if @src did not fit (@dest then holds the truncated string). */
static inline ssize_t strscpy(char *dest, const char *src, size_t count)
{
    size_t i;

    if (count == 0) {
        return -E2BIG;
    }
    for (i = 0; i < count - 1 && src[i]; i++) {
        dest[i] = src[i];
    }
    dest[i] = '\0';
    return src[i] ? -E2BIG : (ssize_t)i;
}

static inline char *skip_spaces(const char *str)
{
    while (cfs_string_isspace_(*str)) {
        str++;
    }
    return (char *)str;
}

/* Cut trailing white space in place; @return the first non-space. */
static inline char *strim(char *s)
{
    size_t size = strlen(s);

    while (size > 0 && cfs_string_isspace_(s[size - 1])) {
        size--;
    }
    s[size] = '\0';
    return skip_spaces(s);
}

static inline bool strstarts(const char *str, const char *prefix)
{
    return strncmp(str, prefix, strlen(prefix)) == 0;
}

/* Equal, except that either may end in one newline the other lacks. */
static inline bool sysfs_streq(const char *s1, const char *s2)
{
    while (*s1 && *s1 == *s2) {
        s1++;
        s2++;
    }
    if (*s1 == *s2) {
        return true;
    }
    if (!*s1 && *s2 == '\n' && !s2[1]) {
        return true;
    }
    if (*s1 == '\n' && !s1[1] && !*s2) {
        return true;
    }
    return false;
}

/* @return the index of @string in @array (n entries or up to a NULL), or
 * -EINVAL. */
static inline int
match_string(const char *const *array, size_t n, const char *string)
{
    for (size_t i = 0; i < n && array[i]; i++) {
        if (strcmp(array[i], string) == 0) {
            return (int)i;
        }
    }
    return -EINVAL;
}

static inline int
__sysfs_match_string(const char *const *array, size_t n, const char *str)
{
    for (size_t i = 0; i < n && array[i]; i++) {
        if (sysfs_streq(array[i], str)) {
            return (int)i;
        }
    }
    return -EINVAL;
}

#define sysfs_match_string(_a, _s)                                             \
    __sysfs_match_string(_a, sizeof(_a) / sizeof((_a)[0]), _s)

static inline char *kstrdup(const char *s, gfp_t gfp)
{
    (void)gfp;
    return s ? cfs_strdup(s) : NULL;
}

static inline char *kstrndup(const char *s, size_t max, gfp_t gfp)
{
    size_t len;
    char *buf;

    if (!s) {
        return NULL;
    }
    len = strnlen(s, max);
    buf = kmalloc(len + 1, gfp);
    if (buf) {
        memcpy(buf, s, len);
        buf[len] = '\0';
    }
    return buf;
}

static inline void *kmemdup(const void *src, size_t len, gfp_t gfp)
{
    (void)gfp;
    return cfs_memdup(src, len);
}

/* @len bytes of @s and a NUL after them. */
static inline char *kmemdup_nul(const char *s, size_t len, gfp_t gfp)
{
    char *buf;

    if (!s) {
        return NULL;
    }
    buf = kmalloc(len + 1, gfp);
    if (buf) {
        memcpy(buf, s, len);
        buf[len] = '\0';
    }
    return buf;
}

static inline const char *kstrdup_const(const char *s, gfp_t gfp)
{
    return kstrdup(s, gfp);
}

static inline void kfree_const(const void *p)
{
    kfree(p);
}

#endif /* CFS_COMPAT_LINUX_STRING_H */
