// SPDX-License-Identifier: MIT
/*
 * h-service.c - the server describing itself: GET /api/v1 (version,
 * revision, subsystems, replay problems) and the probes /healthz (it
 * answers) and /readyz (nothing failed to replay).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/schema.h>
#include <configfs/store.h>

#include "h-service.h"
#include "json.h"
#include "reply.h"
#include "scope.h"

void cfs_http_handle_healthz(struct cfs_http_req *req)
{
    json_t *body = json_object();

    json_object_set_new(body, "status", json_string("ok"));
    cfs_http_reply_json(req, MHD_HTTP_OK, body);
}

/* The last committed revision: the store's last durable one (a change not
 * yet durable is never named, docs/DESIGN.md §6), or the tree's without a
 * store. */
static uint64_t committed_revision(struct cfs_http_req *req)
{
    struct cfs_store_info info;
    struct cfs_store *store = cfs_http_opts(req)->store;

    if (store && cfs_store_info(store, &info) == 0) {
        return info.revision;
    }
    return cfs_revision();
}

/* Cluster mode: how far this node follows the shared log, into @o. */
static void put_following(json_t *o, const struct cfs_store_cluster_info *cl)
{
    json_object_set_new(o, "applied", json_integer((json_int_t)cl->applied));
    json_object_set_new(o, "head", json_integer((json_int_t)cl->head));
    json_object_set_new(o, "watching", json_boolean(cl->watching));
}

void cfs_http_handle_readyz(struct cfs_http_req *req)
{
    json_t *problems = cfs_http_problems_json(req);
    struct cfs_store_cluster_info cl;
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
    if (cfs_http_opts(req)->store &&
        cfs_store_cluster(cfs_http_opts(req)->store, &cl) == 0 &&
        (!cl.watching || cl.applied < cl.head || cl.error[0] ||
         cl.fell_behind)) {
        json_t *extra = json_object();

        put_following(extra, &cl);
        if (cl.fell_behind) {
            json_object_set_new(extra, "fell_behind", json_true());
        }
        if (cl.error[0]) {
            json_object_set_new(extra, "etcd", json_string(cl.error));
        }
        cfs_http_problem_json(
            req,
            MHD_HTTP_SERVICE_UNAVAILABLE,
            cl.error[0] ? -ETIMEDOUT : -EAGAIN,
            "Not Ready",
            cl.error[0]      ? "the etcd cluster cannot be reached or has no "
                               "quorum; reads may be stale"
            : cl.fell_behind ? "this node fell behind the trimmed log and "
                               "restarts to load the snapshot"
                             : "this node has not caught up with the cluster",
            extra);
        return;
    }
    body = json_object();
    json_object_set_new(body, "status", json_string("ready"));
    json_object_set_new(
        body, "revision", json_integer((json_int_t)committed_revision(req)));
    cfs_http_reply_json(req, MHD_HTTP_OK, body);
}

/* Cluster mode: how far this node follows the shared log, and where a
 * client that wants the shortest path for its writes sends them (the
 * writer appends for the others: docs/cluster.md, One writer). */
static json_t *cluster_json(const struct cfs_store_cluster_info *cl)
{
    json_t *c = json_object();
    json_t *writer = cl->writer[0] ? json_string(cl->writer) : NULL;

    put_following(c, cl);
    /* null while none is known, and without --forward-writes */
    json_object_set_new(c, "writer", writer ? writer : json_null());
    json_object_set_new(c, "is_writer", json_boolean(cl->writer_self));
    return c;
}

void cfs_http_handle_api_root(struct cfs_http_req *req)
{
    const struct cfs_http_options *o = cfs_http_opts(req);
    struct cfs_store_cluster_info cl;
    json_t *doc = json_object();
    json_t *subs = json_array();
    json_t *described = json_array();
    struct cfs_entry *es = NULL;
    size_t n = 0;

    if (cfs_readdir("/", &es, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            struct cfs_schema *sc =
                o->schemas ? cfs_schema_set_find(o->schemas, es[i].name) : NULL;
            char *p = cfs_http_join("/", es[i].name);
            bool seen = p && cfs_http_scope_sees(req->scope, p);

            free(p);
            if (!seen) {
                continue; /* outside the token's subtrees */
            }
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
        doc, "revision", json_integer((json_int_t)committed_revision(req)));
    json_object_set_new(doc, "subsystems", subs);
    json_object_set_new(doc, "described", described);
    json_object_set_new(doc, "problems", cfs_http_problems_json(req));
    if (o->store && cfs_store_cluster(o->store, &cl) == 0) {
        json_object_set_new(doc, "cluster", cluster_json(&cl));
    }
    cfs_http_reply_json(req, MHD_HTTP_OK, doc);
}
