// SPDX-License-Identifier: MIT
/*
 * daemon.c - the libmicrohttpd daemon: its life cycle, the framing checks
 * a request passes first, the access handler that collects a body and
 * sends the answer, and the access log.
 *
 * A request context is made on the first call of the access handler (its
 * route found and its token checked there) and the response is queued on a
 * later call, never the first (libmicrohttpd 0.9.75 closes keep-alive
 * connections otherwise). Once its body is in, run() takes it through the
 * phases of enum cfs_http_phase (context.h): admit, dispatch (to the
 * writer, or the route's handler), wait, finish, answer; the requests of a
 * forwarded batch (fwd-batch.h) go through the same run(). The daemon runs
 * a poll() thread pool; handlers (router.c) never wait for the disk: a
 * commit suspends the connection (wait/) until the change is durable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <configfs/limits.h>
#include <configfs/store.h>

#include "auth.h"
#include "wait/wait.h"
#include "drain.h"
#include "events.h"
#include "forward.h"
#include "fwd-batch.h"
#include "http.h"
#include "metrics.h"
#include "reply.h"
#include "request.h"
#include "router.h"
#include "throttle.h"

static bool run(struct cfs_http_req *req);

/* Cluster mode: when this node cannot follow the shared log (etcd
 * unreachable or without quorum, the watch down), its answers may be
 * stale, and say so. */
static void mark_stale(struct cfs_http_req *req)
{
    if (cfs_store_stale(req->srv->opts.store)) {
        cfs_http_header(req,
                        "X-Configfsd-Stale",
                        "etcd unreachable or without "
                        "quorum: may be stale");
    }
}

/* ---- a request's query and headers, from its connection ---------------- */

static const char *
conn_value(struct cfs_http_req *req, enum MHD_ValueKind kind, const char *key)
{
    return MHD_lookup_connection_value(req->conn, kind, key);
}

static void conn_each(struct cfs_http_req *req,
                      enum MHD_ValueKind kind,
                      MHD_KeyValueIterator it,
                      void *cls)
{
    (void)MHD_get_connection_values(req->conn, kind, it, cls);
}

/* the response is all: nothing to keep */
static const struct cfs_http_io conn_io = {conn_value, conn_each, NULL};

static enum cfs_http_method method_of(const char *m)
{
    if (strcmp(m, "GET") == 0) {
        return CFS_M_GET;
    }
    if (strcmp(m, "HEAD") == 0) {
        return CFS_M_HEAD;
    }
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

/* ---- request framing --------------------------------------------------- */

struct framing {
    unsigned int hosts, lengths, encodings;
    bool bad_name, folded, bad_encoding;
};

/* A field name is an RFC 9110 token. */
static bool is_token(const char *s)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";

    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z') || (c && strchr(extra, c)))) {
            return false;
        }
    }
    return true;
}

/* libmicrohttpd 0.9.75 appends a continuation line (obs-fold, RFC 9112
 * 5.2) to the field's *name*: "Content-Length:\r\n 62" arrives as the
 * field "Content-Length62" with an empty value, and the message has no
 * length at all. A framing field's name with anything after it can only
 * be that. */
static bool folded_framing(const char *key)
{
    static const char *const names[] = {MHD_HTTP_HEADER_CONTENT_LENGTH,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]);

        if (strncasecmp(key, names[i], n) == 0 && key[n] != '\0') {
            return true;
        }
    }
    return false;
}

static enum MHD_Result count_header(void *cls,
                                    enum MHD_ValueKind kind,
                                    const char *key,
                                    const char *value)
{
    struct framing *f = cls;

    (void)kind;
    if (!is_token(key)) {
        /* "Transfer-Encoding : chunked"; "X-A: 1\r\n Content-Length: 5",
         * folded into the name "X-AContent-Length: 5" */
        f->bad_name = true;
    } else if (folded_framing(key)) {
        f->folded = true;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        f->hosts++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        f->lengths++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->encodings++;
        f->bad_encoding |= !value || strcasecmp(value, "chunked") != 0;
    }
    return MHD_YES;
}

/* What libmicrohttpd lets through but RFC 9112 says a server must refuse,
 * because a proxy in front might frame the message differently (request
 * smuggling): several Host or Content-Length fields, Content-Length with
 * Transfer-Encoding, a coding other than chunked, a field name that is not
 * a token, a framing field continued on the next line (obs-fold).
 * @return the reason, or NULL when the request is well framed. */
