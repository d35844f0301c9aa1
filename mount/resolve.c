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

/* @path (NUL-terminated, length *@len) is inside the mount at @mp: the
 * config path it names, or NULL. */
static const char *config_part(const char *mp, size_t mp_len, const char *path)
{
    if (strncmp(path, mp, mp_len) != 0) {
        return NULL;
    }
    if (path[mp_len] == '\0') {
        return "/";
    }
    if (path[mp_len] == '/') {
        return path + mp_len;
    }
    return NULL;
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

int cfs_mount_resolve(const char *mountpoint,
                      const char *cwd,
                      const char *text,
                      char *(*follow)(const char *config_path),
                      char **ret)
{
    size_t mp_len = strlen(mountpoint);
    char cur[PATH_MAX];
    size_t len = 1;
    char *todo = NULL; /* the components still to walk */
    char *save = NULL;
    unsigned links = 0;
    const char *cfg;
    int r = 0;

    if (!text[0]) {
        return -ENOENT; /* SL1 */
    }
    while (mp_len > 1 && mountpoint[mp_len - 1] == '/') {
        mp_len--;
    }
    if (text[0] == '/') {
        todo = strdup(text);
    } else {
        size_t a = strlen(cwd), b = strlen(text);

        todo = malloc(a + b + 2);
        if (todo) {
            memcpy(todo, cwd, a);
            todo[a] = '/';
            memcpy(todo + a + 1, text, b + 1);
        }
    }
    if (!todo) {
        return -ENOMEM;
    }
    cur[0] = '/';
    cur[1] = '\0';
    for (;;) {
        char *rest = NULL;
        const char *c = strtok_r(save ? NULL : todo, "/", &save);

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
            pop(cur, &len);
            continue;
        }
        if (len + 1 + strlen(c) >= sizeof(cur)) {
            r = -ENAMETOOLONG;
            break;
        }
        if (len > 1) {
            cur[len++] = '/';
        }
        (void)snprintf(cur + len, sizeof(cur) - len, "%s", c);
        len += strlen(c);
        cfg = config_part(mountpoint, mp_len, cur);
        if (cfg && follow) {
            char *target = follow(cfg);

            if (target) {
                /* a link of the tree: go on from its target, with the
                 * components not walked yet */
                size_t tl = strlen(target);
                const char *left = save ? save : "";
                size_t ll = strlen(left);

                if (++links > RESOLVE_MAX_LINKS) {
                    free(target);
                    r = -ELOOP;
                    break;
                }
                if (mp_len + tl + 1 + ll + 1 > sizeof(cur)) {
                    free(target);
                    r = -ENAMETOOLONG;
                    break;
                }
                rest = malloc(mp_len + tl + ll + 2);
                if (!rest) {
                    free(target);
                    r = -ENOMEM;
                    break;
                }
                (void)snprintf(rest,
                               mp_len + tl + ll + 2,
                               "%.*s%s/%s",
                               (int)mp_len,
                               mountpoint,
                               target,
                               left);
                free(target);
                free(todo);
                todo = rest;
                save = NULL;
                cur[0] = '/';
                cur[1] = '\0';
                len = 1;
            }
        }
    }
    free(todo);
    if (r) {
        return r;
    }
    cfg = config_part(mountpoint, mp_len, cur);
    if (!cfg) {
        return -EPERM; /* SL5: outside configfs */
    }
    *ret = strdup(cfg);
    return *ret ? 0 : -ENOMEM;
}
