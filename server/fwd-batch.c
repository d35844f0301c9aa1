// SPDX-License-Identifier: MIT
/*
 * fwd-batch.c - POST /api/v1/forward at the writer: a batch of write
 * requests another node forwarded, read, run and answered here
 * (fwd-batch.h; the sending side is forward.c). Each request of the batch
 * is a struct cfs_http_req without a connection, whose query, headers and
 * answer body come from the batch (batch_io); daemon.c's run() takes each
 * through the same phases as a request that came alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wait/wait.h"
#include "frame.h"
#include "fwd-batch.h"
#include "reply.h"
#include "request.h"

/* ---- a request of a batch: what a connection would give ----------------- */

struct cfs_http_sub {
    char **hk, **hv; /* headers, in the batch's body */
    size_t nh;
    char **ak, **av; /* the query, split in the batch's body; av[i] NULL:
                      * "key" without '=' */
    size_t na;
    char *out; /* the answer's body */
    size_t out_len;
    bool done; /* answered */
};

/* The requests of a batch (each a struct cfs_http_req of its own, with
 * in.outer the batch's request and in.sub what the batch says of it). */
struct cfs_http_fwd_batch {
    struct cfs_http_req **subs;
    size_t n;
};

static const char *
sub_value(const struct cfs_http_sub *s, bool header, const char *key)
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

static void sub_each(const struct cfs_http_sub *s,
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

static int sub_keep(struct cfs_http_sub *s, const void *data, size_t len)
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

static void sub_free(struct cfs_http_sub *s)
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

/* Split the query @q ("a=1&b", as sent, without '?') in place into x's
 * values (@q lives as long as @x: it is in the batch's body). @return 0
 * or -ENOMEM. */
static int sub_query(struct cfs_http_sub *x, char *q)
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

static const char *
io_value(struct cfs_http_req *req, enum MHD_ValueKind kind, const char *key)
{
    return sub_value(req->in.sub, kind == MHD_HEADER_KIND, key);
}

static void io_each(struct cfs_http_req *req,
                    enum MHD_ValueKind kind,
                    MHD_KeyValueIterator it,
                    void *cls)
{
    sub_each(req->in.sub, kind == MHD_HEADER_KIND, it, cls);
}

static int io_keep(struct cfs_http_req *req, const void *data, size_t len)
{
    return sub_keep(req->in.sub, data, len);
}

static const struct cfs_http_io batch_io = {io_value, io_each, io_keep};

/* ---- reading the batch --------------------------------------------------- */

/* A request made by next_sub(), not run. */
static void drop_sub(struct cfs_http_req *s)
{
    if (s) {
        sub_free(s->in.sub);
        free(s->url);
        free(s);
    }
}

/* The batch alone, its requests made by next_sub() and not run: the
 * malformed batch's. */
static void batch_drop(struct cfs_http_fwd_batch *b)
{
    if (b) {
        for (size_t i = 0; i < b->n; i++) {
            drop_sub(b->subs[i]);
        }
        free(b->subs);
        free(b);
    }
}

void cfs_http_fwd_batch_free(struct cfs_http_fwd_batch *b,
                             void (*free_req)(struct cfs_http_req *req))
{
    if (b) {
        for (size_t i = 0; i < b->n; i++) {
            sub_free(b->subs[i]->in.sub);
            b->subs[i]->in.sub = NULL;
            free_req(b->subs[i]);
        }
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
    s->io = &batch_io;
    s->phase = CFS_HTTP_PHASE_ROUTE; /* run() routes and authorizes it */
    s->in.outer = outer;
    s->in.sub = x;
    *why = "a request's method, path or query is malformed";
    if (cfs_http_frame_get(p, end, &method, &len) < 0 ||
        strlen(method) != len || cfs_http_frame_get(p, end, &path, &len) < 0 ||
        strlen(path) != len || path[0] != '/' ||
        cfs_http_frame_get(p, end, &query, &len) < 0 || strlen(query) != len) {
        return -EINVAL;
    }
    s->method_name = method;
    s->url = strdup(path);
    if (!s->url || sub_query(x, query) < 0) {
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
        batch_drop(b);
        if (r == -ENOMEM) {
            cfs_http_no_memory(req);
        } else {
            cfs_http_bad_request(req, "%s", why);
        }
        return;
    }
    req->in.batch = b; /* no answer yet: cfs_http_fwd_batch_run() */
}

/* ---- answering it ------------------------------------------------------- */

static enum MHD_Result
put_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    struct jw *w = cls;

    (void)kind;
    cfs_http_frame_put_str(w, key);
    cfs_http_frame_put_str(w, v ? v : "");
    return MHD_YES;
}

/* Every request of req->in.batch is answered: the batch's answer. */
static void batch_answer(struct cfs_http_req *req)
{
    struct cfs_http_fwd_batch *b = req->in.batch;
    struct jw w = {0};
    struct MHD_Response *resp;
    char *text = NULL;
    size_t len = 0;

    jw_raw(&w, CFS_FWD_ANSWER_MAGIC, strlen(CFS_FWD_ANSWER_MAGIC));
    for (size_t i = 0; i < b->n; i++) {
        struct cfs_http_req *s = b->subs[i];
        int nh = s->resp ? MHD_get_response_headers(s->resp, NULL, NULL) : 0;

        cfs_http_frame_put_u64(&w, (uint64_t)s->status);
        cfs_http_frame_put_u64(&w, s->wait.commit_rev);
        cfs_http_frame_put_u64(&w, nh > 0 ? (uint64_t)nh : 0);
        if (nh > 0) {
            (void)MHD_get_response_headers(s->resp, put_header, &w);
        }
        cfs_http_frame_put(&w, s->in.sub->out, s->in.sub->out_len);
        s->resp_len = s->in.sub->out_len;
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

/* ---- running it ---------------------------------------------------------- */

void cfs_http_fwd_batch_run(struct cfs_http_req *req, cfs_http_run_fn *run)
{
    struct cfs_http_fwd_batch *b = req->in.batch;

    req->wait.kind = CFS_WAIT_NONE; /* woken, or not yet waiting */
    for (;;) {
        bool all = true;

        /* held while they run: none can wake the batch before it waits */
        atomic_fetch_add(&req->in.pending, 1);
        for (size_t i = 0; i < b->n; i++) {
            struct cfs_http_req *s = b->subs[i];

            if (!s->in.sub->done) {
                s->in.sub->done = run(s);
                all &= s->in.sub->done;
            }
        }
        if (all) {
            atomic_fetch_sub(&req->in.pending, 1);
            batch_answer(req);
            return;
        }
        cfs_http_wait_begin(req, CFS_WAIT_BATCH);
        if (atomic_fetch_sub(&req->in.pending, 1) != 1) {
            return; /* the last one to be done wakes the batch */
        }
        req->wait.kind = CFS_WAIT_NONE; /* all done meanwhile: on at once */
    }
}
