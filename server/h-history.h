/* SPDX-License-Identifier: MIT */
/*
 * h-history.h - the journal.
 */
#ifndef CFS_HTTP_H_HISTORY_H
#define CFS_HTTP_H_HISTORY_H

#include "context.h"

/* GET /api/v1/history?path=&before=&limit= */
void cfs_http_handle_history(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_HISTORY_H */
