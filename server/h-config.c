// SPDX-License-Identifier: MIT
/*
 * h-config.c - a config node under /api/v1/config/ (the shell form): GET
 * reads it, POST makes an item in a group (with its attributes), PUT
 * stores a value or makes a symlink, DELETE removes an item or a link; and
 * the typed forms /api/v1/node, /api/v1/value, /api/v1/link, one kind of
 * node and one media type each. Each maps the request onto one transaction
 * of core operations, so a request either stands whole or changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/limits.h>

#include "body.h"
#include "wait/wait.h"
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
    unsigned int depth =
        (req->method == CFS_M_POST ? 1 : 0) + cfs_http_path_depth(rest);

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

static void get_attr(struct cfs_http_req *req,
                     const char *path,
                     const struct cfs_entry *e,
                     bool json)
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
    if (json) {
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

static void reply_link(struct cfs_http_req *req,
                       const char *path,
                       const struct cfs_entry *e)
{
    json_t *l;

    if (!cfs_http_scope_allow(req, e->target, true)) {
        return; /* its target is outside the token's subtrees */
    }
    l = json_object();

    json_object_set_new(l, "kind", json_string("link"));
    json_object_set_new(l, "name", json_string(e->name));
    json_object_set_new(l, "path", json_string(path));
    json_object_set_new(l, "target", json_string(e->target));
    json_object_set_new(l, "revision", json_integer((json_int_t)e->revision));
    cfs_http_reply_json(req, MHD_HTTP_OK, l);
    cfs_http_etag(req, e->revision);
}

/* ?limit=, ?after= and ?name_contains=: a page of the children, sorted
 * by name; ?before=, ?from=end or ?name_from= instead of ?after= (at most
 * one of the four): the page before a cursor, the last page, the page
 * from a name on (type-to-find); ?used_by=1: the links pointing at the
 * node. Any of the first six asks for paging; the page holds PAGE_DEFAULT
 * children unless limit says otherwise, PAGE_MAX at most. On a bad value
 * the 400 is sent and -EINVAL returned. *ret_after and *ret_before
 * (page->after, page->before) are malloc'd, for the caller to free. */
#define PAGE_DEFAULT CFS_HTTP_PAGE_DEFAULT
#define PAGE_MAX     CFS_HTTP_PAGE_MAX

/* The name in the cursor @text of query parameter @what (NULL: none
 * given) into *@ret (malloc'd); on a bad one the 400 is sent. */
static int parse_cursor(struct cfs_http_req *req,
                        const char *what,
                        const char *field,
                        const char *text,
                        char **ret)
{
    int r;

    if (!text) {
        return 0;
    }
    r = cfs_http_cursor_name(text, ret);
    if (r == -ENOMEM) {
        cfs_http_op_problem(req, r, "readdir", "");
        return r;
    }
    if (r < 0) {
        cfs_http_bad_request(
            req, "%s must be a %s cursor of an earlier page", what, field);
    }
    return r;
}

static int parse_page(struct cfs_http_req *req,
                      struct cfs_http_page *page,
                      bool *ret_paged,
                      char **ret_after,
                      char **ret_before)
{
    const char *limit = cfs_http_query(req, "limit");
    const char *after = cfs_http_query(req, "after");
    const char *before = cfs_http_query(req, "before");
    const char *from = cfs_http_query(req, "from");
    const char *name_from = cfs_http_query(req, "name_from");
    const char *contains = cfs_http_query(req, "name_contains");
    const char *used_by = cfs_http_query(req, "used_by");
    bool seek = limit || after || before || from || name_from || contains;
    int r;

    *ret_paged = seek || used_by;
    page->paged = seek;
    page->used_by = used_by && strcmp(used_by, "1") == 0;
    page->limit = PAGE_DEFAULT;
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);

        if (!*limit || *end || v < 1 || v > PAGE_MAX) {
            cfs_http_bad_request(
                req, "limit must be an integer from 1 to %d", PAGE_MAX);
            return -EINVAL;
        }
        page->limit = (size_t)v;
    }
    if (name_from && strlen(name_from) > 255) {
        cfs_http_bad_request(req, "name_from must be at most 255 bytes");
        return -EINVAL;
    }
    if ((after != NULL) + (before != NULL) + (from != NULL) +
            (name_from != NULL) >
        1) {
        cfs_http_bad_request(req,
                             "after, before, from and name_from each say "
                             "where the page starts: give at most one");
        return -EINVAL;
    }
    page->from_end = from && strcmp(from, "end") == 0;
    page->name_from = name_from && *name_from ? name_from : NULL;
    r = parse_cursor(req, "after", "next_after", after, ret_after);
    if (r == 0) {
        r = parse_cursor(req, "before", "prev_before", before, ret_before);
    }
    if (r < 0) {
        return r;
    }
    page->after = *ret_after;
    page->before = *ret_before;
    if (contains && !*contains) {
        contains = NULL;
    }
    page->contains = contains;
    return 0;
}

