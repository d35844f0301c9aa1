// SPDX-License-Identifier: MIT
/*
 * module.c - the module loader behind configfsd --module PATH.so.
 *
 * A module is a kernel-style configfs client built as a shared object
 * against core/compat: module_init()/module_exit() of <linux/module.h>
 * export its struct module and its init and exit functions under the
 * names below. Loading dlopen()s it and runs init (which registers its
 * subsystems); unloading runs exit (which unregisters them) and
 * dlclose()s it. Core pins a module's refcnt for every item made by mkdir
 * of one of its types (M25), so a module is not unloaded under its items.
 *
 * Locking: modules_lock protects the list of loaded modules and is held
 * across a module's init and exit, which serialises loads and unloads.
 * Those functions take core's locks (registration), so core must never
 * call in here with its own locks held: nothing here is called by core,
 * and refcnt is an atomic core updates without this lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <configfs/cfs.h>
#include <configfs/list.h>

/* Defined by module_init()/module_exit() in compat <linux/module.h>. */
#define CFS_MODULE_SELF_SYM    "cfs_module_self"
#define CFS_MODULE_INIT_FN_SYM "cfs_module_init_fn"
#define CFS_MODULE_EXIT_FN_SYM "cfs_module_exit_fn"

struct cfs_loaded_module {
    struct list_head entry; /* on modules or zombies; modules_lock */
    struct module *module;  /* borrowed: lives in the shared object */
    void *handle;           /* from dlopen() */
    int (*init_fn)(void);
    void (*exit_fn)(void); /* NULL: the module cannot be unloaded */
    char *path;            /* canonical path of the shared object */
    char *name;            /* module->name: the file name minus ".so" */
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/* Loaded modules, oldest first. */
static LIST_HEAD(modules);
/* Modules whose code must stay mapped until the process ends: they have
 * no exit function, or items of their types outlived it. */
static LIST_HEAD(zombies);

/* The module on @list with this canonical path, dlopen() handle or struct
 * module (NULL: not compared). @pre modules_lock is held. */
static struct cfs_loaded_module *
cfs_module_find_locked(struct list_head *list,
                       const char *path,
                       const void *handle,
                       const struct module *module)
{
    struct cfs_loaded_module *lm;

    list_for_each_entry(lm, list, entry) {
        if ((path && strcmp(lm->path, path) == 0) ||
            (handle && lm->handle == handle) ||
            (module && lm->module == module)) {
            return lm;
        }
    }
    return NULL;
}

/* The module's name: its file name without a trailing ".so". */
static char *cfs__module_name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t len;
    char *name;

    base = base ? base + 1 : path;
    len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".so") == 0) {
        len -= 3;
    }
    name = cfs_malloc(len + 1);
    if (name) {
        memcpy(name, base, len);
        name[len] = '\0';
    }
    return name;
}

static void cfs__loaded_module_free(struct cfs_loaded_module *lm)
{
    if (lm) {
        cfs_free(lm->name);
        cfs_free(lm->path);
        cfs_free(lm);
    }
}

/*
 * Look up the module symbols in @handle.
 * @return 0 and fills @lm (module, init_fn, exit_fn), or -ENOEXEC if the
 * object was not built with module_init().
 */
static int cfs__module_resolve(void *handle, struct cfs_loaded_module *lm)
{
    struct module *const *self = dlsym(handle, CFS_MODULE_SELF_SYM);
    int (*const *init_fn)(void) = dlsym(handle, CFS_MODULE_INIT_FN_SYM);
    void (*const *exit_fn)(void) = dlsym(handle, CFS_MODULE_EXIT_FN_SYM);

    if (!self || !*self || !init_fn || !*init_fn) {
        return -ENOEXEC;
    }
    lm->module = *self;
    lm->init_fn = *init_fn;
    lm->exit_fn = exit_fn ? *exit_fn : NULL;
    return 0;
}

