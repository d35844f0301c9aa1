// SPDX-License-Identifier: MIT
/*
 * h-forward.c - POST /api/v1/forward: a batch of write requests another
 * node forwarded (h-forward.h; the other side is forward.c). Here the
 * batch is read into one struct cfs_http_req per request, without a
 * connection (sub.h), and their answers are written back in one; the
 * daemon runs them between the two, each as if it had come alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h-forward.h"
#include "reply.h"
#include "request.h"
#include "sub.h"

/* A request made by next_sub(), not run. */
static void drop_sub(struct cfs_http_req *s)
{
    if (s) {
        cfs_http_sub_free(s->sub);
        free(s->url);
        free(s);
    }
}

void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b)
{
    if (b) {
        free(b->subs);
        free(b);
    }
}

/* The next request of the batch at *@p, in *@ret (its strings point into
 * the batch's body, NUL-terminated in place). @return 0, -EINVAL (*@why)
 * or -ENOMEM; *@ret is set when anything was made, to be dropped. */
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
    *why = "a request's method, path or query is malformed";
    if (cfs_http_frame_get(p, end, &method, &len) < 0 ||
        strlen(method) != len || cfs_http_frame_get(p, end, &path, &len) < 0 ||
        strlen(path) != len || path[0] != '/' ||
        cfs_http_frame_get(p, end, &query, &len) < 0 || strlen(query) != len) {
        return -EINVAL;
    }
    s->method_name = method;
    s->url = strdup(path);
    if (!s->url || cfs_http_sub_query(x, query) < 0) {
        return -ENOMEM;
    }
    *why = "a request's headers are malformed";
    if (cfs_http_frame_get_u64(p, end, CFS_FWD_HEADERS_MAX, &nh) < 0) {
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
    return 0;
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
    if (!b ||
        !(b->subs = calloc(CFS_FWD_BATCH_MAX, sizeof(struct cfs_http_req *)))) {
        free(b);
        cfs_http_no_memory(req);
        return;
    }
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
        /* nothing runs: the node that sent it sends them one by one */
        for (size_t i = 0; i < b->n; i++) {
            drop_sub(b->subs[i]);
        }
        cfs_http_fwd_batch_free(b);
        if (r == -ENOMEM) {
            cfs_http_no_memory(req);
        } else {
            cfs_http_bad_request(req, "%s", why);
        }
        return;
    }
    req->batch = b; /* no answer yet: the daemon runs them */
}

static enum MHD_Result
put_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    struct jw *w = cls;

    (void)kind;
    cfs_http_frame_put_str(w, key);
    cfs_http_frame_put_str(w, v ? v : "");
    return MHD_YES;
}

void cfs_http_fwd_batch_answer(struct cfs_http_req *req)
{
    struct cfs_http_fwd_batch *b = req->batch;
    struct jw w = {0};
    struct MHD_Response *resp;
    char *text = NULL;
    size_t len = 0;

    jw_raw(&w, CFS_FWD_ANSWER_MAGIC, strlen(CFS_FWD_ANSWER_MAGIC));
    for (size_t i = 0; i < b->n; i++) {
        struct cfs_http_req *s = b->subs[i];
        int nh = s->resp ? MHD_get_response_headers(s->resp, NULL, NULL) : 0;

        cfs_http_frame_put_u64(&w, (uint64_t)s->status);
        cfs_http_frame_put_u64(&w, s->commit_rev);
        cfs_http_frame_put_u64(&w, nh > 0 ? (uint64_t)nh : 0);
        if (nh > 0) {
            (void)MHD_get_response_headers(s->resp, put_header, &w);
        }
        cfs_http_frame_put(&w, s->sub->out, s->sub->out_len);
        s->resp_len = s->sub->out_len;
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
