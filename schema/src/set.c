// SPDX-License-Identifier: MIT
/*
 * set.c - a directory of schema files (configfsd --schema-dir).
 *
 * Files are read in byte order of their names so that start-up is the
 * same on every machine, and registered all or nothing: a bad file stops
 * start-up with its name, the JSON path and the reason.
 */
#include "internal.h"

#include <dirent.h>
#include <stdlib.h>

struct cfs_schema_set {
    struct cfs_schema **schemas;
    size_t n;
};

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_schema_file(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* The sorted "*.json" names of @dir. */
static int list_dir(const char *dir, char ***ret_names, size_t *ret_n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0;

    if (!d) {
        return -errno;
    }
    while ((e = readdir(d))) {
        if (!is_schema_file(e->d_name)) {
            continue;
        }
        if (cfs_grow(&names, &cap, n, sizeof(*names), 8)) {
            r = -ENOMEM;
            break;
        }
        names[n] = cfs_strdup(e->d_name);
        if (!names[n]) {
            r = -ENOMEM;
            break;
        }
        n++;
    }
    (void)closedir(d);
    if (r < 0) {
        for (size_t i = 0; i < n; i++) {
            cfs_free(names[i]);
        }
        cfs_free(names);
        return r;
    }
    if (n > 1) {
        qsort(names, n, sizeof(*names), name_cmp);
    }
    *ret_names = names;
    *ret_n = n;
    return 0;
}

int cfs_schema_load_dir(const char *dir,
                        struct cfs_schema_set **ret_set,
                        struct cfs_schema_error *err)
{
    struct cfs_schema_set *set = NULL;
    char **names = NULL;
    size_t n = 0;
    char *path = NULL;
    int r;

    if (err) {
        memset(err, 0, sizeof(*err));
        schema_strlcpy(err->file, dir, sizeof(err->file));
    }
    r = list_dir(dir, &names, &n);
    if (r < 0) {
        if (err) {
            schema_strlcpy(err->reason, strerror(-r), sizeof(err->reason));
        }
        return r;
    }
    set = cfs_zalloc(sizeof(*set));
    if (set) {
        set->schemas = cfs_zalloc(n * sizeof(struct cfs_schema *));
    }
    if (!set || !set->schemas) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct cfs_schema *s = NULL;
        size_t len = strlen(dir) + strlen(names[i]) + 2;

        cfs_free(path);
        path = cfs_malloc(len);
        if (!path) {
            r = -ENOMEM;
            goto out;
        }
        (void)snprintf(path, len, "%s/%s", dir, names[i]);
        r = cfs_schema_load_file(path, &s, err);
        if (r < 0) {
            goto out;
        }
        for (size_t k = 0; k < set->n; k++) {
            if (!strcmp(cfs_schema_name(set->schemas[k]), cfs_schema_name(s))) {
                if (err) {
                    schema_strlcpy(err->file, path, sizeof(err->file));
                    schema_strlcpy(err->path, "$.subsystem", sizeof(err->path));
                    (void)snprintf(err->reason,
                                   sizeof(err->reason),
                                   "subsystem \"%s\" is already defined by %s",
                                   cfs_schema_name(s),
                                   cfs_schema_file(set->schemas[k]));
                }
                cfs_schema_free(s);
                r = -EINVAL;
                goto out;
            }
        }
        set->schemas[set->n++] = s;
    }
    *ret_set = set;
    set = NULL;

out:
    cfs_free(path);
    for (size_t i = 0; i < n; i++) {
        cfs_free(names[i]);
    }
    cfs_free(names);
    cfs_schema_set_free(set);
    return r;
}

size_t cfs_schema_set_count(const struct cfs_schema_set *set)
{
    return set ? set->n : 0;
}

struct cfs_schema *cfs_schema_set_get(const struct cfs_schema_set *set,
                                      size_t i)
{
    return set && i < set->n ? set->schemas[i] : NULL;
}

struct cfs_schema *cfs_schema_set_find(const struct cfs_schema_set *set,
                                       const char *name)
{
    for (size_t i = 0; set && i < set->n; i++) {
        if (!strcmp(cfs_schema_name(set->schemas[i]), name)) {
            return set->schemas[i];
        }
    }
    return NULL;
}

int cfs_schema_set_register(struct cfs_schema_set *set,
                            struct cfs_schema_error *err)
{
    size_t i;
    int r = 0;

    if (err) {
        memset(err, 0, sizeof(*err));
    }
    for (i = 0; i < set->n; i++) {
        r = cfs_schema_register(set->schemas[i]);
        if (r < 0) {
            break;
        }
    }
    if (r == 0) {
        return 0;
    }
    if (err) {
        schema_strlcpy(
            err->file, cfs_schema_file(set->schemas[i]), sizeof(err->file));
        schema_strlcpy(err->path, "$.subsystem", sizeof(err->path));
        (void)snprintf(err->reason,
                       sizeof(err->reason),
                       "cannot register subsystem \"%s\": %s",
                       cfs_schema_name(set->schemas[i]),
                       r == -EEXIST ? "a subsystem of that name exists"
                                    : strerror(-r));
    }
    while (i-- > 0) {
        cfs_schema_unregister(set->schemas[i]);
    }
    return r;
}

void cfs_schema_set_unregister(struct cfs_schema_set *set)
{
    if (!set || !set->schemas) {
        return;
    }
    for (size_t i = set->n; i-- > 0;) {
        cfs_schema_unregister(set->schemas[i]);
    }
}

void cfs_schema_set_free(struct cfs_schema_set *set)
{
    if (!set) {
        return;
    }
    cfs_schema_set_unregister(set);
    for (size_t i = 0; set->schemas && i < set->n; i++) {
        schema_put(set->schemas[i]);
    }
    cfs_free(set->schemas);
    cfs_free(set);
}
