// SPDX-License-Identifier: MIT
/*
 * alloc.c - the allocator hook every core allocation goes through.
 *
 * Tests point it at cmocka's checked allocator so every unit test is a leak
 * test, and fail the Nth allocation to walk the out-of-memory paths.
 */
#include "internal.h"

static void *(*alloc_malloc)(size_t) = malloc;
static void *(*alloc_realloc)(void *, size_t) = realloc;
static void (*alloc_free)(void *) = free;

void cfs_set_alloc_funcs(void *(*malloc_fn)(size_t),
                         void *(*realloc_fn)(void *, size_t),
                         void (*free_fn)(void *))
{
    alloc_malloc = malloc_fn ? malloc_fn : malloc;
    alloc_realloc = realloc_fn ? realloc_fn : realloc;
    alloc_free = free_fn ? free_fn : free;
}

void *cfs_malloc(size_t size)
{
    return alloc_malloc(size ? size : 1);
}

void *cfs_zalloc(size_t size)
{
    void *p = cfs_malloc(size);

    if (p) {
        memset(p, 0, size);
    }
    return p;
}

void *cfs_realloc(void *ptr, size_t size)
{
    return alloc_realloc(ptr, size ? size : 1);
}

void cfs_free(void *ptr)
{
    if (ptr) {
        alloc_free(ptr);
    }
}

void *cfs_memdup(const void *p, size_t len)
{
    char *d = cfs_malloc(len + 1);

    if (d) {
        if (len) {
            memcpy(d, p, len);
        }
        d[len] = '\0';
    }
    return d;
}

char *cfs_strdup(const char *s)
{
    return s ? cfs_memdup(s, strlen(s)) : NULL;
}
