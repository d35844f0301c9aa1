// SPDX-License-Identifier: MIT
/*
 * http.c - the libmicrohttpd daemon: request contexts, body collection,
 * routing, response helpers and the access log.
 *
 * A request context is made on the first call of the access handler and
 * the response is queued on a later call, never the first (libmicrohttpd
 * 0.9.75 closes keep-alive connections otherwise). The daemon runs an epoll
 * thread pool; handlers never wait for the disk except in a commit.
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
#include <time.h>
#include <unistd.h>

#include <configfs/schema.h>
#include <configfs/store.h>

#include "http-internal.h"
#include "log.h"

struct cfs_http_server {
    struct MHD_Daemon *daemon;
    struct cfs_http_events *events;
    /* Requests whose answer waits for their durable commit: the store's
     * commit thread calls commit_done() for each, which resumes it. No
     * lock on that path but for the last step of a suspended one. */
    pthread_mutex_t c_lock;
    pthread_cond_t c_done;        /* a suspended one is resumed, or a worker's
                                   * own waits are over */
    atomic_size_t c_async;        /* may be or are suspended, not yet resumed */
    atomic_bool c_stop;           /* stopping: no more suspending */
    struct cfs_http_options opts; /* opts.tokens is NULL: see tokens */
    /* The tokens table new requests are authorized with (a reference), or
     * NULL for none, for the server's life; swapped by
     * cfs_http_server_set_tokens(). Each request holds a reference to the
     * table it was authorized with until it completes. */
    pthread_mutex_t tok_lock;
    struct cfs_http_tokens *tokens;
    uint16_t port;
    atomic_bool running; /* MHD_start_daemon() has returned */
    int static_fd;       /* opts.static_dir, O_PATH; -1 without one */
};

static uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- responses --------------------------------------------------------- */

static void set_response(struct cfs_http_req *req,
                         int status,
                         struct MHD_Response *resp,
                         size_t len)
{
    if (req->resp) {
        MHD_destroy_response(req->resp); /* the last answer wins */
    }
    req->resp = resp;
    req->status = status;
    req->resp_len = len;
}

void cfs_http_reply_json(struct cfs_http_req *req, int status, json_t *body)
{
    cfs_http_reply_json_as(req, status, body, "application/json");
}

void cfs_http_reply_json_as(struct cfs_http_req *req,
                            int status,
                            json_t *body,
                            const char *content_type)
{
    char *text = json_dumps(body, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0;
    struct MHD_Response *resp;

    json_decref(body);
    if (!text) {
        resp = MHD_create_response_from_buffer(
            0, (void *)"", MHD_RESPMEM_PERSISTENT);
        set_response(req, MHD_HTTP_INTERNAL_SERVER_ERROR, resp, 0);
        return;
    }
    resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    set_response(req, status, resp, len);
}

void cfs_http_reply_json_text(struct cfs_http_req *req,
                              int status,
                              char *text,
                              size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);

    MHD_add_response_header(
        resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    set_response(req, status, resp, len);
}

void cfs_http_reply_text(struct cfs_http_req *req,
                         int status,
                         const char *content_type,
                         const char *data,
                         size_t len)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, (void *)data, MHD_RESPMEM_MUST_COPY);

    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    set_response(req, status, resp, len);
}

void cfs_http_reply_response(struct cfs_http_req *req,
                             int status,
                             struct MHD_Response *resp)
{
    set_response(req, status, resp, 0);
}

struct cfs_http_events *cfs_http_events_of(const struct cfs_http_req *req)
{
    return req->srv->events;
}

void cfs_http_reply_empty(struct cfs_http_req *req, int status)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);

    set_response(req, status, resp, 0);
}

void cfs_http_header(struct cfs_http_req *req,
                     const char *name,
                     const char *value)
{
    if (req->resp) {
        MHD_add_response_header(req->resp, name, value);
    }
}

void cfs_http_etag(struct cfs_http_req *req, uint64_t revision)
{
    char etag[32];

    (void)snprintf(
        etag, sizeof(etag), "\"%llu\"", (unsigned long long)revision);
    cfs_http_header(req, MHD_HTTP_HEADER_ETAG, etag);
}

