// SPDX-License-Identifier: MIT
/*
 * handlers.c - the configuration routes: GET/POST/PUT/DELETE under
 * /api/v1/config/, rename and batch. Each maps one HTTP request onto one
 * transaction of core operations, so a request either stands whole or
 * changes nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <configfs/schema.h>

#include "http-internal.h"

/* ---- small helpers ----------------------------------------------------- */

/* /api/v1/config + the path, each segment percent-encoded. */
static char *config_url(const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t len = strlen(path);
    char *out = malloc(strlen("/api/v1/config") + 3 * len + 2);
    size_t o;

    if (!out) {
        return NULL;
    }
    o = (size_t)sprintf(out, "/api/v1/config");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)path[i];

        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            c == '/') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static bool content_is_json(struct cfs_http_req *req)
{
    const char *ct = cfs_http_header_in(req, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n = strlen("application/json");

    return ct && strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Parse a JSON object body; on failure answer 400/415 and return NULL. */
json_t *cfs_http_json_body(struct cfs_http_req *req)
{
    json_error_t jerr;
    json_t *body;

    if (!content_is_json(req)) {
        cfs_http_problem(req,
                         MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                         -EINVAL,
                         NULL,
                         "the body must be application/json");
        return NULL;
    }
    body = json_loadb(req->body ? req->body : "",
                      req->body_len,
                      JSON_REJECT_DUPLICATES,
                      &jerr);
    if (!body) {
        json_t *extra = json_object();

        json_object_set_new(extra, "line", json_integer(jerr.line));
        json_object_set_new(extra, "column", json_integer(jerr.column));
        cfs_http_problem_json(req,
                              MHD_HTTP_BAD_REQUEST,
                              -EINVAL,
                              "Malformed JSON",
                              jerr.text,
                              extra);
        return NULL;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "the body must be a JSON object");
        return NULL;
    }
    return body;
}

/* Refuse a body with a member not in @allowed (NULL-terminated): 400.
 * @return true when every member is known. */
static bool known_members(struct cfs_http_req *req,
                          json_t *body,
                          const char *const *allowed)
{
    const char *key;
    json_t *v;

    json_object_foreach(body, key, v) {
        size_t i = 0;

        while (allowed[i] && strcmp(key, allowed[i]) != 0) {
            i++;
        }
        if (!allowed[i]) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "unknown member \"%s\"",
                             key);
            return false;
        }
    }
    return true;
}

/* A problem for an errno from the object model (DESIGN section 9). */
static void op_problem(struct cfs_http_req *req,
                       int err,
                       const char *what,
                       const char *path)
{
    const char *why = cfs_schema_last_detail(); /* a schema rule, if any */

    cfs_http_problem(req,
                     0,
                     err,
                     NULL,
                     "%s %s: %s",
                     what,
                     path,
                     why && *why ? why : strerror(-err));
}

