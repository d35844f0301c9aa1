// SPDX-License-Identifier: MIT
/*
 * h-whoami.c - GET /api/v1/whoami: the request's principal as auth.c
 * found it (the token's name and role, from the tokens table the request
 * holds) and the subtrees its token is limited to (scope.h). A server
 * started without tokens listens on loopback only and trusts everyone:
 * no name, every role, the whole tree. Read-only: it looks at the tables,
 * it changes nothing, and it names no config path, so a scoped token is
 * never refused here.
 */
#include "h-whoami.h"
#include "json.h"
#include "reply.h"
#include "scope.h"

void cfs_http_handle_whoami(struct cfs_http_req *req)
{
    const struct cfs_http_scope *s = req->scope;
    json_t *body = json_object();
    json_t *subtrees = json_array();
    enum cfs_http_role role = CFS_ROLE_ADMIN; /* no tokens: loopback only */
    bool tokens = req->tokens != NULL;

    if (tokens) {
        /* the role of the entry auth.c matched, in the same table */
        role =
            cfs_http_tokens_role_now(req->tokens, req->principal, req->tokens);
    }
    if (s) {
        for (size_t i = 0; i < s->n; i++) {
            json_array_append_new(subtrees, json_string(s->paths[i]));
        }
    } else {
        json_array_append_new(subtrees, json_string("/"));
    }
    json_object_set_new(
        body, "name", tokens ? json_string(req->principal) : json_null());
    json_object_set_new(body, "role", json_string(cfs_http_role_name(role)));
    json_object_set_new(body, "tokens", json_boolean(tokens));
    json_object_set_new(body, "whole_tree", json_boolean(s == NULL));
    json_object_set_new(body, "subtrees", subtrees);
    cfs_http_reply_json(req, MHD_HTTP_OK, body);
}
