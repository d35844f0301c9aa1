// SPDX-License-Identifier: MIT
/*
 * read-index.c - the wait before a linearizable read (CFS_WAIT_READ_INDEX,
 * cluster mode): until this node applied everything etcd held when the
 * read came; a write refused on what this node held waits the same way
 * before it runs again (held-read.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

#include <configfs/store.h>

#include "events.h"
#include "metrics.h"
#include "reply.h"
#include "request.h"
#include "wait/wait.h"

/* A linearizable read that could not learn where the cluster's log ends
 * (etcd failed: 503, naming it) or did not reach it in time (504). */
static void index_failed(struct cfs_http_req *req, int err)
{
    struct cfs_store_cluster_info cl;

    if (cfs_store_cluster(req->srv->opts.store, &cl) == 0 && cl.error[0]) {
        cfs_http_problem(req,
                         MHD_HTTP_SERVICE_UNAVAILABLE,
                         err,
                         NULL,
                         "etcd could not say where the cluster's log ends, "
                         "so this read cannot be linearizable (%s); "
                         "?consistency=serializable reads what this node "
                         "has",
                         cl.error);
    } else if (err == -ETIMEDOUT) {
        cfs_http_problem(req,
                         MHD_HTTP_GATEWAY_TIMEOUT,
                         -ETIMEDOUT,
                         NULL,
                         "this node did not apply the cluster's last "
                         "changes within %u ms (it is at %llu); "
                         "?consistency=serializable reads what it has",
                         CFS_HTTP_MIN_REVISION_WAIT_MS,
                         (unsigned long long)cfs_revision());
    } else {
        cfs_http_problem(req,
                         MHD_HTTP_SERVICE_UNAVAILABLE,
                         err,
                         NULL,
                         "this read cannot be linearizable now; "
                         "?consistency=serializable reads what this node "
                         "has");
    }
}

/* Wait (as for a commit) until this node applied what etcd holds now.
 * @return true when there is nothing to wait for. */
bool cfs_http_read_index_start(struct cfs_http_req *req)
{
    int r;

    cfs_http_wait_begin(req, CFS_WAIT_READ_INDEX);
    r = cfs_store_read_index_async(req->srv->opts.store,
                                   CFS_HTTP_MIN_REVISION_WAIT_MS,
                                   cfs_http_caught_up,
                                   req);
    return cfs_http_wait_asked(req, r);
}

bool cfs_http_read_index(struct cfs_http_req *req)
{
    const char *c = cfs_http_query(req, "consistency"); /* decoded */

    if (!req->tree_read || !req->srv->cluster) {
        return true;
    }
    if (c && strcmp(c, "serializable") == 0) {
        return true; /* this node's committed state, maybe behind */
    }
    if (c && strcmp(c, "linearizable") != 0) {
        cfs_http_bad_request(req,
                             "consistency must be linearizable (the "
                             "default) or serializable");
        return false;
    }
    return cfs_http_read_index_start(req);
}

bool cfs_http_read_index_finish(struct cfs_http_req *req)
{
    int err = req->wait.commit_err;

    req->wait.kind = CFS_WAIT_NONE;
    req->wait.commit_err = 0;
    if (err == -ENOMEM) {
        cfs_http_no_memory(req);
    } else if (err < 0) {
        index_failed(req, err);
    }
    return err == 0;
}