static int base64_val(int c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static char *base64_decode(const char *in, size_t *ret_len)
{
    size_t len = strlen(in);
    char *out = malloc(len / 4 * 3 + 3);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        int v;

        if (in[i] == '=') {
            break;
        }
        v = base64_val((unsigned char)in[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    *ret_len = o;
    return out;
}

/*
 * A value given in JSON: a string (its bytes), an integer, a real or a
 * boolean (their text); {"value":…, "encoding":"base64"} for bytes.
 * @return a new buffer, or NULL with *ret_err set to a reason.
 */
char *cfs_http_json_value_bytes(json_t *v,
                                json_t *encoding,
                                size_t *ret_len,
                                const char **ret_err)
{
    char *out;

    if (encoding && !json_is_null(encoding)) {
        if (!json_is_string(encoding) ||
            strcmp(json_string_value(encoding), "base64") != 0 ||
            !json_is_string(v)) {
            *ret_err = "\"encoding\" must be \"base64\" with a string value";
            return NULL;
        }
        out = base64_decode(json_string_value(v), ret_len);
        if (!out) {
            *ret_err = "the value is not valid base64";
        }
        return out;
    }
    if (json_is_string(v)) {
        *ret_len = json_string_length(v);
        out = malloc(*ret_len + 1);
        if (out) {
            memcpy(out, json_string_value(v), *ret_len + 1);
        }
        return out;
    }
    if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v)) {
        char buf[64];

        if (json_is_integer(v)) {
            (void)snprintf(buf,
                           sizeof(buf),
                           "%" JSON_INTEGER_FORMAT,
                           json_integer_value(v));
        } else if (json_is_real(v)) {
            (void)snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
        } else {
            (void)snprintf(
                buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
        }
        *ret_len = strlen(buf);
        return strdup(buf);
    }
    *ret_err = "a value must be a string, a number or a boolean";
    return NULL;
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

static const char *allow_for(enum cfs_kind kind)
{
    switch (kind) {
    case CFS_KIND_ROOT:
    case CFS_KIND_SUBSYSTEM:
    case CFS_KIND_GROUP:
    case CFS_KIND_ITEM:
        return "GET, HEAD, POST, DELETE";
    case CFS_KIND_LINK:
        return "GET, HEAD, DELETE";
    default:
        return "GET, HEAD, PUT";
    }
}

static void not_allowed(struct cfs_http_req *req, enum cfs_kind kind)
{
    cfs_http_problem(req,
                     MHD_HTTP_METHOD_NOT_ALLOWED,
                     -EOPNOTSUPP,
                     NULL,
                     "%s does not apply to a %s",
                     req->method_name,
                     cfs_kind_name(kind));
    cfs_http_header(req, MHD_HTTP_HEADER_ALLOW, allow_for(kind));
}

/* ---- GET --------------------------------------------------------------- */

/* Answer with the attribute JSON of DESIGN section 4. */
static void reply_attr(struct cfs_http_req *req,
                       const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len)
{
    char *text = NULL;
    size_t text_len = 0;

    if (cfs_http_attr_text(path, e, buf, len, &text, &text_len) < 0) {
        cfs_http_problem(req, 0, -ENOMEM, NULL, "out of memory");
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
        op_problem(req, r, "show", path);
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
        op_problem(req, r, "stat", path);
        return;
    }
    switch (e.kind) {
    case CFS_KIND_ATTR:
    case CFS_KIND_BIN_ATTR:
        get_attr(req, path, &e);
        break;
    case CFS_KIND_LINK: {
        json_t *l = json_object();

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
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "depth must be an integer from 0 to 64");
            break;
        }
        values = cfs_http_query(req, "values");
        if (values && strcmp(values, "0") != 0 && strcmp(values, "1") != 0) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "values must be 0 or 1");
            break;
        }
        r = cfs_http_node_text(path,
                               &e,
                               depth,
                               !values || strcmp(values, "1") == 0,
                               &text,
                               &text_len);
        if (r < 0) {
            op_problem(req, r, "readdir", path);
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
    if (!known_members(
            req, body, (const char *const[]){"name", "attributes", NULL})) {
        goto out;
    }
    if (!json_is_string(jname)) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "\"name\" must be a string");
        goto out;
    }
    if (jattrs && !json_is_object(jattrs)) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "\"attributes\" must be an object");
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
    r = child ? cfs_txn_begin(&txn) : -ENOMEM;
    if (r < 0) {
        op_problem(req, r, "mkdir", path);
        goto out;
    }
    r = cfs_stat(path, &parent);
    if (r < 0) {
        op_problem(req, r, "mkdir in", path);
        goto abort;
    }
    rev = parent.revision;
    cfs_entry_done(&parent);
    if (!cfs_http_if_match(req, rev)) {
        goto abort;
    }
    r = cfs_mkdir(txn, child);
    if (r < 0) {
        op_problem(req, r, "mkdir", child);
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
                cfs_http_problem(req,
                                 MHD_HTTP_BAD_REQUEST,
                                 -EINVAL,
                                 NULL,
                                 "attribute \"%s\": %s",
                                 key,
                                 why);
            } else {
                op_problem(req, r, "store", apath ? apath : key);
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
    r = cfs_http_node_text(child, NULL, 0, true, &text, &text_len);
    if (r < 0) {
        op_problem(req, r, "stat", child); /* removed meanwhile */
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
        cfs_http_problem(req,
                         MHD_HTTP_INTERNAL_SERVER_ERROR,
                         -ENOMEM,
                         NULL,
                         "out of memory");
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
        op_problem(req, r, "symlink", path);
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
        op_problem(req, r, op, path);
        return false;
    }
    r = cfs_stat(path, ret_e);
    if (r < 0) {
        op_problem(req, r, op, path);
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
        op_problem(req, r, "store", path);
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
    if (!content_is_json(req)) {
        put_store(req, path, req->body ? req->body : "", req->body_len);
        return;
    }
    body = cfs_http_json_body(req);
    if (!body) {
        return;
    }
    target = json_object_get(body, "target");
    value = json_object_get(body, "value");
    if (!known_members(
            req,
            body,
            (const char *const[]){"target", "value", "encoding", NULL})) {
        json_decref(body);
        return;
    }
    if ((target && value) || (!target && !value)) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "give either \"target\" (a symlink) or \"value\" "
                         "(a store)");
    } else if (target) {
        if (!json_is_string(target) || json_string_value(target)[0] != '/' ||
            strlen(json_string_value(target)) != json_string_length(target)) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "\"target\" must be an absolute config path");
        } else {
            put_symlink(req, path, json_string_value(target));
        }
    } else {
        const char *why = NULL;
        size_t len = 0;
        char *bytes = cfs_http_json_value_bytes(
            value, json_object_get(body, "encoding"), &len, &why);

        if (!bytes) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "%s",
                             why ? why : "out of memory");
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
        op_problem(req, r, e.kind == CFS_KIND_LINK ? "unlink" : "rmdir", path);
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

