/* SPDX-License-Identifier: MIT */
/*
 * linux/printk.h - printk() and pr_*() for kernel-style clients.
 *
 * Messages go to stderr, one printk() per write, without the KERN_* level
 * prefix (the program's own logging decides what to keep). pr_debug() and
 * pr_devel() are compiled out unless DEBUG is defined, as in the kernel
 * without dynamic debug; their arguments are still type-checked.
 */
#ifndef CFS_COMPAT_LINUX_PRINTK_H
#define CFS_COMPAT_LINUX_PRINTK_H

#include <stdarg.h>
#include <stdio.h>

#define KERN_SOH     "\001"
#define KERN_EMERG   KERN_SOH "0"
#define KERN_ALERT   KERN_SOH "1"
#define KERN_CRIT    KERN_SOH "2"
#define KERN_ERR     KERN_SOH "3"
#define KERN_WARNING KERN_SOH "4"
#define KERN_NOTICE  KERN_SOH "5"
#define KERN_INFO    KERN_SOH "6"
#define KERN_DEBUG   KERN_SOH "7"
#define KERN_DEFAULT KERN_SOH "d"
#define KERN_CONT    KERN_SOH "c"

__attribute__((format(printf, 1, 2))) static inline int printk(const char *fmt,
                                                               ...)
{
    const char *text = fmt;
    va_list ap;
    int ret;

    while (text[0] == KERN_SOH[0] && text[1] != '\0') {
        text += 2;
    }
    va_start(ap, fmt);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    /* The caller's format, checked at the call, minus its level. */
    ret = vfprintf(stderr, text, ap);
#pragma GCC diagnostic pop
    va_end(ap);
    return ret;
}

/* Check a format without printing it. */
__attribute__((format(printf, 1, 2))) static inline int
no_printk(const char *fmt, ...)
{
    (void)fmt;
    return 0;
}

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_emerg(fmt, ...)  printk(KERN_EMERG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)  printk(KERN_ALERT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)   printk(KERN_CRIT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)    printk(KERN_ERR pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)   printk(KERN_WARNING pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warning          pr_warn
#define pr_notice(fmt, ...) printk(KERN_NOTICE pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)   printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)
#define pr_cont(fmt, ...)   printk(KERN_CONT fmt, ##__VA_ARGS__)

#ifdef DEBUG
#define pr_debug(fmt, ...) printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_devel(fmt, ...) printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#else
#define pr_debug(fmt, ...) no_printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_devel(fmt, ...) no_printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#endif

/* No rate limit and no once-only bookkeeping: every call prints. */
#define pr_err_ratelimited  pr_err
#define pr_warn_ratelimited pr_warn
#define pr_info_ratelimited pr_info
#define pr_err_once         pr_err
#define pr_warn_once        pr_warn
#define pr_info_once        pr_info

#endif /* CFS_COMPAT_LINUX_PRINTK_H */
