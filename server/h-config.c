// SPDX-License-Identifier: MIT
/*
 * h-config.c - a config node under /api/v1/config/: GET reads it, POST
 * makes an item in a group (with its attributes), PUT stores a value or
 * makes a symlink, DELETE removes an item or a link. Each maps the request
 * onto one transaction of core operations, so a request either stands
 * whole or changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/limits.h>

#include "body.h"
#include "commit.h"
#include "h-config.h"
#include "json.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

/* /api/v1/config + the path, each segment percent-encoded: a Location. */
static char *config_url(const char *path)
{
    return cfs_http_url_encode("/api/v1/config", path, "-_.~/", false);
}

/* A config path deeper than CFS_DEPTH_MAX (counting the item a POST would
 * make) is refused before it reaches the tree: 400 ENAMETOOLONG. */
static bool too_deep(struct cfs_http_req *req, const char *rest)
{
    unsigned int depth = req->method == CFS_M_POST ? 1 : 0;

    for (const char *p = rest; *p;) {
        size_t n = strcspn(p, "/");

        depth += n > 0;
        p += n;
        p += strspn(p, "/");
    }
    if (depth <= CFS_DEPTH_MAX) {
        return false;
    }
    cfs_http_problem(req,
                     MHD_HTTP_BAD_REQUEST,
                     -ENAMETOOLONG,
                     "Invalid path",
                     "a config path has at most %d levels",
                     CFS_DEPTH_MAX);
    return true;
}

static int parse_depth(struct cfs_http_req *req, int *ret_depth)
{
    const char *d = cfs_http_query(req, "depth");
    char *end;
    long v;

    *ret_depth = 0;
    if (!d) {
        return 0;
    }
    v = strtol(d, &end, 10);
    if (!*d || *end || v < 0 || v > 64) {
        return -EINVAL;
    }
    *ret_depth = (int)v;
    return 0;
}

static bool wants_json(struct cfs_http_req *req)
{
    const char *accept = cfs_http_header_in(req, MHD_HTTP_HEADER_ACCEPT);

    return accept && strstr(accept, "application/json") &&
           !strstr(accept, "text/plain");
}

/* The methods a node of @kind answers. */
static unsigned methods_for(enum cfs_kind kind)
{
    switch (kind) {
    case CFS_KIND_ROOT:
    case CFS_KIND_SUBSYSTEM:
    case CFS_KIND_GROUP:
    case CFS_KIND_ITEM:
        return CFS_M_READ | CFS_M(CFS_M_POST) | CFS_M(CFS_M_DELETE);
    case CFS_KIND_LINK:
        return CFS_M_READ | CFS_M(CFS_M_DELETE);
    default:
        return CFS_M_READ | CFS_M(CFS_M_PUT);
    }
}

static void not_allowed(struct cfs_http_req *req, enum cfs_kind kind)
{
    char why[128];

    (void)snprintf(why,
                   sizeof(why),
                   "%s does not apply to a %s",
                   req->method_name,
                   cfs_kind_name(kind));
    cfs_http_not_allowed(req, methods_for(kind), why);
}

/* ---- GET --------------------------------------------------------------- */

/* Answer with the attribute JSON of docs/DESIGN.md §4. */
static void reply_attr(struct cfs_http_req *req,
                       const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len)
{
    char *text = NULL;
    size_t text_len = 0;

    if (cfs_http_attr_text(path, e, buf, len, &text, &text_len) < 0) {
        cfs_http_no_memory(req);
        return;
    }
    cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len);
}

static void
get_attr(struct cfs_http_req *req, const char *path, const struct cfs_entry *e)
{
    char *buf = NULL;
    size_t len = 0;
    int r;

    if (!e->readable) {
        cfs_http_problem(req,
                         MHD_HTTP_FORBIDDEN,
                         -EACCES,
                         NULL,
                         "%s cannot be read (mode %04o)",
                         path,
                         e->mode);
        return;
    }
    r = cfs_show(path, &buf, &len);
    if (r < 0) {
        cfs_http_op_problem(req, r, "show", path);
        return;
    }
    if (wants_json(req)) {
        reply_attr(req, path, e, buf, len);
    } else {
        cfs_http_reply_text(req,
                            MHD_HTTP_OK,
                            e->kind == CFS_KIND_BIN_ATTR
                                ? "application/octet-stream"
                                : "text/plain; charset=utf-8",
                            buf,
                            len);
    }
    cfs_free(buf);
    cfs_http_etag(req, e->revision);
}

