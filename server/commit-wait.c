// SPDX-License-Identifier: MIT
/*
 * commit-wait.c - the asynchronous commit: a handler's transaction goes to the
 * store's commit thread and the worker goes on; the connection sleeps
 * until the change is durable, then the answer the handler built is sent
 * (or replaced by a 503 if the change could not be stored and was undone).
 *
 * No lock on that path: the worker and the commit thread meet on one
 * atomic state per request, and whoever comes second acts. While the
 * server stops, workers wait for their commits instead of suspending.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

#include <configfs/store.h>

#include "commit-wait.h"
#include "events.h"
#include "metrics.h"
#include "reply.h"
#include "request.h"

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
 * cfs_http_commit_stop() go on. Under c_lock, so that the server outlives it.
 */
static void async_done(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    if (atomic_fetch_sub(&srv->c_async, 1) == 1) {
        pthread_cond_broadcast(&srv->c_done);
    }
    pthread_mutex_unlock(&srv->c_lock);
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
    cfs_http_commit_resolve(req, err, err == 0 ? revision : 0);
}

void cfs_http_commit_begin(struct cfs_http_req *req)
{
    req->wait.commit_start = cfs_http_now_us();
    req->wait.committing = true;
    /* A request may wait more than once (a held read read again, a
     * catch-up then a commit): each wait is met afresh. Before, a read
     * held a second time while stopping found the first wait's sync_done
     * and was answered and freed while still on srv->held. */
    req->wait.sync_done = false;
    atomic_store(&req->wait.cstate, CS_RUNNING);
}

