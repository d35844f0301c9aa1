// SPDX-License-Identifier: MIT
/*
 * handlers-store.c - the routes backed by the store: readiness (replay
 * problems), history and export. Without a store (a tree in memory only)
 * history and export answer 503.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/store.h>

#include "http-internal.h"

static struct cfs_store *store_of(struct cfs_http_req *req)
{
    return cfs_http_opts(req)->store;
}

static bool no_store(struct cfs_http_req *req)
{
    if (store_of(req)) {
        return false;
    }
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     -EROFS,
                     NULL,
                     "this server keeps no store");
    return true;
}

json_t *cfs_http_problems_json(struct cfs_http_req *req)
{
    struct cfs_store_problem *ps = NULL;
    json_t *arr = json_array();
    size_t n = 0;

    if (store_of(req) && cfs_store_problems(store_of(req), &ps, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_object();

            json_object_set_new(p, "path", json_string(ps[i].path));
            json_object_set_new(
                p, "step", json_string(cfs_store_step_name(ps[i].op)));
            json_object_set_new(
                p, "errno", json_string(cfs_http_errno_name(ps[i].error)));
            json_object_set_new(
                p, "skipped", json_integer((json_int_t)ps[i].skipped));
            json_array_append_new(arr, p);
        }
        cfs_store_problems_free(ps, n);
    }
    return arr;
}

void cfs_http_handle_readyz(struct cfs_http_req *req)
{
    json_t *problems = cfs_http_problems_json(req);
    json_t *body = json_object();
    bool ready = json_array_size(problems) == 0;

    json_object_set_new(
        body, "status", json_string(ready ? "ready" : "degraded"));
    json_object_set_new(body, "problems", problems);
    cfs_http_reply_json(
        req, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, body);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
    char *end;
    unsigned long long v;

    if (!s || !*s || *s == '-') {
        return -EINVAL;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end || errno || v > max) {
        return -EINVAL;
    }
    *ret = v;
    return 0;
}

static void
value_json(json_t *obj, const char *key, const char *data, size_t len)
{
    json_t *tmp = json_object();

    cfs_http_value_json(tmp, data, len);
    json_object_set(obj, key, json_object_get(tmp, "value"));
    if (json_object_get(tmp, "encoding")) {
        char k[64];

        (void)snprintf(k, sizeof(k), "%s_encoding", key);
        json_object_set(obj, k, json_object_get(tmp, "encoding"));
    }
    json_decref(tmp);
}

void cfs_http_handle_history(struct cfs_http_req *req)
{
    struct cfs_store_history_query q = {0};
    struct cfs_store_history_entry *es = NULL;
    const char *path = cfs_http_query(req, "path");
    const char *before = cfs_http_query(req, "before");
    const char *limit = cfs_http_query(req, "limit");
    json_t *doc, *arr;
    uint64_t v;
    size_t n = 0;
    int r;

    if (no_store(req)) {
        return;
    }
    if (path && path[0] != '/') {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "path must be an absolute config path");
        return;
    }
    q.path = path;
    if (before) {
        if (parse_u64(before, UINT64_MAX, &v) < 0) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "before must be a revision");
            return;
        }
        q.before = v;
    }
    if (limit) {
        if (parse_u64(limit, 10000, &v) < 0 || v == 0) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "limit must be 1 to 10000");
            return;
        }
        q.limit = (size_t)v;
    }
    r = cfs_store_history(store_of(req), &q, &es, &n);
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot read the journal");
        return;
    }
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_object();

        json_object_set_new(
            e, "revision", json_integer((json_int_t)es[i].revision));
        json_object_set_new(e, "time_us", json_integer(es[i].time_us));
        json_object_set_new(e,
                            "principal",
                            es[i].principal ? json_string(es[i].principal)
                                            : json_null());
        json_object_set_new(e, "op", json_string(cfs_op_name(es[i].op)));
        json_object_set_new(e, "path", json_string(es[i].path));
        if (es[i].arg) {
            value_json(e,
                       es[i].op == CFS_OP_STORE    ? "value"
                       : es[i].op == CFS_OP_RENAME ? "to"
                                                   : "target",
                       es[i].arg,
                       es[i].arg_len);
        }
        if (es[i].old) {
            value_json(e, "old", es[i].old, es[i].old_len);
        }
        json_array_append_new(arr, e);
    }
    cfs_store_history_free(es, n);
    doc = json_object();
    json_object_set_new(
        doc, "revision", json_integer((json_int_t)cfs_revision()));
    json_object_set_new(doc, "entries", arr);
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
}

static json_t *export_node(const struct cfs_store_node *n)
{
    json_t *o = json_object();
    json_t *vals = json_array();
    json_t *links = json_array();
    json_t *kids = json_array();

    json_object_set_new(o, "name", json_string(n->name));
    json_object_set_new(o, "path", json_string(n->path));
    json_object_set_new(
        o, "type", n->type ? json_string(n->type) : json_null());
    json_object_set_new(o, "created", json_boolean(n->created));
    json_object_set_new(o, "committed", json_boolean(n->committed));
    for (size_t i = 0; i < n->n_values; i++) {
        json_t *v = json_object();

        json_object_set_new(v, "name", json_string(n->values[i].name));
        cfs_http_value_json(v, n->values[i].data, n->values[i].len);
        if (n->values[i].binary) {
            json_object_set_new(v, "binary", json_true());
        }
        json_array_append_new(vals, v);
    }
    for (size_t i = 0; i < n->n_links; i++) {
        json_t *l = json_object();

        json_object_set_new(l, "name", json_string(n->links[i].name));
        json_object_set_new(l, "target", json_string(n->links[i].target));
        json_array_append_new(links, l);
    }
    for (size_t i = 0; i < n->n_children; i++) {
        json_array_append_new(kids, export_node(&n->children[i]));
    }
    json_object_set_new(o, "values", vals);
    json_object_set_new(o, "links", links);
    json_object_set_new(o, "children", kids);
    return o;
}

void cfs_http_handle_export(struct cfs_http_req *req)
{
    const char *path = cfs_http_query(req, "path");
    struct cfs_store_export *ex = NULL;
    json_t *doc;
    int r;

    if (no_store(req)) {
        return;
    }
    if (path && path[0] != '/') {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "path must be an absolute config path");
        return;
    }
    r = cfs_store_export(store_of(req), path ? path : "/", &ex);
    if (r < 0) {
        cfs_http_problem(
            req, 0, r, NULL, "cannot export %s", path ? path : "/");
        return;
    }
    doc = json_object();
    json_object_set_new(doc, "format", json_integer(ex->format));
    json_object_set_new(
        doc, "revision", json_integer((json_int_t)ex->revision));
    json_object_set_new(doc, "tree", export_node(&ex->root));
    cfs_store_export_free(ex);
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    cfs_http_etag(req, cfs_revision());
}
