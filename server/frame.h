/* SPDX-License-Identifier: MIT */
/*
 * frame.h - the framing a batch of forwarded requests and its answer
 * travel in (fwd-batch.h has the batch's layout): a sequence of fields,
 * each "LENGTH:BYTES," (a netstring: any byte may be in BYTES). Used by
 * both ends, forward.c (the node that sends a batch) and fwd-batch.c (the
 * writer that runs it); it knows nothing of requests.
 */
#ifndef CFS_HTTP_FRAME_H
#define CFS_HTTP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"

/* One field: @n bytes of @p. */
void cfs_http_frame_put(struct jw *w, const void *p, size_t n);
void cfs_http_frame_put_str(struct jw *w, const char *s);
void cfs_http_frame_put_u64(struct jw *w, uint64_t v);
/* The next field at *@p (before @end): its bytes, NUL-terminated in place
 * (over the ','), in *@ret and *@ret_len; *@p moves past it. @return 0, or
 * -EINVAL when the field is malformed. */
int cfs_http_frame_get(char **p, const char *end, char **ret, size_t *ret_len);
/* The same for a decimal number up to @max. */
int cfs_http_frame_get_u64(char **p,
                           const char *end,
                           uint64_t max,
                           uint64_t *ret);

/* At most this many headers in one request or answer of a batch. */
#define CFS_FWD_HEADERS_MAX 256

/* One answer of a forwarded batch, as the writer frames it: its status,
 * the revision its change made durable, its headers (name and value
 * fields) and its body, each NUL-terminated in place in the batch's
 * answer. */
struct cfs_http_fwd_answer {
    uint64_t status, revision;
    size_t nh;
    char *name[CFS_FWD_HEADERS_MAX], *value[CFS_FWD_HEADERS_MAX];
    size_t name_len[CFS_FWD_HEADERS_MAX];
    size_t value_len[CFS_FWD_HEADERS_MAX];
    char *body;
    size_t body_len;
};

/*
 * The answers of a forwarded batch of @n requests, from *@p (after the
 * answer's magic) to @end: each handed to @each in order (@i its index),
 * which returns 0 or a negative errno that ends the walk. @return 0, or
 * -EINVAL unless the text is exactly @n well-formed answers: a field that
 * is malformed, a status outside 100-599, fewer answers, more, or any byte
 * after the last. An answer that is not exactly what was asked for cannot
 * be matched to its requests: none of it may be used.
 */
int cfs_http_frame_answers(char *p,
                           const char *end,
                           size_t n,
                           int (*each)(void *ctx,
                                       size_t i,
                                       const struct cfs_http_fwd_answer *a),
                           void *ctx);

#endif /* CFS_HTTP_FRAME_H */
