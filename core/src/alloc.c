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

int cfs_grow_cap(
    size_t cap, size_t need, size_t first, size_t size, size_t *ret_cap)
{
    size_t ncap;

    if (cap == 0) {
        ncap = first;
    } else if (cap > SIZE_MAX / 2) {
        return -ENOMEM;
    } else {
        ncap = cap * 2;
    }
    if (ncap < need) {
        ncap = need;
    }
    if (size && ncap > SIZE_MAX / size) {
        return -ENOMEM;
    }
    *ret_cap = ncap;
    return 0;
}

int cfs_grow(void *arrp, size_t *cap, size_t n, size_t size, size_t first)
{
    void *arr;
    void *grown;
    size_t ncap;

    if (n < *cap) {
        return 0;
    }
    if (n == SIZE_MAX || cfs_grow_cap(*cap, n + 1, first, size, &ncap) < 0) {
        return -ENOMEM;
    }
    /* arrp points at some T *; object pointers share void *'s form here */
    memcpy(&arr, arrp, sizeof(arr));
    grown = cfs_realloc(arr, ncap * size);
    if (!grown) {
        return -ENOMEM;
    }
    memcpy(arrp, &grown, sizeof(grown));
    *cap = ncap;
    return 0;
}

char *cfs_strdup(const char *s)
{
    return s ? cfs_memdup(s, strlen(s)) : NULL;
}
