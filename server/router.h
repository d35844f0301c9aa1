/* SPDX-License-Identifier: MIT */
/*
 * router.h - the route table and dispatch: which handler answers a URL,
 * for which methods, and the least role it needs.
 *
 * The table is data on purpose: the daemon finds a request's route once,
 * auth.c reads its role from it, dispatch its methods and handler, and
 * tests read it whole through cfs_http_routes().
 */
#ifndef CFS_HTTP_ROUTER_H
#define CFS_HTTP_ROUTER_H

#include "context.h"

/* The fields are the table's columns in reading order: 15 rows need no
 * packing. */
/* NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding) */
struct cfs_http_route {
    /* The URL as sent (not decoded); with prefix, its beginning, and the
     * rest of the URL (req->rest) is the handler's. */
    const char *path;
    bool prefix;
    const char *label; /* the route in metrics */
    /* The methods answered (a CFS_M() set); any other is 405 with Allow
     * computed from it, unless the set holds CFS_M_OTHER: the handler then
     * answers other methods itself (the config tree: 405 with the Allow of
     * the node the path names, so that the root offers no PUT). */
    unsigned methods;
    /* With tokens, the least role: CFS_ROLE_NONE is public; otherwise a
     * POST, PUT or DELETE needs writer at least, anything else reader. */
    enum cfs_http_role role;
    unsigned if_match; /* the methods that honour If-Match */
    unsigned body;     /* the methods that read a body (at most --body-limit) */
    unsigned etag;     /* the methods whose success names a node: its ETag */
    void (*handle)(struct cfs_http_req *req);
    /* A promise of the route x promise matrix (tests/integration/
     * test-http-matrix.c) the route does not keep, and why; NULL: it keeps
     * it. HEAD for every GET; If-Match on every method that writes. */
    const char *no_head;
    const char *no_if_match;
    /* Why a token limited to subtrees (scope.h) is never refused here: the
     * route names no config path, in its URL or its body. NULL: it names
     * one, and a token scoped elsewhere is refused (403 EACCES). */
    const char *no_scope;
    /* Why an answer here is not held while a change it may have seen is
     * committed (docs/DESIGN.md "Committed reads"): it reads no tree
     * state, or only what is durable already. NULL: every answer waits
     * for the changes not yet durable it may have seen, a read's and a
     * write's refused on what it found (the matrix's "committed read"
     * column checks each GET). */
    const char *no_held_read;
    /* Cluster mode: a GET or HEAD here first waits until this node applied
     * what etcd holds (the read index), unless ?consistency=serializable. */
    bool read_index;
};

/* The table, in the order URLs are matched (static; *ret_n entries). */
const struct cfs_http_route *cfs_http_routes(size_t *ret_n);

/* The route of @url, or NULL (then /api/... is 404 and anything else a
 * static file); *ret_rest is the part of @url after a prefix route, else
 * "". */
const struct cfs_http_route *cfs_http_route_find(const char *url,
                                                 const char **ret_rest);

/* The role a request for @url with @method needs when the server has
 * tokens; @rt is cfs_http_route_find(@url). */
enum cfs_http_role cfs_http_route_role(const struct cfs_http_route *rt,
                                       const char *url,
                                       enum cfs_http_method method);

/* Check the query parameters api/openapi.yaml enumerates (?consistency=,
 * ?from=, ?used_by=, ?values=, ?mode=, ?dry_run=) on the routes that take
 * them, in every mode: the one place they are validated, before the
 * request waits or runs. @return false when answered: 400 EINVAL naming
 * the allowed values. */
bool cfs_http_query_enums_ok(struct cfs_http_req *req);

/* Answer req (its route req->rt found): 405, 404, or the route's handler. */
void cfs_http_dispatch(struct cfs_http_req *req);

#endif /* CFS_HTTP_ROUTER_H */
