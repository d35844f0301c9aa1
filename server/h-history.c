// SPDX-License-Identifier: MIT
/*
 * h-history.c - GET /api/v1/history: the store's journal, newest first,
 * a page at a time. Without a store (a tree in memory only) it is 503.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <configfs/store.h>

#include "h-history.h"
#include "json.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

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

/* One journal row as JSON. */
static json_t *entry_json(const struct cfs_store_history_entry *h)
{
    json_t *e = json_object();
    char when[48];
    time_t secs = (time_t)(h->time_us / 1000000);
    struct tm tm;
    size_t w;

    gmtime_r(&secs, &tm);
    w = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    (void)snprintf(
        when + w, sizeof(when) - w, ".%06dZ", (int)(h->time_us % 1000000));
    json_object_set_new(e, "revision", json_integer((json_int_t)h->revision));
    json_object_set_new(e, "time", json_string(when));
    json_object_set_new(
        e, "principal", h->principal ? json_string(h->principal) : json_null());
    json_object_set_new(e, "op", json_string(cfs_op_name(h->op)));
    json_object_set_new(e, "path", json_string(h->path));
    if (h->write_only) {
        json_object_set_new(e, "write_only", json_true());
    }
    if (h->op == CFS_OP_RENAME) {
        json_object_set_new(e, "from", json_string(h->path));
        json_object_set_new(e, "to", json_string(h->arg ? h->arg : ""));
    } else if (h->arg && h->op == CFS_OP_STORE) {
        value_json(e, "value", h->arg, h->arg_len);
    } else if (h->arg) {
        json_object_set_new(e, "target", json_string(h->arg));
    }
    if (h->old) {
        value_json(e, "old", h->old, h->old_len);
    }
    return e;
}

/* A row a scoped token may see: every path it names in its subtrees. */
static bool row_seen(const struct cfs_http_scope *scope,
                     const struct cfs_store_history_entry *h)
{
    const char *path2 = h->op == CFS_OP_RENAME || h->op == CFS_OP_SYMLINK ||
                                h->op == CFS_OP_UNLINK
                            ? h->arg
                            : NULL;

    return cfs_http_scope_covers(scope, h->path) &&
           cfs_http_scope_covers(scope, path2);
}

#define SCAN_CHUNK  10000
#define SCAN_ROUNDS 64

/* A page for a scoped token: the journal read in chunks, newest first,
 * until @limit rows it may see are found, at most SCAN_ROUNDS chunks (then
 * next_before says where to go on). A chunk ends before its oldest
 * revision, which the next chunk reads whole, so no revision is cut in
 * two. @return 0, or a negative errno of the store. */
static int scoped_page(struct cfs_http_req *req,
                       const struct cfs_store_history_query *q,
                       json_t *arr,
                       uint64_t *ret_next)
{
    size_t limit = q->limit ? q->limit : 100;
    uint64_t before = q->before;
    size_t kept = 0;

    *ret_next = 0;
    for (int round = 0; round < SCAN_ROUNDS; round++) {
        struct cfs_store_history_query sq = {
            .path = q->path, .before = before, .limit = SCAN_CHUNK};
        struct cfs_store_history_entry *es = NULL;
        size_t n = 0, end;
        bool more;
        int r = cfs_store_history(cfs_http_opts(req)->store, &sq, &es, &n);

        if (r < 0) {
            return r;
        }
        more = n == SCAN_CHUNK;
        end = n;
        if (more) {
            while (end > 0 && es[end - 1].revision == es[n - 1].revision) {
                end--;
            }
            if (end == 0) {
                end = n; /* one revision fills the chunk: read it all */
            }
            before = end < n ? es[end].revision : es[n - 1].revision;
        }
        for (size_t i = 0; i < end; i++) {
            if (!row_seen(req->scope, &es[i])) {
                continue;
            }
            json_array_append_new(arr, entry_json(&es[i]));
            if (++kept == limit) {
                *ret_next = es[i].revision;
                cfs_store_history_free(es, n);
                return 0;
            }
        }
        cfs_store_history_free(es, n);
        if (!more) {
            return 0;
        }
    }
    *ret_next = before; /* scanned enough for one request */
    return 0;
}

void cfs_http_handle_history(struct cfs_http_req *req)
{
    struct cfs_store_history_query q = {0};
    struct cfs_store_history_entry *es = NULL;
    const char *path = cfs_http_query(req, "path");
    const char *before = cfs_http_query(req, "before");
    const char *limit = cfs_http_query(req, "limit");
    json_t *doc, *arr;
    uint64_t v, next = 0;
    size_t n = 0;
    int r;

    if (cfs_http_no_store(req)) {
        return;
    }
    if (path && (!cfs_http_absolute(req, path, strlen(path), "path") ||
                 !cfs_http_scope_allow(req, path, false))) {
        return;
    }
    q.path = path;
    if (before) {
        if (parse_u64(before, UINT64_MAX, &v) < 0) {
            cfs_http_bad_request(req, "before must be a revision");
            return;
        }
        q.before = v;
    }
    if (limit) {
        if (parse_u64(limit, 10000, &v) < 0 || v == 0) {
            cfs_http_bad_request(req, "limit must be 1 to 10000");
            return;
        }
        q.limit = (size_t)v;
    }
    arr = json_array();
    if (req->scope) {
        r = scoped_page(req, &q, arr, &next);
    } else {
        r = cfs_store_history(cfs_http_opts(req)->store, &q, &es, &n);
        for (size_t i = 0; r == 0 && i < n; i++) {
            json_array_append_new(arr, entry_json(&es[i]));
        }
        /* a full page: the next one starts below its oldest revision */
        if (r == 0 && n > 0 && n == (q.limit ? q.limit : 100)) {
            next = es[n - 1].revision;
        }
        cfs_store_history_free(es, n);
    }
    if (r < 0) {
        json_decref(arr);
        cfs_http_problem(req, 0, r, NULL, "cannot read the journal");
        return;
    }
    doc = json_object();
    json_object_set_new(doc, "entries", arr);
    json_object_set_new(doc,
                        "next_before",
                        next ? json_integer((json_int_t)next) : json_null());
    {
        struct cfs_store_info info;

        json_object_set_new(
            doc,
            "floor",
            json_integer(cfs_store_info(cfs_http_opts(req)->store, &info) == 0
                             ? (json_int_t)info.history_floor
                             : 0));
    }
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
}