void cfs_http_handle_config(struct cfs_http_req *req, const char *rest)
{
    char *path = NULL;
    int r = cfs_http_config_path(rest, &path);

    if (r < 0) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         r,
                         "Invalid path",
                         "each path segment must be a valid name: 1-255 "
                         "bytes of UTF-8 without '/' or control bytes");
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
            op_problem(req, r, "mkdir in", path);
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

/* ---- rename ------------------------------------------------------------ */

static int
body_path(struct cfs_http_req *req, json_t *v, const char *what, char **ret)
{
    const char *s;
    int r;

    if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "\"%s\" must be an absolute config path",
                         what);
        return -EINVAL;
    }
    s = json_string_value(v);
    /* Same rules as a URL path, without percent-decoding. */
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "/");

        if (n > 0) {
            r = cfs_name_check(p, n);
            if (r < 0) {
                cfs_http_problem(req,
                                 MHD_HTTP_BAD_REQUEST,
                                 r,
                                 "Invalid path",
                                 "\"%s\" has an invalid name",
                                 what);
                return r;
            }
        }
        p += n;
        while (*p == '/') {
            p++;
        }
    }
    *ret = strdup(s);
    return *ret ? 0 : -ENOMEM;
}

void cfs_http_handle_rename(struct cfs_http_req *req)
{
    json_t *body = cfs_http_json_body(req);
    char *from = NULL, *to = NULL;
    struct cfs_txn *txn = NULL;
    struct cfs_entry e;
    char *text = NULL;
    size_t text_len = 0;
    uint64_t rev;
    int r;

    if (!body) {
        return;
    }
    if (json_object_size(body) != 2 ||
        body_path(req, json_object_get(body, "from"), "from", &from) < 0 ||
        body_path(req, json_object_get(body, "to"), "to", &to) < 0) {
        if (!req->resp) {
            cfs_http_problem(req,
                             MHD_HTTP_BAD_REQUEST,
                             -EINVAL,
                             NULL,
                             "the body is {\"from\": PATH, \"to\": PATH}");
        }
        goto out;
    }
    r = cfs_txn_begin(&txn);
    if (r == 0) {
        r = cfs_stat(from, &e);
        if (r == 0) {
            rev = e.revision;
            cfs_entry_done(&e);
            if (!cfs_http_if_match(req, rev)) {
                cfs_txn_abort(txn);
                goto out;
            }
            r = cfs_rename(txn, from, to);
        }
    }
    if (r < 0) {
        op_problem(req, r, "rename", from);
        cfs_txn_abort(txn);
        goto out;
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    r = cfs_http_node_text(to, NULL, 0, true, &text, &text_len);
    if (r < 0) {
        op_problem(req, r, "stat", to);
        goto out;
    }
    cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len);
    if (rev) {
        cfs_http_etag(req, rev);
    }
out:
    free(from);
    free(to);
    json_decref(body);
}

