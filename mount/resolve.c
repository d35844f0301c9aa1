// SPDX-License-Identifier: MIT
/*
 * resolve.c - the path texts of the mount: what readlink(2) shows for a
 * link (rule RL1) and how the text given to symlink(2) names its target
 * (rule SL5: relative to the caller's working directory, following links,
 * one component at a time). Pure string work, no FUSE, so tests drive it
 * directly.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mount.h"

/* Links followed while resolving one text, as the kernel's MAXSYMLINKS. */
#define RESOLVE_MAX_LINKS 40

char *cfs_mount_link_text(const char *link, const char *target)
{
    size_t depth = 0, n;
    const char *t = target;
    char *out, *p;

    /* one level per component of the link's directory */
    for (const char *s = link; *s; s++) {
        if (*s == '/' && s[1] != '\0' && s[1] != '/') {
            depth++;
        }
    }
    if (depth > 0) {
        depth--; /* the link's own name */
    }
    while (*t == '/') {
        t++;
    }
    n = depth * 3 + strlen(t);
    out = malloc(n + 1);
    if (!out) {
        return NULL;
    }
    p = out;
    for (size_t i = 0; i < depth; i++) {
        *p++ = '.';
        *p++ = '.';
        *p++ = '/';
    }
    (void)snprintf(p, n + 1 - depth * 3, "%s", t);
    if (n > 0 && out[n - 1] == '/') {
        out[n - 1] = '\0';
    }
    return out;
}

/* Drop the last component of @path (length *@len); "/" stays. */
static void pop(char *path, size_t *len)
{
    while (*len > 1 && path[*len - 1] != '/') {
        (*len)--;
    }
    if (*len > 1) {
        (*len)--;
    }
    path[*len] = '\0';
}

/* Append the component @c to @path (length *@len). */
static int push(char *path, size_t *len, size_t size, const char *c)
{
    size_t cl = strlen(c);

    if (*len + 1 + cl >= size) {
        return -ENAMETOOLONG;
    }
    if (*len > 1) {
        path[(*len)++] = '/';
    }
    memcpy(path + *len, c, cl + 1);
    *len += cl;
    return 0;
}

/* Set @path to @src. */
static int set(char *path, size_t *len, size_t size, const char *src)
{
    size_t sl = strlen(src);

    if (sl + 1 > size) {
        return -ENAMETOOLONG;
    }
    memcpy(path, src, sl + 1);
    *len = sl;
    while (*len > 1 && path[*len - 1] == '/') {
        path[--(*len)] = '\0';
    }
    if (*len == 0) {
        path[0] = '/';
        path[1] = '\0';
        *len = 1;
    }
    return 0;
}

/* @path is @dir, trailing slashes aside. */
static bool same(const char *path, const char *dir)
{
    char d[PATH_MAX];
    size_t len = 0;

    return set(d, &len, sizeof(d), dir) == 0 && strcmp(d, path) == 0;
}

/* The view whose mount point @host is, the last one mounted when several
 * are stacked there; -1 for none. */
static int
view_at(const struct cfs_mount_view *views, size_t n_views, const char *host)
{
    int found = -1;

    for (size_t i = 0; i < n_views; i++) {
        if (same(host, views[i].mountpoint)) {
            found = (int)i;
        }
    }
    return found;
}

