// SPDX-License-Identifier: MIT
/*
 * reply.c - the answers: JSON, text and empty bodies, headers, the ETag,
 * and the problem+json body (RFC 9457) every error carries, with the
 * shapes that repeat (400, 405, out of memory) built once.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/schema.h>
#include <configfs/store.h>

#include "json.h"
#include "reply.h"
#include "scope.h"
#include "status.h"

/* @data: the body of @resp (@len bytes), kept for a request of a
 * forwarded batch, whose answer goes back inside the batch's own (a
 * response cannot be read back). */
static void set_response(struct cfs_http_req *req,
                         int status,
                         struct MHD_Response *resp,
                         const void *data,
                         size_t len)
{
    if (req->resp) {
        MHD_destroy_response(req->resp); /* the last answer wins */
    }
    if (req->io->keep && req->io->keep(req, data, len) < 0 && resp) {
        MHD_destroy_response(resp);
        resp = NULL; /* answered "no response" */
    }
    req->resp = resp;
    req->status = status;
    req->resp_len = len;
}

void cfs_http_reply_json(struct cfs_http_req *req, int status, json_t *body)
{
    cfs_http_reply_json_as(req, status, body, "application/json");
}

void cfs_http_reply_json_as(struct cfs_http_req *req,
                            int status,
                            json_t *body,
                            const char *content_type)
{
    char *text = json_dumps(body, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0;
    struct MHD_Response *resp;

    json_decref(body);
    if (!text) {
        resp = MHD_create_response_from_buffer(
            0, (void *)"", MHD_RESPMEM_PERSISTENT);
        set_response(req, MHD_HTTP_INTERNAL_SERVER_ERROR, resp, NULL, 0);
        return;
    }
    resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    set_response(req, status, resp, text, len);
}

void cfs_http_reply_json_text(struct cfs_http_req *req,
                              int status,
                              char *text,
                              size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);

    MHD_add_response_header(
        resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    set_response(req, status, resp, text, len);
}

void cfs_http_reply_text(struct cfs_http_req *req,
                         int status,
                         const char *content_type,
                         const char *data,
                         size_t len)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, (void *)data, MHD_RESPMEM_MUST_COPY);

    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    set_response(req, status, resp, data, len);
}

void cfs_http_reply_response(struct cfs_http_req *req,
                             int status,
                             struct MHD_Response *resp)
{
    set_response(req, status, resp, NULL, 0);
}

void cfs_http_reply_empty(struct cfs_http_req *req, int status)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);

    set_response(req, status, resp, NULL, 0);
}

void cfs_http_header(struct cfs_http_req *req,
                     const char *name,
                     const char *value)
{
    if (req->resp) {
        MHD_add_response_header(req->resp, name, value);
    }
}

void cfs_http_etag(struct cfs_http_req *req, uint64_t revision)
{
    char etag[32];

    (void)snprintf(
        etag, sizeof(etag), "\"%llu\"", (unsigned long long)revision);
    cfs_http_header(req, MHD_HTTP_HEADER_ETAG, etag);
}

static const char *default_title(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 412:
        return "Precondition Failed";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return status >= 500 ? "Internal Server Error" : "Error";
    }
}

char *cfs_http_url_encode(const char *prefix,
                          const char *s,
                          const char *keep,
                          bool escapes)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t plen = strlen(prefix);
    size_t len = strlen(s);
    char *out = malloc(plen + 3 * len + 1);
    size_t o = plen;

    if (!out) {
        return NULL;
    }
    memcpy(out, prefix, plen);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool escape_ok = escapes && c == '%' && i + 2 < len &&
                         strchr(hex, toupper((unsigned char)s[i + 1])) &&
                         strchr(hex, toupper((unsigned char)s[i + 2]));

        if ((c < 0x80 && isalnum(c)) || (c && strchr(keep, c)) || escape_ok) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* The request's path as a URI reference: bytes outside the unreserved,
 * sub-delims, ':', '@', '/' and well-formed %XX escapes are escaped. */
static json_t *instance_of(const char *url)
{
    char *out;
    json_t *j;

    if (!url) {
        return json_string("/");
    }
    out = cfs_http_url_encode("", url, "-._~!$&'()*+,;=:@/", true);
    if (!out) {
        return NULL;
    }
    j = json_string(out);
    free(out);
    return j;
}

void cfs_http_problem_json(struct cfs_http_req *req,
                           int status,
                           int err,
                           const char *title,
                           const char *detail,
                           json_t *extra)
{
    json_t *body;
    json_t *instance;

    if (status == 0) {
        status = cfs_http_status_from_errno(err);
    }
    body = json_object();
    json_object_set_new(body, "type", json_string("about:blank"));
    json_object_set_new(
        body, "title", json_string(title ? title : default_title(status)));
    json_object_set_new(body, "status", json_integer(status));
    if (detail) {
        json_object_set_new(body, "detail", json_string(detail));
    }
    instance = instance_of(req->url);
    if (instance) {
        json_object_set_new(body, "instance", instance);
    }
    json_object_set_new(body, "errno", json_string(cfs_http_errno_name(err)));
    if (extra) {
        json_object_update(body, extra);
        json_decref(extra);
    }
    cfs_http_reply_json_as(req, status, body, "application/problem+json");
}

void cfs_http_problem(struct cfs_http_req *req,
                      int status,
                      int err,
                      const char *title,
                      const char *fmt,
                      ...)
{
    char detail[1024];
    va_list args;

    va_start(args, fmt);
    (void)vsnprintf(detail, sizeof(detail), fmt, args);
    va_end(args);
    cfs_http_problem_json(req, status, err, title, detail, NULL);
}

