// SPDX-License-Identifier: MIT
/*
 * forward.c - cluster mode: writes go to the one writer node.
 *
 * Nodes that append at once race for the head of the shared log, and each
 * loss costs an undo, a catch-up and another round trip (docs/cluster.md).
 * So the node that holds the writer's role (store/src/etcd/role.c, under its
 * etcd lease) appends for all: another node sends it each write request
 * as it came (method, raw URL and query, headers, body), answers with its
 * answer, and first waits until it has applied the change itself, so that
 * a client reads its own write on the node it wrote to.
 *
 * The worker does not wait: the request is queued to a pool of forwarding
 * threads (one blocking libcurl transfer each, keep-alive to the writer)
 * and sleeps as a commit does (wait/wait.c), resumed once the writer
 * answered and this node applied the change (the store calls back; the
 * forwarding thread goes on to its next transfer). If the writer cannot
 * be reached at all (nothing was sent), the request runs here, with the
 * CAS, as without a writer. If it was sent and no answer came, nobody
 * knows whether the writer made the change: the answer is 503 and says
 * so, as for an etcd request that timed out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <configfs/store.h>

#include "wait/wait.h"
#include "forward.h"
#include "fwd-batch.h"
#include "jsonw.h"
#include "http.h"
#include "metrics.h"
#include "reply.h"
#include "request.h"
#include "router.h"
#include "frame.h"

#define FWD_THREADS     8
#define FWD_TIMEOUT_MS  20000L /* a writer's commit waits for etcd */
#define FWD_CONNECT_MS  1000L
#define FWD_CATCH_UP_MS 5000u /* this node applies what the writer made */
#define FWD_BODY_MAX    ((size_t)64 << 20)
/* how long a writer that refused a batch is sent no other */
#define FWD_NO_BATCH_US 60000000u
/* how often a transfer looks whether its writer still holds the role */
#define FWD_ROLE_CHECK_US 1000000u

struct cfs_http_fwd_job {
    struct cfs_http_fwd_job *next;
    struct cfs_http_req *req;
    struct cfs_http_forward *f;
    bool writer_lost; /* the role moved on while waiting for its answer */
    uint64_t role_checked_us;   /* when that was last looked at */
    char *url;                  /* the writer's URL, path and query */
    struct curl_slist *headers; /* of the request, to send */
    /* the request as one of a batch (fwd-batch.h); empty for one that
     * goes alone (a body of half --body-limit or more) */
    struct jw frame;
    /* the answer */
    CURLcode code;
    bool sent; /* a whole request reached the writer's socket, maybe */
    long status;
    struct jw body;
    char **rh; /* response headers to pass on: "Name", NUL, " value" */
    size_t n_rh, cap_rh;
    uint64_t revision; /* CFS_REVISION_HEADER, 0 without */
    char writer[512];
};

struct cfs_http_forward {
    struct cfs_http_server *srv;
    char *cacert;
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct cfs_http_fwd_job *head, **tail;
    bool stop;            /* the threads end once the queue is empty */
    atomic_bool aborting; /* transfers end at once */
    pthread_t threads[FWD_THREADS];
    size_t n_threads;
    /* the headers of every batch (constant) */
    struct curl_slist *batch_headers;
    /* a writer that answered a batch 404 or 405 (an older node): it gets
     * each request alone until no_batch_until_us (then it is asked again:
     * it may have been upgraded); under lock */
    char no_batch[512];
    uint64_t no_batch_until_us;
};

