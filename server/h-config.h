/* SPDX-License-Identifier: MIT */
/*
 * h-config.h - GET, POST, PUT and DELETE of a config node.
 */
#ifndef CFS_HTTP_H_CONFIG_H
#define CFS_HTTP_H_CONFIG_H

#include "context.h"

/* /api/v1/config/{path}: req->rest is the path, still encoded. */
void cfs_http_handle_config(struct cfs_http_req *req);
/* The typed forms, one media type each way (req->rest as above):
 * GET /api/v1/node/{path}, GET and PUT /api/v1/value/{path}, GET and PUT
 * /api/v1/link/{path}. */
void cfs_http_handle_node(struct cfs_http_req *req);
void cfs_http_handle_value(struct cfs_http_req *req);
void cfs_http_handle_link(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_CONFIG_H */
