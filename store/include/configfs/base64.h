/* SPDX-License-Identifier: MIT */
/*
 * base64.h - values that are not UTF-8 travel in JSON as base64 (RFC 4648,
 * section 4: the standard alphabet, with padding). The codec is nettle's;
 * the project's one: the server's values, the etcd backend's keys, values
 * and log entries.
 */
#ifndef CFS_BASE64_H
#define CFS_BASE64_H

#include <stddef.h>

#include <configfs/cfs.h>

/* @len bytes as base64, NUL-terminated (malloc'd; NULL without memory). */
CFS_EXPORT char *cfs_base64_encode(const void *in, size_t len);

/*
 * Decode @len characters of strict base64: the standard alphabet only, no
 * whitespace, padded to a multiple of 4, and canonical (the bits padding
 * leaves over are zero), so that each byte string has exactly one text.
 * Anything else is refused whole, never half-decoded.
 * @return 0 with *ret (malloc'd, NUL-terminated for convenience) and
 * *ret_len, -EINVAL for text that is not strict base64, or -ENOMEM.
 */
CFS_EXPORT int
cfs_base64_decode(const char *in, size_t len, char **ret, size_t *ret_len);

#endif
