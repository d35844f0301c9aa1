// SPDX-License-Identifier: MIT
/*
 * h-forward.c - POST /api/v1/forward: the writer runs a batch of write
 * requests another node forwarded, and answers them in one exchange
 * (h-forward.h; the other side is forward.c).
 *
 * Each request of the batch becomes a struct cfs_http_req of its own,
 * without a connection: headers and query come from the batch
 * (request.c asks cfs_http_sub_value()), its answer's body is kept as it
 * is built (reply.c), and its waits are counted on the batch, which waits
 * as one request until none is left (commit.c). The requests are run in
 * the order they came; their commits share the store's group commits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "commit.h"
#include "h-forward.h"
#include "reply.h"
#include "request.h"
#include "router.h"

struct cfs_http_sub {
    char **hk, **hv; /* headers, in the batch's body */
    size_t nh;
    char *query;     /* its own copy, split in place */
    char **ak, **av; /* av[i] NULL: "key" without '=' */
    size_t na;
    char *out; /* the answer's body */
    size_t out_len;
    bool done; /* answered */
};

struct cfs_http_fwd_batch {
    struct cfs_http_req **subs;
    size_t n;
};

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

int cfs_http_frame_get(char **p, char *end, char **ret, size_t *ret_len)
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

int cfs_http_frame_get_u64(char **p, char *end, uint64_t max, uint64_t *ret)
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

/* ---- a request of the batch ------------------------------------------- */

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
        free(s->query);
        free(s->ak);
        free(s->av);
        free(s->out);
        free(s);
    }
}

void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b)
{
    if (b) {
        for (size_t i = 0; i < b->n; i++) {
            if (b->subs[i]) {
                cfs_http_req_free(b->subs[i]);
            }
        }
        free(b->subs);
        free(b);
    }
}

/* Split the query @q ("a=1&b") in place into keys and values. */
static int split_query(struct cfs_http_sub *x, const char *q)
{
    size_t n = 1;
    char *p;

    if (!*q) {
        return 0;
    }
    for (const char *c = q; *c; c++) {
        n += *c == '&';
    }
    x->query = strdup(q);
    x->ak = calloc(n, sizeof(*x->ak));
    x->av = calloc(n, sizeof(*x->av));
    if (!x->query || !x->ak || !x->av) {
        return -ENOMEM;
    }
    p = x->query;
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

static enum cfs_http_method write_method(const char *m)
{
    if (strcmp(m, "POST") == 0) {
        return CFS_M_POST;
    }
    if (strcmp(m, "PUT") == 0) {
        return CFS_M_PUT;
    }
    if (strcmp(m, "DELETE") == 0) {
        return CFS_M_DELETE;
    }
    return CFS_M_OTHER;
}

/* The next request of the batch at *@p: made, authorized, and either
 * ready to run or answered already (a request no node forwards).
 * @return 0, -EINVAL (*@why) or -ENOMEM. */
static int next_sub(struct cfs_http_req *outer,
                    char **p,
                    char *end,
                    struct cfs_http_req **ret,
                    const char **why)
{
    struct cfs_http_req *s = calloc(1, sizeof(*s));
    struct cfs_http_sub *x = calloc(1, sizeof(*x));
    char *method, *path, *query;
    size_t len, body_len;
    uint64_t nh;

    *ret = NULL;
    if (!s || !x) {
        free(s);
        free(x);
        return -ENOMEM;
    }
    *ret = s;
    s->srv = outer->srv;
    s->outer = outer;
    s->sub = x;
    s->start_us = cfs_http_now_us();
    s->jitter = (unsigned)s->start_us ^ (unsigned)(uintptr_t)s;
    s->principal = "anonymous";
    s->method_name = "POST";
    *why = "a request's method, path or query is malformed";
    if (cfs_http_frame_get(p, end, &method, &len) < 0 ||
        cfs_http_frame_get(p, end, &path, &len) < 0 || strlen(path) != len ||
        path[0] != '/' || cfs_http_frame_get(p, end, &query, &len) < 0 ||
        strlen(query) != len) {
        return -EINVAL;
    }
    s->method_name = method;
    s->method = write_method(method);
    s->url = strdup(path);
    if (!s->url || split_query(x, query) < 0) {
        return -ENOMEM;
    }
    *why = "a request's headers are malformed";
    if (cfs_http_frame_get_u64(p, end, 256, &nh) < 0) {
        return -EINVAL;
    }
    x->hk = calloc(nh ? nh : 1, sizeof(*x->hk));
    x->hv = calloc(nh ? nh : 1, sizeof(*x->hv));
    if (!x->hk || !x->hv) {
        return -ENOMEM;
    }
    for (; x->nh < nh; x->nh++) {
        if (cfs_http_frame_get(p, end, &x->hk[x->nh], &len) < 0 ||
            strlen(x->hk[x->nh]) != len || len == 0 ||
            cfs_http_frame_get(p, end, &x->hv[x->nh], &len) < 0 ||
            strlen(x->hv[x->nh]) != len) {
            return -EINVAL;
        }
    }
    *why = "a request's body is malformed";
    if (cfs_http_frame_get(p, end, &s->body, &body_len) < 0) {
        return -EINVAL;
    }
    s->body_len = body_len;
    s->body_too_big = body_len > outer->srv->opts.body_limit;
    s->rt = cfs_http_route_find(s->url, &s->rest);
    if (!s->rt || s->rt->handle == cfs_http_handle_forward ||
        s->method == CFS_M_OTHER || !(s->rt->methods & CFS_M(s->method))) {
        /* only what a node forwards: a write its route takes */
        s->route = "forward";
        cfs_http_bad_request(s,
                             "%s %s is not a write request another node "
                             "forwards",
                             s->method_name,
                             s->url);
        x->done = true;
        return 0;
    }
    cfs_http_authorize(s);
    return 0;
}

/* ---- the batch -------------------------------------------------------- */

static enum MHD_Result
put_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    struct jw *w = cls;

    (void)kind;
    cfs_http_frame_put_str(w, key);
    cfs_http_frame_put_str(w, v ? v : "");
    return MHD_YES;
}