/* ---- request helpers --------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

char *cfs_http_pct_decode(const char *s, size_t len, size_t *ret_len)
{
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
            int lo = i + 2 < len ? hexval(s[i + 2]) : -1;

            if (hi < 0 || lo < 0) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    if (ret_len) {
        *ret_len = o;
    }
    return out;
}

int cfs_http_config_path(const char *raw, char **ret_path)
{
    size_t cap = strlen(raw) + 2;
    char *path = malloc(cap);
    size_t o = 0;
    const char *p = raw;

    if (!path) {
        return -ENOMEM;
    }
    path[o++] = '/';
    while (*p) {
        size_t seglen = strcspn(p, "/");

        if (seglen > 0) {
            size_t dlen;
            char *seg = cfs_http_pct_decode(p, seglen, &dlen);
            int r;

            if (!seg) {
                free(path);
                return -EINVAL;
            }
            r = cfs_name_check(seg, dlen); /* "%2F" stays in: refused */
            if (r < 0 || strlen(seg) != dlen) {
                free(seg);
                free(path);
                return r < 0 ? r : -EINVAL;
            }
            if (o > 1) {
                path[o++] = '/';
            }
            memcpy(path + o, seg, dlen);
            o += dlen;
            free(seg);
        }
        p += seglen;
        while (*p == '/') {
            p++;
        }
    }
    path[o] = '\0';
    *ret_path = path;
    return 0;
}

const char *cfs_http_query(struct cfs_http_req *req, const char *key)
{
    const char *raw =
        MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
    char *v, *p;

    if (!raw ||
        req->n_decoded == sizeof(req->decoded) / sizeof(req->decoded[0])) {
        return raw;
    }
    v = strdup(raw);
    if (!v) {
        return NULL;
    }
    for (p = v; *p; p++) {
        if (*p == '+') {
            *p = ' '; /* form encoding */
        }
    }
    p = cfs_http_pct_decode(v, strlen(v), NULL);
    free(v);
    if (!p) {
        return NULL; /* a bad escape: treated as absent */
    }
    req->decoded[req->n_decoded++] = p;
    return p;
}

const char *cfs_http_header_in(struct cfs_http_req *req, const char *key)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, key);
}

static bool if_match(struct cfs_http_req *req, uint64_t revision)
{
    const char *im = cfs_http_header_in(req, MHD_HTTP_HEADER_IF_MATCH);
    char etag[32];
    const char *p;

    if (!im) {
        return true;
    }
    (void)snprintf(
        etag, sizeof(etag), "\"%llu\"", (unsigned long long)revision);
    /* a list of entity tags, or "*" */
    p = im;
    while (*p) {
        size_t len;

        while (*p == ' ' || *p == ',' || *p == '\t') {
            p++;
        }
        len = strcspn(p, ", \t");
        if ((len == 1 && p[0] == '*') ||
            (len == strlen(etag) && memcmp(p, etag, len) == 0) ||
            (len > 2 && p[0] == 'W' && p[1] == '/' && len - 2 == strlen(etag) &&
             memcmp(p + 2, etag, len - 2) == 0)) {
            return true;
        }
        p += len;
    }
    return false;
}

bool cfs_http_if_match(struct cfs_http_req *req, uint64_t revision)
{
    if (if_match(req, revision)) {
        return true;
    }
    cfs_http_problem(req,
                     MHD_HTTP_PRECONDITION_FAILED,
                     -ESTALE,
                     NULL,
                     "If-Match does not match the current revision %llu",
                     (unsigned long long)revision);
    return false;
}

/* ---- commit ------------------------------------------------------------ */

/* A commit that failed: the change was undone; the answer says so. */
static void commit_failed(struct cfs_http_req *req, int err)
{
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     err,
                     NULL,
                     "the change could not be stored and was undone");
}

/*
 * Where a request that waits for its commit is: the worker that ran its
 * handler and the store's thread that calls it back each move it on once,
 * and whoever comes second acts.
 */
