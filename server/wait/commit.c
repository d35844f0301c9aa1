// SPDX-License-Identifier: MIT
/*
 * commit.c - the wait for a durable commit (CFS_WAIT_COMMIT): a handler's
 * transaction goes to the store's commit thread and the worker goes on;
 * the connection sleeps until the change is durable, then the answer the
 * handler built is sent (or replaced by a 503 if the change could not be
 * stored and was undone; in cluster mode, run again after a lost race).
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

/* A commit that failed: the change was undone; the answer says so. */
static void commit_failed(struct cfs_http_req *req, int err)
{
    struct cfs_store_cluster_info cl;

    if (req->srv->opts.store &&
        cfs_store_cluster(req->srv->opts.store, &cl) == 0 && cl.error[0]) {
        /* cluster mode: say which etcd member failed, and how */
        cfs_http_problem(req,
                         MHD_HTTP_SERVICE_UNAVAILABLE,
                         err,
                         NULL,
                         "the change could not be stored and was undone: %s",
                         cl.error);
        return;
    }
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     err,
                     NULL,
                     "the change could not be stored and was undone");
}

/* The store's commit thread: @req's change is durable (@err 0) or was
 * undone. Only the commit fields of @req are touched here; the answer is
 * finished by the worker, when the connection runs again. */
static void commit_done(void *ctx, int err, uint64_t revision)
{
    struct cfs_http_req *req = ctx;
    struct cfs_http_server *srv = req->srv;

    cfs_http_metrics_commit(cfs_http_now_us() - req->wait.commit_start,
                            err == 0);
    if (err == 0) {
        cfs_http_events_publish(srv->events, req->wait.evs);
    } else {
        cfs_http_events_discard(req->wait.evs);
    }
    req->wait.evs = NULL;
    cfs_http_wait_resolve(req, err, err == 0 ? revision : 0);
}

int cfs_http_commit(struct cfs_http_req *req, struct cfs_txn *txn)
{
    struct cfs_http_server *srv = req->srv;
    size_t n = 0;
    const struct cfs_change *ch = cfs_txn_changes(txn, &n);
    struct cfs_http_evbatch *evs = cfs_http_events_prepare(ch, n);
    int r;

    /* A request that changed the tree is never run again as a read is
     * (its answer waits for its own commit instead) */
    req->wait.wrote = req->wait.wrote || n > 0;
    if (!srv->opts.store) {
        cfs_txn_commit(txn); /* a tree in memory only */
        cfs_http_events_publish(srv->events, evs);
        return 0;
    }
    /* Queue the records in revision order and let go of the tree; the
     * answer the handler now builds is sent once they are durable (or
     * replaced by a 503 if they cannot be, and then undone). */
    req->wait.evs = evs;
    cfs_http_wait_begin(req, CFS_WAIT_COMMIT);
    r = cfs_store_submit_async(
        srv->opts.store, txn, req->principal, commit_done, req);
    if (r == 0) {
        return 0;
    }
    /* not queued: no call back will come */
    req->wait.kind = CFS_WAIT_NONE;
    cfs_http_events_discard(evs); /* failed, or nothing changed */
    req->wait.evs = NULL;
    if (r == -ESTALE) {
        /* Refused before it was queued (another node's change is being
         * applied): answered like a lost race, retried by the caller. */
        cfs_http_wait_begin(req, CFS_WAIT_COMMIT);
        cfs_http_wait_ended(req, r);
        return 0;
    }
    if (r < 0) {
        cfs_http_metrics_commit(cfs_http_now_us() - req->wait.commit_start,
                                false);
        commit_failed(req, r);
        return r;
    }
    return 0;
}

void cfs_http_lost_every_race(struct cfs_http_req *req)
{
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     -EAGAIN,
                     NULL,
                     "other nodes of the cluster changed the tree first "
                     "%u times in a row; the change was undone, retry",
                     (unsigned)req->wait.retries + 1);
}

bool cfs_http_commit_finish(struct cfs_http_req *req)
{
    req->wait.kind = CFS_WAIT_NONE;
    if (req->wait.commit_err == -ESTALE) {
        /* Cluster mode: another node appended first and this change was
         * undone. Catch up and run the request again, a bounded number of
         * times, as if it had come after the other node's change; the
         * worker serves its other connections meanwhile. */
        unsigned delay_us = 0;

        if (req->wait.retries >= CFS_HTTP_CAS_RETRIES) {
            cfs_http_lost_every_race(req);
            return false;
        }
        req->wait.retries++;
        if (req->wait.retries > 4) {
            /* Losing again and again: let the others through first
             * (random, growing: nodes that collide drift apart). */
            delay_us = (unsigned)rand_r(&req->wait.jitter) %
                       (200u * req->wait.retries);
        }
        cfs_http_metrics_cas_retry();
        cfs_http_wait_run_again(req);
        return cfs_http_catch_up(
            req, CFS_CATCH_UP_RETRY, 0, delay_us, CFS_HTTP_RETRY_WAIT_MS);
    }
    if (req->wait.commit_err) {
        commit_failed(req, req->wait.commit_err);
    }
    return false;
}
