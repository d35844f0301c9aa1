// SPDX-License-Identifier: MIT
/*
 * json.c - the node JSON of DESIGN section 4: a directory with its
 * attributes (one show() each), children and links, nested ?depth= levels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http-internal.h"

static char *base64(const unsigned char *in, size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    size_t o = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16;

        if (i + 1 < len) {
            v |= (unsigned)in[i + 1] << 8;
        }
        if (i + 2 < len) {
            v |= in[i + 2];
        }
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

void cfs_http_value_json(json_t *obj, const char *data, size_t len)
{
    json_t *s = json_stringn(data, len);

    if (s) {
        json_object_set_new(obj, "value", s);
        return;
    }
    char *b = base64((const unsigned char *)data, len);

    json_object_set_new(obj, "value", json_string(b ? b : ""));
    json_object_set_new(obj, "encoding", json_string("base64"));
    free(b);
}

/* @path + "/" + @name (the root is "/"), malloc'd, or NULL. */
char *cfs_http_join(const char *path, const char *name)
{
    size_t pl = strlen(path);
    size_t nl = strlen(name);
    char *p;

    if (pl == 1) {
        pl = 0; /* the root */
    }
    p = malloc(pl + nl + 2);
    if (p) {
        memcpy(p, path, pl);
        p[pl] = '/';
        memcpy(p + pl + 1, name, nl + 1);
    }
    return p;
}

static json_t *
attr_json(const char *path, const struct cfs_entry *e, bool values)
{
    json_t *a = json_object();
    char mode[8];

    json_object_set_new(a, "name", json_string(e->name));
    (void)snprintf(mode, sizeof(mode), "%04o", e->mode);
    json_object_set_new(a, "mode", json_string(mode));
    json_object_set_new(a, "readable", json_boolean(e->readable));
    json_object_set_new(a, "writable", json_boolean(e->writable));
    json_object_set_new(
        a, "binary", json_boolean(e->kind == CFS_KIND_BIN_ATTR));
    json_object_set_new(a, "revision", json_integer((json_int_t)e->revision));
    if (values && e->readable) {
        char *p = cfs_http_join(path, e->name);
        char *buf = NULL;
        size_t len = 0;
        int r = p ? cfs_show(p, &buf, &len) : -ENOMEM;

        if (r == 0) {
            if (e->kind == CFS_KIND_ATTR && len > 0 && buf[len - 1] == '\n') {
                len--; /* one trailing newline of show() */
            }
            cfs_http_value_json(a, buf, len);
            cfs_free(buf);
        } else {
            json_object_set_new(
                a, "error", json_string(cfs_http_errno_name(r)));
        }
        free(p);
    }
    return a;
}

static const char *kind_name(enum cfs_kind k)
{
    switch (k) {
    case CFS_KIND_ROOT:
        return "root";
    case CFS_KIND_SUBSYSTEM:
        return "subsystem";
    case CFS_KIND_GROUP:
        return "group";
    case CFS_KIND_ITEM:
        return "item";
    case CFS_KIND_LINK:
        return "link";
    default:
        return "attribute";
    }
}

static int node_json(const char *path,
                     const struct cfs_entry *self,
                     int depth,
                     bool values,
                     json_t **ret)
{
    struct cfs_entry *es = NULL;
    size_t n = 0;
    json_t *node, *attrs, *children, *links;
    int r = cfs_readdir(path, &es, &n);

    if (r < 0) {
        return r;
    }
    node = json_object();
    json_object_set_new(node, "name", json_string(self->name));
    json_object_set_new(node, "path", json_string(path));
    json_object_set_new(node, "kind", json_string(kind_name(self->kind)));
    json_object_set_new(node,
                        "type",
                        self->type_name ? json_string(self->type_name)
                                        : json_null());
    json_object_set_new(
        node, "default_group", json_boolean(self->default_group));
    json_object_set_new(
        node, "revision", json_integer((json_int_t)self->revision));
    json_object_set_new(node,
                        "creates",
                        self->creates == CFS_KIND_GROUP  ? json_string("group")
                        : self->creates == CFS_KIND_ITEM ? json_string("item")
                                                         : json_null());
    json_object_set_new(node, "committable", json_boolean(self->committable));
    if (self->kind != CFS_KIND_ROOT && self->kind != CFS_KIND_SUBSYSTEM) {
        json_object_set_new(node, "live", json_boolean(self->live));
    }
    attrs = json_array();
    children = json_array();
    links = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR) {
            json_array_append_new(attrs, attr_json(path, e, values));
        } else if (e->kind == CFS_KIND_LINK) {
            json_t *l = json_object();

            json_object_set_new(l, "name", json_string(e->name));
            json_object_set_new(l, "target", json_string(e->target));
            json_array_append_new(links, l);
        } else {
            char *cp = cfs_http_join(path, e->name);
            json_t *c = NULL;

            if (!cp) {
                r = -ENOMEM;
                break;
            }
            if (depth > 0) {
                r = node_json(cp, e, depth - 1, values, &c);
                if (r == -ENOENT) {
                    r = 0; /* removed meanwhile */
                    free(cp);
                    continue;
                }
            } else {
                c = json_object();
                json_object_set_new(c, "name", json_string(e->name));
                json_object_set_new(c, "kind", json_string(kind_name(e->kind)));
                json_object_set_new(c, "path", json_string(cp));
                json_object_set_new(
                    c, "default_group", json_boolean(e->default_group));
            }
            free(cp);
            if (r < 0) {
                break;
            }
            json_array_append_new(children, c);
        }
    }
    cfs_entries_free(es, n);
    json_object_set_new(node, "attributes", attrs);
    json_object_set_new(node, "children", children);
    json_object_set_new(node, "links", links);
    if (r < 0) {
        json_decref(node);
        return r;
    }
    *ret = node;
    return 0;
}

int cfs_http_node_json(const char *path, int depth, bool values, json_t **ret)
{
    struct cfs_entry self;
    int r = cfs_stat(path, &self);

    if (r < 0) {
        return r;
    }
    r = node_json(path, &self, depth, values, ret);
    cfs_entry_done(&self);
    return r;
}
