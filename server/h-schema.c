// SPDX-License-Identifier: MIT
/*
 * h-schema.c - GET /api/v1/schema/{subsystem}: what a declarative
 * subsystem allows, as the schema engine describes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/schema.h>

#include "h-schema.h"
#include "json.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

void cfs_http_handle_schema(struct cfs_http_req *req)
{
    const char *raw = req->rest;
    const struct cfs_http_options *o = cfs_http_opts(req);
    struct cfs_schema *schema = NULL;
    size_t len = 0;
    char *name = cfs_http_pct_decode(raw, strlen(raw), &len);
    json_t *doc = NULL;
    int r;

    if (!name || cfs_name_check(name, len) < 0 || strlen(name) != len) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         "Invalid name",
                         "a subsystem name is one valid path segment");
        free(name);
        return;
    }
    {
        char *p = cfs_http_join("/", name);
        bool seen = p && cfs_http_scope_allow(req, p, false);

        if (!p) {
            cfs_http_no_memory(req);
        }
        free(p);
        if (!seen) {
            free(name);
            return; /* answered 403: outside the token's subtrees */
        }
    }
    if (o->schemas) {
        schema = cfs_schema_set_find(o->schemas, name);
    }
    if (!schema || !cfs_schema_registered(schema)) {
        cfs_http_problem(req,
                         MHD_HTTP_NOT_FOUND,
                         -ENOENT,
                         NULL,
                         "no declarative subsystem named \"%s\"",
                         name);
        free(name);
        return;
    }
    r = cfs_schema_describe(schema, &doc);
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot describe %s", name);
    } else {
        cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    }
    free(name);
}