static const char *misframed(struct MHD_Connection *conn)
{
    struct framing f = {0, 0, 0, false, false, false};

    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &f);
    if (f.bad_name) {
        return "a header field name holds a character no name may hold "
               "(whitespace, a colon: a folded line)";
    }
    if (f.folded) {
        return "a Content-Length or Transfer-Encoding field continued on "
               "the next line (obs-fold)";
    }
    if (f.hosts > 1) {
        return "more than one Host field";
    }
    if (f.lengths > 1) {
        return "more than one Content-Length field";
    }
    if (f.encodings && f.lengths) {
        return "both Content-Length and Transfer-Encoding";
    }
    if (f.encodings > 1 || f.bad_encoding) {
        return "a Transfer-Encoding other than chunked";
    }
    return NULL;
}

/* Queue the answer built in req->resp at once, on the request's headers,
 * and close: no body is read (and no "100 Continue" sent) for it, and
 * nothing after it can be trusted to start a new request. */
static enum MHD_Result answer_now(struct cfs_http_req *req)
{
    enum MHD_Result ret;

    cfs_http_header(req, MHD_HTTP_HEADER_CONNECTION, "close");
    cfs_http_header(req, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(req->conn, (unsigned int)req->status, req->resp);
    MHD_destroy_response(req->resp);
    req->resp = NULL;
    return ret;
}

static enum MHD_Result refuse_misframed(struct cfs_http_req *req,
                                        const char *why)
{
    cfs_http_problem(
        req, MHD_HTTP_BAD_REQUEST, -EINVAL, "Malformed request", "%s", why);
    return answer_now(req);
}

/* Whether a body that will be refused is refused on the headers, before
 * one byte of it is read and without "100 Continue": when the client
 * waits for that answer (Expect: 100-continue), or the body is longer
 * than twice the limit or of unknown length (chunks). A shorter one sent
 * without waiting is read and dropped, so that the client, still sending,
 * gets its 401/403/413 rather than a connection reset. *ret_len: the
 * declared length, UINT64_MAX for chunks. @return false when no body is
 * declared. */
static bool refuse_on_headers(struct cfs_http_req *req, uint64_t *ret_len)
{
    const char *cl = cfs_http_header_in(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *expect = cfs_http_header_in(req, MHD_HTTP_HEADER_EXPECT);
    uint64_t limit = req->srv->opts.body_limit;

    *ret_len = 0;
    if (cl) {
        errno = 0;
        *ret_len = strtoull(cl, NULL, 10); /* libmicrohttpd checked it */
        if (errno) {
            *ret_len = UINT64_MAX;
        }
    } else if (cfs_http_header_in(req, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        *ret_len = UINT64_MAX;
    }
    if (*ret_len == 0) {
        return false;
    }
    return (expect && strcasecmp(expect, "100-continue") == 0) ||
           *ret_len > 2 * limit;
}

static enum MHD_Result access_handler(void *cls,
                                      struct MHD_Connection *conn,
                                      const char *url,
                                      const char *method,
                                      const char *version,
                                      const char *upload_data,
                                      size_t *upload_data_size,
                                      void **req_cls)
{
    struct cfs_http_server *srv = cls;
    struct cfs_http_req *req = *req_cls;
    enum MHD_Result ret;
    const char *why;
    uint64_t declared;

    (void)version;
    if (!req) {
        req = calloc(1, sizeof(*req));
        if (!req) {
            return MHD_NO;
        }
        req->srv = srv;
        req->conn = conn;
        req->io = &conn_io;
        req->phase = CFS_HTTP_PHASE_ADMIT; /* once its body is in */
        cfs_http_drain_busy(&srv->drain);
        req->start_us = cfs_http_now_us();
        req->wait.jitter = (unsigned)req->start_us ^ (unsigned)(uintptr_t)req;
        req->method = method_of(method);
        req->method_name = method;
        req->url = strdup(url);
        req->principal = "anonymous";
        *req_cls = req;
        if (!req->url) {
            return MHD_NO;
        }
        why = misframed(conn);
        if (why) {
            return refuse_misframed(req, why);
        }
        req->rt = cfs_http_route_find(req->url, &req->rest);
        cfs_http_authorize(req);
        /* A body that will be refused: see refuse_on_headers(). */
        if (refuse_on_headers(req, &declared)) {
            if (req->denied) {
                cfs_http_auth_deny(req);
                return answer_now(req);
            }
            if (declared != UINT64_MAX && declared > srv->opts.body_limit) {
                cfs_http_problem(req,
                                 MHD_HTTP_CONTENT_TOO_LARGE,
                                 -EFBIG,
                                 NULL,
                                 "the request body is over %zu bytes",
                                 srv->opts.body_limit);
                return answer_now(req);
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;

        if (req->denied) {
            *upload_data_size = 0; /* not kept: it will be refused */
            return MHD_YES;
        }
        if (!req->body_too_big && req->body_len + n <= srv->opts.body_limit) {
            char *b = realloc(req->body, req->body_len + n + 1);

            if (!b) {
                return MHD_NO;
            }
            memcpy(b + req->body_len, upload_data, n);
            req->body = b;
            req->body_len += n;
            req->body[req->body_len] = '\0';
        } else {
            req->body_too_big = true; /* keep reading, answer 413 at the end */
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!run(req)) {
        return MHD_YES; /* the connection sleeps until it is done */
    }
    /* Every body is what its Content-Type says, never sniffed into HTML. */
    cfs_http_header(req, "X-Content-Type-Options", "nosniff");
    mark_stale(req);
    cfs_http_forward_mark(req); /* sent by another node: its revision */
    ret = MHD_queue_response(conn, (unsigned int)req->status, req->resp);
    MHD_destroy_response(req->resp);
    req->resp = NULL;
    return ret;
}

/*
 * ?min_revision=N: wait (bounded) until this node has applied revision N,
 * so a client that wrote on one node reads its write on another. The
 * worker does not wait: the connection sleeps as for a commit.
 * @return true to go on at once; false with a 400 answer, or waiting
 * (CFS_WAIT_CATCH_UP; a 504 comes from cfs_http_catch_up_finish()).
 */
static bool wait_min_revision(struct cfs_http_req *req)
{
    const char *v = cfs_http_query_raw(req, "min_revision");
    char *end = NULL;
    unsigned long long want;

    if (!v) {
        return true;
    }
    errno = 0;
    want = strtoull(v, &end, 10);
    if (errno || !end || *end || v[0] == '-' || !v[0]) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "min_revision must be a revision number");
        return false;
    }
    req->wait.min_revision = want;
    return cfs_http_catch_up(
        req, CFS_CATCH_UP_READ, want, 0, CFS_HTTP_MIN_REVISION_WAIT_MS);
}

/* ---- the phases of a request (enum cfs_http_phase) ---------------------- */

/* ROUTE, one of a forwarded batch: routed, held to what a node forwards
 * (a write its route takes), authorized on its own token; answered at once
 * when refused. A request that came alone had this on its headers. */
static enum cfs_http_phase route_batched(struct cfs_http_req *s)
{
    s->start_us = cfs_http_now_us();
    s->wait.jitter = (unsigned)s->start_us ^ (unsigned)(uintptr_t)s;
    s->principal = "anonymous";
    s->method = method_of(s->method_name);
    s->body_too_big = s->body_len > s->srv->opts.body_limit;
    s->rt = cfs_http_route_find(s->url, &s->rest);
    if (!cfs_http_forwardable(s) || s->rt->handle == cfs_http_handle_forward) {
        s->route = "forward";
        cfs_http_bad_request(s,
                             "%.16s %.200s is not a write request another "
                             "node forwards",
                             s->method_name,
                             s->url);
        return CFS_HTTP_PHASE_ANSWER;
    }
    cfs_http_authorize(s);
    return CFS_HTTP_PHASE_ADMIT;
}

/* ADMIT: refused on what its headers said (the token), its body's size or
 * a query value the contract does not list, or held until this node
 * reached ?min_revision=. */
static enum cfs_http_phase admit(struct cfs_http_req *req)
{
    const struct cfs_http_route *rt = req->rt;

    req->tree_answer = rt && !rt->no_held_read;
    req->tree_read = rt && rt->read_index && !req->in.outer &&
                     (req->method == CFS_M_GET || req->method == CFS_M_HEAD);
    if (req->denied) {
        cfs_http_auth_deny(req);
    } else if (req->body_too_big) {
        cfs_http_problem(req,
                         MHD_HTTP_CONTENT_TOO_LARGE,
                         -EFBIG,
                         NULL,
                         "the request body is over %zu bytes",
                         req->srv->opts.body_limit);
    } else if (cfs_http_query_enums_ok(req) && wait_min_revision(req) &&
               cfs_http_read_index(req)) {
        return CFS_HTTP_PHASE_DISPATCH;
    }
    return req->wait.kind != CFS_WAIT_NONE ? CFS_HTTP_PHASE_WAIT
                                           : CFS_HTTP_PHASE_ANSWER;
}

/* DISPATCH: to the writer (cluster mode), or to the route's handler; a
 * batch of forwarded requests, read by its handler, runs them. */
static enum cfs_http_phase dispatch(struct cfs_http_req *req)
{
    /* a read torn again and again runs under the mutation lock: then it
     * cannot be torn (wait/held-read.c, "committed reads") */
    bool locked = cfs_http_read_locked(req);

    cfs_http_read_begin(req);
    if (locked) {
        cfs_read_lock();
    }
    if (!cfs_http_forward(req)) {
        cfs_http_dispatch(req); /* other methods: 405, the route's Allow */
        if (req->in.batch && !req->resp) {
            cfs_http_fwd_batch_run(req, run);
        }
    }
    if (locked) {
        /* what it read is fixed before a writer may change it again */
        (void)cfs_read_end(&req->wait.rmark);
        cfs_read_unlock();
    }
    if (req->tree_answer && req->wait.kind == CFS_WAIT_NONE &&
        !req->wait.wrote && cfs_http_read_hold(req)) {
        cfs_read_stop();
        return CFS_HTTP_PHASE_DISPATCH; /* something it saw was undone */
    }
    cfs_read_stop(); /* this thread's read of it is over, held or not */
    /* The answer waits for the disk (or the node to catch up, the writer,
     * the batch's requests), this thread does not. */
    return req->wait.kind != CFS_WAIT_NONE ? CFS_HTTP_PHASE_WAIT
                                           : CFS_HTTP_PHASE_ANSWER;
}

/* FINISH: the wait is over. Answer; or run it again (caught up, or it
 * lost a race to another node); or wait again (lost a race: catch up
 * first). */
static enum cfs_http_phase finish(struct cfs_http_req *req)
{
    bool again = false;

    switch (req->wait.kind) {
    case CFS_WAIT_COMMIT:
        again = cfs_http_commit_finish(req);
        break;
    case CFS_WAIT_CATCH_UP:
        again = cfs_http_catch_up_finish(req);
        break;
    case CFS_WAIT_READ_INDEX:
        again = cfs_http_read_index_finish(req);
        break;
    case CFS_WAIT_HELD_READ:
        again = cfs_http_read_finish(req);
        break;
    case CFS_WAIT_FORWARD:
        again = cfs_http_forward_finish(req); /* the writer answered */
        break;
    case CFS_WAIT_BATCH:
        cfs_http_fwd_batch_run(req, run); /* its requests woke it */
        break;
    case CFS_WAIT_NONE:
        break;
    }
    if (again) {
        return CFS_HTTP_PHASE_DISPATCH;
    }
    return req->wait.kind != CFS_WAIT_NONE ? CFS_HTTP_PHASE_WAIT
                                           : CFS_HTTP_PHASE_ANSWER;
}

/*
 * Take @req, its body read, through its phases until it is answered
 * (true: req->resp is ready) or waits (false: the connection sleeps, or
 * for one of a forwarded batch the batch waits; it is run again once
 * woken, and goes on from where it waited).
 */
static bool run(struct cfs_http_req *req)
{
    if (req->phase == CFS_HTTP_PHASE_WAIT && cfs_http_wait_over(req)) {
        req->phase = CFS_HTTP_PHASE_FINISH; /* woken */
    }
    for (;;) {
        switch (req->phase) {
        case CFS_HTTP_PHASE_ROUTE:
            req->phase = route_batched(req);
            break;
        case CFS_HTTP_PHASE_ADMIT:
            req->phase = admit(req);
            break;
        case CFS_HTTP_PHASE_DISPATCH:
            req->phase = dispatch(req);
            break;
        case CFS_HTTP_PHASE_WAIT:
            if (cfs_http_wait_suspend(req)) {
                return false;
            }
            req->phase = CFS_HTTP_PHASE_FINISH; /* done meanwhile */
            break;
        case CFS_HTTP_PHASE_FINISH:
            req->phase = finish(req);
            break;
        case CFS_HTTP_PHASE_ANSWER:
            if (!req->resp) {
                cfs_http_problem(req,
                                 MHD_HTTP_INTERNAL_SERVER_ERROR,
                                 -EIO,
                                 NULL,
                                 "no response");
            }
            return true;
        }
    }
}

/* The request is over: counted, logged and freed; a batch's requests
 * first. */
static void req_free(struct cfs_http_req *req)
{
    struct cfs_http_server *srv = req->srv;

    if (req->status) {
        cfs_http_metrics_request(req->route,
                                 (int)req->method,
                                 req->status,
                                 cfs_http_now_us() - req->start_us);
    }
    if (!srv->opts.quiet && req->status) {
        cfs_log_access(req->method_name,
                       req->url,
                       req->status,
                       req->resp_len,
                       cfs_http_now_us() - req->start_us,
                       req->principal);
    }
    /* the last use of req->principal: the store read it before the commit
     * callback, which came before this */
    req->principal = NULL;
    cfs_http_tokens_unref(req->tokens);
    if (req->resp) {
        MHD_destroy_response(req->resp);
    }
    for (size_t i = 0; i < req->n_decoded; i++) {
        free(req->decoded[i]);
    }
    cfs_http_fwd_batch_free(req->in.batch, req_free); /* its requests too */
    free(req->url);
    if (!req->in.outer) {
        free(req->body); /* one of a batch: the batch's */
    }
    free(req);
}

static void request_completed(void *cls,
                              struct MHD_Connection *conn,
                              void **req_cls,
                              enum MHD_RequestTerminationCode toe)
{
    struct cfs_http_server *srv = cls;
    struct cfs_http_req *req = *req_cls;

    (void)conn;
    (void)toe;
    if (!req) {
        return;
    }
    req_free(req);
    *req_cls = NULL;
    cfs_http_drain_idle(&srv->drain);
}

int cfs_http_server_set_tokens(struct cfs_http_server *srv,
                               struct cfs_http_tokens *tokens)
{
    struct cfs_http_tokens *old;

    if (!tokens) {
        return -EINVAL;
    }
    pthread_mutex_lock(&srv->tok_lock);
    old = srv->tokens;
    if (old) {
        srv->tokens = cfs_http_tokens_ref(tokens);
    }
    pthread_mutex_unlock(&srv->tok_lock);
    if (!old) {
        return -EINVAL; /* started without tokens: it stays so */
    }
    /* A request in flight completes as authorized; a stream does not
     * outlive its token. */
    cfs_http_events_retoken(srv->events, tokens);
    cfs_http_tokens_unref(old); /* freed here unless requests still hold it */
    return 0;
}

/* Keep the URL as sent: routing matches the raw URL (so that no encoded
 * variant of a path escapes its route's role), and config paths are
 * decoded segment by segment, "%2F" then separating names like '/' while
 * every decoded name is checked. Query values are decoded here. */
static size_t unescape_none(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    return strlen(s);
}

/* libmicrohttpd's own messages. While starting they say why start-up fails
 * (a port in use, a key GnuTLS refuses); once serving they are about single
 * connections, which a client controls, so they are only debug. */
__attribute__((format(printf, 2, 0))) static void
mhd_logger(void *cls, const char *fmt, va_list ap)
{
    static const char bind0[] = "Failed to bind to port 0: ";
    struct cfs_http_server *srv = cls;
    char msg[1024];
    size_t n;

    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
        msg[--n] = '\0';
    }
    if (!atomic_load(&srv->running) &&
        strncmp(msg, bind0, sizeof(bind0) - 1) == 0) {
        /* it was given the address, not a port: name what was asked */
        char why[256];
        size_t wl = strlen(msg + sizeof(bind0) - 1);
        int w;

        wl = wl < sizeof(why) ? wl : sizeof(why) - 1;
        memcpy(why, msg + sizeof(bind0) - 1, wl);
        why[wl] = '\0';
        w = snprintf(
            msg, sizeof(msg), "Failed to bind to %s: ", srv->opts.listen);
        if (w > 0 && (size_t)w < sizeof(msg)) {
            (void)snprintf(msg + w, sizeof(msg) - (size_t)w, "%s", why);
        }
    }
    cfs_log(atomic_load(&srv->running) ? CFS_LOG_DEBUG : CFS_LOG_ERROR,
            "mhd",
            "%s",
            msg);
}

/* ---- life cycle -------------------------------------------------------- */

/* TLS 1.2 and 1.3 only, GnuTLS's NORMAL choice of ciphers within them. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

static int parse_listen(const char *listen, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    long port;
    char *end;

    if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
        return -EINVAL;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535) {
        return -EINVAL;
    }
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0) {
        strcpy(host, "127.0.0.1");
    }
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
        return -EINVAL;
    }
    return 0;
}

int cfs_http_listen_check(const char *listen, bool have_tokens)
{
    struct sockaddr_in sa;
    int r = parse_listen(listen, &sa);

    if (r < 0) {
        return r;
    }
    if ((ntohl(sa.sin_addr.s_addr) >> 24) == 127 || have_tokens) {
        return 0;
    }
    return -EPERM;
}

int cfs_http_server_start(const struct cfs_http_options *opts,
                          struct cfs_http_server **ret_srv)
{
    struct cfs_http_server *srv = calloc(1, sizeof(*srv));
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* poll(), not epoll: under bursts of connections that end with
     * requests in flight (a load generator stopping, a client pool
     * recycled), libmicrohttpd 0.9.75's epoll loop lagged in cleaning up
     * the closed ones; they still counted against the connection limit, so
     * it stopped accepting, and the node answered nothing, /healthz
     * included, for tens of seconds (tests/soak/test-burst.py). poll()
     * reads every socket's state each round: none of that. Measured on
     * one node: at 48 connections a tenth fewer GETs a second and a tenth
     * more PUTs (a suspended request costs no epoll_ctl); at 768, a fifth
     * fewer GETs. */
    unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
                         MHD_ALLOW_SUSPEND_RESUME;
    struct MHD_OptionItem tls[4] = {
        {MHD_OPTION_END, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    int r;

    if (!srv) {
        return -ENOMEM;
    }
    srv->opts = *opts;
    if (!srv->opts.listen) {
        srv->opts.listen = "127.0.0.1:8080";
    }
    if (!srv->opts.body_limit) {
        srv->opts.body_limit = CFS_BODY_MAX;
    }
    if (!srv->opts.header_limit) {
        srv->opts.header_limit = CFS_HEADER_MAX;
    }
    if (!srv->opts.threads) {
        srv->opts.threads = ncpu > 0 ? (unsigned int)ncpu : 2;
    }
    if (!srv->opts.max_connections) {
        srv->opts.max_connections = CFS_CONN_MAX;
    }
    if (!srv->opts.timeout_s) {
        srv->opts.timeout_s = CFS_CONN_TIMEOUT;
    }
    if (!srv->opts.auth_fail_burst) {
        srv->opts.auth_fail_burst = CFS_AUTH_FAIL_BURST;
    }
    if (!srv->opts.auth_fail_window_s) {
        srv->opts.auth_fail_window_s = CFS_AUTH_FAIL_WINDOW;
    }
    r = cfs_http_listen_check(srv->opts.listen,
                              srv->opts.tokens != NULL ||
                                  srv->opts.insecure_listen);
    if (r == 0) {
        r = parse_listen(srv->opts.listen, &sa);
    }
    if (r == 0 && !srv->opts.tls_cert_pem != !srv->opts.tls_key_pem) {
        r = -EINVAL;
    }
    if (r == 0 && srv->opts.tls_cert_pem) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            r = -ENOTSUP;
        } else {
            flags |= MHD_USE_TLS;
            tls[0] = (struct MHD_OptionItem){
                MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)srv->opts.tls_cert_pem};
            tls[1] = (struct MHD_OptionItem){
                MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)srv->opts.tls_key_pem};
            tls[2] = (struct MHD_OptionItem){
                MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES};
        }
    }
    srv->static_fd = -1;
    if (r == 0 && srv->opts.static_dir) {
        srv->static_fd =
            open(srv->opts.static_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = srv->static_fd < 0 ? -errno : 0;
    }
    pthread_mutex_init(&srv->c_lock, NULL);
    pthread_cond_init(&srv->c_done, NULL);
    pthread_mutex_init(&srv->h_lock, NULL);
    pthread_mutex_init(&srv->tok_lock, NULL);
    if (srv->opts.store) {
        struct cfs_store_cluster_info cl;

        srv->cluster = cfs_store_cluster(srv->opts.store, &cl) == 0;
    }
    if (r == 0) {
        r = cfs_read_hook_add(cfs_http_reads_hook, srv);
        srv->read_hooked = r == 0;
    }
    cfs_http_drain_init(&srv->drain);
    srv->tokens = cfs_http_tokens_ref(srv->opts.tokens);
    srv->opts.tokens = NULL; /* it may be replaced: srv->tokens is current */
    if (r == 0) {
        r = cfs_http_events_new(srv->opts.store, &srv->events);
    }
    if (r == 0 && srv->opts.forward_writes) {
        r = cfs_http_forward_new(srv, srv->opts.peer_cacert, &srv->fwd);
    }
    if (r == 0 && srv->tokens) {
        r = cfs_http_throttle_new(srv->opts.auth_fail_burst,
                                  srv->opts.auth_fail_window_s,
                                  &srv->throttle);
    }
    if (r < 0) {
        cfs_http_server_free(srv);
        return r;
    }
    srv->daemon =
        MHD_start_daemon(flags,
                         0,
                         cfs_http_drain_accept,
                         srv,
                         access_handler,
                         srv,
                         MHD_OPTION_EXTERNAL_LOGGER, /* first, or MHD warns */
                         mhd_logger,
                         srv,
                         MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa,
                         MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned int)srv->opts.threads,
                         MHD_OPTION_NOTIFY_COMPLETED,
                         request_completed,
                         srv,
                         MHD_OPTION_NOTIFY_CONNECTION,
                         cfs_http_drain_notify,
                         srv,
                         MHD_OPTION_UNESCAPE_CALLBACK,
                         unescape_none,
                         NULL,
                         MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned int)srv->opts.max_connections,
                         MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                         srv->opts.per_ip_connections, /* 0: none */
                         MHD_OPTION_CONNECTION_TIMEOUT,
                         (unsigned int)srv->opts.timeout_s,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                         srv->opts.header_limit,
                         MHD_OPTION_STRICT_FOR_CLIENT,
                         1, /* HTTP/1.1 needs Host; no spaces in URLs */
                         MHD_OPTION_ARRAY,
                         tls,
                         MHD_OPTION_END);
    if (!srv->daemon) {
        cfs_http_server_free(srv);
        return -EIO; /* mhd_logger() has said why */
    }
    atomic_store(&srv->running, true);
    info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : 0;
    *ret_srv = srv;
    return 0;
}

