/* SPDX-License-Identifier: MIT */
/*
 * http-internal.h - what the server's files share: the request context,
 * response helpers, the errno table and the JSON renderers.
 *
 * Each request gets one struct cfs_http_req, made on the first call of the
 * access handler and freed in the completion callback (STYLE, the
 * libmicrohttpd pattern); a handler answers by filling req->resp once.
 */
#ifndef CFS_HTTP_INTERNAL_H
#define CFS_HTTP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include <configfs/cfs.h>

#include "http.h"

struct cfs_store;

enum cfs_http_method {
    CFS_M_GET = 1,
    CFS_M_HEAD,
    CFS_M_POST,
    CFS_M_PUT,
    CFS_M_DELETE,
    CFS_M_OTHER,
};

struct cfs_http_req {
    struct cfs_http_server *srv;
    struct MHD_Connection *conn;
    enum cfs_http_method method;
    const char *method_name;
    char *url; /* raw, still percent-encoded */
    char *body;
    size_t body_len;
    bool body_too_big;
    uint64_t start_us;
    int status;        /* answered status, for the access log and metrics */
    size_t resp_len;   /* bytes of the answered body */
    const char *route; /* a route label for metrics */
    struct MHD_Response *resp;
    const char *principal; /* token name, or "anonymous" */
    /* The tokens table req->principal is borrowed from: a reference taken
     * by cfs_http_authorize(), dropped when the request completes; NULL
     * without tokens. */
    struct cfs_http_tokens *tokens;
    int denied;          /* 401 or 403 decided from the headers, or 0 */
    bool denied_invalid; /* 401: a token was sent, and is not valid */
    enum cfs_http_role denied_need; /* 403: the role it needs */
    char *decoded[8];               /* decoded query values */
    /* A commit the answer waits for (http.c): the worker and the store's
     * commit thread meet on cstate (enum cfs_http_cstate). */
    struct cfs_http_evbatch *evs; /* its events */
    uint64_t commit_start;
    int commit_err;  /* its result, set before cstate becomes READY */
    bool committing; /* submitted; the answer waits */
    bool sync_done;  /* CS_WAITING only: called back (under c_lock) */
    atomic_int cstate;
    size_t n_decoded;
};

/* ---- responses --------------------------------------------------------- */

/* Queue-ready responses; each sets req->status and req->resp. */
void cfs_http_reply_json(struct cfs_http_req *req, int status, json_t *body);
void cfs_http_reply_json_as(struct cfs_http_req *req,
                            int status,
                            json_t *body,
                            const char *content_type);
/* JSON already rendered; takes @text (malloc'd). */
void cfs_http_reply_json_text(struct cfs_http_req *req,
                              int status,
                              char *text,
                              size_t len);
void cfs_http_reply_text(struct cfs_http_req *req,
                         int status,
                         const char *content_type,
                         const char *data,
                         size_t len);
void cfs_http_reply_empty(struct cfs_http_req *req, int status);

/* RFC 9457 problem+json. @err is a negative errno (its name is sent as
 * "errno"); @status 0 means "from the errno table". */
void cfs_http_problem(struct cfs_http_req *req,
                      int status,
                      int err,
                      const char *title,
                      const char *fmt,
                      ...) __attribute__((format(printf, 5, 6)));
void cfs_http_problem_json(struct cfs_http_req *req,
                           int status,
                           int err,
                           const char *title,
                           const char *detail,
                           json_t *extra);

void cfs_http_header(struct cfs_http_req *req,
                     const char *name,
                     const char *value);
void cfs_http_etag(struct cfs_http_req *req, uint64_t revision);

/* ---- errno ------------------------------------------------------------- */

/* The one errno -> HTTP status table (DESIGN section 4). */
int cfs_http_status_from_errno(int err);
/* "ENOENT" for -ENOENT / ENOENT; "EIO" for unknown values. */
const char *cfs_http_errno_name(int err);

/* ---- JSON -------------------------------------------------------------- */

/* The node JSON of DESIGN section 4 for a group/item/subsystem/root, as
 * compact JSON text. @self: the node's cfs_stat(), or NULL to stat it here.
 * @depth: levels of children rendered as full nodes; @values: call show().
 * @return 0 and *ret_text (malloc'd) or a negative errno. */
int cfs_http_node_text(const char *path,
                       const struct cfs_entry *self,
                       int depth,
                       bool values,
                       char **ret_text,
                       size_t *ret_len);
/* The attribute JSON of DESIGN section 4 (with "value" when @buf, a
 * show() result), as compact JSON text. @return 0 and *ret_text
 * (malloc'd) or -ENOMEM. */
int cfs_http_attr_text(const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len,
                       char **ret_text,
                       size_t *ret_len);
/* @path + "/" + @name, the root being "/" (new, malloc'd; NULL). */
char *cfs_http_join(const char *path, const char *name);
/* A value as JSON: a string if it is UTF-8, else base64 with "encoding". */
void cfs_http_value_json(json_t *obj, const char *data, size_t len);

/* A value given in JSON (string, number, boolean; with @encoding "base64"
 * for bytes) as a new malloc'd buffer; NULL with *ret_err set if refused. */
