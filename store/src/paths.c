// SPDX-License-Identifier: MIT
/*
 * paths.c - small helpers for absolute configfs paths and a string set,
 * used by the write path (directory of an attribute) and by replay (which
 * directories failed, which items are committed).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store-internal.h"

size_t store_dirname_len(const char *path, size_t len)
{
    while (len > 0 && path[len - 1] != '/') {
        len--;
    }
    /* "/a" -> "" (the root is written as 0 bytes), "/a/b" -> "/a". */
    return len > 0 ? len - 1 : 0;
}

size_t store_path_norm(const char *path)
{
    size_t len;

    if (!path || path[0] != '/') {
        return 0;
    }
    len = strlen(path);
    while (len > 1 && path[len - 1] == '/') {
        len--;
    }
    return len;
}

bool store_path_under(const char *path, const char *prefix, size_t plen)
{
    if (plen == 1 && prefix[0] == '/') {
        return true;
    }
    return strncmp(path, prefix, plen) == 0 &&
           (path[plen] == '\0' || path[plen] == '/');
}

char *store_asprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return NULL;
    }
    s = cfs_malloc((size_t)n + 1);
    if (!s) {
        return NULL;
    }
    va_start(ap, fmt);
    (void)vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static uint64_t strhash(const char *s, size_t len)
{
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    }
    return h;
}

static size_t strset_find(char **slots, size_t cap, const char *s, size_t len)
{
    size_t i = strhash(s, len) & (cap - 1);

    while (slots[i] &&
           !(strncmp(slots[i], s, len) == 0 && slots[i][len] == '\0')) {
        i = (i + 1) & (cap - 1);
    }
    return i;
}

static int strset_grow(struct store_strset *set)
{
    size_t cap;
    char **slots;

    /* a power of two: slots are picked by masking the hash */
    if (cfs_grow_cap(set->cap, 0, 16, sizeof(*slots), &cap)) {
        return -ENOMEM;
    }
    slots = cfs_zalloc(cap * sizeof(*slots));
    if (!slots) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < set->cap; i++) {
        if (set->slots[i]) {
            slots[strset_find(
                slots, cap, set->slots[i], strlen(set->slots[i]))] =
                set->slots[i];
        }
    }
    cfs_free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return 0;
}

int store_strset_add(struct store_strset *set, const char *s, size_t len)
{
    size_t i;
    char *copy;

    if ((set->n + 1) * 4 > set->cap * 3) {
        int r = strset_grow(set);

        if (r < 0) {
            return r;
        }
    }
    i = strset_find(set->slots, set->cap, s, len);
    if (set->slots[i]) {
        return 0;
    }
    copy = cfs_malloc(len + 1);
    if (!copy) {
        return -ENOMEM;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    set->slots[i] = copy;
    set->n++;
    return 0;
}

bool store_strset_has(const struct store_strset *set, const char *s, size_t len)
{
    if (set->n == 0) {
        return false;
    }
    return set->slots[strset_find(set->slots, set->cap, s, len)] != NULL;
}

void store_strset_free(struct store_strset *set)
{
    for (size_t i = 0; i < set->cap; i++) {
        cfs_free(set->slots[i]);
    }
    cfs_free(set->slots);
    set->slots = NULL;
    set->cap = set->n = 0;
}

/* ---- directory ids ----------------------------------------------------- */

#define IDCACHE_SLOTS 8192

int64_t
store_idcache_get(const struct store_idcache *c, const char *path, size_t len)
{
    size_t i;

    if (c->n == 0) {
        return 0;
    }
    i = strhash(path, len) & (c->cap - 1);
    while (c->slots[i].path) {
        if (c->slots[i].len == len &&
            memcmp(c->slots[i].path, path, len) == 0) {
            return c->slots[i].id;
        }
        i = (i + 1) & (c->cap - 1);
    }
    return 0;
}

void store_idcache_clear(struct store_idcache *c)
{
    if (c->n == 0) {
        return;
    }
    for (size_t i = 0; i < c->cap; i++) {
        cfs_free(c->slots[i].path);
        c->slots[i].path = NULL;
    }
    c->n = 0;
}

void store_idcache_free(struct store_idcache *c)
{
    store_idcache_clear(c);
    cfs_free(c->slots);
    *c = (struct store_idcache){0};
}

void store_idcache_put(struct store_idcache *c,
                       const char *path,
                       size_t len,
                       int64_t id)
{
    size_t i;
    char *copy;

    if (!c->slots) {
        c->slots = cfs_zalloc(IDCACHE_SLOTS * sizeof(*c->slots));
        if (!c->slots) {
            return;
        }
        c->cap = IDCACHE_SLOTS;
    }
    if ((c->n + 1) * 4 > c->cap * 3) {
        store_idcache_clear(c);
    }
    i = strhash(path, len) & (c->cap - 1);
    while (c->slots[i].path) {
        if (c->slots[i].len == len &&
            memcmp(c->slots[i].path, path, len) == 0) {
            c->slots[i].id = id;
            return;
        }
        i = (i + 1) & (c->cap - 1);
    }
    copy = cfs_malloc(len + 1);
    if (!copy) {
        return;
    }
    memcpy(copy, path, len);
    copy[len] = '\0';
    c->slots[i] = (struct store_idslot){.path = copy, .len = len, .id = id};
    c->n++;
}

int store_buf_add(struct store_buf *b, const void *data, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap;
        char *p;

        if (cfs_grow_cap(b->cap, b->n + len + 1, 256, 1, &cap)) {
            return -ENOMEM;
        }
        p = cfs_realloc(b->p, cap);
        if (!p) {
            return -ENOMEM;
        }
        b->p = p;
        b->cap = cap;
    }
    if (len > 0) {
        memcpy(b->p + b->n, data, len);
    }
    b->n += len;
    b->p[b->n] = '\0';
    return 0;
}
