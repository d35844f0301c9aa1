// SPDX-License-Identifier: MIT
/*
 * frame.c - the netstrings a batch of forwarded requests and its answer
 * travel in (frame.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

void cfs_http_frame_put(struct jw *w, const void *p, size_t n)
{
    char len[24];

    (void)snprintf(len, sizeof(len), "%zu:", n);
    jw_raw(w, len, strlen(len));
    jw_raw(w, n ? p : "", n);
    jw_raw(w, ",", 1);
}

void cfs_http_frame_put_str(struct jw *w, const char *s)
{
    cfs_http_frame_put(w, s, strlen(s));
}

void cfs_http_frame_put_u64(struct jw *w, uint64_t v)
{
    char num[24];

    (void)snprintf(num, sizeof(num), "%" PRIu64, v);
    cfs_http_frame_put_str(w, num);
}

int cfs_http_frame_get(char **p, const char *end, char **ret, size_t *ret_len)
{
    char *s = *p;
    size_t n = 0;

    if (s >= end || *s < '0' || *s > '9') {
        return -EINVAL;
    }
    while (s < end && *s >= '0' && *s <= '9') {
        if (n > (SIZE_MAX - 9) / 10 || (s > *p && n == 0)) {
            return -EINVAL; /* too long, or a leading zero */
        }
        n = n * 10 + (size_t)(*s++ - '0');
    }
    if (s >= end || *s != ':' || (size_t)(end - s - 1) < n + 1 ||
        s[1 + n] != ',') {
        return -EINVAL;
    }
    *ret = s + 1;
    *ret_len = n;
    s[1 + n] = '\0';
    *p = s + n + 2;
    return 0;
}

int cfs_http_frame_get_u64(char **p,
                           const char *end,
                           uint64_t max,
                           uint64_t *ret)
{
    char *s, *e = NULL;
    size_t n;
    unsigned long long v;

    if (cfs_http_frame_get(p, end, &s, &n) < 0 || n == 0 || n > 20 ||
        strspn(s, "0123456789") != n) {
        return -EINVAL;
    }
    errno = 0;
    v = strtoull(s, &e, 10);
    if (errno || v > max) {
        return -EINVAL;
    }
    *ret = v;
    return 0;
}

int cfs_http_frame_answers(char *p,
                           const char *end,
                           size_t n,
                           int (*each)(void *ctx,
                                       size_t i,
                                       const struct cfs_http_fwd_answer *a),
                           void *ctx)
{
    struct cfs_http_fwd_answer *a = malloc(sizeof(*a));
    int r = 0;

    if (!a) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        uint64_t nh = 0;

        if (cfs_http_frame_get_u64(&p, end, 599, &a->status) < 0 ||
            a->status < 100 ||
            cfs_http_frame_get_u64(&p, end, UINT64_MAX, &a->revision) < 0 ||
            cfs_http_frame_get_u64(&p, end, CFS_FWD_HEADERS_MAX, &nh) < 0) {
            r = -EINVAL;
            break;
        }
        a->nh = (size_t)nh;
        for (size_t h = 0; h < a->nh && r == 0; h++) {
            if (cfs_http_frame_get(&p, end, &a->name[h], &a->name_len[h]) < 0 ||
                cfs_http_frame_get(&p, end, &a->value[h], &a->value_len[h]) <
                    0) {
                r = -EINVAL;
            }
        }
        if (r == 0 && cfs_http_frame_get(&p, end, &a->body, &a->body_len) < 0) {
            r = -EINVAL;
        }
        if (r == 0) {
            r = each(ctx, i, a);
        }
    }
    free(a);
    if (r == 0 && p != end) {
        r = -EINVAL; /* more answers than requests, or bytes after them */
    }
    return r;
}
