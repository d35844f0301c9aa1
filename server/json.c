// SPDX-License-Identifier: MIT
/*
 * json.c - the node JSON of docs/DESIGN.md §4: a directory with its
 * attributes (one show() each), children and links, nested ?depth= levels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonw.h"
#include "scope.h"
#include "status.h"

void cfs_http_value_json(json_t *obj, const char *data, size_t len)
{
    json_t *s = json_stringn(data, len);

    if (s) {
        json_object_set_new(obj, "value", s);
        return;
    }
    char *b = jw_base64((const unsigned char *)data, len);

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

static void jw_mode(struct jw *w, unsigned mode)
{
    char m[5] = {(char)('0' + ((mode >> 9) & 7)),
                 (char)('0' + ((mode >> 6) & 7)),
                 (char)('0' + ((mode >> 3) & 7)),
                 (char)('0' + (mode & 7)),
                 0};

    if (mode > 07777) {
        char big[16];

        (void)snprintf(big, sizeof(big), "%04o", mode);
        jw_str(w, big);
        return;
    }
    jw_str(w, m);
}

/* An attribute's fields after "name" (and "path", "kind"), up to its
 * revision. */
static void attr_fields(struct jw *w, const struct cfs_entry *e)
{
    JW_LIT(w, ",\"mode\":");
    jw_mode(w, e->mode);
    JW_LIT(w, ",\"readable\":");
    jw_bool(w, e->readable);
    JW_LIT(w, ",\"writable\":");
    jw_bool(w, e->writable);
    JW_LIT(w, ",\"binary\":");
    jw_bool(w, e->kind == CFS_KIND_BIN_ATTR);
    JW_LIT(w, ",\"revision\":");
    jw_u64(w, e->revision);
}

/* A value as "value": trailing newline of a text attribute's show() off. */
static void
jw_shown(struct jw *w, const struct cfs_entry *e, const char *buf, size_t len)
{
    if (e->kind == CFS_KIND_ATTR && len > 0 && buf[len - 1] == '\n') {
        len--; /* one trailing newline of show() */
    }
    jw_value(w, buf, len);
}

static void attr_json(struct jw *w,
                      const char *path,
                      const struct cfs_entry *e,
                      bool values)
{
    JW_LIT(w, "{\"name\":");
    jw_str(w, e->name);
    attr_fields(w, e);
    if (values && e->readable) {
        char *p = cfs_http_join(path, e->name);
        char *buf = NULL;
        size_t len = 0;
        int r = p ? cfs_show(p, &buf, &len) : -ENOMEM;

        if (r == 0) {
            jw_shown(w, e, buf, len);
            cfs_free(buf);
        } else {
            JW_LIT(w, ",\"error\":");
            jw_str(w, cfs_http_errno_name(r));
        }
        free(p);
    }
    JW_LIT(w, "}");
}

