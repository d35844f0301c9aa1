/* SPDX-License-Identifier: MIT */
/*
 * h-whoami.h - who the server takes a request for: its token's name, role
 * and subtrees, so that a client (the web UI) offers only what it may do.
 */
#ifndef CFS_HTTP_H_WHOAMI_H
#define CFS_HTTP_H_WHOAMI_H

#include "context.h"

/* GET /api/v1/whoami */
void cfs_http_handle_whoami(struct cfs_http_req *req);

#endif /* CFS_HTTP_H_WHOAMI_H */
