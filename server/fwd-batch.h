/* SPDX-License-Identifier: MIT */
/*
 * fwd-batch.h - cluster mode, at the writer: a batch of write requests
 * another node forwarded (forward.h is the sending side), owned here from
 * end to end. POST /api/v1/forward reads the batch into one struct
 * cfs_http_req per request, without a connection of its own (their query,
 * headers and answer body through struct cfs_http_io); the batch then runs
 * them, each through the daemon's own lifecycle (daemon.c's run(), given
 * as @run: routed, authorized on its own token, dispatched, its commit
 * waited for, as if it had come alone), waits until the last of them is
 * answered, and answers with all their answers in one.
 *
 * The batch's body and answer are sequences of netstrings (frame.h):
 *   request: "CFSF1\n", then per request its method, path, query (as
 *            sent, without '?'; empty without one), the number of
 *            headers, each header's name and value, and its body;
 *   answer:  "CFSA1\n", then per request its status, the revision its
 *            change made durable (0 for none), the number of headers,
 *            each header's name and value, and its body.
 */
#ifndef CFS_HTTP_FWD_BATCH_H
#define CFS_HTTP_FWD_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"

#define CFS_FWD_BATCH_PATH   "/api/v1/forward"
#define CFS_FWD_BATCH_TYPE   "application/x-configfsd-forward"
#define CFS_FWD_BATCH_MAGIC  "CFSF1\n"
#define CFS_FWD_ANSWER_MAGIC "CFSA1\n"
/* At most this many requests in one batch. */
#define CFS_FWD_BATCH_MAX 256

/* Runs one request until it is answered (true) or waits (false). */
typedef bool cfs_http_run_fn(struct cfs_http_req *req);

/* The route's handler: read the batch into req->in.batch, each of its
 * requests made (phase CFS_HTTP_PHASE_ROUTE) but not run; or answer 400
 * (malformed: none runs), 415 or 500. */
void cfs_http_handle_forward(struct cfs_http_req *req);
/* Run every request of req->in.batch not yet answered, with @run, until
 * each is answered or waits; then answer the batch, or leave it waiting
 * (CFS_WAIT_BATCH) until server/wait/wait.c wakes it when the last of them is
 * done. Called again once woken. */
void cfs_http_fwd_batch_run(struct cfs_http_req *req, cfs_http_run_fn *run);
/* The batch and each of its requests, by @free_req. NULL is fine. */
void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b,
                             void (*free_req)(struct cfs_http_req *req));

#endif /* CFS_HTTP_FWD_BATCH_H */