/* ---- batch ------------------------------------------------------------- */

static const char *const batch_ops[] = {
    "mkdir", "rmdir", "store", "symlink", "unlink", "rename"};

static void batch_problem(struct cfs_http_req *req,
                          int status,
                          int err,
                          size_t index,
                          const char *detail)
{
    json_t *extra = json_object();

    json_object_set_new(extra, "op_index", json_integer((json_int_t)index));
    cfs_http_problem_json(req, status, err, NULL, detail, extra);
}

void cfs_http_handle_batch(struct cfs_http_req *req)
{
    json_t *body = cfs_http_json_body(req);
    json_t *ops, *op, *ifrev, *results = NULL;
    struct cfs_txn *txn = NULL;
    const char *key;
    json_t *v;
    size_t i;
    uint64_t rev;
    int r;

    if (!body) {
        return;
    }
    ops = json_object_get(body, "ops");
    ifrev = json_object_get(body, "if_revision");
    if (!known_members(
            req, body, (const char *const[]){"ops", "if_revision", NULL})) {
        goto out;
    }
    if (!json_is_array(ops) || (ifrev && !json_is_integer(ifrev))) {
        cfs_http_problem(req,
                         MHD_HTTP_BAD_REQUEST,
                         -EINVAL,
                         NULL,
                         "the body is {\"ops\": [...], \"if_revision\": N?}");
        goto out;
    }
    if (json_array_size(ops) > CFS_BATCH_MAX) {
        cfs_http_problem(req,
                         MHD_HTTP_CONTENT_TOO_LARGE,
                         -E2BIG,
                         NULL,
                         "at most %d operations per batch",
                         CFS_BATCH_MAX);
        goto out;
    }
    /* Check the syntax of every op before anything changes. */
    json_array_foreach(ops, i, op) {
        const char *name = json_string_value(json_object_get(op, "op"));
        bool known = false;

        for (size_t k = 0; name && k < 6; k++) {
            known |= strcmp(name, batch_ops[k]) == 0;
        }
        if (!json_is_object(op) || !known) {
            batch_problem(req,
                          MHD_HTTP_BAD_REQUEST,
                          -EINVAL,
                          i,
                          "each op is an object whose \"op\" is mkdir, "
                          "rmdir, store, symlink, unlink or rename");
            goto out;
        }
        json_object_foreach(op, key, v) {
            if (strcmp(key, "op") != 0 && strcmp(key, "path") != 0 &&
                strcmp(key, "value") != 0 && strcmp(key, "encoding") != 0 &&
                strcmp(key, "target") != 0 && strcmp(key, "from") != 0 &&
                strcmp(key, "to") != 0) {
                batch_problem(req,
                              MHD_HTTP_BAD_REQUEST,
                              -EINVAL,
                              i,
                              "unknown member in op");
                goto out;
            }
        }
        if (strcmp(name, "rename") == 0) {
            char *a = NULL, *b = NULL;

            r = body_path(req, json_object_get(op, "from"), "from", &a);
            if (r == 0) {
                r = body_path(req, json_object_get(op, "to"), "to", &b);
            }
            free(a);
            free(b);
        } else {
            char *p = NULL;

            r = body_path(req, json_object_get(op, "path"), "path", &p);
            free(p);
            if (r == 0 && strcmp(name, "symlink") == 0) {
                r = body_path(req, json_object_get(op, "target"), "target", &p);
                free(p);
            }
            if (r == 0 && strcmp(name, "store") == 0 &&
                !json_object_get(op, "value")) {
                r = -EINVAL;
            }
        }
        if (r < 0) {
            batch_problem(req,
                          MHD_HTTP_BAD_REQUEST,
                          r == -ENAMETOOLONG ? r : -EINVAL,
                          i,
                          "op has a missing or invalid path, target or value");
            goto out;
        }
    }

    r = cfs_txn_begin(&txn);
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot start a transaction");
        goto out;
    }
    if (!cfs_http_if_match(req, cfs_revision())) { /* the tree's */
        cfs_txn_abort(txn);
        goto out;
    }
    if (ifrev && (uint64_t)json_integer_value(ifrev) != cfs_revision()) {
        cfs_http_problem(req,
                         MHD_HTTP_PRECONDITION_FAILED,
                         -ESTALE,
                         NULL,
                         "if_revision %lld is not the current revision %llu",
                         (long long)json_integer_value(ifrev),
                         (unsigned long long)cfs_revision());
        cfs_txn_abort(txn);
        goto out;
    }
    results = json_array();
    json_array_foreach(ops, i, op) {
        const char *name = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        json_t *res = json_object();

        if (strcmp(name, "mkdir") == 0) {
            r = cfs_mkdir(txn, path);
        } else if (strcmp(name, "rmdir") == 0) {
            r = cfs_rmdir(txn, path);
        } else if (strcmp(name, "store") == 0) {
            const char *why = NULL;
            size_t len = 0;
            char *bytes =
                cfs_http_json_value_bytes(json_object_get(op, "value"),
                                          json_object_get(op, "encoding"),
                                          &len,
                                          &why);

            if (!bytes) {
                json_decref(res);
                batch_problem(req,
                              MHD_HTTP_BAD_REQUEST,
                              -EINVAL,
                              i,
                              why ? why : "out of memory");
                cfs_txn_abort(txn);
                goto out;
            }
            r = cfs_store(txn, path, bytes, len);
            free(bytes);
        } else if (strcmp(name, "symlink") == 0) {
            r = cfs_symlink(
                txn, path, json_string_value(json_object_get(op, "target")));
        } else if (strcmp(name, "unlink") == 0) {
            r = cfs_unlink(txn, path);
        } else {
            path = json_string_value(json_object_get(op, "from"));
            r = cfs_rename(
                txn, path, json_string_value(json_object_get(op, "to")));
        }
        if (r < 0) {
            char detail[512];

            json_decref(res);
            (void)snprintf(detail,
                           sizeof(detail),
                           "op %zu (%s %s): %s",
                           i,
                           name,
                           path,
                           *cfs_schema_last_detail() ? cfs_schema_last_detail()
                                                     : strerror(-r));
            batch_problem(req, 0, r, i, detail);
            cfs_txn_abort(txn);
            goto out;
        }
        json_object_set_new(res, "op", json_string(name));
        json_object_set_new(res, "path", json_string(path));
        json_object_set_new(res, "status", json_string("ok"));
        json_array_append_new(results, res);
    }
    rev = cfs_txn_revision(txn);
    if (!rev) {
        rev = cfs_revision();
    }
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    {
        json_t *doc = json_object();

        json_object_set_new(doc, "revision", json_integer((json_int_t)rev));
        json_object_set_new(doc, "results", results);
        results = NULL;
        cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    }
