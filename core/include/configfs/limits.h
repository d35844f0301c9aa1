/* SPDX-License-Identifier: MIT */
/*
 * limits.h - every limit a client of configfsd can run into, in one place.
 *
 * Core enforces the name and value limits; the server adds its own request
 * limits here too so that operators find them together.
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

/* The server's request limits. */
#define CFS_BODY_MAX     (1024 * 1024) /* request body */
#define CFS_BATCH_MAX    1000          /* operations in one batch */
#define CFS_CONN_MAX     1024          /* concurrent connections */
#define CFS_CONN_TIMEOUT 30            /* seconds a connection may idle */

#endif /* CONFIGFS_LIMITS_H */
