// SPDX-License-Identifier: MIT
/*
 * item.c - config_item and config_group basics: naming, reference counts,
 * release ordering, name validation, fragments and module pins.
 *
 * Nothing here takes the tree's locks; config_group_find_item() relies on
 * the caller holding su_mutex, as in the kernel (M21).
 */
#include <stdarg.h>

#include "internal.h"

/* ---- names ------------------------------------------------------------- */

int config_item_set_name(struct config_item *item, const char *fmt, ...)
{
    char small[CONFIGFS_ITEM_NAME_LEN];
    char *name = NULL;
    va_list args;
    int len;

    va_start(args, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    len = vsnprintf(small, sizeof(small), fmt, args);
    va_end(args);
    if (len < 0) {
        return -EINVAL;
    }
    if ((size_t)len < sizeof(small)) {
        /* Short names live inline (M2). */
        if (item->ci_name && item->ci_name != item->ci_namebuf) {
            cfs_free(item->ci_name);
        }
        memcpy(item->ci_namebuf, small, (size_t)len + 1);
        item->ci_name = item->ci_namebuf;
        return 0;
    }
    name = cfs_malloc((size_t)len + 1);
    if (!name) {
        return -ENOMEM;
    }
    va_start(args, fmt);
    (void)vsnprintf(name, (size_t)len + 1, fmt, args);
    va_end(args);
    if (item->ci_name && item->ci_name != item->ci_namebuf) {
        cfs_free(item->ci_name);
    }
    item->ci_name = name;
    return 0;
}

bool cfs_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;

    while (i < len) {
        unsigned char c = s[i];
        size_t n;
        uint32_t cp;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1fu;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0fu;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07u;
        } else {
            return false; /* continuation byte, 0xc0/0xc1, 0xf5.. */
        }
        if (len - i <= n) {
            return false; /* cut short */
        }
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + k] & 0x3fu);
        }
        /* Overlong forms, surrogates and values past U+10FFFF. */
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            return false;
        }
        i += n + 1;
    }
    return true;
}

int cfs_name_check(const char *name, size_t len)
{
    const unsigned char *s = (const unsigned char *)name;

    if (len == 0) {
        return -EINVAL;
    }
    if (len > CFS_NAME_MAX) {
        return -ENAMETOOLONG;
    }
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '/') {
            return -EINVAL;
        }
    }
    return cfs_utf8_valid(name, len) ? 0 : -EINVAL;
}

/* ---- init and references ----------------------------------------------- */

void config_item_init(struct config_item *item)
{
    atomic_init(&item->ci_kref.refcount, 1);
    INIT_LIST_HEAD(&item->ci_entry);
}

void config_item_init_type_name(struct config_item *item,
                                const char *name,
                                const struct config_item_type *type)
{
    if (config_item_set_name(item, "%s", name) < 0) {
        item->ci_name = NULL;
    }
    item->ci_type = type;
    config_item_init(item);
}

void config_group_init(struct config_group *group)
{
    config_item_init(&group->cg_item);
    INIT_LIST_HEAD(&group->cg_children);
    INIT_LIST_HEAD(&group->default_groups);
    INIT_LIST_HEAD(&group->group_entry);
}

void config_group_init_type_name(struct config_group *group,
                                 const char *name,
                                 const struct config_item_type *type)
{
    config_item_init_type_name(&group->cg_item, name, type);
    config_group_init(group);
}

struct config_item *config_item_get(struct config_item *item)
{
    if (item) {
        int old = atomic_fetch_add(&item->ci_kref.refcount, 1);

        CFS_BUG_ON(old <= 0);
    }
    return item;
}

struct config_item *config_item_get_unless_zero(struct config_item *item)
{
    int old;

    if (!item) {
        return NULL;
    }
    old = atomic_load(&item->ci_kref.refcount);
    do {
        if (old <= 0) {
            return NULL;
        }
    } while (
        !atomic_compare_exchange_weak(&item->ci_kref.refcount, &old, old + 1));
    return item;
}

/* The kernel's config_item_cleanup(): heap name, release(), then the
 * references on ci_group and ci_parent if still set (M19). */
static void config_item_cleanup(struct config_item *item)
{
    const struct config_item_type *t = item->ci_type;
    struct config_group *group = item->ci_group;
    struct config_item *parent = item->ci_parent;

    if (item->ci_name != item->ci_namebuf) {
        cfs_free(item->ci_name);
    }
    item->ci_name = NULL;
    if (t && t->ct_item_ops && t->ct_item_ops->release) {
        t->ct_item_ops->release(item);
    }
    if (group) {
        config_group_put(group);
    }
    if (parent) {
        config_item_put(parent);
    }
}

void config_item_put(struct config_item *item)
{
    int old;

    if (!item) {
        return;
    }
    old = atomic_fetch_sub(&item->ci_kref.refcount, 1);
    CFS_BUG_ON(old <= 0); /* put on zero: a refcount bug (docs/STYLE.md §4) */
    if (old == 1) {
        config_item_cleanup(item);
    }
}

struct config_item *config_group_find_item(struct config_group *group,
                                           const char *name)
{
    struct config_item *item;

    list_for_each_entry(item, &group->cg_children, ci_entry) {
        if (item->ci_name && strcmp(item->ci_name, name) == 0) {
            return config_item_get(item);
        }
    }
    return NULL;
}

void configfs_remove_default_groups(struct config_group *group)
{
    struct config_group *g, *n;

    list_for_each_entry_safe(g, n, &group->default_groups, group_entry) {
        list_del(&g->group_entry);
        config_group_put(g);
    }
}

/* ---- module pins (M25) ------------------------------------------------- */

void cfs__module_get(struct module *mod)
{
    if (mod) {
        atomic_fetch_add(&mod->refcnt, 1);
    }
}

void cfs__module_put(struct module *mod)
{
    if (mod) {
        long old = atomic_fetch_sub(&mod->refcnt, 1);

        CFS_BUG_ON(old <= 0);
    }
}

/* ---- fragments (T3) ---------------------------------------------------- */

struct cfs_frag *cfs__frag_new(void)
{
    struct cfs_frag *frag = cfs_zalloc(sizeof(*frag));

    if (!frag) {
        return NULL;
    }
    atomic_init(&frag->refs, 1);
    pthread_mutex_init(&frag->lock, NULL);
    pthread_cond_init(&frag->idle, NULL);
    return frag;
}

void cfs__frag_get(struct cfs_frag *frag)
{
    atomic_fetch_add(&frag->refs, 1);
}

void cfs__frag_put(struct cfs_frag *frag)
{
    if (frag && atomic_fetch_sub(&frag->refs, 1) == 1) {
        pthread_mutex_destroy(&frag->lock);
        pthread_cond_destroy(&frag->idle);
        cfs_free(frag);
    }
}

bool cfs__frag_enter(struct cfs_frag *frag)
{
    bool ok;

    pthread_mutex_lock(&frag->lock);
    ok = !frag->dead;
    if (ok) {
        frag->active++;
    }
    pthread_mutex_unlock(&frag->lock);
    return ok;
}

void cfs__frag_exit(struct cfs_frag *frag)
{
    pthread_mutex_lock(&frag->lock);
    if (--frag->active == 0 && frag->dead) {
        pthread_cond_broadcast(&frag->idle);
    }
    pthread_mutex_unlock(&frag->lock);
}

void cfs__frag_kill(struct cfs_frag *frag)
{
    pthread_mutex_lock(&frag->lock);
    frag->dead = true;
    while (frag->active > 0) {
        pthread_cond_wait(&frag->idle, &frag->lock);
    }
    pthread_mutex_unlock(&frag->lock);
}
