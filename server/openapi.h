/* SPDX-License-Identifier: MIT */
/*
 * openapi.h - the served copy of the HTTP contract.
 */
#ifndef CFS_HTTP_OPENAPI_H
#define CFS_HTTP_OPENAPI_H

#include "context.h"

/* GET /api/v1/openapi.yaml: the built-in copy of api/openapi.yaml. */
void cfs_http_handle_openapi(struct cfs_http_req *req);

#endif /* CFS_HTTP_OPENAPI_H */