static void get_node(struct cfs_http_req *req, const char *path)
{
    struct cfs_entry e;
    const char *values;
    char *text = NULL;
    size_t text_len = 0;
    int depth;
    int r = cfs_stat(path, &e);

    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", path);
        return;
    }
    switch (e.kind) {
    case CFS_KIND_ATTR:
    case CFS_KIND_BIN_ATTR:
        get_attr(req, path, &e);
        break;
    case CFS_KIND_LINK: {
        json_t *l;

        if (!cfs_http_scope_allow(req, e.target, true)) {
            break; /* its target is outside the token's subtrees */
        }
        l = json_object();

        json_object_set_new(l, "kind", json_string("link"));
        json_object_set_new(l, "name", json_string(e.name));
        json_object_set_new(l, "path", json_string(path));
        json_object_set_new(l, "target", json_string(e.target));
        json_object_set_new(
            l, "revision", json_integer((json_int_t)e.revision));
        cfs_http_reply_json(req, MHD_HTTP_OK, l);
        cfs_http_etag(req, e.revision);
        break;
    }
    default:
        if (parse_depth(req, &depth) < 0) {
            cfs_http_bad_request(req, "depth must be an integer from 0 to 64");
            break;
        }
        values = cfs_http_query(req, "values");
        if (values && strcmp(values, "0") != 0 && strcmp(values, "1") != 0) {
            cfs_http_bad_request(req, "values must be 0 or 1");
            break;
        }
        r = cfs_http_node_text(path,
                               &e,
                               depth,
                               !values || strcmp(values, "1") == 0,
                               req->scope,
                               &text,
                               &text_len);
        if (r < 0) {
            cfs_http_op_problem(req, r, "readdir", path);
            break;
        }
        cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len);
        cfs_http_etag(req, e.revision);
        break;
    }
    cfs_entry_done(&e);
}

/* ---- POST: mkdir ------------------------------------------------------- */

static void post_mkdir(struct cfs_http_req *req, const char *path)
{
    json_t *body = cfs_http_json_body(req);
    json_t *jname, *jattrs, *value;
    const char *key;
    struct cfs_txn *txn = NULL;
    struct cfs_entry parent;
    char *child = NULL;
    char *url = NULL;
    char *text = NULL;
    size_t text_len = 0;
    uint64_t rev;
    int r;

    if (!body) {
        return;
    }
    jname = json_object_get(body, "name");
    jattrs = json_object_get(body, "attributes");
    if (!cfs_http_known_members(
            req, body, (const char *const[]){"name", "attributes", NULL})) {
        goto out;
    }
    if (!json_is_string(jname)) {
        cfs_http_bad_request(req, "\"name\" must be a string");
        goto out;
    }
    if (jattrs && !json_is_object(jattrs)) {
        cfs_http_bad_request(req, "\"attributes\" must be an object");
        goto out;
    }
    r = cfs_name_check(json_string_value(jname), json_string_length(jname));
    if (r < 0) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         r,
                         "Invalid name",
                         "a name is 1-255 bytes of UTF-8 without '/' or "
                         "control bytes, and not \".\" or \"..\"");
        goto out;
    }
    child = cfs_http_join(path, json_string_value(jname));
    if (child && !cfs_http_scope_allow(req, child, true)) {
        goto out;
    }
    r = child ? cfs_txn_begin(&txn) : -ENOMEM;
    if (r < 0) {
        cfs_http_op_problem(req, r, "mkdir", path);
        goto out;
    }
    r = cfs_stat(path, &parent);
    if (r < 0) {
        cfs_http_op_problem(req, r, "mkdir in", path);
        goto abort;
    }
    rev = parent.revision;
    cfs_entry_done(&parent);
    if (!cfs_http_if_match(req, rev)) {
        goto abort;
    }
    r = cfs_mkdir(txn, child);
    if (r < 0) {
        cfs_http_op_problem(req, r, "mkdir", child);
        goto abort;
    }
    json_object_foreach(jattrs, key, value) {
        const char *why = NULL;
        size_t len = 0;
        char *bytes = cfs_http_json_value_bytes(value, NULL, &len, &why);
        char *apath = cfs_http_join(child, key);

        r = bytes && apath ? cfs_store(txn, apath, bytes, len) : -EINVAL;
        free(bytes);
        if (r < 0) {
            if (why) {
                cfs_http_bad_request(req, "attribute \"%s\": %s", key, why);
            } else {
                cfs_http_op_problem(req, r, "store", apath ? apath : key);
            }
            free(apath);
            goto abort;
        }
        free(apath);
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    txn = NULL;
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    r = cfs_http_node_text(child, NULL, 0, true, req->scope, &text, &text_len);
    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", child); /* removed meanwhile */
        goto out;
    }
    cfs_http_reply_json_text(req, MHD_HTTP_CREATED, text, text_len);
    url = config_url(child);
    if (url) {
        cfs_http_header(req, MHD_HTTP_HEADER_LOCATION, url);
    }
    cfs_http_etag(req, rev);
    goto out;
