/* SPDX-License-Identifier: MIT */
/*
 * request.h - reading a request outside its body: URL path, query, headers,
 * If-Match. A helper that refuses answers the request itself.
 */
#ifndef CFS_HTTP_REQUEST_H
#define CFS_HTTP_REQUEST_H

#include "context.h"

/* A query value, percent- and form-decoded (owned by @req; decoded once
 * per @key, which must outlive @req: a literal), or NULL when absent or
 * badly escaped. */
const char *cfs_http_query(struct cfs_http_req *req, const char *key);
/* A query value as sent, still encoded (borrowed), or NULL. */
const char *cfs_http_query_raw(struct cfs_http_req *req, const char *key);
/* Each query key and value as sent, in order, until @it says MHD_NO. */
void cfs_http_query_each(struct cfs_http_req *req,
                         MHD_KeyValueIterator it,
                         void *cls);
/* A request header (borrowed), or NULL. */
const char *cfs_http_header_in(struct cfs_http_req *req, const char *key);

/* The value of hex digit @c, or -1. */
int cfs_http_hexval(char c);
/* Percent-decode into a new string; NULL on a bad escape. */
char *cfs_http_pct_decode(const char *s, size_t len, size_t *ret_len);

/* Turn the raw path under /api/v1/config (or node, value, link) into a
 * config path ("/a/b"), decoding segment by segment: "%2F" (either case)
 * separates names like '/', and each decoded name is checked, so ".", ".."
 * and control bytes are refused however they are spelled. @return 0 and
 * *ret_path (malloc'd), or -EINVAL / -ENAMETOOLONG / -ENOMEM. */
int cfs_http_config_path(const char *raw, char **ret_path);
/* The names in the raw path @raw, '/' and "%2F" both separating them. */
unsigned int cfs_http_path_depth(const char *raw);

/* @s (@len bytes, no NUL among them) is an absolute config path; otherwise
 * the request is answered 400 ("@what must be an absolute config path")
 * and false returned. @s may be NULL (refused). */
bool cfs_http_absolute(struct cfs_http_req *req,
                       const char *s,
                       size_t len,
                       const char *what);

/* If-Match against @revision: true when absent, "*" or equal; otherwise
 * the request is answered 412 (ESTALE) and false returned. */
bool cfs_http_if_match(struct cfs_http_req *req, uint64_t revision);

#endif /* CFS_HTTP_REQUEST_H */
