/* SPDX-License-Identifier: MIT */
/*
 * h-export.h - export and import of the written tree.
 */
#ifndef CFS_HTTP_H_EXPORT_H
#define CFS_HTTP_H_EXPORT_H

#include "context.h"

/* GET /api/v1/export?path= */
void cfs_http_handle_export(struct cfs_http_req *req);
/* POST /api/v1/import?mode=merge|replace&dry_run=0|1 */
void cfs_http_handle_import(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_EXPORT_H */
