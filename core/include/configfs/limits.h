/* SPDX-License-Identifier: MIT */
/*
 * limits.h - the limits of the configfs object model: names, paths,
 * depth, values. Core enforces them, whatever the front end. The HTTP
 * server's own request limits (bodies, headers, connections, tokens) are
 * in its header, server/http.h: core knows no HTTP.
 */
#ifndef CONFIGFS_LIMITS_H
#define CONFIGFS_LIMITS_H

/* Bytes in one path component (the VFS NAME_MAX, L1). */
#define CFS_NAME_MAX 255
/* Bytes in a whole path (PATH_MAX, L1). */
#define CFS_PATH_MAX 4096
/* Directory levels below the root. */
#define CFS_DEPTH_MAX 64
/* Symlinks followed while resolving one link target (SL5, ELOOP). */
#define CFS_SYMLINK_FOLLOW_MAX 40
/* Largest text value a store accepts: below the 4096-byte page (WR3). */
#define CFS_STORE_MAX (4096 - 1)
/* Binary attributes without cb_max_size: a hard cap all the same. */
#define CFS_BIN_MAX ((size_t)16 * 1024 * 1024)

#endif /* CONFIGFS_LIMITS_H */
