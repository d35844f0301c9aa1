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
#include <time.h>

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
    json_t *body;

    if (json_array_size(problems) > 0) {
        json_t *extra = json_object();

        json_object_set_new(extra, "problems", problems);
        cfs_http_problem_json(req,
                              MHD_HTTP_SERVICE_UNAVAILABLE,
                              -EIO,
                              "Not Ready",
                              "stored changes could not be replayed (their "
                              "data is kept)",
                              extra);
        return;
    }
    json_decref(problems);
    body = json_object();
    json_object_set_new(body, "status", json_string("ready"));
    json_object_set_new(
        body, "revision", json_integer((json_int_t)cfs_revision()));
    cfs_http_reply_json(req, MHD_HTTP_OK, body);
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

/* "value"/"encoding" or "old"/"old_encoding" */
static void
value_json(json_t *obj, const char *key, const char *data, size_t len)
{
    json_t *tmp = json_object();

    cfs_http_value_json(tmp, data, len);
    json_object_set(obj, key, json_object_get(tmp, "value"));
    if (json_object_get(tmp, "encoding")) {
        json_object_set(obj,
                        strcmp(key, "value") == 0 ? "encoding" : "old_encoding",
                        json_object_get(tmp, "encoding"));
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
        char when[48];
        time_t secs = (time_t)(es[i].time_us / 1000000);
        struct tm tm;
        size_t w;

        gmtime_r(&secs, &tm);
        w = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        (void)snprintf(when + w,
                       sizeof(when) - w,
                       ".%06dZ",
                       (int)(es[i].time_us % 1000000));
        json_object_set_new(
            e, "revision", json_integer((json_int_t)es[i].revision));
        json_object_set_new(e, "time", json_string(when));
        json_object_set_new(e,
                            "principal",
                            es[i].principal ? json_string(es[i].principal)
                                            : json_null());
        json_object_set_new(e, "op", json_string(cfs_op_name(es[i].op)));
        json_object_set_new(e, "path", json_string(es[i].path));
        if (es[i].write_only) {
            json_object_set_new(e, "write_only", json_true());
        }
        if (es[i].op == CFS_OP_RENAME) {
            json_object_set_new(e, "from", json_string(es[i].path));
            json_object_set_new(
                e, "to", json_string(es[i].arg ? es[i].arg : ""));
        } else if (es[i].arg && es[i].op == CFS_OP_STORE) {
            value_json(e, "value", es[i].arg, es[i].arg_len);
        } else if (es[i].arg) {
            json_object_set_new(e, "target", json_string(es[i].arg));
        }
        if (es[i].old) {
            value_json(e, "old", es[i].old, es[i].old_len);
        }
        json_array_append_new(arr, e);
    }
    doc = json_object();
    json_object_set_new(doc, "entries", arr);
    /* a full page: the next one starts below its oldest revision */
    json_object_set_new(doc,
                        "next_before",
                        n > 0 && n == (q.limit ? q.limit : 100)
                            ? json_integer((json_int_t)es[n - 1].revision)
                            : json_null());
    {
        struct cfs_store_info info;

        json_object_set_new(
            doc,
            "floor",
            json_integer(cfs_store_info(store_of(req), &info) == 0
                             ? (json_int_t)info.history_floor
                             : 0));
    }
    cfs_store_history_free(es, n);
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
    json_object_set_new(doc, "root", export_node(&ex->root));
    cfs_store_export_free(ex);
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    cfs_http_etag(req, cfs_revision());
}

/* ---- POST /api/v1/import ----------------------------------------------- */

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

static int run_op(struct cfs_txn *txn, const struct cfs_store_op *op)
{
    switch (op->op) {
    case CFS_OP_MKDIR:
        return cfs_mkdir(txn, op->path);
    case CFS_OP_RMDIR:
        return cfs_rmdir(txn, op->path);
    case CFS_OP_STORE:
        return cfs_store(txn, op->path, op->arg, op->arg_len);
    case CFS_OP_SYMLINK:
        return cfs_symlink(txn, op->path, op->arg);
    case CFS_OP_UNLINK:
        return cfs_unlink(txn, op->path);
    case CFS_OP_RENAME:
        return cfs_rename(txn, op->path, op->arg);
    }
    return -EINVAL;
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
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "mode is merge or replace");
        return;
    }
    if (dry && strcmp(dry, "0") != 0 && strcmp(dry, "1") != 0) {
        cfs_http_problem(
            req, MHD_HTTP_BAD_REQUEST, -EINVAL, NULL, "dry_run is 0 or 1");
        return;
    }
    body = cfs_http_json_body(req);
    if (!body) {
        return;
    }
    if (json_integer_value(json_object_get(body, "format")) !=
            CFS_STORE_EXPORT_FORMAT ||
        !json_is_object(json_object_get(body, "root"))) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
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
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "the tree's path must be absolute");
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
        r = run_op(txn, &ops[i]);
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
