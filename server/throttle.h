/* SPDX-License-Identifier: MIT */
/*
 * throttle.h - failed authentications rate-limited per client address:
 * after --auth-fail-burst wrong tokens from one address within
 * --auth-fail-window seconds, requests from it that need a token are
 * answered 429 with Retry-After, without their token being looked at,
 * until the window has let enough of them go (a token bucket, kept as the
 * generic cell rate algorithm: one timestamp per address).
 *
 * An address is an IPv4 address, or the /64 prefix of an IPv6 one (a
 * host is usually given a whole /64). The table is bounded: when it is
 * full, the entry nearest to being forgotten makes room.
 */
#ifndef CFS_HTTP_THROTTLE_H
#define CFS_HTTP_THROTTLE_H

#include <stdint.h>

struct sockaddr;
struct cfs_http_throttle;

/* @burst failures per @window_s seconds (each > 0). @return 0 or
 * -ENOMEM. */
int cfs_http_throttle_new(unsigned int burst,
                          unsigned int window_s,
                          struct cfs_http_throttle **ret);
void cfs_http_throttle_free(struct cfs_http_throttle *t);

/* 0 when @sa may try a token now, else the seconds until it may (the
 * Retry-After). A NULL @t or @sa is never throttled. */
unsigned int cfs_http_throttle_check(struct cfs_http_throttle *t,
                                     const struct sockaddr *sa,
                                     uint64_t now_us);
/* Count a failed authentication from @sa. */
void cfs_http_throttle_fail(struct cfs_http_throttle *t,
                            const struct sockaddr *sa,
                            uint64_t now_us);

#endif /* CFS_HTTP_THROTTLE_H */