/* Headers that belong to one connection, or that this node sets itself. */
static bool hop_header(const char *name)
{
    static const char *const hop[] = {
        "Connection",
        "Keep-Alive",
        "Transfer-Encoding",
        "TE",
        "Upgrade",
        "Trailer",
        "Proxy-Authorization",
        "Proxy-Connection",
        "Host",
        "Content-Length",
        "Expect",
        "Date",
        "X-Content-Type-Options",
        "X-Configfsd-Stale",
        CFS_FORWARDED_HEADER,
        CFS_REVISION_HEADER,
    };

    for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
        if (strcasecmp(name, hop[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void job_free(struct cfs_http_fwd_job *j)
{
    if (j) {
        free(j->url);
        curl_slist_free_all(j->headers);
        free(j->frame.buf);
        free(j->body.buf);
        for (size_t i = 0; i < j->n_rh; i++) {
            free(j->rh[i]);
        }
        free(j->rh);
        free(j);
    }
}

/* ---- building the request, in the worker ------------------------------ */

struct build {
    struct jw url; /* the writer's URL, the path, the query */
    bool query;    /* a '?' is in url */
    bool failed;
    struct curl_slist *headers;
    struct jw hdrs; /* the same headers, framed (fwd-batch.h) */
    uint64_t n_hdrs;
};

static void add(struct build *b, const char *s)
{
    jw_raw(&b->url, s, strlen(s));
}

/* The query, as it came: values are kept undecoded (daemon.c's unescape
 * callback), so they go on as they are. */
static enum MHD_Result
add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    struct build *b = cls;

    (void)kind;
    add(b, b->query ? "&" : "?");
    b->query = true;
    add(b, key);
    if (v) {
        add(b, "=");
        add(b, v);
    }
    return MHD_YES;
}

/* One header line to send. */
static void add_line(struct build *b, const char *line)
{
    struct curl_slist *l =
        b->failed ? NULL : curl_slist_append(b->headers, line);

    if (!l) {
        b->failed = true;
    } else {
        b->headers = l;
    }
}

static enum MHD_Result
add_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    struct build *b = cls;
    char *line;

    (void)kind;
    if (b->failed || hop_header(key)) {
        return MHD_YES;
    }
    if (asprintf(&line, "%s: %s", key, v ? v : "") < 0) {
        b->failed = true;
        return MHD_YES;
    }
    add_line(b, line);
    free(line);
    cfs_http_frame_put_str(&b->hdrs, key);
    cfs_http_frame_put_str(&b->hdrs, v ? v : "");
    b->n_hdrs++;
    return MHD_YES;
}

static void enqueue(struct cfs_http_forward *f, struct cfs_http_fwd_job *j)
{
    pthread_mutex_lock(&f->lock);
    *f->tail = j;
    f->tail = &j->next;
    pthread_cond_signal(&f->more);
    pthread_mutex_unlock(&f->lock);
}

bool cfs_http_forwardable(const struct cfs_http_req *req)
{
    return req->rt && (req->rt->methods & CFS_M(req->method)) &&
           (req->method == CFS_M_POST || req->method == CFS_M_PUT ||
            req->method == CFS_M_DELETE);
}

bool cfs_http_forward(struct cfs_http_req *req)
{
    struct cfs_http_forward *f = req->srv->fwd;
    struct build b = {0};
    struct cfs_http_fwd_job *j;
    size_t len, query;
    char writer[512];

    if (!f || req->fwd.no_forward || req->in.outer ||
        !cfs_http_forwardable(req) ||
        cfs_http_header_in(req, CFS_FORWARDED_HEADER) ||
        cfs_store_writer(req->srv->opts.store, writer, sizeof(writer)) != 1) {
        return false;
    }
    j = calloc(1, sizeof(*j));
    if (!j) {
        return false; /* run it here */
    }
    (void)snprintf(j->writer, sizeof(j->writer), "%s", writer);
    add(&b, writer);
    add(&b, req->url);
    query = b.url.len;
    (void)MHD_get_connection_values(
        req->conn, MHD_GET_ARGUMENT_KIND, add_arg, &b);
    (void)MHD_get_connection_values(req->conn, MHD_HEADER_KIND, add_header, &b);
    add_line(&b, CFS_FORWARDED_HEADER ": 1");
    add_line(&b, "Expect:"); /* no 100-continue round trip */
    if (!cfs_http_header_in(req, "Content-Type")) {
        add_line(&b, "Content-Type:"); /* not curl's form type */
    }
    j->headers = b.headers;
    /* The same, framed (method, path, query, headers, body), unless its
     * body takes half a batch or more: then it goes alone, not copied. */
    if (req->body_len < req->srv->opts.body_limit / 2) {
        cfs_http_frame_put_str(&j->frame, req->method_name);
        cfs_http_frame_put_str(&j->frame, req->url);
        cfs_http_frame_put(&j->frame,
                           b.url.buf + query + (b.query ? 1 : 0),
                           b.url.len - query - (b.query ? 1 : 0));
        cfs_http_frame_put_u64(&j->frame, b.n_hdrs);
        jw_raw(&j->frame, b.hdrs.buf ? b.hdrs.buf : "", b.hdrs.len);
        cfs_http_frame_put(&j->frame, req->body, req->body_len);
    }
    free(b.hdrs.buf);
    if (jw_finish(&b.url, &j->url, &len) < 0 || b.failed || b.hdrs.oom ||
        j->frame.oom) {
        job_free(j);
        return false;
    }
    j->req = req;
    j->f = f;
    j->role_checked_us = cfs_http_now_us(); /* just read it */
    req->fwd.job = j;
    cfs_http_wait_begin(req, CFS_WAIT_FORWARD);
    enqueue(f, j);
    return true;
}

/* ---- the transfer, in a forwarding thread ------------------------------ */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct cfs_http_fwd_job *j = ud;
    size_t n = size * nmemb;

    if (j->body.len + n > FWD_BODY_MAX) {
        return 0;
    }
    jw_raw(&j->body, data, n);
    return j->body.oom ? 0 : n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct cfs_http_fwd_job *j = ud;
    size_t n = size * nmemb, len = n;
    const char *colon = memchr(data, ':', n);
    char name[128], *line;

    while (len > 0 && (data[len - 1] == '\r' || data[len - 1] == '\n')) {
        len--;
    }
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* a new status line (after a 100 Continue): a new set */
        for (size_t i = 0; i < j->n_rh; i++) {
            free(j->rh[i]);
        }
        j->n_rh = 0;
        return n;
    }
    if (!colon || (size_t)(colon - data) >= sizeof(name)) {
        return n; /* the blank line, or nothing to pass on */
    }
    memcpy(name, data, (size_t)(colon - data));
    name[colon - data] = '\0';
    if (strcasecmp(name, CFS_REVISION_HEADER) == 0) {
        j->revision = strtoull(colon + 1, NULL, 10);
        return n;
    }
    if (hop_header(name)) {
        return n;
    }
    if (cfs_grow(&j->rh, &j->cap_rh, j->n_rh, sizeof(*j->rh), 8) < 0 ||
        !(line = strndup(data, len))) {
        return 0;
    }
    line[colon - data] = '\0'; /* "Name", NUL, " value" */
    j->rh[j->n_rh++] = line;
    return n;
}

