// SPDX-License-Identifier: MIT
/*
 * status.c - the one place where an errno becomes an HTTP status, and the
 * problem+json error body (RFC 9457) every error response carries.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http-internal.h"

int cfs_http_status_from_errno(int err)
{
    switch (err < 0 ? -err : err) {
    case 0:
        return MHD_HTTP_OK;
    case ENOENT:
        return MHD_HTTP_NOT_FOUND;
    case EEXIST:
    case ENOTEMPTY:
    case EBUSY:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MHD_HTTP_CONFLICT;
    case EPERM:
    case EACCES:
        return MHD_HTTP_FORBIDDEN;
    case EINVAL:
    case ERANGE:
    case ENOSPC:
    case ENAMETOOLONG:
    case EOVERFLOW:
    case EMSGSIZE:
    case ENODEV:
    case EFAULT:
    case ENOSYS:
    case EOPNOTSUPP:
    case EXDEV:
    case ETXTBSY:
    case EDOM:
        return 422; /* returned by the object model or a callback */
    case EFBIG:
    case E2BIG:
        return MHD_HTTP_CONTENT_TOO_LARGE;
    case ESTALE:
        return MHD_HTTP_PRECONDITION_FAILED;
    case EAGAIN:
    case EROFS:
    case EDQUOT:
        return MHD_HTTP_SERVICE_UNAVAILABLE; /* storage */
    default:
        return MHD_HTTP_INTERNAL_SERVER_ERROR; /* EIO, ENOMEM, ... */
    }
}

const char *cfs_http_errno_name(int err)
{
    static const struct {
        int e;
        const char *name;
    } names[] = {
        {EPERM, "EPERM"},
        {ENOENT, "ENOENT"},
        {EIO, "EIO"},
        {E2BIG, "E2BIG"},
        {EAGAIN, "EAGAIN"},
        {ENOMEM, "ENOMEM"},
        {EACCES, "EACCES"},
        {EFAULT, "EFAULT"},
        {EBUSY, "EBUSY"},
        {EEXIST, "EEXIST"},
        {EXDEV, "EXDEV"},
        {ENODEV, "ENODEV"},
        {ENOTDIR, "ENOTDIR"},
        {EISDIR, "EISDIR"},
        {EINVAL, "EINVAL"},
        {ETXTBSY, "ETXTBSY"},
        {EFBIG, "EFBIG"},
        {ENOSPC, "ENOSPC"},
        {EROFS, "EROFS"},
        {EDOM, "EDOM"},
        {ERANGE, "ERANGE"},
        {EDEADLK, "EDEADLK"},
        {ENAMETOOLONG, "ENAMETOOLONG"},
        {ENOSYS, "ENOSYS"},
        {ENOTEMPTY, "ENOTEMPTY"},
        {ELOOP, "ELOOP"},
        {EMSGSIZE, "EMSGSIZE"},
        {EOPNOTSUPP, "EOPNOTSUPP"},
        {EOVERFLOW, "EOVERFLOW"},
        {ESTALE, "ESTALE"},
        {EDQUOT, "EDQUOT"},
        {ETIMEDOUT, "ETIMEDOUT"},
    };
    int e = err < 0 ? -err : err;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].e == e) {
            return names[i].name;
        }
    }
    return "EIO";
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
    case 503:
        return "Service Unavailable";
    default:
        return status >= 500 ? "Internal Server Error" : "Error";
    }
}

/* The request's path as a URI reference: bytes outside the unreserved,
 * sub-delims, ':', '@', '/' and well-formed %XX escapes are escaped. */
static json_t *instance_of(const char *url)
{
    static const char hex[] = "0123456789ABCDEF";
    static const char ok[] = "-._~!$&'()*+,;=:@/";
    size_t len = url ? strlen(url) : 0;
    char *out;
    size_t o = 0;
    json_t *j;

    if (!url) {
        return json_string("/");
    }
    out = malloc(3 * len + 1);
    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        bool escape_ok = c == '%' && i + 2 < len &&
                         strchr(hex, toupper((unsigned char)url[i + 1])) &&
                         strchr(hex, toupper((unsigned char)url[i + 2]));

        if ((c < 0x80 && isalnum(c)) || (c && strchr(ok, c)) || escape_ok) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
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