static int node_json(struct jw *w,
                     const char *path,
                     const struct cfs_entry *self,
                     int depth,
                     bool values,
                     const struct cfs_http_scope *scope)
{
    struct cfs_entry *es = NULL;
    size_t n = 0;
    bool first;
    /* above the token's subtrees: a path leading to them, nothing more */
    bool covered = cfs_http_scope_covers(scope, path);
    int r = cfs_readdir(path, &es, &n);

    if (r < 0) {
        return r;
    }
    JW_LIT(w, "{\"name\":");
    jw_str(w, self->name);
    JW_LIT(w, ",\"path\":");
    jw_str(w, path);
    JW_LIT(w, ",\"kind\":");
    jw_str(w, cfs_kind_name(self->kind));
    JW_LIT(w, ",\"type\":");
    jw_str(w, self->type_name);
    JW_LIT(w, ",\"default_group\":");
    jw_bool(w, self->default_group);
    JW_LIT(w, ",\"revision\":");
    jw_u64(w, self->revision);
    JW_LIT(w, ",\"creates\":");
    jw_str(w,
           self->creates == CFS_KIND_GROUP  ? "group"
           : self->creates == CFS_KIND_ITEM ? "item"
                                            : NULL);
    JW_LIT(w, ",\"committable\":");
    jw_bool(w, self->committable);
    if (self->kind != CFS_KIND_ROOT && self->kind != CFS_KIND_SUBSYSTEM) {
        JW_LIT(w, ",\"live\":");
        jw_bool(w, self->live);
    }
    /* three passes over the entries, one per array */
    JW_LIT(w, ",\"attributes\":[");
    first = true;
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (covered &&
            (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR)) {
            if (!first) {
                JW_LIT(w, ",");
            }
            first = false;
            attr_json(w, path, e, values);
        }
    }
    JW_LIT(w, "],\"children\":[");
    first = true;
    for (size_t i = 0; i < n && r == 0; i++) {
        const struct cfs_entry *e = &es[i];
        char *cp;
        size_t mark = w->len;

        if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR ||
            e->kind == CFS_KIND_LINK) {
            continue;
        }
        cp = cfs_http_join(path, e->name);
        if (!cp) {
            r = -ENOMEM;
            break;
        }
        if (!covered && !cfs_http_scope_sees(scope, cp)) {
            free(cp);
            continue;
        }
        if (!first) {
            JW_LIT(w, ",");
        }
        if (depth > 0) {
            r = node_json(w, cp, e, depth - 1, values, scope);
            if (r == -ENOENT) {
                r = 0; /* removed meanwhile: take back its comma */
                w->len = mark;
                free(cp);
                continue;
            }
        } else {
            JW_LIT(w, "{\"name\":");
            jw_str(w, e->name);
            JW_LIT(w, ",\"kind\":");
            jw_str(w, cfs_kind_name(e->kind));
            JW_LIT(w, ",\"path\":");
            jw_str(w, cp);
            JW_LIT(w, ",\"default_group\":");
            jw_bool(w, e->default_group);
            JW_LIT(w, "}");
        }
        first = false;
        free(cp);
    }
    JW_LIT(w, "],\"links\":[");
    first = true;
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (covered && e->kind == CFS_KIND_LINK &&
            cfs_http_scope_covers(scope, e->target)) {
            if (!first) {
                JW_LIT(w, ",");
            }
            first = false;
            JW_LIT(w, "{\"name\":");
            jw_str(w, e->name);
            JW_LIT(w, ",\"target\":");
            jw_str(w, e->target);
            JW_LIT(w, "}");
        }
    }
    JW_LIT(w, "]}");
    cfs_entries_free(es, n);
    return r;
}

int cfs_http_attr_text(const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len,
                       char **ret_text,
                       size_t *ret_len)
{
    struct jw w = {0};

    JW_LIT(&w, "{\"name\":");
    jw_str(&w, e->name);
    JW_LIT(&w, ",\"path\":");
    jw_str(&w, path);
    JW_LIT(&w, ",\"kind\":\"attribute\"");
    attr_fields(&w, e);
    if (buf) {
        jw_shown(&w, e, buf, len);
    }
    JW_LIT(&w, "}");
    return jw_finish(&w, ret_text, ret_len);
}

int cfs_http_node_text(const char *path,
                       const struct cfs_entry *self,
                       int depth,
                       bool values,
                       const struct cfs_http_scope *scope,
                       char **ret_text,
                       size_t *ret_len)
{
    struct cfs_entry st;
    struct jw w = {0};
    int r = 0;

    if (!self) {
        r = cfs_stat(path, &st);
        if (r < 0) {
            return r;
        }
        self = &st;
    }
    r = node_json(&w, path, self, depth, values, scope);
    if (self == &st) {
        cfs_entry_done(&st);
    }
    if (r < 0) {
        free(w.buf);
        return r;
    }
    return jw_finish(&w, ret_text, ret_len);
}
