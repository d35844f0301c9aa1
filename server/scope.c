// SPDX-License-Identifier: MIT
/*
 * scope.c - matching config paths against the subtrees of a scoped token
 * (scope.h has the rules).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>

#include "context.h"
#include "scope.h"

enum rel {
    REL_APART,
    REL_INSIDE, /* path is sub or below it */
    REL_ABOVE,  /* path is a proper ancestor of sub */
};

/* Where @path lies from @sub, segment by segment. */
static enum rel relate(const char *path, const char *sub)
{
    const char *p = path, *s = sub;

    for (;;) {
        size_t np, ns;

        p += strspn(p, "/");
        s += strspn(s, "/");
        if (*s == '\0') {
            return REL_INSIDE;
        }
        if (*p == '\0') {
            return REL_ABOVE;
        }
        np = strcspn(p, "/");
        ns = strcspn(s, "/");
        if (np != ns || memcmp(p, s, np) != 0) {
            return REL_APART;
        }
        p += np;
        s += ns;
    }
}

bool cfs_http_scope_covers(const struct cfs_http_scope *s, const char *path)
{
    if (!s || !path) {
        return true;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (relate(path, s->paths[i]) == REL_INSIDE) {
            return true;
        }
    }
    return false;
}

bool cfs_http_scope_sees(const struct cfs_http_scope *s, const char *path)
{
    if (!s || !path) {
        return true;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (relate(path, s->paths[i]) != REL_APART) {
            return true;
        }
    }
    return false;
}

/* @head + "/" + the @n bytes at @seg, new; @head is freed. */
static char *join(char *head, const char *seg, size_t n)
{
    size_t h = strcmp(head, "/") == 0 ? 0 : strlen(head);
    char *out = malloc(h + n + 2);

    if (out) {
        memcpy(out, head, h);
        out[h] = '/';
        memcpy(out + h + 1, seg, n);
        out[h + n + 1] = '\0';
    }
    free(head);
    return out;
}

int cfs_http_scope_resolve(const struct cfs_http_scope *s,
                           const char *path,
                           bool follow_last,
                           char **ret_path)
{
    char *out = strdup("/");
    bool missing = false;
    const char *p = path;

    *ret_path = NULL;
    for (;;) {
        struct cfs_entry e;
        size_t n;
        bool last;

        if (!out) {
            return -ENOMEM;
        }
        p += strspn(p, "/");
        n = strcspn(p, "/");
        if (n == 0) {
            break;
        }
        last = p[n + strspn(p + n, "/")] == '\0';
        out = join(out, p, n);
        p += n;
        /* out holds no link, so the stat follows none: it names the
         * entry itself */
        if (missing || !out || cfs_stat(out, &e) < 0) {
            missing = true; /* the rest is kept as written */
            continue;
        }
        if (e.kind == CFS_KIND_LINK) {
            if (!e.target || !cfs_http_scope_covers(s, e.target)) {
                cfs_entry_done(&e);
                free(out);
                return 1; /* hidden: neither followed nor shown */
            }
            if (!last || follow_last) {
                free(out);
                out = strdup(e.target);
            }
        }
        cfs_entry_done(&e);
    }
    *ret_path = out;
    return 0;
}

bool cfs_http_scope_reaches(const struct cfs_http_scope *s,
                            const char *path,
                            bool write,
                            bool follow_last)
{
    char *resolved = NULL;
    bool ok;

    if (!s || !path) {
        return true;
    }
    ok = cfs_http_scope_resolve(s, path, follow_last, &resolved) == 0 &&
         (write ? cfs_http_scope_covers(s, resolved)
                : cfs_http_scope_sees(s, resolved));
    free(resolved);
    return ok;
}

char *cfs_http_scope_path(const char *text, const char **why)
{
    size_t len = strlen(text);
    char *out = malloc(len + 2);
    size_t o = 0;

    if (!out) {
        *why = "out of memory";
        return NULL;
    }
    if (text[0] != '/') {
        free(out);
        *why = "a subtree is an absolute config path, such as /usb_gadget";
        return NULL;
    }
    for (const char *p = text; *p;) {
        size_t n;

        p += strspn(p, "/");
        n = strcspn(p, "/");
        if (n == 0) {
            break;
        }
        if (cfs_name_check(p, n) < 0) {
            free(out);
            *why = "each segment of a subtree must be a valid name";
            return NULL;
        }
        out[o++] = '/';
        memcpy(out + o, p, n);
        o += n;
        p += n;
    }
    if (o == 0) {
        out[o++] = '/'; /* the root: the whole tree */
    }
    out[o] = '\0';
    return out;
}