enum cfs_http_cstate {
    CS_RUNNING = 0, /* the handler runs; nothing decided */
    CS_SUSPENDED,   /* the connection sleeps; commit_done() resumes it */
    CS_WAITING,     /* stopping: the worker waits for commit_done() */
    CS_READY,       /* called back: answer */
};

/* One suspended (or about to be) request fewer; the last one lets
 * commit_stop() go on. Under c_lock, so that the server outlives it. */
static void async_done(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    if (atomic_fetch_sub(&srv->c_async, 1) == 1) {
        pthread_cond_broadcast(&srv->c_done);
    }
    pthread_mutex_unlock(&srv->c_lock);
}

/* The store's commit thread: @req's change is durable (@err 0) or was
 * undone. Only the commit fields of @req are touched here; the answer is
 * finished by the worker, when the connection runs again. */
static void commit_done(void *ctx, int err, uint64_t revision)
{
    struct cfs_http_req *req = ctx;
    struct cfs_http_server *srv = req->srv;

    (void)revision;
    cfs_http_metrics_commit(now_us() - req->commit_start, err == 0);
    if (err == 0) {
        cfs_http_events_publish(srv->events, req->evs);
    } else {
        cfs_http_events_discard(req->evs);
    }
    req->evs = NULL;
    req->commit_err = err;
    switch (atomic_exchange(&req->cstate, CS_READY)) {
    case CS_SUSPENDED:
        MHD_resume_connection(req->conn); /* the handler runs again */
        async_done(srv);
        break;
    case CS_WAITING:
        pthread_mutex_lock(&srv->c_lock);
        req->sync_done = true;
        pthread_cond_broadcast(&srv->c_done);
        pthread_mutex_unlock(&srv->c_lock);
        break;
    default: /* the worker has not decided yet, and will see READY */
        break;
    }
}

int cfs_http_commit(struct cfs_http_req *req, struct cfs_txn *txn)
{
    struct cfs_http_server *srv = req->srv;
    size_t n = 0;
    const struct cfs_change *ch = cfs_txn_changes(txn, &n);
    struct cfs_http_evbatch *evs = cfs_http_events_prepare(ch, n);
    int r;

    if (!srv->opts.store) {
        cfs_txn_commit(txn); /* a tree in memory only */
        cfs_http_events_publish(srv->events, evs);
        return 0;
    }
    /* Queue the records in revision order and let go of the tree; the
     * answer the handler now builds is sent once they are durable (or
     * replaced by a 503 if they cannot be, and then undone). */
    req->commit_start = now_us();
    req->evs = evs;
    req->committing = true;
    atomic_store(&req->cstate, CS_RUNNING);
    r = cfs_store_submit_async(
        srv->opts.store, txn, req->principal, commit_done, req);
    if (r == 0) {
        return 0;
    }
    /* not queued: no call back will come */
    req->committing = false;
    cfs_http_events_discard(evs); /* failed, or nothing changed */
    req->evs = NULL;
    if (r < 0) {
        cfs_http_metrics_commit(now_us() - req->commit_start, false);
        commit_failed(req, r);
        return r;
    }
    return 0;
}

/* After the handler: true if the answer must wait for the commit (the
 * connection is then suspended until commit_done() resumes it). While the
 * server stops, the worker waits here instead. */
static bool commit_wait(struct cfs_http_server *srv, struct cfs_http_req *req)
{
    int running = CS_RUNNING;

    if (atomic_load(&req->cstate) == CS_READY) {
        return false; /* durable already */
    }
    /* Announced before c_stop is read: commit_stop() sets c_stop first,
     * then waits for every announced one to be resumed. */
    atomic_fetch_add(&srv->c_async, 1);
    if (!atomic_load(&srv->c_stop)) {
        MHD_suspend_connection(req->conn);
        if (!atomic_compare_exchange_strong(
                &req->cstate, &running, CS_SUSPENDED)) {
            /* called back meanwhile: run again at once */
            MHD_resume_connection(req->conn);
            async_done(srv);
        }
        return true;
    }
    async_done(srv);
    pthread_mutex_lock(&srv->c_lock);
    if (atomic_compare_exchange_strong(&req->cstate, &running, CS_WAITING)) {
        /* Woken under c_lock by commit_done(), which is then done with
         * the server: it may go once this returns. */
        while (!req->sync_done) {
            pthread_cond_wait(&srv->c_done, &srv->c_lock);
        }
    }
    pthread_mutex_unlock(&srv->c_lock);
    return false;
}

