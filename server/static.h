/* SPDX-License-Identifier: MIT */
/*
 * static.h - the web UI's files.
 */
#ifndef CFS_HTTP_STATIC_H
#define CFS_HTTP_STATIC_H

#include "context.h"

/* GET/HEAD of a file of --static-dir; anything outside /api/. */
void cfs_http_handle_static(struct cfs_http_req *req);

#endif /* CFS_HTTP_STATIC_H */
