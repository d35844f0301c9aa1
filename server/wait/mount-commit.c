// SPDX-License-Identifier: MIT
/*
 * mount-commit.c - a commit of another front end (the mount): its thread
 * waits where an HTTP request would be suspended; the same store queue,
 * metrics and events as commit.c.
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