void cfs_http_bad_request(struct cfs_http_req *req, const char *fmt, ...)
{
    char detail[1024];
    va_list args;

    va_start(args, fmt);
    (void)vsnprintf(detail, sizeof(detail), fmt, args);
    va_end(args);
    cfs_http_problem_json(
        req, MHD_HTTP_BAD_REQUEST, -EINVAL, NULL, detail, NULL);
}

void cfs_http_no_memory(struct cfs_http_req *req)
{
    cfs_http_problem(req, 0, -ENOMEM, NULL, "out of memory");
}

void cfs_http_not_allowed(struct cfs_http_req *req,
                          unsigned allow,
                          const char *why)
{
    static const struct {
        enum cfs_http_method m;
        const char *name;
    } order[] = {
        {CFS_M_GET, "GET"},
        {CFS_M_HEAD, "HEAD"},
        {CFS_M_POST, "POST"},
        {CFS_M_PUT, "PUT"},
        {CFS_M_DELETE, "DELETE"},
    };
    char list[64] = "";
    size_t o = 0;

    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (allow & CFS_M(order[i].m)) {
            o += (size_t)snprintf(list + o,
                                  sizeof(list) - o,
                                  "%s%s",
                                  o ? ", " : "",
                                  order[i].name);
        }
    }
    if (why) {
        cfs_http_problem_json(
            req, MHD_HTTP_METHOD_NOT_ALLOWED, -EOPNOTSUPP, NULL, why, NULL);
    } else {
        cfs_http_problem(req,
                         MHD_HTTP_METHOD_NOT_ALLOWED,
                         -EOPNOTSUPP,
                         NULL,
                         "%s is not allowed here; allowed: %s",
                         req->method_name,
                         list);
    }
    cfs_http_header(req, MHD_HTTP_HEADER_ALLOW, list);
}

json_t *cfs_http_problems_json(struct cfs_http_req *req)
{
    struct cfs_store_problem *ps = NULL;
    json_t *arr = json_array();
    size_t n = 0;

    if (cfs_http_opts(req)->store &&
        cfs_store_problems(cfs_http_opts(req)->store, &ps, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            json_t *p;

            if (!cfs_http_scope_covers(req->scope, ps[i].path)) {
                continue; /* outside the token's subtrees */
            }
            p = json_object();
            json_object_set_new(p, "path", json_string(ps[i].path));
            json_object_set_new(
                p, "step", json_string(cfs_store_step_name(ps[i].op)));
            json_object_set_new(
                p, "errno", json_string(cfs_http_errno_name(ps[i].error)));
            json_object_set_new(
                p, "skipped", json_integer((json_int_t)ps[i].skipped));
            json_array_append_new(arr, p);
        }
        cfs_store_problems_free(ps, n);
    }
    return arr;
}

/* A problem for an errno from the object model (docs/DESIGN.md §9). */
void cfs_http_op_problem(struct cfs_http_req *req,
                         int err,
                         const char *what,
                         const char *path)
{
    const char *why = cfs_schema_last_detail(); /* a schema rule, if any */
    json_t *extra = json_object();
    char detail[1024];
    char held[768] = "";

    if (extra) {
        cfs_http_refusal(err, path, req->scope, extra, held, sizeof(held));
        if (json_object_size(extra) == 0) {
            json_decref(extra);
            extra = NULL;
        }
    }
    (void)snprintf(detail,
                   sizeof(detail),
                   "%s %s: %s%s",
                   what,
                   path,
                   why && *why ? why : strerror(-err),
                   held);
    cfs_http_problem_json(req, 0, err, NULL, detail, extra);
}

bool cfs_http_no_store(struct cfs_http_req *req)
{
    if (cfs_http_opts(req)->store) {
        return false;
    }
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     -EROFS,
                     NULL,
                     "this server keeps no store");
    return true;
}

void cfs_http_scope_deny(struct cfs_http_req *req)
{
    cfs_http_problem(req,
                     MHD_HTTP_FORBIDDEN,
                     -EACCES,
                     NULL,
                     "%s may not reach this path: its token is limited to "
                     "other subtrees",
                     req->principal ? req->principal : "this client");
    cfs_http_scope_challenge(req);
}

void cfs_http_scope_challenge(struct cfs_http_req *req)
{
    /* as a role too low (auth.c): the token does not reach this far, and a
     * 403 answered before the method is looked at (PUT on the root, a
     * method no node takes) is the contract's token refusal */
    cfs_http_header(req,
                    MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                    "Bearer realm=\"configfsd\", error=\"insufficient_scope\"");
}

bool cfs_http_scope_allow(struct cfs_http_req *req,
                          const char *path,
                          bool write)
{
    if (write ? cfs_http_scope_covers(req->scope, path)
              : cfs_http_scope_sees(req->scope, path)) {
        return true;
    }
    cfs_http_scope_deny(req);
    return false;
}

bool cfs_http_scope_reach(struct cfs_http_req *req,
                          const char *path,
                          bool write,
                          const char *what)
{
    if (!cfs_http_scope_allow(req, path, write)) {
        return false;
    }
    if (cfs_http_scope_reaches(req->scope, path, write, false)) {
        return true;
    }
    cfs_http_op_problem(req, -ENOENT, what, path); /* as if it were not */
    return false;
}
