/* SPDX-License-Identifier: MIT */
/*
 * status.h - the one errno -> HTTP status table (docs/DESIGN.md §4) and
 * the names of errnos. Depends on nothing else in server/.
 */
#ifndef CFS_HTTP_STATUS_H
#define CFS_HTTP_STATUS_H

/* The status for @err (negative or positive): 404 for ENOENT, 409, 403,
 * 422 for what the object model or a callback refuses, 500 for EIO ... */
int cfs_http_status_from_errno(int err);
/* "ENOENT" for -ENOENT / ENOENT; "EIO" for unknown values (static). */
const char *cfs_http_errno_name(int err);

#endif /* CFS_HTTP_STATUS_H */
