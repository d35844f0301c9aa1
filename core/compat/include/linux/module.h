/* SPDX-License-Identifier: MIT */
/*
 * linux/module.h - module_init()/module_exit() and MODULE_* for configfsd.
 *
 * A kernel-style client compiled as a shared object is a configfsd module:
 * cfs_module_load() (configfsd --module PATH.so) dlopen()s it, finds the
 * symbols below with dlsym(), sets THIS_MODULE->name and runs the init
 * function; cfs_module_unload() runs the exit function and dlclose()s it.
 *
 * What module_init(fn) defines in a module (the loader in core/src/module.c
 * looks these names up; keep both sides in step):
 *   struct module __this_module            hidden: what THIS_MODULE points at
 *   struct module *const cfs_module_self   exported: &__this_module
 *   int (*const cfs_module_init_fn)(void)  exported: fn; 0 or a negative errno
 * and module_exit(fn):
 *   void (*const cfs_module_exit_fn)(void) exported: fn. A module without
 *   one cannot be unloaded (-EBUSY), as in the kernel.
 * Build modules with -fvisibility=hidden so that nothing else is exported.
 *
 * Built-in code (CFS_BUILTIN, see <linux/export.h>) gets no symbols:
 * module_init(fn) and module_exit(fn) only type-check fn, and the program
 * calls its init and exit functions itself.
 */
#ifndef CFS_COMPAT_LINUX_MODULE_H
#define CFS_COMPAT_LINUX_MODULE_H

#if defined(__has_include_next)
#if __has_include_next(<linux/module.h>)
#include_next <linux/module.h>
#endif
#else
#include_next <linux/module.h>
#endif

#include <stdbool.h>

#include <linux/export.h>
#include <linux/init.h>

#include <configfs/configfs.h>

#define CFS_MODULE_PASTE_(a, b) a##b
#define CFS_MODULE_PASTE(a, b)  CFS_MODULE_PASTE_(a, b)

#ifdef CFS_BUILTIN

#define module_init(initfn)                                                    \
    static int (*const CFS_MODULE_PASTE(cfs_builtin_init_, __COUNTER__))(void) \
        __attribute__((unused)) = (initfn)
#define module_exit(exitfn)                                                    \
    static void (*const CFS_MODULE_PASTE(cfs_builtin_exit_, __COUNTER__))(     \
        void) __attribute__((unused)) = (exitfn)

#else /* a loadable module */

#define CFS_MODULE_EXPORT_ __attribute__((visibility("default")))
#define CFS_MODULE_SYMBOL  __attribute__((visibility("default"), used))

extern CFS_MODULE_EXPORT_ struct module *const cfs_module_self;
extern CFS_MODULE_EXPORT_ int (*const cfs_module_init_fn)(void);
extern CFS_MODULE_EXPORT_ void (*const cfs_module_exit_fn)(void);

#define module_init(initfn)                                                    \
    struct module __this_module;                                               \
    CFS_MODULE_SYMBOL struct module *const cfs_module_self = &__this_module;   \
    CFS_MODULE_SYMBOL int (*const cfs_module_init_fn)(void) = (initfn)
#define module_exit(exitfn)                                                    \
    CFS_MODULE_SYMBOL void (*const cfs_module_exit_fn)(void) = (exitfn)

#endif /* CFS_BUILTIN */

#ifndef KBUILD_MODNAME
#define KBUILD_MODNAME "module"
#endif

/* Module information is kept in the object, unused by the loader. */
#define CFS_MODULE_INFO_(tag, info)                                            \
    static const char CFS_MODULE_PASTE(cfs_modinfo_, __COUNTER__)[]            \
        __attribute__((unused)) = tag "=" info
#define MODULE_LICENSE(license)   CFS_MODULE_INFO_("license", license)
#define MODULE_AUTHOR(author)     CFS_MODULE_INFO_("author", author)
#define MODULE_DESCRIPTION(text)  CFS_MODULE_INFO_("description", text)
#define MODULE_VERSION(version)   CFS_MODULE_INFO_("version", version)
#define MODULE_ALIAS(alias)       CFS_MODULE_INFO_("alias", alias)
#define MODULE_PARM_DESC(parm, d) CFS_MODULE_INFO_("parm", #parm ":" d)
#define MODULE_SOFTDEP(dep)       CFS_MODULE_INFO_("softdep", dep)
#define MODULE_IMPORT_NS(ns)      CFS_MODULE_INFO_("import_ns", #ns)

/* There is no command line for module parameters: they keep their
 * initial values. The variable is referenced so it counts as used. */
#define module_param(name, type, perm)                                         \
    static const void *const CFS_MODULE_PASTE(cfs_modparam_, __COUNTER__)      \
        __attribute__((unused)) = &(name)
#define module_param_named(name, value, type, perm)                            \
    module_param(value, type, perm)

static inline const char *module_name(const struct module *mod)
{
    return mod && mod->name ? mod->name : "kernel";
}

/* Pin a module (NULL, built-in code, always succeeds). The loader refuses
 * to unload a module while its count is above zero. */
static inline bool try_module_get(struct module *mod)
{
    if (mod) {
        atomic_fetch_add(&mod->refcnt, 1);
    }
    return true;
}

static inline void __module_get(struct module *mod)
{
    (void)try_module_get(mod);
}

static inline void module_put(struct module *mod)
{
    if (mod) {
        atomic_fetch_sub(&mod->refcnt, 1);
    }
}

#endif /* CFS_COMPAT_LINUX_MODULE_H */
