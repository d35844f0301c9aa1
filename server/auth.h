/* SPDX-License-Identifier: MIT */
/*
 * auth.h - the server's side of bearer tokens (the tokens file itself is
 * public API, in http.h): who a request is, and whether its role suffices
 * for its route (router.h says which role each route needs).
 */
#ifndef CFS_HTTP_AUTH_H
#define CFS_HTTP_AUTH_H

#include "context.h"

/* On a request's first call, from its headers and route: takes
 * req->tokens, sets req->principal, and req->denied when the request needs
 * a role its token does not have. */
void cfs_http_authorize(struct cfs_http_req *req);
/* The 401 (with WWW-Authenticate) or 403 of a denied request. */
void cfs_http_auth_deny(struct cfs_http_req *req);

#endif /* CFS_HTTP_AUTH_H */