/* Let every suspended answer be resumed; from now on, workers wait for
 * their commits themselves instead of suspending. */
static void commit_stop(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    atomic_store(&srv->c_stop, true);
    while (atomic_load(&srv->c_async) > 0) {
        pthread_cond_wait(&srv->c_done, &srv->c_lock);
    }
    pthread_mutex_unlock(&srv->c_lock);
}

/* ---- routing ----------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);

    if (strncmp(s, prefix, n) == 0) {
        *rest = s + n;
        return true;
    }
    return false;
}

static void method_not_allowed(struct cfs_http_req *req, const char *allow)
{
    cfs_http_problem(req,
                     MHD_HTTP_METHOD_NOT_ALLOWED,
                     -EOPNOTSUPP,
                     NULL,
                     "%s is not allowed here; allowed: %s",
                     req->method_name,
                     allow);
    cfs_http_header(req, MHD_HTTP_HEADER_ALLOW, allow);
}

static void handle_health(struct cfs_http_req *req)
{
    json_t *body = json_object();

    json_object_set_new(body, "status", json_string("ok"));
    cfs_http_reply_json(req, MHD_HTTP_OK, body);
}

/* A config path deeper than CFS_DEPTH_MAX (counting the item a POST would
 * make) is refused before it reaches the tree: 400 ENAMETOOLONG. */
static bool too_deep(struct cfs_http_req *req, const char *rest)
{
    unsigned int depth = req->method == CFS_M_POST ? 1 : 0;

    for (const char *p = rest; *p;) {
        size_t n = strcspn(p, "/");

        depth += n > 0;
        p += n;
        p += strspn(p, "/");
    }
    if (depth <= CFS_DEPTH_MAX) {
        return false;
    }
    cfs_http_problem(req,
                     MHD_HTTP_BAD_REQUEST,
                     -ENAMETOOLONG,
                     "Invalid path",
                     "a config path has at most %d levels",
                     CFS_DEPTH_MAX);
    return true;
}

const struct cfs_http_options *cfs_http_opts(const struct cfs_http_req *req)
{
    return &req->srv->opts;
}

int cfs_http_static_fd(const struct cfs_http_req *req)
{
    return req->srv->static_fd;
}

#define M(m)     (1u << (m))
#define GET_HEAD (M(CFS_M_GET) | M(CFS_M_HEAD))

/* The routes of one exact path. @methods 0: the handler checks them. */
struct route {
    const char *path;
    const char *label; /* for metrics */
    unsigned methods;
    const char *allow; /* the Allow header of a 405 */
    void (*handle)(struct cfs_http_req *req);
};

static const struct route routes[] = {
    {"/api/v1", "api", GET_HEAD, "GET, HEAD", cfs_http_handle_api_root},
    {"/api/v1/", "api", GET_HEAD, "GET, HEAD", cfs_http_handle_api_root},
    {"/api/v1/rename", "rename", M(CFS_M_POST), "POST", cfs_http_handle_rename},
    {"/api/v1/batch", "batch", M(CFS_M_POST), "POST", cfs_http_handle_batch},
    {"/api/v1/history",
     "history",
     GET_HEAD,
     "GET, HEAD",
     cfs_http_handle_history},
    {"/api/v1/export", "export", GET_HEAD, "GET, HEAD", cfs_http_handle_export},
    {"/api/v1/import", "import", M(CFS_M_POST), "POST", cfs_http_handle_import},
    {"/api/v1/events", "events", M(CFS_M_GET), "GET", cfs_http_handle_events},
    {"/api/v1/openapi.yaml", "openapi", 0, NULL, cfs_http_handle_openapi},
    {"/metrics", "metrics", 0, NULL, cfs_http_handle_metrics},
    {"/readyz", "readyz", 0, NULL, cfs_http_handle_readyz},
    {"/healthz", "healthz", GET_HEAD, "GET, HEAD", handle_health},
};

