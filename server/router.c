// SPDX-License-Identifier: MIT
/*
 * router.c - the route table: every URL the server answers, with its
 * methods, its least role, what honours If-Match and reads a body, and its
 * handler; and the dispatch that follows it.
 *
 * Routes match the raw, undecoded URL, as auth.c does through
 * cfs_http_route_role(), so an encoded variant of an API path can never
 * reach an API handler without its role being checked.
 */
#include <errno.h>
#include <string.h>

#include <configfs/schema.h>

#include "events.h"
#include "h-batch.h"
#include "h-config.h"
#include "h-export.h"
#include "fwd-batch.h"
#include "h-history.h"
#include "h-schema.h"
#include "h-service.h"
#include "h-whoami.h"
#include "metrics.h"
#include "openapi.h"
#include "reply.h"
#include "request.h"
#include "router.h"
#include "static.h"

/* Short names for the table. */
#define READ     CFS_M_READ
#define POST     CFS_M(CFS_M_POST)
#define WRITES   (CFS_M(CFS_M_POST) | CFS_M(CFS_M_PUT) | CFS_M(CFS_M_DELETE))
#define CFG_BODY (CFS_M(CFS_M_POST) | CFS_M(CFS_M_PUT))
#define PUT      CFS_M(CFS_M_PUT)
#define NODE     (CFS_M_ANY | CFS_M(CFS_M_OTHER)) /* Allow by node */
#define PUBLIC   CFS_ROLE_NONE
#define READER   CFS_ROLE_READER
#define ADMIN    CFS_ROLE_ADMIN

/* The order is the order of matching; the config routes come first, as
 * most requests are theirs. Each row's second line: the methods whose
 * success names a node (answered with its ETag), the handler, and the
 * promises it does not keep with the reason (NO_HEAD, NO_IF_MATCH; none
 * today: every route keeps every promise). The third line says why a
 * scoped token is never refused there (NO_SCOPE), for the routes that
 * name no config path. */
/* clang-format off */
#define NO_PATH  "names no config path"
#define FILTERED "names no config path: it lists the subsystems a scoped " \
                 "token sees, never refuses one"
#define OPEN     "public: names no config path"
/* The matrix's "committed read" column: why a GET is not held. */
#define SCHEMA_ONLY "reads the registered schemas, not the tree"
#define DURABLE_REV "names the store's last durable revision"
#define DURABLE                                                                \
    "reads the store's durable state (the journal, the snapshot of an "        \
    "export), never the tree"
#define EVENTS "sends a change set only once it is committed (events.c)"
#define NO_TREE "reads no tree state"
#define PLANS                                                                  \
    "plans against the store's durable state and writes as one transaction"
