// SPDX-License-Identifier: MIT
/*
 * status.c - the one place where an errno becomes an HTTP status
 * (docs/DESIGN.md §4), and the errno's symbolic name a problem carries.
 */
#include <errno.h>
#include <stddef.h>

#include <microhttpd.h>

#include "status.h"

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
