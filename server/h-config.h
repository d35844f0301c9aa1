/* SPDX-License-Identifier: MIT */
/*
 * h-config.h - GET, POST, PUT and DELETE of a config node.
 */
#ifndef CFS_HTTP_H_CONFIG_H
#define CFS_HTTP_H_CONFIG_H

#include "context.h"

/* /api/v1/config/{path}: req->rest is the path, still encoded. */
void cfs_http_handle_config(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_CONFIG_H */
