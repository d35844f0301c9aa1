/* SPDX-License-Identifier: MIT */
/*
 * linux/kstrtox.h - kstrto*() and simple_strto*() with kernel semantics.
 *
 * kstrto*(s, base, res): the whole string must be a number, optionally
 * followed by one newline (what "echo 5 > attr" writes); a leading '+' is
 * accepted, a '-' only by the signed ones; no leading white space. base 0
 * means 0x.. hex, 0.. octal, else decimal; base 16 accepts a 0x prefix.
 * Returns 0 and sets *res, or -EINVAL (not a number) or -ERANGE (does not
 * fit); *res is left alone on error. kstrtobool() accepts y/Y/1/t/T/on and
 * n/N/0/f/F/off (only the first one or two characters are looked at).
 * simple_strto*() are the old, lax parsers: they stop at the first
 * non-digit, report where through *endp, and ignore overflow.
 */
#ifndef CFS_COMPAT_LINUX_KSTRTOX_H
#define CFS_COMPAT_LINUX_KSTRTOX_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include <linux/types.h>

#define CFS_KSTRTOX_OVERFLOW (1U << 31)

static inline unsigned int cfs_kstrtox_lower_(unsigned int c)
{
    return c | 0x20;
}

static inline bool cfs_kstrtox_xdigit_(unsigned int c)
{
    return (c >= '0' && c <= '9') ||
           (cfs_kstrtox_lower_(c) >= 'a' && cfs_kstrtox_lower_(c) <= 'f');
}

static inline const char *cfs_kstrtox_fixup_radix_(const char *s,
                                                   unsigned int *base)
{
    if (*base == 0) {
        if (s[0] == '0') {
            *base = 8;
            /* s[2] is read only when s[1] is an 'x', never past the NUL. */
            if (cfs_kstrtox_lower_((unsigned char)s[1]) == 'x' &&
                cfs_kstrtox_xdigit_((unsigned char)s[2])) {
                *base = 16;
            }
        } else {
            *base = 10;
        }
    }
    if (*base == 16 && s[0] == '0' &&
        cfs_kstrtox_lower_((unsigned char)s[1]) == 'x') {
        s += 2;
    }
    return s;
}

/* @return the number of digits parsed, with CFS_KSTRTOX_OVERFLOW set if
 * the value did not fit (*res then holds the wrapped value). */
static inline unsigned int
cfs_kstrtox_parse_(const char *s, unsigned int base, unsigned long long *res)
{
    unsigned long long value = 0;
    unsigned int rv = 0;

    for (;; s++) {
        unsigned int c = (unsigned char)*s;
        unsigned int digit;

        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (cfs_kstrtox_lower_(c) >= 'a' &&
                   cfs_kstrtox_lower_(c) <= 'f') {
            digit = cfs_kstrtox_lower_(c) - 'a' + 10;
        } else {
            break;
        }
        if (digit >= base) {
            break;
        }
        if (value > (ULLONG_MAX - digit) / base) {
            rv |= CFS_KSTRTOX_OVERFLOW;
        }
        value = value * base + digit;
        rv++;
    }
    *res = value;
    return rv;
}

static inline int
cfs_kstrtoull_(const char *s, unsigned int base, unsigned long long *res)
{
    unsigned long long value;
    unsigned int rv;

    s = cfs_kstrtox_fixup_radix_(s, &base);
    rv = cfs_kstrtox_parse_(s, base, &value);
    if (rv & CFS_KSTRTOX_OVERFLOW) {
        return -ERANGE;
    }
    if (rv == 0) {
        return -EINVAL;
    }
    s += rv;
    if (*s == '\n') {
        s++;
    }
    if (*s) {
        return -EINVAL;
    }
    *res = value;
    return 0;
}

static inline int
kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
    if (s[0] == '+') {
        s++;
    }
    return cfs_kstrtoull_(s, base, res);
}

static inline int kstrtoll(const char *s, unsigned int base, long long *res)
{
    unsigned long long value;
    int ret;

    if (s[0] == '-') {
        ret = cfs_kstrtoull_(s + 1, base, &value);
        if (ret < 0) {
            return ret;
        }
        if (value > (unsigned long long)LLONG_MAX + 1) {
            return -ERANGE;
        }
        *res = value == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN
                                                          : -(long long)value;
        return 0;
    }
    ret = kstrtoull(s, base, &value);
    if (ret < 0) {
        return ret;
    }
    if (value > LLONG_MAX) {
        return -ERANGE;
    }
    *res = (long long)value;
    return 0;
}