/* Called at least once a second, and on every turn of the transfer: end
 * it when stopping, or when the writer's role lapsed (a writer that hangs
 * keeps accepting connections; its lease, not its socket, says it is
 * gone). The role, under the store's lock, only once a second: most
 * transfers end long before. */
static int
on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct cfs_http_fwd_job *j = ud;
    uint64_t now_us = cfs_http_now_us();
    char now[512];

    (void)a;
    (void)b;
    (void)c;
    (void)d;
    if (atomic_load(&j->f->aborting)) {
        return 1;
    }
    if (now_us - j->role_checked_us < FWD_ROLE_CHECK_US) {
        return 0;
    }
    j->role_checked_us = now_us;
    if (cfs_store_writer(j->req->srv->opts.store, now, sizeof(now)) != 1 ||
        strcmp(now, j->writer) != 0) {
        j->writer_lost = true;
        return 1;
    }
    return 0;
}

/* What every transfer to the writer sets: @j's role is watched. */
static void setup(struct cfs_http_forward *f,
                  CURL *c,
                  const char *url,
                  struct cfs_http_fwd_job *j)
{
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, j);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, FWD_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, FWD_CONNECT_MS);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    if (f->cacert) {
        curl_easy_setopt(c, CURLOPT_CAINFO, f->cacert);
    }
}

static void
transfer(struct cfs_http_forward *f, CURL *c, struct cfs_http_fwd_job *j)
{
    struct cfs_http_req *req = j->req;
    long sent = 0;

    setup(f, c, j->url, j);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method_name);
    if (req->body_len > 0 || req->method != CFS_M_DELETE) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        curl_easy_setopt(
            c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, j->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, j);
    j->code = curl_easy_perform(c);
    /* counted once the request's head is handed to the socket: 0 means
     * the writer cannot have it whole (a connection refused or timed out,
     * a name that did not resolve) */
    j->sent = curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK ||
              sent > 0;
    if (j->code == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &j->status);
    }
}