static void dispatch(struct cfs_http_req *req)
{
    const char *rest;
    const char *url = req->url;

    cfs_schema_clear_detail(); /* a refusal's reason, set by callbacks */
    if (strcmp(url, "/api/v1/config") == 0) {
        url = "/api/v1/config/";
    }
    if (starts_with(url, "/api/v1/config/", &rest)) {
        req->route = "config";
        if (!too_deep(req, rest)) {
            cfs_http_handle_config(req, rest);
        }
        return;
    }
    if (starts_with(url, "/api/v1/schema/", &rest)) {
        req->route = "schema";
        if (!(GET_HEAD & M(req->method))) {
            method_not_allowed(req, "GET, HEAD");
        } else {
            cfs_http_handle_schema(req, rest);
        }
        return;
    }
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const struct route *rt = &routes[i];

        if (strcmp(url, rt->path) == 0) {
            req->route = rt->label;
            if (rt->methods && !(rt->methods & M(req->method))) {
                method_not_allowed(req, rt->allow);
            } else {
                rt->handle(req);
            }
            return;
        }
    }
    if (strncmp(url, "/api/", 5) == 0 || strcmp(url, "/api") == 0) {
        req->route = "other";
        cfs_http_problem(
            req, MHD_HTTP_NOT_FOUND, -ENOENT, NULL, "no such resource");
    } else {
        /* The web UI. auth.c lets everything outside /api/ through without
         * a token: no route holding data may live out here. */
        req->route = "static";
        cfs_http_handle_static(req);
    }
}

/* ---- the access handler ------------------------------------------------ */

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
    bool bad_name, bad_encoding;
};