/* One unsigned and one signed narrowing helper per kernel type. */
#define CFS_KSTRTOX_UNSIGNED_(name, type, maxval)                              \
    static inline int name(const char *s, unsigned int base, type *res)        \
    {                                                                          \
        unsigned long long value;                                              \
        int ret = kstrtoull(s, base, &value);                                  \
        if (ret < 0) {                                                         \
            return ret;                                                        \
        }                                                                      \
        if (value > (maxval)) {                                                \
            return -ERANGE;                                                    \
        }                                                                      \
        *res = (type)value;                                                    \
        return 0;                                                              \
    }
#define CFS_KSTRTOX_SIGNED_(name, type, minval, maxval)                        \
    static inline int name(const char *s, unsigned int base, type *res)        \
    {                                                                          \
        long long value;                                                       \
        int ret = kstrtoll(s, base, &value);                                   \
        if (ret < 0) {                                                         \
            return ret;                                                        \
        }                                                                      \
        if (value < (minval) || value > (maxval)) {                            \
            return -ERANGE;                                                    \
        }                                                                      \
        *res = (type)value;                                                    \
        return 0;                                                              \
    }

CFS_KSTRTOX_UNSIGNED_(kstrtoul, unsigned long, ULONG_MAX)
CFS_KSTRTOX_UNSIGNED_(kstrtouint, unsigned int, UINT_MAX)
CFS_KSTRTOX_UNSIGNED_(kstrtou64, u64, ULLONG_MAX)
CFS_KSTRTOX_UNSIGNED_(kstrtou32, u32, UINT_MAX)
CFS_KSTRTOX_UNSIGNED_(kstrtou16, u16, USHRT_MAX)
CFS_KSTRTOX_UNSIGNED_(kstrtou8, u8, UCHAR_MAX)
CFS_KSTRTOX_SIGNED_(kstrtol, long, LONG_MIN, LONG_MAX)
CFS_KSTRTOX_SIGNED_(kstrtoint, int, INT_MIN, INT_MAX)
CFS_KSTRTOX_SIGNED_(kstrtos64, s64, LLONG_MIN, LLONG_MAX)
CFS_KSTRTOX_SIGNED_(kstrtos32, s32, INT_MIN, INT_MAX)
CFS_KSTRTOX_SIGNED_(kstrtos16, s16, SHRT_MIN, SHRT_MAX)
CFS_KSTRTOX_SIGNED_(kstrtos8, s8, SCHAR_MIN, SCHAR_MAX)

static inline int kstrtobool(const char *s, bool *res)
{
    if (!s) {
        return -EINVAL;
    }
    switch (s[0]) {
    case 'y':
    case 'Y':
    case 't':
    case 'T':
    case '1':
        *res = true;
        return 0;
    case 'n':
    case 'N':
    case 'f':
    case 'F':
    case '0':
        *res = false;
        return 0;
    case 'o':
    case 'O':
        switch (s[1]) {
        case 'n':
        case 'N':
            *res = true;
            return 0;
        case 'f':
        case 'F':
            *res = false;
            return 0;
        default:
            break;
        }
        break;
    default:
        break;
    }
    return -EINVAL;
}

static inline unsigned long long
simple_strtoull(const char *cp, char **endp, unsigned int base)
{
    unsigned long long value;
    unsigned int rv;

    cp = cfs_kstrtox_fixup_radix_(cp, &base);
    rv = cfs_kstrtox_parse_(cp, base, &value) & ~CFS_KSTRTOX_OVERFLOW;
    if (endp) {
        *endp = (char *)(cp + rv);
    }
    return value;
}

static inline unsigned long
simple_strtoul(const char *cp, char **endp, unsigned int base)
{
    return (unsigned long)simple_strtoull(cp, endp, base);
}

static inline long simple_strtol(const char *cp, char **endp, unsigned int base)
{
    if (*cp == '-') {
        return (long)-simple_strtoul(cp + 1, endp, base);
    }
    return (long)simple_strtoul(cp, endp, base);
}

static inline long long
simple_strtoll(const char *cp, char **endp, unsigned int base)
{
    if (*cp == '-') {
        return (long long)-simple_strtoull(cp + 1, endp, base);
    }
    return (long long)simple_strtoull(cp, endp, base);
}

#endif /* CFS_COMPAT_LINUX_KSTRTOX_H */
