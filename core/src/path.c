// SPDX-License-Identifier: MIT
/*
 * path.c - resolving config paths, and the path of a dirent.
 *
 * Paths are absolute and /-separated (docs/DESIGN.md §3); links in the
 * middle of a path are followed, up to CFS_SYMLINK_FOLLOW_MAX (SL5).
 */
#include "internal.h"

/* Resolve the first @plen bytes of @path; allocates nothing, so undo can
 * use it when memory is short. */
int cfs__resolve_n(const char *path, size_t plen, struct cfs_resolved *ret)
{
    struct cfs_dirent *cur = &cfs__root;
    const char *p = path;
    const char *end;
    unsigned int follows = 0;

    if (!path || plen == 0 || path[0] != '/') {
        return -EINVAL;
    }
    if (plen >= CFS_PATH_MAX) {
        return -ENAMETOOLONG; /* L1 */
    }
    end = path + plen; /* not before: NULL + plen is undefined */
    for (;;) {
        const char *name;
        size_t len;
        struct cfs_dirent *d;
        unsigned int idx;
        int r;

        while (p < end && *p == '/') {
            p++;
        }
        if (p == end) {
            break;
        }
        name = p;
        for (len = 0; p + len < end && p[len] != '/'; len++) {
        }
        r = cfs_name_check(name, len);
        if (r < 0) {
            return r;
        }
        if (!cfs__dirent_ready(cur)) {
            return -ENOENT; /* L2 */
        }
        p += len;
        while (p < end && *p == '/') {
            p++;
        }
        d = cfs__dir_lookup(cur, name, len);
        if (d && d->kind == CFS_D_LINK) {
            if (p == end) {
                ret->dir = d;
                ret->kind = CFS_R_LINK;
                ret->idx = 0;
                ret->follows = follows;
                return 0;
            }
            if (++follows > CFS_SYMLINK_FOLLOW_MAX) {
                return -ELOOP;
            }
            cur = d->target;
            continue;
        }
        if (d) {
            cur = d;
            continue;
        }
        r = cfs__attr_lookup(cur, name, len, &idx);
        if (!r) {
            return -ENOENT;
        }
        if (p != end) {
            return -ENOTDIR; /* an attribute in the middle of a path */
        }
        ret->dir = cur;
        ret->kind = r == 1 ? CFS_R_ATTR : CFS_R_BIN_ATTR;
        ret->idx = idx;
        ret->follows = follows;
        return 0;
    }
    ret->dir = cur;
    ret->kind = CFS_R_DIR;
    ret->idx = 0;
    ret->follows = follows;
    return 0;
}

int cfs__resolve(const char *path, struct cfs_resolved *ret)
{
    return path ? cfs__resolve_n(path, strlen(path), ret) : -EINVAL;
}

int cfs__read_resolve(const char *path,
                      struct cfs_resolved *ret,
                      enum cfs_read_what what)
{
    int r;

    if (!path) {
        return -EINVAL;
    }
    cfs__read_note_path(path, strlen(path)); /* a name not found, a link */
    r = cfs__resolve(path, ret);
    if (r < 0) {
        return r;
    }
    switch (ret->kind) {
    case CFS_R_DIR:
        cfs__read_note(ret->dir, NULL, what);
        break;
    case CFS_R_LINK:
        cfs__read_note(ret->dir, NULL, what);
        cfs__read_note(ret->dir->target, NULL, CFS_READ_SELF); /* its path */
        break;
    case CFS_R_ATTR:
        cfs__read_note(ret->dir,
                       cfs__dir_attr(ret->dir, ret->idx)->ca_name,
                       what == CFS_READ_SHOW ? what : CFS_READ_NODE);
        break;
    default:
        cfs__read_note(ret->dir,
                       cfs__dir_bin_attr(ret->dir, ret->idx)->cb_attr.ca_name,
                       what == CFS_READ_SHOW ? what : CFS_READ_NODE);
        break;
    }
    return 0;
}

int cfs__resolve_parent(const char *path,
                        struct cfs_dirent **ret_parent,
                        const char **ret_name,
                        size_t *ret_len)
{
    struct cfs_resolved res;
    size_t plen;
    size_t end;
    size_t start;
    int r;

    if (!path || path[0] != '/') {
        return -EINVAL;
    }
    plen = strlen(path);
    if (plen >= CFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    end = plen;
    while (end > 0 && path[end - 1] == '/') {
        end--; /* trailing slashes are accepted (MK1) */
    }
    start = end;
    while (start > 0 && path[start - 1] != '/') {
        start--;
    }
    if (start == end) {
        return -EEXIST; /* the root itself */
    }
    r = start == 1 ? cfs__resolve_n("/", 1, &res)
                   : cfs__resolve_n(path, start, &res);
    if (r < 0) {
        return r;
    }
    if (res.kind == CFS_R_ATTR || res.kind == CFS_R_BIN_ATTR) {
        return -ENOTDIR; /* MK1 */
    }
    if (res.kind == CFS_R_LINK) {
        res.dir = res.dir->target; /* a link as the last parent component */
    }
    r = cfs_name_check(path + start, end - start);
    if (r < 0) {
        return r;
    }
    *ret_parent = res.dir;
    *ret_name = path + start;
    *ret_len = end - start;
    return 0;
}

int cfs__dirent_path(const struct cfs_dirent *d, char **ret_path)
{
    size_t len = 0;
    char *buf;
    char *p;

    for (const struct cfs_dirent *c = d; c && c->parent; c = c->parent) {
        len += c->name_len + 1;
    }
    if (len == 0) {
        len = 1;
    }
    buf = cfs_malloc(len + 1);
    if (!buf) {
        return -ENOMEM;
    }
    p = buf + len;
    *p = '\0';
    for (const struct cfs_dirent *c = d; c && c->parent; c = c->parent) {
        p -= c->name_len;
        memcpy(p, c->name, c->name_len);
        *--p = '/';
    }
    if (p != buf) {
        buf[0] = '/';
    }
    *ret_path = buf;
    return 0;
}

int cfs_item_path(struct config_item *item, char **ret_path)
{
    int r = -ENOENT;

    cfs__tree_rdlock();
    if (item && item->ci_dentry && item->ci_dentry->state != CFS_S_DEAD) {
        r = cfs__dirent_path(item->ci_dentry, ret_path);
    }
    cfs__tree_unlock();
    return r;
}
