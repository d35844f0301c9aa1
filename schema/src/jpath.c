// SPDX-License-Identifier: MIT
/*
 * jpath.c - JSONPath strings for load errors.
 *
 * The checker builds "$.types.lun.attributes.size.max" while it walks the
 * parsed document. jansson reports syntax errors (duplicate keys among
 * them) with a byte position only, so jpath_at() scans the text up to that
 * position and rebuilds the path of the member being parsed there.
 */
#include "internal.h"

#include <ctype.h>

void schema_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n;

    if (size == 0) {
        return;
    }
    n = strlen(src);
    if (n < size) {
        memcpy(dst, src, n + 1);
        return;
    }
    memcpy(dst, src, size - 1);
    dst[size - 1] = '\0';
    if (size > 4) {
        memcpy(dst + size - 4, "...", 4);
    }
}

void schema_jpath_init(struct schema_jpath *p)
{
    p->buf[0] = '$';
    p->buf[1] = '\0';
    p->len = 1;
    p->cut = false;
}

static void put(struct schema_jpath *p, const char *s, size_t n)
{
    if (p->cut || p->len + n + 4 > sizeof(p->buf)) {
        if (!p->cut) {
            memcpy(p->buf + p->len, "...", 4);
            p->len += 3;
            p->cut = true;
        }
        return;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

static bool is_ident(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) {
            return false;
        }
    }
    return true;
}

/* Append a key; @raw means it is still JSON-escaped (from the scanner). */
static void put_key(struct schema_jpath *p, const char *key, size_t n, bool raw)
{
    if (is_ident(key, n)) {
        put(p, ".", 1);
        put(p, key, n);
        return;
    }
    put(p, "[\"", 2);
    if (raw) {
        put(p, key, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)key[i];
            char esc[8];

            if (c == '"' || c == '\\') {
                esc[0] = '\\';
                esc[1] = (char)c;
                put(p, esc, 2);
            } else if (c < 0x20) {
                (void)snprintf(esc, sizeof(esc), "\\u%04x", c);
                put(p, esc, 6);
            } else {
                put(p, (const char *)&key[i], 1);
            }
        }
    }
    put(p, "\"]", 2);
}

size_t schema_jpath_key(struct schema_jpath *p, const char *key)
{
    size_t old = p->len;

    put_key(p, key, strlen(key), false);
    return old;
}

size_t schema_jpath_index(struct schema_jpath *p, size_t index)
{
    size_t old = p->len;
    char b[32];
    int n = snprintf(b, sizeof(b), "[%zu]", index);

    put(p, b, (size_t)n);
    return old;
}

void schema_jpath_pop(struct schema_jpath *p, size_t len)
{
    if (len <= p->len) {
        p->len = len;
        p->buf[len] = '\0';
        p->cut = false;
    }
}

/* ---- rebuilding a path from a position --------------------------------- */

#define SCAN_DEPTH 64

struct scan_frame {
    bool object;
    bool expect_key; /* objects: the next string is a key */
    bool have_key;
    size_t key_off, key_len; /* raw, between the quotes */
    size_t index;            /* arrays: the element being parsed */
};

void schema_jpath_at(const char *text,
                     size_t len,
                     size_t offset,
                     struct schema_jpath *p)
{
    struct scan_frame st[SCAN_DEPTH];
    size_t depth = 0; /* frames in use; deeper ones are only counted */
    size_t real_depth = 0;
    size_t i = 0;

    schema_jpath_init(p);
    if (offset > len) {
        offset = len;
    }
    /* jansson's position is just past the token it choked on; a
     * structural token there belongs to no member yet. */
    if (offset > 0 && text[offset - 1] && strchr(",:[]{}", text[offset - 1])) {
        offset--;
    }
    while (i < offset) {
        char c = text[i];

        if (c == '"') {
            size_t start = ++i;

            while (i < len && text[i] != '"') {
                i += text[i] == '\\' ? 2 : 1;
            }
            if (real_depth > 0 && real_depth <= SCAN_DEPTH) {
                struct scan_frame *f = &st[depth - 1];

                if (f->object && f->expect_key) {
                    f->expect_key = false;
                    f->have_key = true;
                    f->key_off = start;
                    f->key_len = (i < len ? i : len) - start;
                }
            }
            i++;
            continue;
        }
        if (c == '{' || c == '[') {
            if (real_depth < SCAN_DEPTH) {
                st[depth].object = c == '{';
                st[depth].expect_key = c == '{';
                st[depth].have_key = false;
                st[depth].index = 0;
                depth++;
            }
            real_depth++;
        } else if (c == '}' || c == ']') {
            if (real_depth > 0) {
                if (real_depth <= SCAN_DEPTH) {
                    depth--;
                }
                real_depth--;
            }
        } else if (c == ',' && real_depth > 0 && real_depth <= SCAN_DEPTH) {
            struct scan_frame *f = &st[depth - 1];

            if (f->object) {
                f->expect_key = true;
                f->have_key = false;
            } else {
                f->index++;
            }
        }
        i++;
    }
    for (size_t d = 0; d < depth; d++) {
        if (st[d].object) {
            if (!st[d].have_key) {
                break;
            }
            put_key(p, text + st[d].key_off, st[d].key_len, true);
        } else {
            (void)schema_jpath_index(p, st[d].index);
        }
    }
}