char *cfs_http_json_value_bytes(json_t *v,
                                json_t *encoding,
                                size_t *ret_len,
                                const char **ret_err);

/* The request body as a JSON object (new reference); on failure the
 * request is answered (400/415) and NULL returned. */
json_t *cfs_http_json_body(struct cfs_http_req *req);

/* ---- requests ---------------------------------------------------------- */

const char *cfs_http_query(struct cfs_http_req *req, const char *key);
const char *cfs_http_header_in(struct cfs_http_req *req, const char *key);
/* Percent-decode into a new string; NULL on a bad escape. */
char *cfs_http_pct_decode(const char *s, size_t len, size_t *ret_len);

/* Turn the raw path under /api/v1/config into a config path ("/a/b"),
 * decoding segment by segment: "%2F" stays inside its name (and is then
 * refused). @return 0 or -EINVAL / -ENAMETOOLONG. */
int cfs_http_config_path(const char *raw, char **ret_path);

/* If-Match against @revision: true when absent, "*" or equal; otherwise
 * the request is answered 412 (ESTALE) and false returned. */
bool cfs_http_if_match(struct cfs_http_req *req, uint64_t revision);

/* ---- authorization (auth.c) -------------------------------------------- */

/* On a request's first call, from its headers: takes req->tokens, sets
 * req->principal, and req->denied when the request needs a role its token
 * does not have. */
void cfs_http_authorize(struct cfs_http_req *req);
/* The 401 (with WWW-Authenticate) or 403 of a denied request. */
void cfs_http_auth_deny(struct cfs_http_req *req);

/* ---- static files (static.c) ------------------------------------------- */

/* GET/HEAD of a file of --static-dir; anything outside /api/. */
void cfs_http_handle_static(struct cfs_http_req *req);
/* The --static-dir folder (O_PATH), or -1 when there is none. */
int cfs_http_static_fd(const struct cfs_http_req *req);

/* ---- handlers ---------------------------------------------------------- */

void cfs_http_handle_config(struct cfs_http_req *req, const char *rest);
void cfs_http_handle_rename(struct cfs_http_req *req);
void cfs_http_handle_batch(struct cfs_http_req *req);
void cfs_http_handle_api_root(struct cfs_http_req *req);
void cfs_http_handle_schema(struct cfs_http_req *req, const char *name);
void cfs_http_handle_readyz(struct cfs_http_req *req);
void cfs_http_handle_history(struct cfs_http_req *req);
void cfs_http_handle_export(struct cfs_http_req *req);
void cfs_http_handle_import(struct cfs_http_req *req);
void cfs_http_handle_metrics(struct cfs_http_req *req);
void cfs_http_metrics_request(const char *route,
                              int method,
                              int status,
                              uint64_t us);
void cfs_http_metrics_commit(uint64_t us, bool ok);
/* The standing replay problems as a JSON array (new reference). */
json_t *cfs_http_problems_json(struct cfs_http_req *req);
/* GET /api/v1/openapi.yaml: the built-in copy of api/openapi.yaml. */
void cfs_http_handle_openapi(struct cfs_http_req *req);

/* ---- events (events.c) ------------------------------------------------- */

struct cfs_http_events;
struct cfs_http_evbatch;

int cfs_http_events_new(struct cfs_store *store, struct cfs_http_events **ret);
/* End every stream (none may stay suspended when the daemon stops). */
void cfs_http_events_stop(struct cfs_http_events *h);
void cfs_http_events_free(struct cfs_http_events *h);
/* The events of a transaction's records, made before it commits (new, or
 * NULL); published once it is durable, discarded if it is not. */
struct cfs_http_evbatch *cfs_http_events_prepare(const struct cfs_change *ch,
                                                 size_t n);
void cfs_http_events_publish(struct cfs_http_events *h,
                             struct cfs_http_evbatch *b);
void cfs_http_events_discard(struct cfs_http_evbatch *b);
void cfs_http_handle_events(struct cfs_http_req *req);
/* The server's tokens are now @now: streams whose token it no longer
 * gives the reader role end (a client that reconnects is asked again). */
void cfs_http_events_retoken(struct cfs_http_events *h,
                             const struct cfs_http_tokens *now);
struct cfs_http_events *cfs_http_events_of(const struct cfs_http_req *req);
/* Answer with a response built by the caller (consumed). */
void cfs_http_reply_response(struct cfs_http_req *req,
                             int status,
                             struct MHD_Response *resp);

/* The server's tokens table of this moment: a new reference
 * (cfs_http_tokens_unref()), or NULL when the server has no tokens. */
struct cfs_http_tokens *cfs_http_server_tokens(struct cfs_http_server *srv);

/* The server's options (borrowed). */
const struct cfs_http_options *cfs_http_opts(const struct cfs_http_req *req);

/* Commit a transaction durably (through the store when there is one) and
 * publish it. Consumes @txn. @return 0 (the handler goes on to build the
 * answer, sent once the change is durable, or replaced by a 503 if it
 * cannot be), or a negative errno: the change was undone and the request
 * is answered already. */
int cfs_http_commit(struct cfs_http_req *req, struct cfs_txn *txn);

#endif /* CFS_HTTP_INTERNAL_H */