static enum MHD_Result count_header(void *cls,
                                    enum MHD_ValueKind kind,
                                    const char *key,
                                    const char *value)
{
    struct framing *f = cls;

    (void)kind;
    if (key[strcspn(key, " \t")] != '\0') {
        f->bad_name = true; /* "Transfer-Encoding : chunked" */
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
 * Transfer-Encoding, a coding other than chunked, whitespace in a field
 * name. @return the reason, or NULL when the request is well framed. */
static const char *misframed(struct MHD_Connection *conn)
{
    struct framing f = {0, 0, 0, false, false};

    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &f);
    if (f.bad_name) {
        return "a header field name holds whitespace";
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

/* Answer at once, before any body, and close: nothing after a misframed
 * request can be trusted to start a new one. */
static enum MHD_Result refuse_misframed(struct cfs_http_req *req,
                                        const char *why)
{
    enum MHD_Result ret;

    cfs_http_problem(
        req, MHD_HTTP_BAD_REQUEST, -EINVAL, "Malformed request", "%s", why);
    cfs_http_header(req, MHD_HTTP_HEADER_CONNECTION, "close");
    cfs_http_header(req, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(req->conn, (unsigned int)req->status, req->resp);
    MHD_destroy_response(req->resp);
    req->resp = NULL;
    return ret;
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

    (void)version;
    if (!req) {
        req = calloc(1, sizeof(*req));
        if (!req) {
            return MHD_NO;
        }
        req->srv = srv;
        req->conn = conn;
        req->start_us = now_us();
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
        cfs_http_authorize(req);
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
    if (req->committing && atomic_load(&req->cstate) == CS_READY) {
        goto committed; /* back from a durable commit: answer */
    }
    if (req->denied) {
        cfs_http_auth_deny(req);
    } else if (req->body_too_big) {
        cfs_http_problem(req,
                         MHD_HTTP_CONTENT_TOO_LARGE,
                         -EFBIG,
                         NULL,
                         "the request body is over %zu bytes",
                         srv->opts.body_limit);
    } else if (req->method == CFS_M_OTHER) {
        cfs_http_problem(req,
                         MHD_HTTP_METHOD_NOT_ALLOWED,
                         -EOPNOTSUPP,
                         NULL,
                         "method %s is not supported",
                         method);
        cfs_http_header(
            req, MHD_HTTP_HEADER_ALLOW, "GET, HEAD, POST, PUT, DELETE");
    } else {
        dispatch(req);
    }
    if (req->committing) {
        /* The answer waits for the disk, this thread does not: the
         * connection sleeps until the commit is done. */
        if (commit_wait(srv, req)) {
            return MHD_YES;
        }
    committed:
        req->committing = false;
        if (req->commit_err) {
            commit_failed(req, req->commit_err);
        }
    }
    if (!req->resp) {
        cfs_http_problem(
            req, MHD_HTTP_INTERNAL_SERVER_ERROR, -EIO, NULL, "no response");
    }
    /* Every body is what its Content-Type says, never sniffed into HTML. */
    cfs_http_header(req, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(conn, (unsigned int)req->status, req->resp);
    MHD_destroy_response(req->resp);
    req->resp = NULL;
    return ret;
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
    if (req->status) {
        cfs_http_metrics_request(req->route,
                                 (int)req->method,
                                 req->status,
                                 now_us() - req->start_us);
    }
    if (!srv->opts.quiet && req->status) {
        cfs_log_access(req->method_name,
                       req->url,
                       req->status,
                       req->resp_len,
                       now_us() - req->start_us,
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
    free(req->url);
    free(req->body);
    free(req);
    *req_cls = NULL;
}

struct cfs_http_tokens *cfs_http_server_tokens(struct cfs_http_server *srv)
{
    struct cfs_http_tokens *t;

    pthread_mutex_lock(&srv->tok_lock);
    t = cfs_http_tokens_ref(srv->tokens);
    pthread_mutex_unlock(&srv->tok_lock);
    return t;
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

/* Keep the URL as sent: paths are decoded segment by segment, so that
 * "%2F" can never become a separator. Query values are decoded here. */
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
    struct cfs_http_server *srv = cls;
    char msg[1024];
    size_t n;

    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
        msg[--n] = '\0';
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
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
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
    pthread_mutex_init(&srv->tok_lock, NULL);
    srv->tokens = cfs_http_tokens_ref(srv->opts.tokens);
    srv->opts.tokens = NULL; /* it may be replaced: srv->tokens is current */
    if (r == 0) {
        r = cfs_http_events_new(srv->opts.store, &srv->events);
    }
    if (r < 0) {
        if (srv->static_fd >= 0) {
            close(srv->static_fd);
        }
        cfs_http_tokens_unref(srv->tokens);
        pthread_mutex_destroy(&srv->tok_lock);
        free(srv);
        return r;
    }
    srv->daemon =
        MHD_start_daemon(flags,
                         0,
                         NULL,
                         NULL,
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
        commit_stop(srv);
        cfs_http_events_stop(srv->events);
        cfs_http_events_free(srv->events);
        if (srv->static_fd >= 0) {
            close(srv->static_fd);
        }
        cfs_http_tokens_unref(srv->tokens);
        pthread_mutex_destroy(&srv->tok_lock);
        free(srv);
        return -EIO; /* mhd_logger() has said why */
    }
    atomic_store(&srv->running, true);
    info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : 0;
    *ret_srv = srv;
    return 0;
}

uint16_t cfs_http_server_port(const struct cfs_http_server *srv)
{
    return srv->port;
}

void cfs_http_server_free(struct cfs_http_server *srv)
{
    if (srv) {
        commit_stop(srv);                  /* every waiting answer goes */
        cfs_http_events_stop(srv->events); /* streams end */
        MHD_stop_daemon(srv->daemon);
        cfs_http_events_free(srv->events);
        if (srv->static_fd >= 0) {
            close(srv->static_fd);
        }
        /* every request has completed and let go of its table */
        cfs_http_tokens_unref(srv->tokens);
        pthread_mutex_destroy(&srv->tok_lock);
        free(srv);
    }
}