/* Every request is answered: the answer of the batch, and each request
 * goes (counted and logged as if it had come alone). */
static void answer(struct cfs_http_req *req)
{
    struct cfs_http_fwd_batch *b = req->batch;
    struct jw w = {0};
    struct MHD_Response *resp;
    char *text = NULL;
    size_t len = 0;

    jw_raw(&w, CFS_FWD_ANSWER_MAGIC, strlen(CFS_FWD_ANSWER_MAGIC));
    for (size_t i = 0; i < b->n; i++) {
        struct cfs_http_req *s = b->subs[i];
        int nh = MHD_get_response_headers(s->resp, NULL, NULL);

        cfs_http_frame_put_u64(&w, (uint64_t)s->status);
        cfs_http_frame_put_u64(&w, s->commit_rev);
        cfs_http_frame_put_u64(&w, nh > 0 ? (uint64_t)nh : 0);
        if (nh > 0) {
            (void)MHD_get_response_headers(s->resp, put_header, &w);
        }
        cfs_http_frame_put(&w, s->sub->out, s->sub->out ? s->sub->out_len : 0);
        s->resp_len = s->sub->out_len;
        cfs_http_req_free(s);
        b->subs[i] = NULL;
    }
    if (jw_finish(&w, &text, &len) < 0) {
        /* the changes are made: the node that sent them says it cannot
         * tell (forward.c) */
        cfs_http_no_memory(req);
        return;
    }
    resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        cfs_http_no_memory(req);
        return;
    }
    MHD_add_response_header(
        resp, MHD_HTTP_HEADER_CONTENT_TYPE, CFS_FWD_BATCH_TYPE);
    cfs_http_reply_response(req, MHD_HTTP_OK, resp);
    req->resp_len = len;
}

/* Run every request not yet answered until each is answered or waits;
 * then answer, or wait until the last wait is over (commit.c wakes the
 * batch then). */
static void run_all(struct cfs_http_req *req)
{
    struct cfs_http_fwd_batch *b = req->batch;

    for (;;) {
        bool all = true;

        /* held while they run: none can wake the batch before it waits */
        atomic_fetch_add(&req->sub_pending, 1);
        for (size_t i = 0; i < b->n; i++) {
            struct cfs_http_req *s = b->subs[i];

            if (!s->sub->done) {
                s->sub->done = cfs_http_run(s);
                all &= s->sub->done;
            }
        }
        if (all) {
            atomic_fetch_sub(&req->sub_pending, 1);
            answer(req);
            return;
        }
        cfs_http_commit_begin(req);
        if (atomic_fetch_sub(&req->sub_pending, 1) != 1) {
            return; /* the last one to be done wakes the batch */
        }
        req->committing = false; /* all done meanwhile: on at once */
    }
}

bool cfs_http_fwd_batch_resume(struct cfs_http_req *req)
{
    req->committing = false;
    run_all(req);
    return false;
}

void cfs_http_handle_forward(struct cfs_http_req *req)
{
    const char *ct = cfs_http_header_in(req, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *why = "the body does not begin a batch of forwarded requests";
    char *p = req->body, *end = req->body + req->body_len;
    size_t magic = strlen(CFS_FWD_BATCH_MAGIC);
    struct cfs_http_fwd_batch *b;
    int r = -EINVAL;

    if (!ct || strcasecmp(ct, CFS_FWD_BATCH_TYPE) != 0) {
        cfs_http_problem(req,
                         MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                         -EINVAL,
                         NULL,
                         "the body must be " CFS_FWD_BATCH_TYPE);
        return;
    }
    b = calloc(1, sizeof(*b));
    if (!b || !(b->subs = calloc(CFS_FWD_BATCH_MAX, sizeof(*b->subs)))) {
        free(b);
        cfs_http_no_memory(req);
        return;
    }
    req->batch = b;
    if (req->body_len >= magic &&
        memcmp(req->body, CFS_FWD_BATCH_MAGIC, magic) == 0) {
        p += magic;
        r = 0;
        why = "a batch holds no request";
    }
    while (r == 0 && p < end) {
        if (b->n == CFS_FWD_BATCH_MAX) {
            r = -EINVAL;
            why = "a batch holds too many requests";
            break;
        }
        r = next_sub(req, &p, end, &b->subs[b->n], &why);
        if (b->subs[b->n]) {
            b->n++;
        }
    }
    if (r == 0 && b->n == 0) {
        r = -EINVAL;
    }
    if (r < 0) {
        /* nothing ran: the node that sent it sends them one by one */
        req->batch = NULL;
        for (size_t i = 0; i < b->n; i++) {
            b->subs[i]->status = 0; /* not counted: never run */
        }
        cfs_http_fwd_batch_free(b);
        if (r == -ENOMEM) {
            cfs_http_no_memory(req);
        } else {
            cfs_http_bad_request(req, "%s", why);
        }
        return;
    }
    run_all(req);
}
