/* SPDX-License-Identifier: MIT */
/*
 * reply.h - how a request is answered: bodies, headers, the ETag, and the
 * problem+json of every error (RFC 9457), 400 and 405 among them.
 *
 * Each reply sets req->status and req->resp; the last one wins. The
 * daemon queues req->resp once the handler (and its commit) is done.
 */
#ifndef CFS_HTTP_REPLY_H
#define CFS_HTTP_REPLY_H

#include "context.h"

void cfs_http_reply_json(struct cfs_http_req *req, int status, json_t *body);
/* Steals @body. */
void cfs_http_reply_json_as(struct cfs_http_req *req,
                            int status,
                            json_t *body,
                            const char *content_type);
/* JSON already rendered; takes @text (malloc'd). */
void cfs_http_reply_json_text(struct cfs_http_req *req,
                              int status,
                              char *text,
                              size_t len);
/* @data is copied. */
void cfs_http_reply_text(struct cfs_http_req *req,
                         int status,
                         const char *content_type,
                         const char *data,
                         size_t len);
void cfs_http_reply_empty(struct cfs_http_req *req, int status);
/* Answer with a response built by the caller (consumed). */
void cfs_http_reply_response(struct cfs_http_req *req,
                             int status,
                             struct MHD_Response *resp);

/* A header on the answer made so far (none yet: nothing happens). */
void cfs_http_header(struct cfs_http_req *req,
                     const char *name,
                     const char *value);
/* ETag: "@revision". */
void cfs_http_etag(struct cfs_http_req *req, uint64_t revision);

/* @prefix, then @s percent-encoded: ASCII letters and digits and the
 * bytes of @keep stay as they are, and with @escapes a well-formed %XX
 * too. @return a new string (malloc'd), or NULL. */
char *cfs_http_url_encode(const char *prefix,
                          const char *s,
                          const char *keep,
                          bool escapes);

/* RFC 9457 problem+json. @err is a negative errno (its name is sent as
 * "errno"); @status 0 means "from the errno table" (status.h). */
void cfs_http_problem(struct cfs_http_req *req,
                      int status,
                      int err,
                      const char *title,
                      const char *fmt,
                      ...) __attribute__((format(printf, 5, 6)));
/* The same with @detail as is; @extra's members are added (stolen). */
void cfs_http_problem_json(struct cfs_http_req *req,
                           int status,
                           int err,
                           const char *title,
                           const char *detail,
                           json_t *extra);

/* 400 EINVAL "Bad Request": request syntax (docs/DESIGN.md §9). */
void cfs_http_bad_request(struct cfs_http_req *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* 500 ENOMEM "out of memory". */
void cfs_http_no_memory(struct cfs_http_req *req);
/* 405 EOPNOTSUPP, with Allow listing @allow (a CFS_M() set) in the order
 * GET, HEAD, POST, PUT, DELETE. @why: the detail; NULL: "M is not allowed
 * here; allowed: LIST". */
void cfs_http_not_allowed(struct cfs_http_req *req,
                          unsigned allow,
                          const char *why);

/* The refusal @err of core operation @what on @path: the status from the
 * errno table, the reason a schema rule gave, else strerror(). */
void cfs_http_op_problem(struct cfs_http_req *req,
                         int err,
                         const char *what,
                         const char *path);

/* The server keeps no store: answered 503 EROFS, and true. */
bool cfs_http_no_store(struct cfs_http_req *req);

/* The standing replay problems of the store, as a JSON array (new
 * reference; empty without a store): GET /api/v1, /readyz, /metrics. */
json_t *cfs_http_problems_json(struct cfs_http_req *req);

/* The request's token may read (@write false: sees) or change (@write
 * true: covers) @path; otherwise the request is answered 403 EACCES and
 * false returned. Always true without tokens or for an unscoped token. */
bool cfs_http_scope_allow(struct cfs_http_req *req,
                          const char *path,
                          bool write);

/* cfs_http_scope_allow() on @path as written, then as resolved through
 * its links (scope.h): a path that ends at or crosses a link hidden from
 * the token is answered as a path that does not exist, the 404 ENOENT of
 * "@what @path" (cfs_http_op_problem()). */
bool cfs_http_scope_reach(struct cfs_http_req *req,
                          const char *path,
                          bool write,
                          const char *what);

/* The 403 of a path outside the request's subtrees. The problem names
 * neither the path nor the subtrees. */
void cfs_http_scope_deny(struct cfs_http_req *req);

/* The header that goes with every 403 of a token that does not reach as
 * far as the request (RFC 6750 insufficient_scope): after the problem. */
void cfs_http_scope_challenge(struct cfs_http_req *req);

#endif /* CFS_HTTP_REPLY_H */
