/* SPDX-License-Identifier: MIT */
/*
 * body.h - reading the request body: JSON objects, the values and config
 * paths they hold. A helper that refuses answers the request (400/415).
 */
#ifndef CFS_HTTP_BODY_H
#define CFS_HTTP_BODY_H

#include "context.h"

/* Content-Type is application/json (with or without parameters). */
bool cfs_http_content_is_json(struct cfs_http_req *req);

/* The request body as a JSON object (new reference); on failure the
 * request is answered (400/415) and NULL returned. */
json_t *cfs_http_json_body(struct cfs_http_req *req);

/* Refuse a body with a member not in @allowed (NULL-terminated): 400.
 * @return true when every member is known. */
bool cfs_http_known_members(struct cfs_http_req *req,
                            json_t *body,
                            const char *const *allowed);

/* A value given in JSON (string, number, boolean; with @encoding "base64"
 * for bytes) as a new malloc'd buffer; NULL with *ret_err set if refused
 * (left alone when out of memory). */
char *cfs_http_json_value_bytes(json_t *v,
                                json_t *encoding,
                                size_t *ret_len,
                                const char **ret_err);

/* Member @what of a body, @v, as a config path: absolute, each name valid
 * (not percent-decoded). @return 0 and *ret (malloc'd), or a negative
 * errno with the request answered 400 (not for -ENOMEM). */
int cfs_http_body_path(struct cfs_http_req *req,
                       json_t *v,
                       const char *what,
                       char **ret);

#endif /* CFS_HTTP_BODY_H */
