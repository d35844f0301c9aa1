// SPDX-License-Identifier: MIT
/*
 * wait.c - where a request that waits meets whoever ends its wait: the
 * worker that ran its handler moves it on once, and the thread that ends
 * the wait (the store's commit thread, core's read hook, the etcd waiter,
 * the forwarder) once; whoever comes second acts. What a request waits for
 * is its kind (enum cfs_http_wait_kind, context.h), each in a file of its
 * own: commit.c, catch-up.c, read-index.c, held-read.c; forward.c and
 * fwd-batch.c for a cluster's forwarded writes; mount-commit.c is the
 * mount's synchronous commit.
 *
 * No lock on that path: the two meet on one atomic state per request.
 * While the server stops, workers wait for their wait to end instead of
 * suspending (cfs_http_wait_stop()).
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

/*
 * Where a request that waits for its commit is: the worker that ran its
 * handler and the store's thread that calls it back each move it on once,
 * and whoever comes second acts.
 */
enum cfs_http_cstate {
    CS_RUNNING = 0, /* the handler runs; nothing decided */
    CS_SUSPENDED,   /* the connection sleeps; commit_done() resumes it */
    CS_WAITING,     /* stopping: the worker waits for commit_done() */
    CS_READY,       /* called back: answer */
};

/* One suspended (or about to be) request fewer; the last one lets
 * cfs_http_wait_stop() go on. Under c_lock, so that the server outlives it.
 */
static void async_done(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    if (atomic_fetch_sub(&srv->c_async, 1) == 1) {
        pthread_cond_broadcast(&srv->c_done);
    }
    pthread_mutex_unlock(&srv->c_lock);
}

void cfs_http_wait_begin(struct cfs_http_req *req, enum cfs_http_wait_kind kind)
{
    req->wait.commit_start = cfs_http_now_us();
    req->wait.kind = kind;
    /* A request may wait more than once (a held read read again, a
     * catch-up then a commit): each wait is met afresh. Before, a read
     * held a second time while stopping found the first wait's sync_done
     * and was answered and freed while still on srv->held. */
    req->wait.sync_done = false;
    atomic_store(&req->wait.cstate, CS_RUNNING);
}

void cfs_http_wait_resolve(struct cfs_http_req *req, int err, uint64_t revision)
{
    struct cfs_http_server *srv = req->srv;

    req->wait.commit_err = err;
    req->wait.commit_rev = revision;
    switch (atomic_exchange(&req->wait.cstate, CS_READY)) {
    case CS_SUSPENDED:
        if (req->in.outer) {
            /* one of a batch (cfs_http_wait_suspend()): the last one
             * wakes the batch */
            if (atomic_fetch_sub(&req->in.outer->in.pending, 1) == 1) {
                cfs_http_wait_resolve(req->in.outer, 0, 0);
            }
            break;
        }
        MHD_resume_connection(req->conn); /* the handler runs again */
        async_done(srv);
        break;
    case CS_WAITING:
        pthread_mutex_lock(&srv->c_lock);
        req->wait.sync_done = true;
        pthread_cond_broadcast(&srv->c_done);
        pthread_mutex_unlock(&srv->c_lock);
        break;
    default: /* the worker has not decided yet, and will see READY */
        break;
    }
}

bool cfs_http_wait_suspend(struct cfs_http_req *req)
{
    struct cfs_http_server *srv = req->srv;
    int running = CS_RUNNING;

    if (atomic_load(&req->wait.cstate) == CS_READY) {
        return false; /* durable already */
    }
    if (req->in.outer) {
        /* One of a batch: no connection to suspend. It is counted on the
         * batch, which waits (as one request) until none is left; the
         * batch holds one count itself while it runs them. */
        atomic_fetch_add(&req->in.outer->in.pending, 1);
        if (!atomic_compare_exchange_strong(
                &req->wait.cstate, &running, CS_SUSPENDED)) {
            atomic_fetch_sub(&req->in.outer->in.pending, 1); /* ready */
            return false;
        }
        return true;
    }
    /* Announced before c_stop is read: cfs_http_wait_stop() sets c_stop
     * first, then waits for every announced one to be resumed. */
    atomic_fetch_add(&srv->c_async, 1);
    if (!atomic_load(&srv->c_stop)) {
        MHD_suspend_connection(req->conn);
        if (!atomic_compare_exchange_strong(
                &req->wait.cstate, &running, CS_SUSPENDED)) {
            /* called back meanwhile: run again at once */
            MHD_resume_connection(req->conn);
            async_done(srv);
        }
        return true;
    }
    async_done(srv);
    pthread_mutex_lock(&srv->c_lock);
    if (atomic_compare_exchange_strong(
            &req->wait.cstate, &running, CS_WAITING)) {
        /* Woken under c_lock by commit_done(), which is then done with
         * the server: it may go once this returns. */
        while (!req->wait.sync_done) {
            pthread_cond_wait(&srv->c_done, &srv->c_lock);
        }
    }
    pthread_mutex_unlock(&srv->c_lock);
    return false;
}

void cfs_http_wait_stop(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    atomic_store(&srv->c_stop, true);
    while (atomic_load(&srv->c_async) > 0) {
        pthread_cond_wait(&srv->c_done, &srv->c_lock);
    }
    pthread_mutex_unlock(&srv->c_lock);
}

bool cfs_http_wait_over(const struct cfs_http_req *req)
{
    return req->wait.kind != CFS_WAIT_NONE &&
           atomic_load(&req->wait.cstate) == CS_READY;
}

/* Back from a lost race, caught up: the request runs again, afresh. */
void cfs_http_wait_run_again(struct cfs_http_req *req)
{
    if (req->resp) {
        MHD_destroy_response(req->resp);
        req->resp = NULL;
    }
    req->status = 0;
    req->resp_len = 0;
    for (size_t i = 0; i < req->n_decoded; i++) {
        free(req->decoded[i]);
        req->decoded[i] = NULL;
    }
    req->n_decoded = 0;
    req->wait.commit_err = 0;
    req->wait.wrote = false; /* undone: it runs afresh */
}

void cfs_http_wait_ended(struct cfs_http_req *req, int err)
{
    req->wait.commit_err = err;
    atomic_store(&req->wait.cstate, CS_READY);
}