void cfs_http_commit_resolve(struct cfs_http_req *req,
                             int err,
                             uint64_t revision)
{
    struct cfs_http_server *srv = req->srv;

    req->wait.commit_err = err;
    req->wait.commit_rev = revision;
    switch (atomic_exchange(&req->wait.cstate, CS_READY)) {
    case CS_SUSPENDED:
        if (req->in.outer) {
            /* one of a batch (cfs_http_commit_wait()): the last one
             * wakes the batch */
            if (atomic_fetch_sub(&req->in.outer->in.pending, 1) == 1) {
                cfs_http_commit_resolve(req->in.outer, 0, 0);
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
    cfs_http_commit_begin(req);
    r = cfs_store_submit_async(
        srv->opts.store, txn, req->principal, commit_done, req);
    if (r == 0) {
        return 0;
    }
    /* not queued: no call back will come */
    req->wait.committing = false;
    cfs_http_events_discard(evs); /* failed, or nothing changed */
    req->wait.evs = NULL;
    if (r == -ESTALE) {
        /* Refused before it was queued (another node's change is being
         * applied): answered like a lost race, retried by the caller. */
        req->wait.committing = true;
        req->wait.commit_err = r;
        atomic_store(&req->wait.cstate, CS_READY);
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

bool cfs_http_commit_wait(struct cfs_http_req *req)
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
    /* Announced before c_stop is read: cfs_http_commit_stop() sets c_stop
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

void cfs_http_commit_stop(struct cfs_http_server *srv)
{
    pthread_mutex_lock(&srv->c_lock);
    atomic_store(&srv->c_stop, true);
    while (atomic_load(&srv->c_async) > 0) {
        pthread_cond_wait(&srv->c_done, &srv->c_lock);
    }
    pthread_mutex_unlock(&srv->c_lock);
}

bool cfs_http_commit_ready(const struct cfs_http_req *req)
{
    return req->wait.committing && atomic_load(&req->wait.cstate) == CS_READY;
}

/* Back from a lost race, caught up: the request runs again, afresh. */
static void run_again(struct cfs_http_req *req)
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

static void lost_every_race(struct cfs_http_req *req)
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
    req->wait.committing = false;
    if (req->wait.commit_err == -ESTALE) {
        /* Cluster mode: another node appended first and this change was
         * undone. Catch up and run the request again, a bounded number of
         * times, as if it had come after the other node's change; the
         * worker serves its other connections meanwhile. */
        unsigned delay_us = 0;

        if (req->wait.retries >= CFS_HTTP_CAS_RETRIES) {
            lost_every_race(req);
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
        run_again(req);
        return cfs_http_catch_up(
            req, CFS_CATCH_UP_RETRY, 0, delay_us, CFS_HTTP_RETRY_WAIT_MS);
    }
    if (req->wait.commit_err) {
        commit_failed(req, req->wait.commit_err);
    }
    return false;
}

static void caught_up(void *ctx, int err)
{
    cfs_http_commit_resolve(ctx, err, 0);
}

/* The store was asked to wait for @req (@r its answer): true when there is
 * nothing to wait for, false when the request waits (called back), or has
 * its result at once (no call back will come: as if called back). */
static bool wait_asked(struct cfs_http_req *req, int r)
{
    if (r == 1) {
        req->wait.committing = false;
        req->wait.catch_up = CFS_CATCH_UP_NONE;
        return true;
    }
    if (r < 0) {
        req->wait.commit_err = r;
        atomic_store(&req->wait.cstate, CS_READY);
    }
    return false;
}

bool cfs_http_catch_up(struct cfs_http_req *req,
                       int why,
                       uint64_t revision,
                       unsigned delay_us,
                       unsigned timeout_ms)
{
    int r;

    cfs_http_commit_begin(req);
    req->wait.catch_up = why;
    r = cfs_store_catch_up_async(
        req->srv->opts.store, revision, delay_us, timeout_ms, caught_up, req);
    return wait_asked(req, r);
}

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

bool cfs_http_catch_up_finish(struct cfs_http_req *req)
{
    int why = req->wait.catch_up, err = req->wait.commit_err;

    req->wait.committing = false;
    req->wait.catch_up = CFS_CATCH_UP_NONE;
    req->wait.commit_err = 0;
    if (why == CFS_CATCH_UP_RETRY) {
        if (err < 0) {
            lost_every_race(req);
        }
        return err == 0;
    }
    if (err == -ENOMEM) {
        cfs_http_no_memory(req);
    } else if (why == CFS_CATCH_UP_INDEX && err < 0) {
        index_failed(req, err);
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

/* ---- committed reads ---------------------------------------------------- */

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

/* Wait (as for a commit) until this node applied what etcd holds now.
 * @return true when there is nothing to wait for. */
static bool index_start(struct cfs_http_req *req)
{
    int r;

    cfs_http_commit_begin(req);
    req->wait.catch_up = CFS_CATCH_UP_INDEX;
    r = cfs_store_read_index_async(
        req->srv->opts.store, CFS_HTTP_MIN_REVISION_WAIT_MS, caught_up, req);
    return wait_asked(req, r);
}

bool cfs_http_read_index(struct cfs_http_req *req)
{
    const char *c = cfs_http_query_raw(req, "consistency");

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
    return index_start(req);
}

/* Something the read saw was undone: read again, a bounded number of
 * times. @return true to run the handler again. */
static bool read_again(struct cfs_http_req *req)
{
    run_again(req);
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
        run_again(req);
        return index_start(req);
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
        cfs_http_commit_begin(req);
        req->wait.held = true;
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

    req->wait.held = false;
    req->wait.committing = false;
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
        cfs_http_commit_resolve(req, req->wait.commit_err, 0);
    }
}

/* ---- commits of other front ends (the mount) --------------------------- */

/* One synchronous commit: the caller's thread waits where an HTTP request
 * would be suspended; the same store queue, metrics and events. */
struct sync_commit {
    struct cfs_http_server *srv;
    struct cfs_http_evbatch *evs;
    uint64_t start;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int err;
};

static void sync_finish(struct sync_commit *s, int err)
{
    pthread_mutex_lock(&s->lock);
    s->err = err;
    s->done = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* The store's commit thread, as commit_done() for a request. */
static void sync_commit_done(void *ctx, int err, uint64_t revision)
{
    struct sync_commit *s = ctx;

    (void)revision;
    cfs_http_metrics_commit(cfs_http_now_us() - s->start, err == 0);
    if (err == 0) {
        cfs_http_events_publish(s->srv->events, s->evs);
    } else {
        cfs_http_events_discard(s->evs);
    }
    s->evs = NULL;
    sync_finish(s, err);
}

static void sync_caught_up(void *ctx, int err)
{
    (void)err; /* the caller runs again either way, or gives up */
    sync_finish(ctx, 0);
}

static void sync_wait(struct sync_commit *s)
{
    pthread_mutex_lock(&s->lock);
    while (!s->done) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    s->done = false;
    pthread_mutex_unlock(&s->lock);
}

int cfs_http_server_commit(struct cfs_http_server *srv,
                           struct cfs_txn *txn,
                           const char *principal)
{
    size_t n = 0;
    const struct cfs_change *ch = cfs_txn_changes(txn, &n);
    struct sync_commit s = {
        .srv = srv,
        .evs = cfs_http_events_prepare(ch, n),
        .start = cfs_http_now_us(),
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .cond = PTHREAD_COND_INITIALIZER,
    };
    int r;

    if (!srv->opts.store) {
        cfs_txn_commit(txn); /* a tree in memory only */
        cfs_http_events_publish(srv->events, s.evs);
        return 0;
    }
    r = cfs_store_submit_async(
        srv->opts.store, txn, principal, sync_commit_done, &s);
    if (r == 0) {
        sync_wait(&s);
        r = s.err;
    } else {
        cfs_http_events_discard(s.evs); /* failed, or nothing changed */
        if (r < 0 && r != -ESTALE) {
            cfs_http_metrics_commit(cfs_http_now_us() - s.start, false);
        }
        r = r < 0 ? r : 0;
    }
    if (r == -ESTALE) {
        /* Cluster mode: another node appended first and the change was
         * undone; wait until this node has caught up, so that the caller
         * runs the operation again on the tree as the cluster has it. */
        cfs_http_metrics_cas_retry();
        if (cfs_store_catch_up_async(srv->opts.store,
                                     0,
                                     0,
                                     CFS_HTTP_RETRY_WAIT_MS,
                                     sync_caught_up,
                                     &s) == 0) {
            sync_wait(&s);
        }
    }
    pthread_cond_destroy(&s.cond);
    pthread_mutex_destroy(&s.lock);
    return r;
}
