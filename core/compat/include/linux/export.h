/* SPDX-License-Identifier: MIT */
/*
 * linux/export.h - THIS_MODULE for kernel-style configfs clients.
 *
 * A client built as a loadable module (the default) refers to its own
 * struct module, __this_module, which module_init() in <linux/module.h>
 * defines; code linked into the program defines CFS_BUILTIN before its
 * first include (or with -DCFS_BUILTIN) and gets THIS_MODULE == NULL, as the
 * kernel does for built-in code. Every compat header that pulls in
 * <configfs/configfs.h> includes this one first, because that header falls
 * back to a NULL THIS_MODULE when none is defined yet.
 */
#ifndef CFS_COMPAT_LINUX_EXPORT_H
#define CFS_COMPAT_LINUX_EXPORT_H

#if defined(CONFIGFS_CONFIGFS_H) && !defined(CFS_BUILTIN)
#error "include the <linux/...> headers before <configfs/configfs.h>"
#endif

struct module;

#ifdef CFS_BUILTIN
#define THIS_MODULE ((struct module *)0)
#else
/* Defined by module_init(); hidden, so every module has its own. */
extern struct module __this_module __attribute__((visibility("hidden")));
#define THIS_MODULE (&__this_module)
#endif

/* A module's symbols are not exported to other modules; these only mark
 * what the kernel would export. */
#define EXPORT_SYMBOL(sym)        struct cfs_export_symbol_unused_
#define EXPORT_SYMBOL_GPL(sym)    struct cfs_export_symbol_unused_
#define EXPORT_SYMBOL_NS(sym, ns) struct cfs_export_symbol_unused_

#endif /* CFS_COMPAT_LINUX_EXPORT_H */
