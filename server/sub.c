// SPDX-License-Identifier: MIT
/*
 * sub.c - one request of a forwarded batch, and the framing (sub.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sub.h"

/* ---- the framing ------------------------------------------------------ */

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

/* ---- a request of a batch --------------------------------------------- */

const char *
cfs_http_sub_value(const struct cfs_http_sub *s, bool header, const char *key)
{
    char *const *k = header ? s->hk : s->ak;
    char *const *v = header ? s->hv : s->av;
    size_t n = header ? s->nh : s->na;

    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(k[i], key) == 0) {
            return v[i];
        }
    }
    return NULL;
}

void cfs_http_sub_each(const struct cfs_http_sub *s,
                       bool header,
                       MHD_KeyValueIterator it,
                       void *cls)
{
    char *const *k = header ? s->hk : s->ak;
    char *const *v = header ? s->hv : s->av;
    size_t n = header ? s->nh : s->na;
    enum MHD_ValueKind kind = header ? MHD_HEADER_KIND : MHD_GET_ARGUMENT_KIND;

    for (size_t i = 0; i < n && it(cls, kind, k[i], v[i]) == MHD_YES; i++) {
    }
}

int cfs_http_sub_keep(struct cfs_http_sub *s, const void *data, size_t len)
{
    char *out = malloc(len + 1);

    if (!out) {
        return -ENOMEM;
    }
    if (len) {
        memcpy(out, data, len);
    }
    free(s->out);
    s->out = out;
    s->out_len = len;
    return 0;
}

void cfs_http_sub_free(struct cfs_http_sub *s)
{
    if (s) {
        free(s->hk);
        free(s->hv);
        free(s->ak);
        free(s->av);
        free(s->out);
        free(s);
    }
}

int cfs_http_sub_query(struct cfs_http_sub *x, char *q)
{
    size_t n = 1;
    char *p = q;

    if (!*q) {
        return 0;
    }
    for (const char *c = q; *c; c++) {
        n += *c == '&';
    }
    x->ak = calloc(n, sizeof(*x->ak));
    x->av = calloc(n, sizeof(*x->av));
    if (!x->ak || !x->av) {
        return -ENOMEM;
    }
    for (;;) {
        char *amp = strchr(p, '&'), *eq;

        if (amp) {
            *amp = '\0';
        }
        if (*p) { /* "a&&b": libmicrohttpd skips the empty one */
            eq = strchr(p, '=');
            if (eq) {
                *eq = '\0';
            }
            x->ak[x->na] = p;
            x->av[x->na] = eq ? eq + 1 : NULL;
            x->na++;
        }
        if (!amp) {
            return 0;
        }
        p = amp + 1;
    }
}
