/* SPDX-License-Identifier: MIT */
/*
 * jsonw.h - a JSON writer for the hot answers: compact JSON text appended to
 * one buffer. Out of memory is sticky: it is reported once, by jw_finish().
 */
#ifndef CFS_JSONW_H
#define CFS_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw {
    char *buf;
    size_t len, cap;
    bool oom;
};

/* Raw bytes, already JSON. */
void jw_raw(struct jw *w, const char *s, size_t n);
#define JW_LIT(w, s) jw_raw((w), (s), sizeof(s) - 1)
/* A JSON string of @n bytes of valid UTF-8; jw_str(): NUL-terminated, or
 * null for NULL. */
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_str(struct jw *w, const char *s);
void jw_bool(struct jw *w, bool b);
void jw_u64(struct jw *w, uint64_t v);
/* ,"value":... for bytes: the string if they are UTF-8, else base64 with
 * ,"encoding":"base64" (as cfs_http_value_json()). */
void jw_value(struct jw *w, const char *data, size_t len);
/* End: 0 with *ret_text (NUL-terminated, malloc'd) and its length, or
 * -ENOMEM (the buffer is freed). */
int jw_finish(struct jw *w, char **ret_text, size_t *ret_len);

#endif