/* The node JSON of a directory (root, subsystem, group or item); a page
 * of its children with ?limit=, ?after=, ?before=, ?from=, ?name_from=,
 * ?name_contains=, the links to it with ?used_by=1. */
static void
get_dir(struct cfs_http_req *req, const char *path, const struct cfs_entry *e)
{
    struct cfs_http_page page = {0};
    bool paged = false;
    char *after = NULL;
    char *before = NULL;
    const char *values;
    char *text = NULL;
    size_t text_len = 0;
    int depth;
    int r;

    if (parse_depth(req, &depth) < 0) {
        cfs_http_bad_request(req, "depth must be an integer from 0 to 64");
        return;
    }
    values = cfs_http_query(req, "values"); /* 0 or 1: router.c */
    if (parse_page(req, &page, &paged, &after, &before) < 0) {
        free(after);
        free(before);
        return;
    }
    r = cfs_http_node_page_text(path,
                                e,
                                depth,
                                !values || strcmp(values, "1") == 0,
                                req->scope,
                                paged ? &page : NULL,
                                &text,
                                &text_len);
    free(page.next);
    free(page.prev);
    free(after);
    free(before);
    if (r < 0) {
        cfs_http_op_problem(req, r, "readdir", path);
        return;
    }
    cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len);
    cfs_http_etag(req, e->revision);
}

static bool is_attr(enum cfs_kind kind)
{
    return kind == CFS_KIND_ATTR || kind == CFS_KIND_BIN_ATTR;
}

static bool is_dir(enum cfs_kind kind)
{
    return !is_attr(kind) && kind != CFS_KIND_LINK;
}

