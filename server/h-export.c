// SPDX-License-Identifier: MIT
/*
 * h-export.c - GET /api/v1/export and POST /api/v1/import: the written
 * tree as one JSON document, and such a document planned against the tree
 * (a diff by the store) and applied in one transaction. Without a store
 * (a tree in memory only) both are 503.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/store.h>

#include "body.h"
#include "commit.h"
#include "h-batch.h"
#include "h-export.h"
#include "json.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

/* @n as its JSON, filtered by @scope (NULL: the whole tree) as a listing
 * is: above the token's subtrees only the children leading to them, and
 * no value or link; a link whose target is outside them is left out. */
static json_t *export_node(const struct cfs_store_node *n,
                           const struct cfs_http_scope *scope)
{
    bool covered = cfs_http_scope_covers(scope, n->path);
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
    for (size_t i = 0; covered && i < n->n_values; i++) {
        json_t *v = json_object();

        json_object_set_new(v, "name", json_string(n->values[i].name));
        cfs_http_value_json(v, n->values[i].data, n->values[i].len);
        json_array_append_new(vals, v);
    }
    for (size_t i = 0; covered && i < n->n_links; i++) {
        json_t *l;

        if (!cfs_http_scope_covers(scope, n->links[i].target)) {
            continue;
        }
        l = json_object();

        json_object_set_new(l, "name", json_string(n->links[i].name));
        json_object_set_new(l, "target", json_string(n->links[i].target));
        json_array_append_new(links, l);
    }
    for (size_t i = 0; i < n->n_children; i++) {
        if (cfs_http_scope_sees(scope, n->children[i].path)) {
            json_array_append_new(kids, export_node(&n->children[i], scope));
        }
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

    if (cfs_http_no_store(req)) {
        return;
    }
    if (path && !cfs_http_absolute(req, path, strlen(path), "path")) {
        return;
    }
    if (!cfs_http_scope_allow(req, path ? path : "/", false)) {
        return;
    }
    if (!cfs_http_scope_reaches(req->scope, path ? path : "/", false, false)) {
        cfs_http_problem(/* through a link hidden from the token: missing */
                         req,
                         0,
                         -ENOENT,
                         NULL,
                         "cannot export %s",
                         path);
        return;
    }
    r = cfs_store_export(cfs_http_opts(req)->store, path ? path : "/", &ex);
    if (r < 0) {
        cfs_http_problem(
            req, 0, r, NULL, "cannot export %s", path ? path : "/");
        return;
    }
    doc = json_object();
    json_object_set_new(doc, "format", json_integer(ex->format));
    json_object_set_new(
        doc, "revision", json_integer((json_int_t)ex->revision));
    json_object_set_new(doc, "root", export_node(&ex->root, req->scope));
    cfs_store_export_free(ex);
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    cfs_http_etag(req, cfs_revision());
}

/* ---- POST /api/v1/import --------------------------------------------- */

static char *dup_str(const char *s)
{
    return s ? cfs_strdup(s) : NULL;
}

/* A document node as the store's structure. @return 0 or -EINVAL with
 * *why set; allocation through core's allocator, as the store frees it. */
static int import_node(json_t *j, struct cfs_store_node *n, const char **why)
{
    json_t *vals = json_object_get(j, "values");
    json_t *links = json_object_get(j, "links");
    json_t *kids = json_object_get(j, "children");
    json_t *v;
    size_t i;

    memset(n, 0, sizeof(*n));
    if (!json_is_object(j) || !json_is_string(json_object_get(j, "path")) ||
        !json_is_string(json_object_get(j, "name")) ||
        (vals && !json_is_array(vals)) || (links && !json_is_array(links)) ||
        (kids && !json_is_array(kids))) {
        *why = "each node has a name, a path and arrays of values, links and "
               "children";
        return -EINVAL;
    }
    n->name = dup_str(json_string_value(json_object_get(j, "name")));
    n->path = dup_str(json_string_value(json_object_get(j, "path")));
    n->type = dup_str(json_string_value(json_object_get(j, "type")));
    n->created = json_is_true(json_object_get(j, "created"));
    n->committed = json_is_true(json_object_get(j, "committed"));
    n->values = cfs_zalloc((json_array_size(vals) + 1) * sizeof(*n->values));
    n->links = cfs_zalloc((json_array_size(links) + 1) * sizeof(*n->links));
    n->children =
        cfs_zalloc((json_array_size(kids) + 1) * sizeof(*n->children));
    if (!n->name || !n->path || !n->values || !n->links || !n->children) {
        *why = "out of memory";
        return -ENOMEM;
    }
    json_array_foreach(vals, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        size_t len = 0;
        char *bytes = cfs_http_json_value_bytes(json_object_get(v, "value"),
                                                json_object_get(v, "encoding"),
                                                &len,
                                                why);

        if (!name || !bytes) {
            free(bytes);
            if (!name) {
                *why = "each value has a name and a value";
            }
            return -EINVAL;
        }
        n->values[i].name = cfs_strdup(name);
        n->values[i].data = cfs_memdup(bytes, len);
        n->values[i].len = len;
        n->n_values = i + 1;
        free(bytes);
        if (!n->values[i].name || !n->values[i].data) {
            return -ENOMEM;
        }
    }
    json_array_foreach(links, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *target = json_string_value(json_object_get(v, "target"));

        if (!name || !target || target[0] != '/') {
            *why = "each link has a name and an absolute target";
            return -EINVAL;
        }
        n->links[i].name = cfs_strdup(name);
        n->links[i].target = cfs_strdup(target);
        n->n_links = i + 1;
        if (!n->links[i].name || !n->links[i].target) {
            return -ENOMEM;
        }
    }
    json_array_foreach(kids, i, v) {
        int r = import_node(v, &n->children[i], why);

        n->n_children = i + 1;
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

static json_t *plan_json(const struct cfs_store_op *ops, size_t n)
{
    json_t *arr = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();

        json_object_set_new(o, "op", json_string(cfs_op_name(ops[i].op)));
        if (ops[i].op == CFS_OP_RENAME) {
            json_object_set_new(o, "from", json_string(ops[i].path));
            json_object_set_new(o, "to", json_string(ops[i].arg));
        } else {
            json_object_set_new(o, "path", json_string(ops[i].path));
        }
        if (ops[i].op == CFS_OP_STORE) {
            cfs_http_value_json(o, ops[i].arg, ops[i].arg_len);
        } else if (ops[i].op == CFS_OP_SYMLINK) {
            json_object_set_new(o, "target", json_string(ops[i].arg));
        }
        json_array_append_new(arr, o);
    }
    return arr;
}

void cfs_http_handle_import(struct cfs_http_req *req)
{
    const char *mode = cfs_http_query(req, "mode");
    const char *dry = cfs_http_query(req, "dry_run");
    struct cfs_store_export *have = NULL;
    struct cfs_store_export *want = NULL;
    struct cfs_store_op *ops = NULL;
    struct cfs_txn *txn = NULL;
    enum cfs_store_diff_mode dm = CFS_STORE_DIFF_MERGE;
    const char *why = NULL;
    json_t *body = NULL, *doc;
    const char *path;
    size_t n = 0;
    uint64_t rev;
    int r;

    if (mode && strcmp(mode, "replace") == 0) {
        dm = CFS_STORE_DIFF_REPLACE;
    } else if (mode && strcmp(mode, "merge") != 0) {
        cfs_http_bad_request(req, "mode is merge or replace");
        return;
    }
    if (dry && strcmp(dry, "0") != 0 && strcmp(dry, "1") != 0) {
        cfs_http_bad_request(req, "dry_run is 0 or 1");
        return;
    }
    body = cfs_http_json_body(req);
    if (!body) {
        return;
    }
    if (json_integer_value(json_object_get(body, "format")) !=
            CFS_STORE_EXPORT_FORMAT ||
        !json_is_object(json_object_get(body, "root"))) {
        cfs_http_bad_request(
            req,
            "an import is an export document: {\"format\": %d, "
            "\"root\": {...}}",
            CFS_STORE_EXPORT_FORMAT);
        goto out;
    }
    want = cfs_zalloc(sizeof(*want));
    r = want ? import_node(json_object_get(body, "root"), &want->root, &why)
             : -ENOMEM;
    if (r < 0) {
        cfs_http_problem(req,
                         r == -EINVAL ? MHD_HTTP_BAD_REQUEST : 0,
                         r,
                         NULL,
                         "%s",
                         why ? why : "cannot read the document");
        goto out;
    }
    path = want->root.path;
    if (path[0] != '/') {
        cfs_http_bad_request(req, "the tree's path must be absolute");
        goto out;
    }
    if (!cfs_http_scope_allow(req, path, false)) {
        goto out;
    }
    if (!cfs_http_scope_reaches(req->scope, path, false, false)) {
        cfs_http_problem(/* at a link hidden from the token: missing */
                         req,
                         0,
                         -ENOENT,
                         NULL,
                         "cannot plan the import at %s",
                         path);
        goto out;
    }
    /* Plan and apply under one mutation lock, so nothing moves between. */
    r = cfs_txn_begin(&txn);
    /* the global revision, as of an export's ETag; a dry run too: its plan
     * would be against another tree than the client's */
    if (r == 0 && !cfs_http_if_match(req, cfs_revision())) {
        cfs_txn_abort(txn);
        goto out;
    }
    if (r == 0) {
        r = cfs_store_export_tree(path, &have);
    }
    if (r == 0) {
        r = cfs_store_diff(&have->root, &want->root, dm, &ops, &n);
    }
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot plan the import at %s", path);
        cfs_txn_abort(txn);
        goto out;
    }
    /* A scoped token's import changes nothing outside its subtrees: a plan
     * that would is refused whole, even as a dry run (whose answer would
     * name what is outside); the problem names no path. */
    for (size_t i = 0; req->scope && i < n; i++) {
        const char *path2 =
            ops[i].op == CFS_OP_SYMLINK || ops[i].op == CFS_OP_RENAME
                ? ops[i].arg
                : NULL;

        if (!cfs_http_scope_reaches(req->scope, ops[i].path, true, false) ||
            !cfs_http_scope_reaches(
                req->scope, path2, true, ops[i].op == CFS_OP_SYMLINK)) {
            json_t *extra = json_object();

            json_object_set_new(extra, "op_index", json_integer((json_int_t)i));
            cfs_http_problem_json(req,
                                  MHD_HTTP_FORBIDDEN,
                                  -EACCES,
                                  NULL,
                                  "the import would change the tree outside "
                                  "the subtrees the token is limited to",
                                  extra);
            cfs_http_scope_challenge(req);
            cfs_txn_abort(txn);
            goto out;
        }
    }
    if (dry && strcmp(dry, "1") == 0) {
        cfs_txn_abort(txn); /* nothing done: changes nothing */
        doc = json_object();
        json_object_set_new(doc, "mode", json_string(mode ? mode : "merge"));
        json_object_set_new(doc, "dry_run", json_true());
        json_object_set_new(doc, "changed", json_false());
        json_object_set_new(
            doc, "revision", json_integer((json_int_t)cfs_revision()));
        json_object_set_new(doc, "ops", plan_json(ops, n));
        cfs_http_reply_json(req, MHD_HTTP_OK, doc);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        r = cfs_http_apply(
            txn, ops[i].op, ops[i].path, ops[i].arg, ops[i].arg_len);
        if (r < 0) {
            json_t *extra = json_object();
            char detail[512];

            json_object_set_new(extra, "op_index", json_integer((json_int_t)i));
            (void)snprintf(detail,
                           sizeof(detail),
                           "%s %s: %s",
                           cfs_op_name(ops[i].op),
                           ops[i].path,
                           strerror(-r));
            cfs_http_problem_json(req, 0, r, NULL, detail, extra);
            cfs_txn_abort(txn);
            goto out;
        }
    }
    rev = cfs_txn_revision(txn); /* 0: a no-op import adds no revision */
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    doc = json_object();
    json_object_set_new(doc, "mode", json_string(mode ? mode : "merge"));
    json_object_set_new(doc, "dry_run", json_false());
    json_object_set_new(doc, "changed", json_boolean(rev != 0));
    json_object_set_new(doc,
                        "revision",
                        json_integer((json_int_t)(rev ? rev : cfs_revision())));
    json_object_set_new(doc, "ops", plan_json(ops, n));
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
out:
    cfs_store_ops_free(ops, n);
    cfs_store_export_free(have);
    cfs_store_export_free(want);
    json_decref(body);
}
