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

/* ---- a JSON writer for node answers --------------------------------------
 * The node JSON is the hottest answer (every GET of a directory); writing it
 * straight into one buffer costs a fraction of building jansson objects and
 * dumping them. The output is what json_dumps(JSON_COMPACT) would print. */

struct jw {
    char *buf;
    size_t len, cap;
    bool oom;
};

static void jw_grow(struct jw *w, size_t more)
{
    size_t cap = w->cap ? w->cap : 1024;
    char *b;

    if (w->oom) {
        return;
    }
    while (cap - w->len < more) {
        cap *= 2;
    }
    b = realloc(w->buf, cap);
    if (!b) {
        w->oom = true;
        return;
    }
    w->buf = b;
    w->cap = cap;
}

static void jw_raw(struct jw *w, const char *s, size_t n)
{
    if (w->cap - w->len < n + 1) {
        jw_grow(w, n + 1);
        if (w->oom) {
            return;
        }
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

#define JW_LIT(w, s) jw_raw((w), (s), sizeof(s) - 1)

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), or 0: the
 * same strictness as jansson (no overlong forms, surrogates or > U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0], cp;
    size_t len;

    if (c < 0x80) {
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return len;
}

static bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(u + i, n - i);

        if (!l) {
            return false;
        }
        i += l;
    }
    return true;
}

/* A JSON string of @n bytes of valid UTF-8. */
static void jw_strn(struct jw *w, const char *s, size_t n)
{
    size_t run = 0;

    JW_LIT(w, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        const char *e = NULL;
        size_t el = 2;

        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        default:
            if (c < 0x20) {
                (void)snprintf(esc, sizeof(esc), "\\u%04X", c);
                e = esc;
                el = 6;
            }
        }
        if (e) {
            jw_raw(w, s + i - run, run);
            jw_raw(w, e, el);
            run = 0;
        } else {
            run++;
        }
    }
    jw_raw(w, s + n - run, run);
    JW_LIT(w, "\"");
}

static void jw_str(struct jw *w, const char *s)
{
    if (!s) {
        JW_LIT(w, "null");
        return;
    }
    jw_strn(w, s, strlen(s));
}

static void jw_bool(struct jw *w, bool b)
{
    if (b) {
        JW_LIT(w, "true");
    } else {
        JW_LIT(w, "false");
    }
}

static void jw_u64(struct jw *w, uint64_t v)
{
    char d[24];
    size_t i = sizeof(d);

    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    jw_raw(w, d + i, sizeof(d) - i);
}

/* "value" (and "encoding") of an attribute: the string if it is UTF-8,
 * else base64, as cfs_http_value_json() does. */
static void jw_value(struct jw *w, const char *data, size_t len)
{
    if (utf8_valid(data, len)) {
        JW_LIT(w, ",\"value\":");
        jw_strn(w, data, len);
        return;
    }
    char *b = base64((const unsigned char *)data, len);

    if (!b) {
        w->oom = true;
        return;
    }
    JW_LIT(w, ",\"value\":");
    jw_str(w, b);
    JW_LIT(w, ",\"encoding\":\"base64\"");
    free(b);
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
                     bool values)
{
    struct cfs_entry *es = NULL;
    size_t n = 0;
    bool first;
    int r = cfs_readdir(path, &es, &n);

    if (r < 0) {
        return r;
    }
    JW_LIT(w, "{\"name\":");
    jw_str(w, self->name);
    JW_LIT(w, ",\"path\":");
    jw_str(w, path);
    JW_LIT(w, ",\"kind\":");
    jw_str(w, kind_name(self->kind));
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

        if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR) {
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
        if (!first) {
            JW_LIT(w, ",");
        }
        if (depth > 0) {
            r = node_json(w, cp, e, depth - 1, values);
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
            jw_str(w, kind_name(e->kind));
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

        if (e->kind == CFS_KIND_LINK) {
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

static int jw_finish(struct jw *w, char **ret_text, size_t *ret_len)
{
    if (w->oom || !w->buf) {
        free(w->buf);
        return -ENOMEM;
    }
    w->buf[w->len] = '\0';
    *ret_text = w->buf;
    *ret_len = w->len;
    return 0;
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
    r = node_json(&w, path, self, depth, values);
    if (self == &st) {
        cfs_entry_done(&st);
    }
    if (r < 0) {
        free(w.buf);
        return r;
    }
    return jw_finish(&w, ret_text, ret_len);
}
