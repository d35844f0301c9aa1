/* SPDX-License-Identifier: MIT */
/*
 * h-forward.h - cluster mode, at the writer: POST /api/v1/forward runs a
 * batch of write requests another node forwarded (forward.h) and answers
 * with each one's answer, in one exchange. Each request of the batch runs
 * as if it had come alone (authorized with its own token, its own query
 * and headers, its commit waited for), without a connection of its own.
 *
 * The batch's body and answer are sequences of fields, each one
 * "LENGTH:BYTES," (a netstring: any byte may be in BYTES):
 *   request: "CFSF1\n", then per request its method, path, query (as
 *            sent, without '?'; empty without one), the number of
 *            headers, each header's name and value, and its body;
 *   answer:  "CFSA1\n", then per request its status, the revision its
 *            change made durable (0 for none), the number of headers,
 *            each header's name and value, and its body.
 */
#ifndef CFS_HTTP_H_FORWARD_H
#define CFS_HTTP_H_FORWARD_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "jsonw.h"

#define CFS_FWD_BATCH_PATH   "/api/v1/forward"
#define CFS_FWD_BATCH_TYPE   "application/x-configfsd-forward"
#define CFS_FWD_BATCH_MAGIC  "CFSF1\n"
#define CFS_FWD_ANSWER_MAGIC "CFSA1\n"
/* At most this many requests in one batch. */
#define CFS_FWD_BATCH_MAX 256

void cfs_http_handle_forward(struct cfs_http_req *req);

/* The batch's request is back from its wait: run its requests on.
 * @return false (the answer is built, or req->committing: it waits
 * again). */
bool cfs_http_fwd_batch_resume(struct cfs_http_req *req);
/* With the batch's request. NULL is fine. */
void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b);

/* A header (@header) or query value of a request of a batch (borrowed),
 * or NULL; names compare as libmicrohttpd compares them, without case. */
const char *
cfs_http_sub_value(const struct cfs_http_sub *s, bool header, const char *key);
/* Each header or query value, in order, until @it says MHD_NO. */
void cfs_http_sub_each(const struct cfs_http_sub *s,
                       bool header,
                       MHD_KeyValueIterator it,
                       void *cls);
/* Keep a copy of @len bytes of @data, the body of the answer (reply.c).
 * @return 0 or -ENOMEM. */
int cfs_http_sub_keep(struct cfs_http_sub *s, const void *data, size_t len);
/* With its request. NULL is fine. */
void cfs_http_sub_free(struct cfs_http_sub *s);

/* One field of the framing: @n bytes of @p. */
void cfs_http_frame_put(struct jw *w, const void *p, size_t n);
void cfs_http_frame_put_str(struct jw *w, const char *s);
void cfs_http_frame_put_u64(struct jw *w, uint64_t v);
/* The next field at *@p (before @end): its bytes, NUL-terminated in place
 * (over the ','), in *@ret and *@ret_len; *@p moves past it. @return 0, or
 * -EINVAL when the field is malformed. */
int cfs_http_frame_get(char **p, char *end, char **ret, size_t *ret_len);
/* The same for a decimal number up to @max. */
int cfs_http_frame_get_u64(char **p, char *end, uint64_t max, uint64_t *ret);

#endif /* CFS_HTTP_H_FORWARD_H */
