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

#endif /* CFS_HTTP_FRAME_H */
