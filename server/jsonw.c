// SPDX-License-Identifier: MIT
/*
 * jsonw.c - a JSON writer for the hot answers (node and attribute JSON,
 * event frames): straight into one growing buffer, which costs a fraction
 * of building jansson objects and dumping them. It prints what
 * json_dumps(JSON_COMPACT) would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>

#include <configfs/base64.h>
#include "jsonw.h"

static void jw_grow(struct jw *w, size_t more)
{
    /* small enough for malloc's per-thread cache (an attribute answer,
     * an event), doubling from there */
    size_t cap = w->cap ? w->cap : 512;
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

void jw_raw(struct jw *w, const char *s, size_t n)
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

/* A JSON string of @n bytes of valid UTF-8. */
void jw_strn(struct jw *w, const char *s, size_t n)
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

void jw_str(struct jw *w, const char *s)
{
    if (!s) {
        JW_LIT(w, "null");
        return;
    }
    jw_strn(w, s, strlen(s));
}

void jw_bool(struct jw *w, bool b)
{
    if (b) {
        JW_LIT(w, "true");
    } else {
        JW_LIT(w, "false");
    }
}

void jw_u64(struct jw *w, uint64_t v)
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
void jw_value(struct jw *w, const char *data, size_t len)
{
    if (cfs_utf8_valid(data, len)) {
        JW_LIT(w, ",\"value\":");
        jw_strn(w, data, len);
        return;
    }
    char *b = cfs_base64_encode(data, len);

    if (!b) {
        w->oom = true;
        return;
    }
    JW_LIT(w, ",\"value\":");
    jw_str(w, b);
    JW_LIT(w, ",\"encoding\":\"base64\"");
    free(b);
}

int jw_finish(struct jw *w, char **ret_text, size_t *ret_len)
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
