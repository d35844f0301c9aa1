/* SPDX-License-Identifier: MIT */
/*
 * h-forward.h - cluster mode, at the writer: POST /api/v1/forward runs a
 * batch of write requests another node forwarded (forward.h) and answers
 * with each one's answer, in one exchange. Each request of the batch runs
 * as if it had come alone (authorized with its own token, its own query
 * and headers, its commit waited for), without a connection of its own
 * (sub.h): the daemon runs them (daemon.c), this file reads the batch and
 * writes the answer.
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

#define CFS_FWD_BATCH_PATH   "/api/v1/forward"
#define CFS_FWD_BATCH_TYPE   "application/x-configfsd-forward"
#define CFS_FWD_BATCH_MAGIC  "CFSF1\n"
#define CFS_FWD_ANSWER_MAGIC "CFSA1\n"
/* At most this many requests in one batch. */
#define CFS_FWD_BATCH_MAX 256
/* At most this many headers in one request or answer of a batch. */
#define CFS_FWD_HEADERS_MAX 256

/* The requests of a batch (each a struct cfs_http_req of its own, with
 * outer the batch's request and sub what the batch says of it). */
struct cfs_http_fwd_batch {
    struct cfs_http_req **subs;
    size_t n;
};

/* Read the batch into req->batch, its requests made but not routed,
 * authorized or run (the daemon does that, then
 * cfs_http_fwd_batch_answer()); or answer 400 (malformed: none runs), 415
 * or 500. */
void cfs_http_handle_forward(struct cfs_http_req *req);
/* Every request of req->batch is answered: the batch's answer. */
void cfs_http_fwd_batch_answer(struct cfs_http_req *req);
/* The batch, not its requests. NULL is fine. */
void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b);

#endif /* CFS_HTTP_H_FORWARD_H */
