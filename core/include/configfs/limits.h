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

/*
 * The server's request limits. Those an operator may need to change are
 * defaults of a configfsd flag, named beside them.
 */
/* Request body in bytes (--body-limit); over it: 413 EFBIG. */
#define CFS_BODY_MAX ((size_t)1024 * 1024)
/* Memory of one connection in bytes: request line, headers and buffers
 * (--header-limit); a request line or headers over it: 414 or 431.
 * libmicrohttpd's own default; it zeroes this memory before each request
 * on a connection, so a larger value costs every request. */
#define CFS_HEADER_MAX ((size_t)32 * 1024)
/* Operations in one batch. */
#define CFS_BATCH_MAX 1000
/* Concurrent connections (--max-connections); beyond them new ones wait
 * in the listen backlog until one closes. */
#define CFS_CONN_MAX 1024
/* Seconds a connection may stay silent, inside a request or between two
 * (--timeout); then it is closed. */
#define CFS_CONN_TIMEOUT 30
/* Bytes of one bearer token, and of a --tokens file. */
#define CFS_TOKEN_MAX      512
#define CFS_TOKEN_FILE_MAX ((size_t)1024 * 1024)
/* Wrong bearer tokens one client address may send within
 * CFS_AUTH_FAIL_WINDOW seconds (--auth-fail-burst, --auth-fail-window);
 * then it is answered 429 until the window lets one more go. */
#define CFS_AUTH_FAIL_BURST  10
#define CFS_AUTH_FAIL_WINDOW 60
/* Bytes of a --tls-cert or --tls-key file. */
#define CFS_TLS_FILE_MAX ((size_t)1024 * 1024)

#endif /* CONFIGFS_LIMITS_H */