static void caught_up(void *ctx, int err)
{
    (void)err; /* answered as the writer did, caught up or not */
    cfs_http_wait_resolve(ctx, 0, 0);
}

/* The writer answered (or not): answer once this node has applied the
 * change, so that the client reads its write here. The forwarding thread
 * does not wait for that: it goes on to the next transfer. */
static void answer(struct cfs_http_forward *f, struct cfs_http_fwd_job *j)
{
    if (j->code == CURLE_OK && j->status >= 200 && j->status < 300 &&
        j->revision > 0 && !atomic_load(&f->aborting) &&
        cfs_store_catch_up_async(j->req->srv->opts.store,
                                 j->revision,
                                 0,
                                 FWD_CATCH_UP_MS,
                                 caught_up,
                                 j->req) == 0) {
        return;
    }
    cfs_http_wait_resolve(j->req, 0, 0);
}

/* ---- a batch of transfers in one exchange ------------------------------ */

static size_t on_batch_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct jw *w = ud;
    size_t n = size * nmemb;

    if (w->len + n > FWD_BODY_MAX) {
        return 0;
    }
    jw_raw(w, data, n);
    return w->oom ? 0 : n;
}

/* Answer @i of a batch into its job (@ctx: the jobs). */
static int take_answer(void *ctx, size_t i, const struct cfs_http_fwd_answer *a)
{
    struct cfs_http_fwd_job *j = ((struct cfs_http_fwd_job **)ctx)[i];

    j->status = (long)a->status;
    j->revision = a->revision;
    for (size_t h = 0; h < a->nh; h++) {
        char *line;

        if (hop_header(a->name[h])) {
            continue;
        }
        if (cfs_grow(&j->rh, &j->cap_rh, j->n_rh, sizeof(*j->rh), 8) < 0 ||
            !(line = malloc(a->name_len[h] + a->value_len[h] + 2))) {
            return -EINVAL;
        }
        /* "Name", NUL, "value", as on_header() keeps them */
        memcpy(line, a->name[h], a->name_len[h] + 1);
        memcpy(line + a->name_len[h] + 1, a->value[h], a->value_len[h] + 1);
        j->rh[j->n_rh++] = line;
    }
    jw_raw(&j->body, a->body, a->body_len);
    return j->body.oom ? -EINVAL : 0;
}

/* The answers of the batch @text, in the order of @jobs. @return 0, or
 * -EINVAL when the writer's answer is not one (then none is used). */
static int
take_answers(char *text, size_t len, struct cfs_http_fwd_job **jobs, size_t n)
{
    size_t magic = strlen(CFS_FWD_ANSWER_MAGIC);

    if (len < magic || memcmp(text, CFS_FWD_ANSWER_MAGIC, magic) != 0) {
        return -EINVAL;
    }
    return cfs_http_frame_answers(
               text + magic, text + len, n, take_answer, jobs) < 0
               ? -EINVAL
               : 0;
}

/* Send @n jobs (n > 1, one writer) in one exchange. @return false when
 * the writer ran none of them (it refused the batch as such: an older
 * writer without the route, a body over its limit): send them one by
 * one. Otherwise each job has its answer, or the transfer's failure. */