/* GET of the shell form: what is answered depends on what @path is. */
static void get_node(struct cfs_http_req *req, const char *path)
{
    struct cfs_entry e;
    int r = cfs_stat(path, &e);

    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", path);
        return;
    }
    if (is_attr(e.kind)) {
        get_attr(req, path, &e, wants_json(req));
    } else if (e.kind == CFS_KIND_LINK) {
        reply_link(req, path, &e);
    } else {
        get_dir(req, path, &e);
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

        r = bytes && apath ? cfs_write(txn, apath, bytes, len)
            : why          ? -EINVAL
                           : -ENOMEM;
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
    if (r == -ENOENT) {
        char gone[320];

        cfs_http_missing_target(path, target, gone, sizeof(gone));
        cfs_http_problem(
            req, 0, r, NULL, "symlink %s: %s%s", path, strerror(-r), gone);
        cfs_txn_abort(txn);
        free(dirpath);
        return;
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
 * node: refuse a node of the kind @attr says it must not be (an attribute
 * when @attr is false, a directory or link when true) with 405, or, on a
 * route that names the kind (@wrong_kind, a negative errno), with 409 and
 * that errno; and an If-Match that does not hold (412). False: answered,
 * nothing held.
 */
static bool begin_on(struct cfs_http_req *req,
                     const char *op,
                     const char *path,
                     bool attr,
                     int wrong_kind,
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
    if (is_attr(ret_e->kind) != attr && wrong_kind) {
        cfs_http_problem(req,
                         MHD_HTTP_CONFLICT,
                         wrong_kind,
                         NULL,
                         "%s is a %s",
                         path,
                         cfs_kind_name(ret_e->kind));
    } else if (is_attr(ret_e->kind) != attr) {
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
                      size_t len,
                      int wrong_kind)
{
    struct cfs_txn *txn = NULL;
    struct cfs_entry e;
    uint64_t rev;
    int r;

    if (!begin_on(req, "store", path, true, wrong_kind, &txn, &e)) {
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
    r = cfs_write(txn, path, bytes, len);
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

/* A symlink given as {"target": PATH}. A scoped token's target is judged
 * as the tree will resolve it, through any link on the way or at its end
 * (scope.h): one hidden from the token answers as a missing target. */
static void put_target(struct cfs_http_req *req, const char *path, json_t *t)
{
    const char *target = json_string_value(t);

    if (!cfs_http_absolute(req, target, json_string_length(t), "\"target\"") ||
        !cfs_http_scope_allow(req, target, true)) {
        return;
    }
    if (cfs_http_scope_reaches(req->scope, target, true, true)) {
        put_symlink(req, path, target);
    } else {
        cfs_http_problem(req,
                         0,
                         -ENOENT,
                         NULL,
                         "symlink %s: %s (the target %s does not exist)",
                         path,
                         strerror(ENOENT),
                         target);
    }
}

/* A store given as {"value": V, "encoding"?: "base64"}. */
static void
put_value(struct cfs_http_req *req, const char *path, json_t *body, int wrong)
{
    const char *why = NULL;
    size_t len = 0;
    char *bytes = cfs_http_json_value_bytes(json_object_get(body, "value"),
                                            json_object_get(body, "encoding"),
                                            &len,
                                            &why);

    if (!bytes && !why) {
        cfs_http_no_memory(req);
        return;
    }
    if (!bytes) {
        cfs_http_bad_request(req, "%s", why);
        return;
    }
    put_store(req, path, bytes, len, wrong);
    free(bytes);
}

/* PUT of the shell form: the body decides (raw bytes, a value as JSON, or
 * a link target as JSON). */
static void put(struct cfs_http_req *req, const char *path)
{
    json_t *body, *target, *value;

    if (strcmp(path, "/") == 0) {
        not_allowed(req, CFS_KIND_ROOT);
        return;
    }
    if (!cfs_http_content_is_json(req)) {
        put_store(req, path, req->body ? req->body : "", req->body_len, 0);
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
        put_target(req, path, target);
    } else {
        put_value(req, path, body, 0);
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

    if (!begin_on(req, "delete", path, false, 0, &txn, &e)) {
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

/* The config path of req->rest; NULL when refused: 400 for a bad path,
 * 403 outside the token's subtrees, decided before the tree is looked at
 * (a POST may make an item above them, when the item is in them). */
static char *url_path(struct cfs_http_req *req)
{
    char *path = NULL;
    int r;

    if (too_deep(req, req->rest)) {
        return NULL;
    }
    r = cfs_http_config_path(req->rest, &path);
    if (r < 0) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         r,
                         "Invalid path",
                         "each path segment must be a valid name: 1-255 "
                         "bytes of UTF-8 without control bytes, not \".\" "
                         "or \"..\" (\"/\" and \"%%2F\" separate names)");
        return NULL;
    }
    /* a link hidden from the token on the way, or at the end, answers as
     * the missing path would on this method */
    if (!cfs_http_scope_reach(req,
                              path,
                              req->method == CFS_M_PUT ||
                                  req->method == CFS_M_DELETE,
                              req->method == CFS_M_POST     ? "mkdir in"
                              : req->method == CFS_M_PUT    ? "store"
                              : req->method == CFS_M_DELETE ? "delete"
                                                            : "stat")) {
        free(path);
        return NULL;
    }
    return path;
}

/* 405 for a method no node takes, with the Allow of the node at @path. */
static void other_method(struct cfs_http_req *req, const char *path)
{
    struct cfs_entry e;
    int r = cfs_stat(path, &e);

    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", path);
        return;
    }
    not_allowed(req, e.kind);
    cfs_entry_done(&e);
}

void cfs_http_handle_config(struct cfs_http_req *req)
{
    char *path = url_path(req);

    if (!path) {
        return;
    }
    switch (req->method) {
    case CFS_M_GET:
    case CFS_M_HEAD:
        get_node(req, path);
        break;
    case CFS_M_POST: {
        struct cfs_entry e;
        int r = cfs_stat(path, &e);

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
        other_method(req, path);
        break;
    }
    free(path);
}

/* ---- the typed forms: /api/v1/node, /api/v1/value, /api/v1/link ------- */

/*
 * One kind of node per route, one media type each way, for clients
 * generated from the OpenAPI file: a node's JSON, an attribute's value as
 * JSON (read and store), a link as JSON (read and make). The route table
 * answers the methods they lack (405). A path that names another kind is
 * 409 (ENOTDIR, EISDIR) or, for a link, 404: there is no link there.
 */

/* The JSON body of a typed PUT, with only the members in @allowed and
 * @needed among them; NULL when refused (answered 400 or 415). */
static json_t *typed_body(struct cfs_http_req *req,
                          const char *const *allowed,
                          const char *needed)
{
    json_t *body = cfs_http_json_body(req);

    if (!body) {
        return NULL;
    }
    if (!cfs_http_known_members(req, body, allowed)) {
        json_decref(body);
        return NULL;
    }
    if (!json_object_get(body, needed)) {
        cfs_http_bad_request(req, "\"%s\" is missing", needed);
        json_decref(body);
        return NULL;
    }
    return body;
}

/* GET of a node of the kind @want stands for, else 409 or 404 with @err. */
static void typed_get(struct cfs_http_req *req,
                      const char *path,
                      enum cfs_kind want,
                      int err)
{
    struct cfs_entry e;
    int r = cfs_stat(path, &e);
    bool ok;

    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", path);
        return;
    }
    ok = want == CFS_KIND_LINK   ? e.kind == CFS_KIND_LINK
         : want == CFS_KIND_ATTR ? is_attr(e.kind)
                                 : is_dir(e.kind);
    if (!ok) {
        cfs_http_problem(req,
                         err == -ENOENT ? MHD_HTTP_NOT_FOUND
                                        : MHD_HTTP_CONFLICT,
                         err,
                         NULL,
                         "%s is a %s",
                         path,
                         cfs_kind_name(e.kind));
    } else if (want == CFS_KIND_LINK) {
        reply_link(req, path, &e);
    } else if (want == CFS_KIND_ATTR) {
        get_attr(req, path, &e, true);
    } else {
        get_dir(req, path, &e);
    }
    cfs_entry_done(&e);
}

void cfs_http_handle_node(struct cfs_http_req *req)
{
    char *path = url_path(req);

    if (path) {
        typed_get(req, path, CFS_KIND_ITEM, -ENOTDIR);
    }
    free(path);
}

void cfs_http_handle_value(struct cfs_http_req *req)
{
    char *path = url_path(req);

    if (!path) {
        return;
    }
    if (req->method != CFS_M_PUT) {
        typed_get(req, path, CFS_KIND_ATTR, -EISDIR);
    } else {
        json_t *body = typed_body(
            req, (const char *const[]){"value", "encoding", NULL}, "value");
        if (body) {
            put_value(req, path, body, -EISDIR);
        }
        json_decref(body);
    }
    free(path);
}

void cfs_http_handle_link(struct cfs_http_req *req)
{
    char *path = url_path(req);

    if (!path) {
        return;
    }
    if (req->method != CFS_M_PUT) {
        typed_get(req, path, CFS_KIND_LINK, -ENOENT);
    } else if (strcmp(path, "/") == 0) {
        cfs_http_problem(
            req, MHD_HTTP_CONFLICT, -EEXIST, NULL, "the root is a directory");
    } else {
        json_t *body =
            typed_body(req, (const char *const[]){"target", NULL}, "target");

        if (body) {
            put_target(req, path, json_object_get(body, "target"));
        }
        json_decref(body);
    }
    free(path);
}
