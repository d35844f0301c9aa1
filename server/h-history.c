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

    if (cfs_http_no_store(req)) {
        return;
    }
    if (path && !cfs_http_absolute(req, path, strlen(path), "path")) {
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
    r = cfs_store_history(cfs_http_opts(req)->store, &q, &es, &n);
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
            json_integer(cfs_store_info(cfs_http_opts(req)->store, &info) == 0
                             ? (json_int_t)info.history_floor
                             : 0));
    }
    cfs_store_history_free(es, n);
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
}