static bool transfer_batch(struct cfs_http_forward *f,
                           CURL *c,
                           struct cfs_http_fwd_job **jobs,
                           size_t n)
{
    struct cfs_http_fwd_job *first = jobs[0];
    struct jw body = {0}, out = {0};
    char *url = NULL;
    long sent = 0, status = 0;
    CURLcode code;
    bool ran = true;

    jw_raw(&body, CFS_FWD_BATCH_MAGIC, strlen(CFS_FWD_BATCH_MAGIC));
    for (size_t i = 0; i < n; i++) {
        jw_raw(&body, jobs[i]->frame.buf, jobs[i]->frame.len);
    }
    if (body.oom ||
        asprintf(&url, "%s%s", first->writer, CFS_FWD_BATCH_PATH) < 0) {
        free(body.buf);
        return false; /* one by one */
    }
    setup(f, c, url, first);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.buf);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, f->batch_headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_batch_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    code = curl_easy_perform(c);
    if (code == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 400 && status < 500) {
            /* refused as a whole before any of it ran */
            ran = false;
            if (status == 404 || status == 405) {
                /* a writer without the route: not asked again */
                pthread_mutex_lock(&f->lock);
                (void)snprintf(
                    f->no_batch, sizeof(f->no_batch), "%s", first->writer);
                f->no_batch_until_us = cfs_http_now_us() + FWD_NO_BATCH_US;
                pthread_mutex_unlock(&f->lock);
            }
        } else if (status != 200 ||
                   take_answers(out.buf ? out.buf : "", out.len, jobs, n) < 0) {
            code = CURLE_WEIRD_SERVER_REPLY; /* it may have run them */
        }
    }
    if (ran) {
        bool any =
            curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK ||
            sent > 0;

        for (size_t i = 0; i < n; i++) {
            jobs[i]->code = code;
            jobs[i]->sent = any;
            jobs[i]->writer_lost = first->writer_lost;
            if (code != CURLE_OK) {
                jobs[i]->status = 0;
            }
        }
    }
    free(out.buf);
    free(body.buf);
    free(url);
    return ran;
}

/* Under f->lock: the next jobs to send, in @ret (at most
 * CFS_FWD_BATCH_MAX): those queued for the first one's writer, while they
 * fit in one body under the body limit. 0 when none is queued. */
static size_t take_jobs(struct cfs_http_forward *f,
                        struct cfs_http_fwd_job *ret[CFS_FWD_BATCH_MAX])
{
    size_t n = 0, bytes = strlen(CFS_FWD_BATCH_MAGIC);
    size_t limit = f->srv->opts.body_limit;
    struct cfs_http_fwd_job **pp = &f->head;

    while (*pp && n < CFS_FWD_BATCH_MAX) {
        struct cfs_http_fwd_job *j = *pp;
        bool fits = n == 0 || (j->frame.len > 0 &&
                               strcmp(j->writer, ret[0]->writer) == 0 &&
                               bytes + j->frame.len <= limit);

        if (!fits) {
            pp = &j->next; /* for another writer, or next time */
            continue;
        }
        *pp = j->next;
        if (f->tail == &j->next) {
            f->tail = pp; /* it was the last */
        }
        j->next = NULL;
        ret[n++] = j;
        bytes += j->frame.len;
        if (n == 1 && (j->frame.len == 0 || bytes > limit ||
                       (strcmp(j->writer, f->no_batch) == 0 &&
                        cfs_http_now_us() < f->no_batch_until_us))) {
            break; /* alone */
        }
    }
    return n;
}