#define FORWARDED "each forwarded request is held or not on its own route"
static const struct cfs_http_route routes[] = {
    /* path                  prefix label      methods role  If-Match body
     *                       ETag   handler                NO_HEAD NO_IF_MATCH
     *                       NO_SCOPE NO_HELD_READ READ_INDEX
     */
    {"/api/v1/config/",      true,  "config",  NODE, READER, WRITES, CFG_BODY,
                             NODE,  cfs_http_handle_config,   NULL, NULL,
                             NULL, NULL, true},
    {"/api/v1/config",       false, "config",  NODE, READER, WRITES, CFG_BODY,
                             NODE,  cfs_http_handle_config,   NULL, NULL,
                             NULL, NULL, true},
    /* the typed forms of the tree, for generated clients */
    {"/api/v1/node/",        true,  "config",  READ, READER, 0,      0,
                             READ,  cfs_http_handle_node,     NULL, NULL,
                             NULL, NULL, true},
    {"/api/v1/value/",       true,  "config",  READ | PUT, READER, PUT, PUT,
                             READ | PUT, cfs_http_handle_value, NULL, NULL,
                             NULL, NULL, true},
    {"/api/v1/link/",        true,  "config",  READ | PUT, READER, PUT, PUT,
                             READ | PUT, cfs_http_handle_link, NULL, NULL,
                             NULL, NULL, true},
    {"/api/v1/schema/",      true,  "schema",  READ, READER, 0,      0,
                             0,     cfs_http_handle_schema,   NULL, NULL,
                             NULL, SCHEMA_ONLY, false},
    {"/api/v1",              false, "api",     READ, READER, 0,      0,
                             0,     cfs_http_handle_api_root, NULL, NULL,
                             FILTERED, DURABLE_REV, false},
    {"/api/v1/",             false, "api",     READ, READER, 0,      0,
                             0,     cfs_http_handle_api_root, NULL, NULL,
                             FILTERED, DURABLE_REV, false},
    {"/api/v1/rename",       false, "rename",  POST, READER, POST,   POST,
                             POST,  cfs_http_handle_rename,   NULL, NULL,
                             NULL, NULL, false},
    {"/api/v1/batch",        false, "batch",   POST, READER, POST,   POST,
                             0,     cfs_http_handle_batch,    NULL, NULL,
                             NULL, NULL, false},
    /* cluster mode: the writer runs writes other nodes forwarded, each
     * authorized on its own token (fwd-batch.h) */
    {CFS_FWD_BATCH_PATH,     false, "forward", POST, PUBLIC, 0,      POST,
                             0,     cfs_http_handle_forward,  NULL,
                             "each forwarded request honours its own",
                             "names no config path itself: each forwarded "
                             "request is refused or not on its own token",
                             FORWARDED, false},
    {"/api/v1/history",      false, "history", READ, READER, 0,      0,
                             0,     cfs_http_handle_history,  NULL, NULL,
                             NULL, DURABLE, true},
    /* who the request's token is: the client offers what it may do */
    {"/api/v1/whoami",       false, "whoami",  READ, READER, 0,      0,
                             0,     cfs_http_handle_whoami,   NULL, NULL,
                             "names no config path: it says which "
                             "subtrees the token has, never refuses one",
                             NO_TREE, false},
    /* export carries write-only values; import replaces the whole tree */
    {"/api/v1/export",       false, "export",  READ, ADMIN,  0,      0,
                             0,     cfs_http_handle_export,   NULL, NULL,
                             NULL, DURABLE, true},
    {"/api/v1/import",       false, "import",  POST, ADMIN,  POST,   POST,
                             0,     cfs_http_handle_import,   NULL, NULL,
                             NULL, PLANS, false},
    {"/api/v1/events",       false, "events",  READ, READER, 0,      0,
                             0,     cfs_http_handle_events,   NULL, NULL,
                             NULL, EVENTS, false},
    /* the public contract, and the probes: they hold no data */
    {"/api/v1/openapi.yaml", false, "openapi", READ, PUBLIC, 0,      0,
                             0,     cfs_http_handle_openapi,  NULL, NULL,
                             OPEN, NO_TREE, false},
    {"/metrics",             false, "metrics", READ, READER, 0,      0,
                             0,     cfs_http_handle_metrics,  NULL, NULL,
                             NO_PATH, NO_TREE, false},
    {"/readyz",              false, "readyz",  READ, PUBLIC, 0,      0,
                             0,     cfs_http_handle_readyz,   NULL, NULL,
                             OPEN "; with a scoped token, problems filtered",
                             DURABLE_REV, false},
    {"/healthz",             false, "healthz", READ, PUBLIC, 0,      0,
                             0,     cfs_http_handle_healthz,  NULL, NULL,
                             OPEN, NO_TREE, false},
};
/* clang-format on */

#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

const struct cfs_http_route *cfs_http_routes(size_t *ret_n)
{
    *ret_n = N_ROUTES;
    return routes;
}

const struct cfs_http_route *cfs_http_route_find(const char *url,
                                                 const char **ret_rest)
{
    for (size_t i = 0; i < N_ROUTES; i++) {
        const struct cfs_http_route *rt = &routes[i];

        if (!rt->prefix && strcmp(url, rt->path) == 0) {
            *ret_rest = "";
            return rt;
        }
        if (rt->prefix && strncmp(url, rt->path, strlen(rt->path)) == 0) {
            *ret_rest = url + strlen(rt->path);
            return rt;
        }
    }
    *ret_rest = "";
    return NULL;
}

/* @url is @prefix or below it. */
static bool path_is(const char *url, const char *prefix)
{
    size_t n = strlen(prefix);

    while (n > 0 && prefix[n - 1] == '/') {
        n--;
    }
    return strncmp(url, prefix, n) == 0 && (url[n] == '\0' || url[n] == '/');
}

/* Everything under /api/ needs a token, but the OpenAPI file; the health
 * probes and the web UI's files need none (they hold no data, and a
 * browser cannot send a bearer token when it navigates). A URL that is no
 * route but lies under one needs that route's role when it is higher, so
 * that probing below export or import asks for admin as they do. */
enum cfs_http_role cfs_http_route_role(const struct cfs_http_route *rt,
                                       const char *url,
                                       enum cfs_http_method method)
{
    enum cfs_http_role need =
        method == CFS_M_POST || method == CFS_M_PUT || method == CFS_M_DELETE
            ? CFS_ROLE_WRITER
            : CFS_ROLE_READER; /* GET, HEAD; others are then 405 */

