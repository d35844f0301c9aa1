// SPDX-License-Identifier: MIT
/*
 * catch-up.c - the wait for this node to apply a revision
 * (CFS_WAIT_CATCH_UP, cluster mode): ?min_revision=, or a write that lost
 * a race to another node, run again once the node caught up.
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

void cfs_http_caught_up(void *ctx, int err)
{
    cfs_http_wait_resolve(ctx, err, 0);
}

/* The store was asked to wait for @req (@r its answer): true when there is
 * nothing to wait for, false when the request waits (called back), or has
 * its result at once (no call back will come: as if called back). */
bool cfs_http_wait_asked(struct cfs_http_req *req, int r)
{
    if (r == 1) {
        req->wait.kind = CFS_WAIT_NONE;
        return true;
    }
    if (r < 0) {
        cfs_http_wait_ended(req, r);
    }
    return false;
}

bool cfs_http_catch_up(struct cfs_http_req *req,
                       enum cfs_http_catch_up_why why,
                       uint64_t revision,
                       unsigned delay_us,
                       unsigned timeout_ms)
{
    int r;

    cfs_http_wait_begin(req, CFS_WAIT_CATCH_UP);
    req->wait.catch_up_why = why;
    r = cfs_store_catch_up_async(req->srv->opts.store,
                                 revision,
                                 delay_us,
                                 timeout_ms,
                                 cfs_http_caught_up,
                                 req);
    return cfs_http_wait_asked(req, r);
}

bool cfs_http_catch_up_finish(struct cfs_http_req *req)
{
    enum cfs_http_catch_up_why why = req->wait.catch_up_why;
    int err = req->wait.commit_err;

    req->wait.kind = CFS_WAIT_NONE;
    req->wait.commit_err = 0;
    if (why == CFS_CATCH_UP_RETRY) {
        if (err < 0) {
            cfs_http_lost_every_race(req);
        }
        return err == 0;
    }
    if (err == -ENOMEM) {
        cfs_http_no_memory(req);
    } else if (err < 0) {
        cfs_http_problem(req,
                         MHD_HTTP_GATEWAY_TIMEOUT,
                         -ETIMEDOUT,
                         NULL,
                         "revision %llu was not applied on this node within "
                         "%u ms (it is at %llu)",
                         (unsigned long long)req->wait.min_revision,
                         CFS_HTTP_MIN_REVISION_WAIT_MS,
                         (unsigned long long)cfs_revision());
    }
    return err == 0;
}
