// SPDX-License-Identifier: MIT
/*
 * held-read.c - committed reads (docs/DESIGN.md "Committed reads";
 * CFS_WAIT_HELD_READ): an answer that says what the tree holds is held
 * until what it read is committed, run again when it was torn or undone,
 * under the mutation lock from the CFS_HTTP_READ_LOCK_AFTER-th run.
 *
 * A held read's life: on srv->held (wait.on_list) exactly while it waits;
 * core's read hook takes it off the list, then resolves it; it is answered
 * or run again only after that (cfs_http_read_finish() asserts it is off).
 */
#include <assert.h>
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

void cfs_http_read_begin(struct cfs_http_req *req)
{
    if (req->tree_answer) {
        cfs_read_begin(&req->wait.rmark);
    }
}

bool cfs_http_read_locked(const struct cfs_http_req *req)
{
    return req->tree_answer && req->wait.rereads >= CFS_HTTP_READ_LOCK_AFTER &&
           (req->method == CFS_M_GET || req->method == CFS_M_HEAD) &&
           !req->in.outer;
}

/* Something the read saw was undone: read again, a bounded number of
 * times. @return true to run the handler again. */
static bool read_again(struct cfs_http_req *req)
{
    cfs_http_wait_run_again(req);
    if (++req->wait.rereads <= CFS_HTTP_REREADS) {
        cfs_http_metrics_read_again(cfs_http_read_locked(req));
        return true;
    }
    cfs_http_problem(req,
                     MHD_HTTP_SERVICE_UNAVAILABLE,
                     -EAGAIN,
                     NULL,
                     "changes to what this read reads were undone %u "
                     "times in a row (the store fails, or other nodes win "
                     "every race for it); retry",
                     (unsigned)CFS_HTTP_REREADS);
    return false;
}

bool cfs_http_read_hold(struct cfs_http_req *req)
{
    struct cfs_http_server *srv = req->srv;
    int r;

    if (!req->resp) {
        return false;
    }
    if (srv->cluster && !req->tree_read && req->status >= 400 &&
        req->status != MHD_HTTP_SERVICE_UNAVAILABLE && !req->wait.indexed) {
        /* Cluster mode: a write refused on what this node holds (412,
         * 404, EEXIST...) may be refused on a state that is behind the
         * cluster's. It runs again once this node applied everything etcd
         * holds now: a refusal then is one of the current state. */
        req->wait.indexed = true;
        cfs_http_wait_run_again(req);
        return cfs_http_read_index_start(req);
    }
    r = cfs_read_end(&req->wait.rmark); /* no lock: the common case */
    if (r != -EINPROGRESS) {
        return r == -EAGAIN && read_again(req);
    }
    pthread_mutex_lock(&srv->h_lock);
    r = cfs_read_end(&req->wait.rmark); /* again, where the hook looks */
    if (r == -EINPROGRESS) {
        /* On the list before the lock goes: the hook that ends the
         * transaction it waits for finds it there. */
        cfs_http_wait_begin(req, CFS_WAIT_HELD_READ);
        req->wait.on_list = true;
        req->wait.hprev = NULL;
        req->wait.hnext = srv->held;
        if (srv->held) {
            srv->held->wait.hprev = req;
        }
        srv->held = req;
        atomic_fetch_add(&srv->n_held, 1);
    }
    pthread_mutex_unlock(&srv->h_lock);
    return r == -EAGAIN && read_again(req);
}

bool cfs_http_read_finish(struct cfs_http_req *req)
{
    int err = req->wait.commit_err;

    /* the hook took it off srv->held before it resolved it */
    assert(!req->wait.on_list);

    req->wait.kind = CFS_WAIT_NONE;
    req->wait.commit_err = 0;
    return err == -EAGAIN && read_again(req);
}

void cfs_http_reads_hook(void *arg)
{
    struct cfs_http_server *srv = arg;
    struct cfs_http_req *ready = NULL, *req, *next;

    if (atomic_load(&srv->n_held) == 0) {
        return;
    }
    pthread_mutex_lock(&srv->h_lock);
    for (req = srv->held; req; req = next) {
        int r = cfs_read_end(&req->wait.rmark);

        next = req->wait.hnext;
        if (r == -EINPROGRESS) {
            continue;
        }
        if (req->wait.hprev) {
            req->wait.hprev->wait.hnext = next;
        } else {
            srv->held = next;
        }
        if (next) {
            next->wait.hprev = req->wait.hprev;
        }
        req->wait.on_list = false;
        req->wait.hprev = NULL;
        atomic_fetch_sub(&srv->n_held, 1);
        req->wait.commit_err = r;
        req->wait.hnext = ready;
        ready = req;
    }
    pthread_mutex_unlock(&srv->h_lock);
    for (req = ready; req; req = next) {
        next = req->wait.hnext;
        cfs_http_wait_resolve(req, req->wait.commit_err, 0);
    }
}