    if (rt) {
        if (rt->role == CFS_ROLE_NONE) {
            return CFS_ROLE_NONE;
        }
        return rt->role > need ? rt->role : need;
    }
    if (!path_is(url, "/api") && !path_is(url, "/metrics")) {
        return CFS_ROLE_NONE; /* static files */
    }
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (routes[i].role > need && path_is(url, routes[i].path)) {
            need = routes[i].role;
        }
    }
    return need;
}

/* A query value decodes (cfs_http_query()): each '%' begins two hex
 * digits, and none of them is a NUL, which would cut the value short. */
static bool query_value_ok(const char *v)
{
    for (const char *p = v; p && *p; p++) {
        if (*p != '%') {
            continue;
        }
        if (cfs_http_hexval(p[1]) < 0 || cfs_http_hexval(p[2]) < 0 ||
            (p[1] == '0' && p[2] == '0')) {
            return false;
        }
        p += 2;
    }
    return true;
}

static enum MHD_Result
query_check(void *cls, enum MHD_ValueKind kind, const char *key, const char *v)
{
    const char **bad = cls;

    (void)kind;
    if (query_value_ok(v)) {
        return MHD_YES;
    }
    *bad = key;
    return MHD_NO;
}

/* A route's handler reads its query values through cfs_http_query(),
 * which cannot tell a value that does not decode from one that is absent:
 * refuse those here, before any handler takes "dry_run=1%" for no dry
 * run. Only the routes that read a query, so that the probes, the metrics
 * and the contract keep the answers the contract gives them.
 * @return false when answered (400). */
static bool query_decodes(struct cfs_http_req *req)
{
    static const char *const reads_query[] = {
        "config", "events", "export", "import", "history"};
    const char *bad = NULL;
    size_t i = 0;

    while (i < sizeof(reads_query) / sizeof(reads_query[0]) &&
           strcmp(req->route, reads_query[i]) != 0) {
        i++;
    }
    if (i == sizeof(reads_query) / sizeof(reads_query[0])) {
        return true;
    }
    cfs_http_query_each(req, query_check, (void *)&bad);
    if (!bad) {
        return true;
    }
    cfs_http_bad_request(req,
                         "the query value of \"%.64s\" is not "
                         "percent-encoded text (a '%%' without two hex "
                         "digits, or %%00)",
                         bad);
    return false;
}

/* The query parameters whose values api/openapi.yaml enumerates, and the
 * routes that take them: the route label, or NULL for every route that
 * reads the tree (its read_index column: what cluster mode answers from
 * the read index unless ?consistency=serializable). */
static const struct query_enum {
    const char *key;
    const char *values[2];
    const char *route;
} query_enums[] = {
    {"consistency", {"linearizable", "serializable"}, NULL},
    {"from", {"start", "end"}, "config"},
    {"used_by", {"0", "1"}, "config"},
    {"values", {"0", "1"}, "config"},
    {"mode", {"merge", "replace"}, "import"},
    {"dry_run", {"0", "1"}, "import"},
};

bool cfs_http_query_enums_ok(struct cfs_http_req *req)
{
    const struct cfs_http_route *rt = req->rt;

    if (!rt || !(rt->methods & CFS_M(req->method))) {
        return true; /* no route, or 405: dispatch answers */
    }
    for (size_t i = 0; i < sizeof(query_enums) / sizeof(query_enums[0]); i++) {
        const struct query_enum *q = &query_enums[i];
        const char *v;

        if (q->route ? strcmp(q->route, rt->label) != 0 : !rt->read_index) {
            continue;
        }
        v = cfs_http_query(req, q->key);
        if (v && strcmp(v, q->values[0]) != 0 && strcmp(v, q->values[1]) != 0) {
            cfs_http_bad_request(
                req, "%s must be %s or %s", q->key, q->values[0], q->values[1]);
            return false;
        }
    }
    return true;
}

void cfs_http_dispatch(struct cfs_http_req *req)
{
    const struct cfs_http_route *rt = req->rt;
    const char *url = req->url;

    cfs_schema_clear_detail(); /* a refusal's reason, set by callbacks */
    if (rt) {
        req->route = rt->label;
        if (!(rt->methods & CFS_M(req->method))) {
            cfs_http_not_allowed(req, rt->methods, NULL);
        } else if (query_decodes(req)) {
            rt->handle(req);
        }
    } else if (strncmp(url, "/api/", 5) == 0 || strcmp(url, "/api") == 0) {
        req->route = "other";
        cfs_http_problem(
            req, MHD_HTTP_NOT_FOUND, -ENOENT, NULL, "no such resource");
    } else {
        /* The web UI. Everything outside /api/ goes through without a
         * token (cfs_http_route_role()): no route holding data may live
         * out here. */
        req->route = "static";
        cfs_http_handle_static(req);
    }
}
