/* SPDX-License-Identifier: MIT */
/*
 * h-batch.h - rename and batch, and the one switch that runs an operation
 * named by its enum cfs_op (import uses it too).
 */
#ifndef CFS_HTTP_H_BATCH_H
#define CFS_HTTP_H_BATCH_H

#include "context.h"

/* Run @op in @txn: @path (a rename's source), @arg (a store's bytes,
 * @arg_len of them; a symlink's target; a rename's destination).
 * @return 0 or the negative errno of the core operation. */
int cfs_http_apply(struct cfs_txn *txn,
                   enum cfs_op op,
                   const char *path,
                   const char *arg,
                   size_t arg_len);

/* POST /api/v1/rename {"from": PATH, "to": PATH} */
void cfs_http_handle_rename(struct cfs_http_req *req);
/* POST /api/v1/batch {"ops": [...], "if_revision": N?} */
void cfs_http_handle_batch(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_BATCH_H */
