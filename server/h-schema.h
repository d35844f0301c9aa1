/* SPDX-License-Identifier: MIT */
/*
 * h-schema.h - the description of a declarative subsystem.
 */
#ifndef CFS_HTTP_H_SCHEMA_H
#define CFS_HTTP_H_SCHEMA_H

#include "context.h"

/* GET /api/v1/schema/{subsystem}: req->rest is the name, still encoded. */
void cfs_http_handle_schema(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_SCHEMA_H */