int cfs_mount_resolve_at(const struct cfs_mount_view *views,
                         size_t n_views,
                         int cwd_view,
                         const char *cwd,
                         const char *text,
                         char *(*follow)(const char *config_path),
                         char **ret)
{
    char host[PATH_MAX]; /* where the walk is, outside the tree */
    char cfg[PATH_MAX];  /* where the walk is, inside the tree */
    size_t hlen = 1, clen = 1;
    int view = -1;     /* inside the tree, through views[view]; -1 outside */
    char *todo = NULL; /* the components still to walk */
    char *save = NULL;
    bool first = true;
    unsigned links = 0;
    int r = 0;

    if (!text[0]) {
        return -ENOENT; /* SL1 */
    }
    host[0] = cfg[0] = '/';
    host[1] = cfg[1] = '\0';
    if (text[0] != '/' && cwd_view >= 0 && (size_t)cwd_view < n_views) {
        view = cwd_view;
        r = set(cfg, &clen, sizeof(cfg), cwd);
        todo = r ? NULL : strdup(text);
    } else if (text[0] != '/') {
        /* from a directory outside the tree: its text, then @text */
        size_t a = strlen(cwd), b = strlen(text);

        todo = malloc(a + b + 2);
        if (todo) {
            memcpy(todo, cwd, a);
            todo[a] = '/';
            memcpy(todo + a + 1, text, b + 1);
        }
    } else {
        todo = strdup(text);
    }
    if (r) {
        return r;
    }
    if (!todo) {
        return -ENOMEM;
    }
    for (;;) {
        const char *c = strtok_r(first ? todo : NULL, "/", &save);
        char *target;

        first = false;
        if (!c) {
            break;
        }
        if (strlen(c) > NAME_MAX) {
            r = -ENAMETOOLONG; /* L1 */
            break;
        }
        if (strcmp(c, ".") == 0) {
            continue;
        }
        if (strcmp(c, "..") == 0) {
            if (view < 0) {
                pop(host, &hlen);
            } else if (clen == 1 || same(cfg, views[view].root)) {
                /* above the root of the mount: into the directory
                 * holding its mount point, as a path walk does */
                r = set(host, &hlen, sizeof(host), views[view].mountpoint);
                if (r) {
                    break;
                }
                pop(host, &hlen);
                view = -1;
            } else {
                pop(cfg, &clen);
            }
            if (view < 0 && (view = view_at(views, n_views, host)) >= 0) {
                r = set(cfg, &clen, sizeof(cfg), views[view].root);
                if (r) {
                    break;
                }
            }
            continue;
        }
        if (view < 0) {
            /* outside: text, host symlinks not followed (docs/mount.md) */
            r = push(host, &hlen, sizeof(host), c);
            if (r) {
                break;
            }
            view = view_at(views, n_views, host);
            if (view >= 0) {
                r = set(cfg, &clen, sizeof(cfg), views[view].root);
                if (r) {
                    break;
                }
            }
            continue;
        }
        r = push(cfg, &clen, sizeof(cfg), c);
        if (r) {
            break;
        }
        target = follow ? follow(cfg) : NULL;
        if (target) {
            /* a link of the tree: go on from its target, walked again
             * from the root of the tree, with the components not walked
             * yet */
            const char *left = save ? save : "";
            size_t tl = strlen(target), ll = strlen(left);
            char *rest;

            if (++links > RESOLVE_MAX_LINKS) {
                free(target);
                r = -ELOOP;
                break;
            }
            rest = malloc(tl + ll + 2);
            if (!rest) {
                free(target);
                r = -ENOMEM;
                break;
            }
            memcpy(rest, target, tl);
            rest[tl] = '/';
            memcpy(rest + tl + 1, left, ll + 1);
            free(target);
            free(todo);
            todo = rest;
            first = true;
            cfg[0] = '/';
            cfg[1] = '\0';
            clen = 1;
        }
    }
    free(todo);
    if (r) {
        return r;
    }
    if (view < 0) {
        return -EPERM; /* SL5: outside configfs */
    }
    *ret = strdup(cfg);
    return *ret ? 0 : -ENOMEM;
}

int cfs_mount_resolve(const char *mountpoint,
                      const char *cwd,
                      const char *text,
                      char *(*follow)(const char *config_path),
                      char **ret)
{
    const struct cfs_mount_view view = {mountpoint, "/"};

    return cfs_mount_resolve_at(&view, 1, -1, cwd, text, follow, ret);
}
