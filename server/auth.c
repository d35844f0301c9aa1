// SPDX-License-Identifier: MIT
/*
 * auth.c - who a request is and whether it may: the bearer token of its
 * Authorization header, looked up in the server's tokens table
 * (tokens.c), against the least role its route needs (router.c); and the
 * 401 or 403 of one that may not.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "reply.h"
#include "request.h"
#include "router.h"
#include "scope.h"
#include "metrics.h"
#include "throttle.h"

/* The server's tokens table of this moment: a new reference, or NULL when
 * the server has no tokens. */
static struct cfs_http_tokens *server_tokens(struct cfs_http_server *srv)
{
    struct cfs_http_tokens *t;

    pthread_mutex_lock(&srv->tok_lock);
    t = cfs_http_tokens_ref(srv->tokens);
    pthread_mutex_unlock(&srv->tok_lock);
    return t;
}

/* The token of "Authorization: Bearer TOKEN"; NULL if there is none or
 * the header is not of that form. */
static const char *bearer(const char *auth, size_t *ret_len)
{
    const char *p;

    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) {
        return NULL;
    }
    p = auth + 7;
    p += strspn(p, " ");
    *ret_len = strlen(p);
    while (*ret_len > 0 && p[*ret_len - 1] == ' ') {
        (*ret_len)--;
    }
    return *ret_len ? p : NULL;
}

/* The client's address (borrowed), or NULL. */
static const struct sockaddr *client_addr(struct cfs_http_req *req)
{
    /* one of a forwarded batch: the node that sent it */
    struct MHD_Connection *conn =
        req->in.outer ? req->in.outer->conn : req->conn;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

    return ci ? ci->client_addr : NULL;
}

void cfs_http_authorize(struct cfs_http_req *req)
{
    const struct cfs_http_tokens *tokens;
    const char *auth, *token, *name = NULL;
    enum cfs_http_role need, have;
    size_t len = 0;

    /* The table of this moment, kept until the request completes: a
     * reload does not pull the principal's name from under it. */
    req->tokens = server_tokens(req->srv);
    tokens = req->tokens;
    if (!tokens) {
        return; /* loopback only, everyone is trusted */
    }
    need = cfs_http_route_role(req->rt, req->url, req->method);
    /* An address that sent too many wrong tokens is not heard until its
     * window lets it: its token is not even looked at. */
    if (need != CFS_ROLE_NONE) {
        req->retry_after = cfs_http_throttle_check(
            req->srv->throttle, client_addr(req), cfs_http_now_us());
        if (req->retry_after) {
            req->denied = MHD_HTTP_TOO_MANY_REQUESTS;
            cfs_http_metrics_auth(false);
            return;
        }
    }
    auth = cfs_http_header_in(req, MHD_HTTP_HEADER_AUTHORIZATION);
    token = bearer(auth, &len);
    have =
        token ? cfs_http_tokens_find(tokens, token, len, &name) : CFS_ROLE_NONE;
    if (have != CFS_ROLE_NONE) {
        req->principal = name;
        req->scope = cfs_http_tokens_scope(tokens, name);
    }
    if (need == CFS_ROLE_NONE || have >= need) {
        return;
    }
    if (have == CFS_ROLE_NONE) {
        req->denied = MHD_HTTP_UNAUTHORIZED;
        req->denied_invalid = auth != NULL;
        if (auth) {
            /* a wrong token, not a missing one: a guess */
            cfs_http_throttle_fail(
                req->srv->throttle, client_addr(req), cfs_http_now_us());
            cfs_http_metrics_auth(true);
        }
    } else {
        req->denied = MHD_HTTP_FORBIDDEN;
        req->denied_need = need;
    }
}

void cfs_http_auth_deny(struct cfs_http_req *req)
{
    if (req->denied == MHD_HTTP_TOO_MANY_REQUESTS) {
        char secs[16];

        cfs_http_problem(req,
                         MHD_HTTP_TOO_MANY_REQUESTS,
                         -EAGAIN,
                         NULL,
                         "too many wrong tokens from this address: try "
                         "again in %u s",
                         req->retry_after);
        (void)snprintf(secs, sizeof(secs), "%u", req->retry_after);
        cfs_http_header(req, MHD_HTTP_HEADER_RETRY_AFTER, secs);
        return;
    }
    if (req->denied == MHD_HTTP_UNAUTHORIZED) {
        cfs_http_problem(req,
                         MHD_HTTP_UNAUTHORIZED,
                         -EACCES,
                         NULL,
                         req->denied_invalid
                             ? "the bearer token is not valid"
                             : "this resource needs a bearer token");
        cfs_http_header(req,
                        MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                        req->denied_invalid ? "Bearer realm=\"configfsd\", "
                                              "error=\"invalid_token\""
                                            : "Bearer realm=\"configfsd\"");
        return;
    }
    cfs_http_problem(req,
                     MHD_HTTP_FORBIDDEN,
                     -EACCES,
                     NULL,
                     "%s needs the %s role; %s has a lower one",
                     req->method_name,
                     cfs_http_role_name(req->denied_need),
                     req->principal);
    cfs_http_header(req,
                    MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                    "Bearer realm=\"configfsd\", error=\"insufficient_scope\"");
}