out:
    json_decref(results);
    json_decref(body);
}

/* ---- GET /api/v1 ------------------------------------------------------- */

void cfs_http_handle_api_root(struct cfs_http_req *req)
{
    const struct cfs_http_options *o = cfs_http_opts(req);
    json_t *doc = json_object();
    json_t *subs = json_array();
    json_t *described = json_array();
    struct cfs_entry *es = NULL;
    size_t n = 0;

    if (cfs_readdir("/", &es, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            struct cfs_schema *sc =
                o->schemas ? cfs_schema_set_find(o->schemas, es[i].name) : NULL;

            json_array_append_new(subs, json_string(es[i].name));
            if (sc && cfs_schema_registered(sc)) {
                json_array_append_new(described, json_string(es[i].name));
            }
        }
        cfs_entries_free(es, n);
    }
    json_object_set_new(doc, "name", json_string("configfsd"));
    json_object_set_new(doc, "version", json_string(CFS_VERSION));
    json_object_set_new(
        doc, "revision", json_integer((json_int_t)cfs_revision()));
    json_object_set_new(doc, "subsystems", subs);
    json_object_set_new(doc, "described", described);
    json_object_set_new(doc, "problems", cfs_http_problems_json(req));
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
}

/* ---- GET /api/v1/schema/{subsystem} ------------------------------------ */

void cfs_http_handle_schema(struct cfs_http_req *req, const char *raw)
{
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
