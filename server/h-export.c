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
#include "wait/wait.h"
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
        if (n->values[i].is_default) {
            json_object_set_new(v, "default", json_true());
        }
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
        n->values[i].is_default = json_is_true(json_object_get(v, "default"));
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

/* The directory whose journal says whether the plan for @path is still
 * good: @path itself, or the committable group above it when @path is in
 * its pending/ or live/ (a commit moves an item in from the other one).
 * Ownership: new. */
static char *watched_path(const char *path)
{
    char *w = cfs_strdup(path);

    for (int up = 0; w && up < 2; up++) {
        char *slash = strrchr(w, '/');
        const char *parent_name;

        if (!slash || slash == w) {
            break;
        }
        *slash = '\0';
        parent_name = strrchr(w, '/') + 1;
        if (up == 0 && strcmp(parent_name, "pending") != 0 &&
            strcmp(parent_name, "live") != 0) {
            *slash = '/'; /* not in a pair: the path itself */
            break;
        }
    }
    return w;
}

/* Under the mutation lock: is the tree at @path still the snapshot of
 * revision @rev that the plan was made against? Yes when every revision
 * handed out is durable (so the tree is the database) and the journal
 * holds no change at or under the watched path after @rev (a query that
 * costs the rows since @rev). */
static bool
snapshot_current(struct cfs_store *s, const char *path, uint64_t rev)
{
    struct cfs_store_info info;
    char *w;
    bool touched = true;

    if (cfs_store_info(s, &info) < 0 || info.pending ||
        info.revision != cfs_revision()) {
        return false;
    }
    w = watched_path(path);
    if (!w || cfs_store_touched_since(s, w, rev, &touched) < 0) {
        touched = true;
    }
    cfs_free(w);
    return !touched;
}

/* Plan against a snapshot of the durable state at @path (no lock held,
 * writers go on); *ret_rev its revision. -ENOENT: nothing stored there. */
static int plan_snapshot(struct cfs_store *s,
                         const char *path,
                         const struct cfs_store_node *want,
                         enum cfs_store_diff_mode dm,
                         struct cfs_store_op **ret_ops,
                         size_t *ret_n,
                         uint64_t *ret_rev)
{
    struct cfs_store_export *have = NULL;
    int r = cfs_store_export(s, path, &have);

    if (r == 0) {
        *ret_rev = have->revision;
        r = cfs_store_diff(&have->root, want, dm, ret_ops, ret_n);
    }
    cfs_store_export_free(have);
    return r;
}

/* Plan against the live tree (the caller holds the mutation lock, or
 * accepts a view that writers may change meanwhile). */
static int plan_tree(const char *path,
                     const struct cfs_store_node *want,
                     enum cfs_store_diff_mode dm,
                     struct cfs_store_op **ret_ops,
                     size_t *ret_n)
{
    struct cfs_store_export *have = NULL;
    int r = cfs_store_export_tree(path, &have);

    if (r == 0) {
        r = cfs_store_diff(&have->root, want, dm, ret_ops, ret_n);
    }
    cfs_store_export_free(have);
    return r;
}

/* Snapshots tried before a real import plans under the lock. */
#define PLAN_TRIES 3

/*
 * The plan for @want at @path. Planning holds no lock: it reads a
 * snapshot of the durable state (as GET /export does), so a dry run never
 * makes a writer wait. A real import then takes the mutation lock (*ret_txn)
 * and keeps the plan only if nothing at @path changed since the snapshot
 * (snapshot_current()); otherwise it plans again, and after PLAN_TRIES
 * snapshots overtaken by writes under @path, plans under the lock from the
 * live tree. Nothing stored at @path yet (an empty subtree): the live
 * tree, which is then small.
 */
static int plan(struct cfs_http_req *req,
                const char *path,
                const struct cfs_store_node *want,
                enum cfs_store_diff_mode dm,
                bool dry,
                struct cfs_txn **ret_txn,
                struct cfs_store_op **ret_ops,
                size_t *ret_n)
{
    struct cfs_store *s = cfs_http_opts(req)->store;
    int r = 0;

    *ret_txn = NULL;
    for (int t = 0; t < PLAN_TRIES; t++) {
        uint64_t rev = 0;

        r = plan_snapshot(s, path, want, dm, ret_ops, ret_n, &rev);
        if (r == -ENOENT) {
            break;
        }
        if (r < 0 || dry) {
            return r;
        }
        r = cfs_txn_begin(ret_txn);
        if (r < 0) {
            return r;
        }
        if (snapshot_current(s, path, rev)) {
            return 0;
        }
        cfs_txn_abort(*ret_txn);
        *ret_txn = NULL;
        cfs_store_ops_free(*ret_ops, *ret_n);
        *ret_ops = NULL;
        *ret_n = 0;
    }
    if (dry) {
        return plan_tree(path, want, dm, ret_ops, ret_n);
    }
    r = cfs_txn_begin(ret_txn);
    if (r == 0) {
        r = plan_tree(path, want, dm, ret_ops, ret_n);
    }
    if (r < 0 && *ret_txn) {
        cfs_txn_abort(*ret_txn);
        *ret_txn = NULL;
    }
    return r;
}

void cfs_http_handle_import(struct cfs_http_req *req)
{
    const char *mode = cfs_http_query(req, "mode");
    const char *dry = cfs_http_query(req, "dry_run");
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

    /* mode and dry_run hold one of their values (router.c) */
    if (mode && strcmp(mode, "replace") == 0) {
        dm = CFS_STORE_DIFF_REPLACE;
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
    /* An If-Match names the global revision, as of an export's ETag; a
     * dry run too: its plan would be against another tree than the
     * client's. Checked again under the lock before applying. */
    if (!cfs_http_if_match(req, cfs_revision())) {
        goto out;
    }
    r = plan(req,
             path,
             &want->root,
             dm,
             dry && strcmp(dry, "1") == 0,
             &txn,
             &ops,
             &n);
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot plan the import at %s", path);
        goto out;
    }
    if (txn && !cfs_http_if_match(req, cfs_revision())) {
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
            if (txn) {
                cfs_txn_abort(txn);
            }
            goto out;
        }
    }
    if (!txn) { /* a dry run: nothing done, nothing locked */
        doc = json_object();
        json_object_set_new(doc, "mode", json_string(mode ? mode : "merge"));
        json_object_set_new(doc, "dry_run", json_true());
        /* what the import would do: change the tree iff it plans a step */
        json_object_set_new(doc, "changed", json_boolean(n > 0));
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
    cfs_store_export_free(want);
    json_decref(body);
}