CFS_EXPORT int cfs_module_load(const char *path, struct module **ret_module)
{
    struct cfs_loaded_module *lm = NULL;
    struct stat st;
    char *real = NULL;
    void *handle = NULL;
    int ret;

    if (!path || !*path || !ret_module) {
        return -EINVAL;
    }
    /* The canonical path names the module, and keeps dlopen() from
     * searching the library path for a bare file name. */
    real = realpath(path, NULL);
    if (!real) {
        return -errno;
    }
    if (stat(real, &st) != 0) {
        ret = -errno;
        free(real);
        return ret;
    }
    if (S_ISDIR(st.st_mode)) {
        free(real);
        return -EISDIR;
    }

    pthread_mutex_lock(&modules_lock);
    /* A module kept mapped counts as loaded: its init ran, and may have
     * left registrations behind. */
    if (cfs_module_find_locked(&modules, real, NULL, NULL) ||
        cfs_module_find_locked(&zombies, real, NULL, NULL)) {
        ret = -EEXIST;
        goto out;
    }
    lm = cfs_zalloc(sizeof(*lm));
    if (!lm) {
        ret = -ENOMEM;
        goto out;
    }
    lm->path = cfs_strdup(real);
    lm->name = cfs__module_name_from_path(real);
    if (!lm->path || !lm->name) {
        ret = -ENOMEM;
        goto out;
    }
    /* Undefined symbols (a compat function the program lacks) fail here,
     * not at first call. */
    handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        ret = -ENOEXEC;
        goto out;
    }
    /* The same object under another path (a link): dlopen() returned the
     * handle it already had. */
    if (cfs_module_find_locked(&modules, NULL, handle, NULL) ||
        cfs_module_find_locked(&zombies, NULL, handle, NULL)) {
        ret = -EEXIST;
        goto out;
    }
    ret = cfs__module_resolve(handle, lm);
    if (ret < 0) {
        goto out;
    }
    lm->handle = handle;
    lm->module->name = lm->name;
    lm->module->cfs_private = lm;
    atomic_store(&lm->module->refcnt, 0);

    ret = lm->init_fn();
    if (ret < 0) {
        /* module_init must undo its own registrations when it fails,
         * as in the kernel; the code goes away now. */
        lm->module->name = NULL;
        lm->module->cfs_private = NULL;
        lm->handle = NULL;
        goto out;
    }
    /* A positive return is a bug in the module that the kernel only warns
     * about; the module is loaded. */
    list_add_tail(&lm->entry, &modules);
    *ret_module = lm->module;
    lm = NULL;
    handle = NULL;
    ret = 0;
out:
    if (handle) {
        dlclose(handle);
    }
    cfs__loaded_module_free(lm);
    pthread_mutex_unlock(&modules_lock);
    free(real);
    return ret;
}

/*
 * Run the exit function of a module already taken off the list, then
 * dlclose() it, or keep it mapped (on zombies) if it has no exit function
 * or items of its types are still alive (types used outside its own
 * subsystems), since their callbacks point into it.
 * @pre modules_lock is held.
 */
static void cfs__module_finish_locked(struct cfs_loaded_module *lm)
{
    if (lm->exit_fn) {
        lm->exit_fn();
    }
    if (!lm->exit_fn || atomic_load(&lm->module->refcnt) != 0) {
        list_add_tail(&lm->entry, &zombies);
        return;
    }
    lm->module->name = NULL;
    lm->module->cfs_private = NULL;
    dlclose(lm->handle);
    cfs__loaded_module_free(lm);
}

CFS_EXPORT int cfs_module_unload(struct module *module)
{
    struct cfs_loaded_module *lm;
    int ret = 0;

    if (!module) {
        return -EINVAL;
    }
    pthread_mutex_lock(&modules_lock);
    lm = cfs_module_find_locked(&modules, NULL, NULL, module);
    if (!lm) {
        ret = -ENOENT;
        goto out;
    }
    /* No exit function: the kernel refuses too (delete_module, EBUSY). */
    if (!lm->exit_fn || atomic_load(&module->refcnt) > 0) {
        ret = -EBUSY;
        goto out;
    }
    list_del_init(&lm->entry);
    cfs__module_finish_locked(lm);
out:
    pthread_mutex_unlock(&modules_lock);
    return ret;
}

CFS_EXPORT void cfs_module_unload_all(void)
{
    pthread_mutex_lock(&modules_lock);
    while (!list_empty(&modules)) {
        struct cfs_loaded_module *lm =
            list_entry(modules.prev, struct cfs_loaded_module, entry);

        list_del_init(&lm->entry);
        cfs__module_finish_locked(lm);
    }
    pthread_mutex_unlock(&modules_lock);
}
