// SPDX-License-Identifier: MIT
/*
 * util.c - see util.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#include "util.h"

/* cmocka's allocator is not thread-safe; core may allocate from any
 * thread a test starts. */
static pthread_mutex_t cu_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cu_malloc(size_t size)
{
    void *p;

    pthread_mutex_lock(&cu_alloc_lock);
    p = _test_malloc(size, __FILE__, __LINE__);
    pthread_mutex_unlock(&cu_alloc_lock);
    return p;
}

static void *cu_realloc(void *ptr, size_t size)
{
    void *p;

    pthread_mutex_lock(&cu_alloc_lock);
    p = _test_realloc(ptr, size, __FILE__, __LINE__);
    pthread_mutex_unlock(&cu_alloc_lock);
    return p;
}

static void cu_free(void *ptr)
{
    if (ptr) {
        pthread_mutex_lock(&cu_alloc_lock);
        _test_free(ptr, __FILE__, __LINE__);
        pthread_mutex_unlock(&cu_alloc_lock);
    }
}

static ssize_t prime_a_show(struct config_item *item, char *page)
{
    (void)item;
    return sprintf(page, "0\n");
}

static ssize_t
prime_a_store(struct config_item *item, const char *page, size_t count)
{
    (void)item;
    (void)page;
    return (ssize_t)count;
}

static struct configfs_attribute prime_a = {
    .ca_name = "a",
    .ca_mode = 0644,
    .show = prime_a_show,
    .store = prime_a_store,
};

static struct configfs_attribute *prime_attrs[] = {&prime_a, NULL};

static void prime_release(struct config_item *item)
{
    free(item);
}

static const struct configfs_item_operations prime_item_ops = {
    .release = prime_release,
};

static const struct config_item_type prime_item_type = {
    .ct_item_ops = &prime_item_ops,
    .ct_attrs = prime_attrs,
};

static struct config_item *prime_make_item(struct config_group *group,
                                           const char *name)
{
    struct config_item *item = calloc(1, sizeof(*item));

    (void)group;
    if (!item) {
        return NULL;
    }
    config_item_init_type_name(item, name, &prime_item_type);
    return item;
}

static const struct configfs_group_operations prime_group_ops = {
    .make_item = prime_make_item,
};

static const struct config_item_type prime_type = {
    .ct_group_ops = &prime_group_ops,
};

static struct configfs_subsystem prime_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "cu-prime",
                    .ci_type = &prime_type,
                },
        },
};

void cu_prime_core(void)
{
    char buf[16];

    cfs_set_alloc_funcs(NULL, NULL, NULL);
    config_group_init(&prime_subsys.su_group);
    if (configfs_register_subsystem(&prime_subsys) == 0) {
        (void)cfs_mkdir(NULL, "/cu-prime/x");
        (void)cu_store("/cu-prime/x/a", "1");
        (void)cu_show("/cu-prime/x/a", buf, sizeof(buf));
        (void)cu_listed("/cu-prime", "x");
        (void)cfs_rmdir(NULL, "/cu-prime/x");
        configfs_unregister_subsystem(&prime_subsys);
    }
}

int cu_setup(void **state)
{
    (void)state;
    cfs_set_alloc_funcs(cu_malloc, cu_realloc, cu_free);
    return 0;
}

int cu_teardown(void **state)
{
    (void)state;
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    return 0;
}

int cu_show(const char *path, char *out, size_t size)
{
    char *buf = NULL;
    size_t len = 0;
    int ret;

    ret = cfs_show(path, &buf, &len);
    if (ret < 0) {
        return ret;
    }
    if (len >= size) {
        len = size - 1;
    }
    memcpy(out, buf, len);
    out[len] = '\0';
    cfs_free(buf);
    return 0;
}

int cu_store(const char *path, const char *value)
{
    return cfs_write(NULL, path, value, strlen(value));
}

bool cu_listed(const char *dir, const char *name)
{
    struct cfs_entry *entries = NULL;
    size_t n = 0;
    bool found = false;

    if (cfs_readdir(dir, &entries, &n) < 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(entries[i].name, name) == 0) {
            found = true;
        }
    }
    cfs_entries_free(entries, n);
    return found;
}
