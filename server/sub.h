/* SPDX-License-Identifier: MIT */
/*
 * sub.h - one request of a batch of forwarded requests (h-forward.h),
 * which has no connection of its own: its headers and query come from the
 * batch, and its answer's body is kept as it is built, to go back inside
 * the batch's answer. And the framing the batch and its answer travel in:
 * a sequence of fields, each "LENGTH:BYTES," (a netstring: any byte may be
 * in BYTES).
 *
 * The bottom of server/ beside context.h: request.c and reply.c ask it
 * for what a connection would give them.
 */
#ifndef CFS_HTTP_SUB_H
#define CFS_HTTP_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "jsonw.h"

struct cfs_http_sub {
    char **hk, **hv; /* headers, in the batch's body */
    size_t nh;
    char **ak, **av; /* the query, split in the batch's body; av[i] NULL:
                      * "key" without '=' */
    size_t na;
    char *out; /* the answer's body */
    size_t out_len;
    bool done; /* answered */
};

/* A header (@header) or query value (borrowed), or NULL; names compare as
 * libmicrohttpd compares them, without case. */
const char *
cfs_http_sub_value(const struct cfs_http_sub *s, bool header, const char *key);
/* Each header or query value, in order, until @it says MHD_NO. */
void cfs_http_sub_each(const struct cfs_http_sub *s,
                       bool header,
                       MHD_KeyValueIterator it,
                       void *cls);
/* Split the query @q ("a=1&b", as sent, without '?') in place into s's
 * values (@q lives as long as @s: it is in the batch's body). @return 0
 * or -ENOMEM. */
int cfs_http_sub_query(struct cfs_http_sub *s, char *q);
/* Keep a copy of @len bytes of @data, the body of the answer (reply.c).
 * @return 0 or -ENOMEM. */
int cfs_http_sub_keep(struct cfs_http_sub *s, const void *data, size_t len);
/* NULL is fine. */
void cfs_http_sub_free(struct cfs_http_sub *s);

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

#endif /* CFS_HTTP_SUB_H */