void cfs_http_server_changes(struct cfs_http_server *srv,
                             const struct cfs_change *ch,
                             size_t n)
{
    cfs_http_events_publish(srv->events, cfs_http_events_prepare(ch, n));
}

uint16_t cfs_http_server_port(const struct cfs_http_server *srv)
{
    return srv->port;
}

/* Also the undoing of a cfs_http_server_start() that failed half-way:
 * every member is NULL, -1 or made. */
void cfs_http_server_free(struct cfs_http_server *srv)
{
    if (srv) {
        cfs_http_forward_stop(srv->fwd);   /* writes sent on end now */
        cfs_http_wait_stop(srv);           /* every waiting answer goes */
        cfs_http_events_stop(srv->events); /* streams end */
        if (srv->daemon) {
            /* answers in flight go out, then no connection is left for
             * libmicrohttpd's stop to meet at work (drain.h) */
            size_t left = cfs_http_drain(&srv->drain);

            if (left > 0) {
                cfs_log(CFS_LOG_WARNING,
                        "stop",
                        "%zu connection(s) still open after %u ms",
                        left,
                        CFS_DRAIN_ANSWER_MS + CFS_DRAIN_CLOSE_MS);
            }
            MHD_stop_daemon(srv->daemon);
        }
        if (srv->read_hooked) {
            cfs_read_hook_remove(cfs_http_reads_hook, srv);
        }
        cfs_http_events_free(srv->events);
        cfs_http_forward_free(srv->fwd);
        if (srv->static_fd >= 0) {
            close(srv->static_fd);
        }
        /* every request has completed and let go of its table */
        cfs_http_tokens_unref(srv->tokens);
        cfs_http_throttle_free(srv->throttle);
        pthread_mutex_destroy(&srv->tok_lock);
        pthread_cond_destroy(&srv->c_done);
        pthread_mutex_destroy(&srv->c_lock);
        pthread_mutex_destroy(&srv->h_lock);
        cfs_http_drain_fini(&srv->drain);
        free(srv);
    }
}
