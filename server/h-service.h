/* SPDX-License-Identifier: MIT */
/*
 * h-service.h - the API root and the probes.
 */
#ifndef CFS_HTTP_H_SERVICE_H
#define CFS_HTTP_H_SERVICE_H

#include "context.h"

/* GET /api/v1 */
void cfs_http_handle_api_root(struct cfs_http_req *req);
/* GET /healthz */
void cfs_http_handle_healthz(struct cfs_http_req *req);
/* /readyz */
void cfs_http_handle_readyz(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_SERVICE_H */