static void *fwd_main(void *arg)
{
    struct cfs_http_forward *f = arg;
    CURL *c = curl_easy_init();
    struct cfs_http_fwd_job *jobs[CFS_FWD_BATCH_MAX];
    pthread_setname_np(pthread_self(), "cfs-forward");
    for (;;) {
        size_t n = 0;

        pthread_mutex_lock(&f->lock);
        while (!f->head && !f->stop) {
            pthread_cond_wait(&f->more, &f->lock);
        }
        n = take_jobs(f, jobs);
        pthread_mutex_unlock(&f->lock);
        if (n == 0) {
            break; /* stopping, and nothing left */
        }
        if (!c) {
            for (size_t i = 0; i < n; i++) {
                jobs[i]->code = CURLE_OUT_OF_MEMORY;
            }
        } else if (n == 1 || !transfer_batch(f, c, jobs, n)) {
            for (size_t i = 0; i < n; i++) {
                transfer(f, c, jobs[i]);
            }
        }
        for (size_t i = 0; i < n; i++) {
            answer(f, jobs[i]);
        }
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* ---- the answer, in the worker ------------------------------------------ */

bool cfs_http_forward_finish(struct cfs_http_req *req)
{
    struct cfs_http_fwd_job *j = req->fwd.job;
    struct MHD_Response *resp;
    bool nothing_sent;

    req->wait.kind = CFS_WAIT_NONE;
    req->fwd.job = NULL;
    /* no request bytes, or no transfer at all (no curl handle) */
    nothing_sent =
        j->code == CURLE_OUT_OF_MEMORY || (j->code != CURLE_OK && !j->sent);
    cfs_http_metrics_forward(j->code == CURLE_OK);
    if (nothing_sent && !atomic_load(&req->srv->fwd->aborting)) {
        /* The writer is gone (its role lapses with its lease): the
         * request runs here, its append a CAS like any other. */
        cfs_log(CFS_LOG_INFO,
                "forward",
                "the writer %s cannot be reached (%s): %s %s runs here",
                j->writer,
                curl_easy_strerror(j->code),
                req->method_name,
                req->url);
        req->fwd.no_forward = true;
        job_free(j);
        return true;
    }
    if (j->code != CURLE_OK) {
        cfs_http_problem(req,
                         MHD_HTTP_SERVICE_UNAVAILABLE,
                         -EIO,
                         NULL,
                         "the writer node %s did not answer (%s): the "
                         "change may or may not have been made; read it "
                         "back before retrying",
                         j->writer,
                         j->writer_lost ? "it is the writer no longer"
                                        : curl_easy_strerror(j->code));
        job_free(j);
        return false;
    }
    resp = MHD_create_response_from_buffer(
        j->body.len,
        j->body.buf ? j->body.buf : (void *)"",
        j->body.buf ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        cfs_http_no_memory(req);
        job_free(j);
        return false;
    }
    j->body.buf = NULL; /* the response's now */
    for (size_t i = 0; i < j->n_rh; i++) {
        const char *v = j->rh[i] + strlen(j->rh[i]) + 1;

        (void)MHD_add_response_header(resp, j->rh[i], v + strspn(v, " \t"));
    }
    cfs_http_reply_response(req, (int)j->status, resp);
    req->resp_len = j->body.len;
    job_free(j);
    return false;
}

void cfs_http_forward_mark(struct cfs_http_req *req)
{
    if (req->wait.commit_rev > 0 &&
        cfs_http_header_in(req, CFS_FORWARDED_HEADER)) {
        char v[24];

        (void)snprintf(
            v, sizeof(v), "%llu", (unsigned long long)req->wait.commit_rev);
        cfs_http_header(req, CFS_REVISION_HEADER, v);
    }
}

/* ---- the pool ------------------------------------------------------------ */

/* What a batch says of itself; "Expect:": no 100-continue round trip. */
static const char *const batch_headers[] = {
    (CFS_FORWARDED_HEADER ": 1"),
    "Expect:",
    ("Content-Type: " CFS_FWD_BATCH_TYPE),
};

int cfs_http_forward_new(struct cfs_http_server *srv,
                         const char *peer_cacert,
                         struct cfs_http_forward **ret)
{
    struct cfs_http_forward *f = calloc(1, sizeof(*f));
    int r = 0;

    *ret = NULL;
    if (!f || (peer_cacert && !(f->cacert = strdup(peer_cacert)))) {
        free(f);
        return -ENOMEM;
    }
    f->srv = srv;
    f->tail = &f->head;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->more, NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (size_t i = 0;
         i < sizeof(batch_headers) / sizeof(batch_headers[0]) && r == 0;
         i++) {
        struct curl_slist *l =
            curl_slist_append(f->batch_headers, batch_headers[i]);

        if (l) {
            f->batch_headers = l;
        } else {
            r = -ENOMEM;
        }
    }
    for (size_t i = 0; i < FWD_THREADS && r == 0; i++) {
        r = -pthread_create(&f->threads[i], NULL, fwd_main, f);
        if (r == 0) {
            f->n_threads++;
        }
    }
    if (r < 0) {
        cfs_http_forward_free(f);
        return r;
    }
    *ret = f;
    return 0;
}

void cfs_http_forward_stop(struct cfs_http_forward *f)
{
    if (f) {
        atomic_store(&f->aborting, true);
    }
}

void cfs_http_forward_free(struct cfs_http_forward *f)
{
    if (!f) {
        return;
    }
    pthread_mutex_lock(&f->lock);
    f->stop = true;
    atomic_store(&f->aborting, true);
    pthread_cond_broadcast(&f->more);
    pthread_mutex_unlock(&f->lock);
    for (size_t i = 0; i < f->n_threads; i++) {
        pthread_join(f->threads[i], NULL);
    }
    pthread_cond_destroy(&f->more);
    pthread_mutex_destroy(&f->lock);
    curl_slist_free_all(f->batch_headers);
    free(f->cacert);
    free(f);
}