abort:
    cfs_txn_abort(txn);
out:
    free(url);
    free(child);
    json_decref(body);
}

/* ---- PUT: store or symlink --------------------------------------------- */

static void
put_symlink(struct cfs_http_req *req, const char *path, const char *target)
{
    struct cfs_txn *txn = NULL;
    struct cfs_entry dir;
    char *dirpath = strdup(path);
    char *slash = dirpath ? strrchr(dirpath, '/') : NULL;
    uint64_t rev;
    int r;

    if (!slash) {
        free(dirpath);
        cfs_http_no_memory(req); /* 500, from the errno table */
        return;
    }
    if (slash == dirpath) {
        slash[1] = '\0';
    } else {
        *slash = '\0';
    }
    r = cfs_txn_begin(&txn);
    if (r == 0) {
        r = cfs_stat(dirpath, &dir);
        if (r == 0) {
            rev = dir.revision;
            cfs_entry_done(&dir);
            if (!cfs_http_if_match(req, rev)) {
                cfs_txn_abort(txn);
                free(dirpath);
                return;
            }
        }
    }
    if (r == 0) {
        r = cfs_symlink(txn, path, target);
    }
    if (r < 0) {
        cfs_http_op_problem(req, r, "symlink", path);
        cfs_txn_abort(txn);
        free(dirpath);
        return;
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    if (r == 0) { /* else cfs_http_commit() answered */
        json_t *l = json_object();
        char *url = config_url(path);
        char *t = NULL;

        json_object_set_new(l, "kind", json_string("link"));
        json_object_set_new(l, "name", json_string(strrchr(path, '/') + 1));
        json_object_set_new(l, "path", json_string(path));
        if (cfs_readlink(path, &t) == 0) {
            json_object_set_new(l, "target", json_string(t));
            cfs_free(t);
        }
        json_object_set_new(l, "revision", json_integer((json_int_t)rev));
        cfs_http_reply_json(req, MHD_HTTP_CREATED, l);
        if (url) {
            cfs_http_header(req, MHD_HTTP_HEADER_LOCATION, url);
        }
        cfs_http_etag(req, rev);
        free(url);
    }
    free(dirpath);
}

/*
 * Begin a transaction and stat @path in it, for a change to an existing
 * node: refuse (405) a node of the kind @attr says it must not be (an
 * attribute when @attr is false, a directory or link when true), and an
 * If-Match that does not hold (412). False: answered, nothing held.
 */
static bool begin_on(struct cfs_http_req *req,
                     const char *op,
                     const char *path,
                     bool attr,
                     struct cfs_txn **ret_txn,
                     struct cfs_entry *ret_e)
{
    int r = cfs_txn_begin(ret_txn);

    if (r < 0) {
        cfs_http_op_problem(req, r, op, path);
        return false;
    }
    r = cfs_stat(path, ret_e);
    if (r < 0) {
        cfs_http_op_problem(req, r, op, path);
        cfs_txn_abort(*ret_txn);
        return false;
    }
    if ((ret_e->kind == CFS_KIND_ATTR || ret_e->kind == CFS_KIND_BIN_ATTR) !=
        attr) {
        not_allowed(req, ret_e->kind);
    } else if (cfs_http_if_match(req, ret_e->revision)) {
        return true;
    }
    cfs_entry_done(ret_e);
    cfs_txn_abort(*ret_txn);
    return false;
}

static void put_store(struct cfs_http_req *req,
                      const char *path,
                      const char *bytes,
                      size_t len)
{
    struct cfs_txn *txn = NULL;
    struct cfs_entry e;
    uint64_t rev;
    int r;

    if (!begin_on(req, "store", path, true, &txn, &e)) {
        return;
    }
    if (!e.writable) {
        cfs_http_problem(req,
                         MHD_HTTP_FORBIDDEN,
                         -EACCES,
                         NULL,
                         "%s cannot be written (mode %04o)",
                         path,
                         e.mode);
        goto fail;
    }
    r = cfs_store(txn, path, bytes, len);
    if (r < 0) {
        cfs_http_op_problem(req, r, "store", path);
        goto fail;
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        cfs_entry_done(&e); /* cfs_http_commit() answered */
        return;
    }
    if (!e.readable) {
        cfs_http_reply_empty(req, MHD_HTTP_NO_CONTENT);
        cfs_http_etag(req, rev);
    } else {
        char *buf = NULL;
        size_t blen = 0;

        e.revision = rev;
        r = cfs_show(path, &buf, &blen);
        reply_attr(req, path, &e, r == 0 ? buf : NULL, blen);
        cfs_free(buf);
        cfs_http_etag(req, rev);
    }
    cfs_entry_done(&e);
    return;
fail:
    cfs_entry_done(&e);
    cfs_txn_abort(txn);
}

static void put(struct cfs_http_req *req, const char *path)
{
    json_t *body, *target, *value;

    if (strcmp(path, "/") == 0) {
        not_allowed(req, CFS_KIND_ROOT);
        return;
    }
    if (!cfs_http_content_is_json(req)) {
        put_store(req, path, req->body ? req->body : "", req->body_len);
        return;
    }
    body = cfs_http_json_body(req);
    if (!body) {
        return;
    }
    target = json_object_get(body, "target");
    value = json_object_get(body, "value");
    if (!cfs_http_known_members(
            req,
            body,
            (const char *const[]){"target", "value", "encoding", NULL})) {
        json_decref(body);
        return;
    }
    if ((target && value) || (!target && !value)) {
        cfs_http_bad_request(req,
                             "give either \"target\" (a symlink) or \"value\" "
                             "(a store)");
    } else if (target) {
        if (cfs_http_absolute(req,
                              json_string_value(target),
                              json_string_length(target),
                              "\"target\"") &&
            cfs_http_scope_allow(req, json_string_value(target), true)) {
            put_symlink(req, path, json_string_value(target));
        }
    } else {
        const char *why = NULL;
        size_t len = 0;
        char *bytes = cfs_http_json_value_bytes(
            value, json_object_get(body, "encoding"), &len, &why);

        if (!bytes) {
            cfs_http_bad_request(req, "%s", why ? why : "out of memory");
        } else {
            put_store(req, path, bytes, len);
        }
        free(bytes);
    }
    json_decref(body);
}

/* ---- DELETE ------------------------------------------------------------ */

static void del(struct cfs_http_req *req, const char *path)
{
    struct cfs_txn *txn = NULL;
    struct cfs_entry e;
    uint64_t rev;
    int r;

    if (!begin_on(req, "delete", path, false, &txn, &e)) {
        return;
    }
    if (e.kind == CFS_KIND_ROOT) {
        r = -EPERM;
    } else if (e.kind == CFS_KIND_LINK) {
        r = cfs_unlink(txn, path);
    } else {
        r = cfs_rmdir(txn, path);
    }
    if (r < 0) {
        cfs_http_op_problem(
            req, r, e.kind == CFS_KIND_LINK ? "unlink" : "rmdir", path);
        goto fail;
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    if (r == 0) { /* else cfs_http_commit() answered */
        cfs_http_reply_empty(req, MHD_HTTP_NO_CONTENT);
        cfs_http_etag(req, rev);
    }
    cfs_entry_done(&e);
    return;
fail:
    cfs_entry_done(&e);
    cfs_txn_abort(txn);
}

void cfs_http_handle_config(struct cfs_http_req *req)
{
    char *path = NULL;
    int r;

    if (too_deep(req, req->rest)) {
        return;
    }
    r = cfs_http_config_path(req->rest, &path);
    if (r < 0) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         r,
                         "Invalid path",
                         "each path segment must be a valid name: 1-255 "
                         "bytes of UTF-8 without '/' or control bytes");
        return;
    }
    /* Outside the token's subtrees: 403 before the tree is looked at.
     * POST may make an item above them, when the item is in them. */
    if (!cfs_http_scope_allow(req,
                              path,
                              req->method == CFS_M_PUT ||
                                  req->method == CFS_M_DELETE)) {
        free(path);
        return;
    }
    switch (req->method) {
    case CFS_M_GET:
    case CFS_M_HEAD:
        get_node(req, path);
        break;
    case CFS_M_POST: {
        struct cfs_entry e;

        r = cfs_stat(path, &e);
        if (r < 0) {
            cfs_http_op_problem(req, r, "mkdir in", path);
            break; /* e is not set */
        }
        if (e.kind == CFS_KIND_ATTR || e.kind == CFS_KIND_BIN_ATTR ||
            e.kind == CFS_KIND_LINK) {
            not_allowed(req, e.kind);
        } else {
            post_mkdir(req, path);
        }
        cfs_entry_done(&e);
        break;
    }
    case CFS_M_PUT:
        put(req, path);
        break;
    case CFS_M_DELETE:
        del(req, path);
        break;
    default:
        break;
    }
    free(path);
}
