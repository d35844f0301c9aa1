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
