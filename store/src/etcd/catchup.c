// SPDX-License-Identifier: MIT
/*
 * catchup.c - waiting for a revision to be applied here
 * (cfs_store_catch_up_async()): the waits, and the waiter thread that
 * calls them back; and the linearizable reads
 * (cfs_store_read_index_async()): the reader thread asks etcd for the head
 * once for every read queued before it asked, then each waits as a
 * catch-up does for that head.
 */
#include <errno.h>
#include <stdlib.h>

#include "etcd.h"

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec ||
           (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int etcd_catch_up_async(struct cfs_store *s,
                        uint64_t revision,
                        unsigned delay_us,
                        unsigned timeout_ms,
                        cfs_store_caught_up_fn done,
                        void *ctx)
{
    struct store_etcd *e = s->backend;
    struct catch_up *w;

    if (!e) {
        return revision <= cfs_revision() ? 1 : -ETIMEDOUT;
    }
    pthread_mutex_lock(&e->lock);
    if (delay_us == 0 && e->applied >= revision && e->applied >= e->log_head &&
        !e->applying) {
        pthread_mutex_unlock(&e->lock);
        return 1;
    }
    pthread_mutex_unlock(&e->lock);
    w = calloc(1, sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    w->not_before = after_us(delay_us);
    w->deadline = after_us((uint64_t)timeout_ms * 1000);
    w->done = done;
    w->ctx = ctx;
    pthread_mutex_lock(&e->lock);
    if (e->stop) {
        pthread_mutex_unlock(&e->lock);
        free(w);
        return -ECANCELED;
    }
    w->target = e->log_head > revision ? e->log_head : revision;
    w->next = e->catch_ups;
    e->catch_ups = w;
    e->n_catch_ups++;
    if ((e->applied >= w->target && !e->applying) ||
        ts_before(&w->deadline, &e->waiter_wake)) {
        /* due before the waiter looks again. Otherwise (the common
         * case: a revision not applied yet) the apply that brings it
         * wakes the waiter, with every other waiter of e->cond. */
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

/*
 * The waiter thread: calls back the etcd_catch_up_async() whose
 * revision is applied (or whose time is up), woken with every other
 * waiter of e->cond (an applied batch, a new head, a new wait).
 */
void *etcd_waiter_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->backend;

    pthread_setname_np(pthread_self(), "cfs-etcd-wait");
    pthread_mutex_lock(&e->lock);
    for (;;) {
        struct catch_up *due = NULL, **pp = &e->catch_ups;
        struct timespec now, next = after_us(1000000);

        clock_gettime(CLOCK_REALTIME, &now);
        while (*pp) {
            struct catch_up *w = *pp;
            bool caught = e->applied >= w->target && !e->applying;
            bool early = ts_before(&now, &w->not_before);

            if (e->stop || !ts_before(&now, &w->deadline) ||
                (caught && !early)) {
                w->err = caught ? 0 : e->stop ? -ECANCELED : -ETIMEDOUT;
                *pp = w->next;
                w->next = due;
                due = w;
                continue;
            }
            if (ts_before(&w->deadline, &next)) {
                next = w->deadline;
            }
            if (caught && ts_before(&w->not_before, &next)) {
                next = w->not_before;
            }
            pp = &w->next;
        }
        if (due) {
            uint64_t called = 0;

            pthread_mutex_unlock(&e->lock);
            for (; due; called++) {
                struct catch_up *w = due;

                due = w->next;
                w->done(w->ctx, w->err);
                free(w);
            }
            pthread_mutex_lock(&e->lock);
            e->n_catch_ups -= called; /* counted until called back */
            continue;
        }
        if (e->stop) {
            break;
        }
        e->waiter_wake = next;
        pthread_cond_timedwait(&e->cond, &e->lock, &next);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

int etcd_read_index_async(struct cfs_store *s,
                          unsigned timeout_ms,
                          cfs_store_caught_up_fn done,
                          void *ctx)
{
    struct store_etcd *e = s->backend;
    struct catch_up *w;

    if (!e) {
        return 1;
    }
    w = calloc(1, sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    w->timeout_ms = timeout_ms;
    w->done = done;
    w->ctx = ctx;
    pthread_mutex_lock(&e->lock);
    if (e->stop) {
        pthread_mutex_unlock(&e->lock);
        free(w);
        return -ECANCELED;
    }
    w->next = e->reads;
    e->reads = w;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

/* Call back each read of @list with @err and free it. @pre no lock. */
static void reads_fail(struct catch_up *list, int err)
{
    while (list) {
        struct catch_up *w = list;

        list = w->next;
        w->done(w->ctx, err);
        free(w);
    }
}

/*
 * The reader thread. A read queued while a request to etcd is in flight
 * waits for the next one: only a head etcd gave after the read came in
 * holds every change committed before it. Once etcd answered, each read
 * waits for that head as a catch-up does, in the waiter thread's list.
 */
void *etcd_reader_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->backend;

    pthread_setname_np(pthread_self(), "cfs-etcd-read");
    pthread_mutex_lock(&e->lock);
    for (;;) {
        struct catch_up *list;
        int r;

        while (!e->stop && !e->reads) {
            pthread_cond_wait(&e->cond, &e->lock);
        }
        list = e->reads;
        e->reads = NULL;
        if (e->stop) {
            pthread_mutex_unlock(&e->lock);
            reads_fail(list, -ECANCELED);
            return NULL;
        }
        pthread_mutex_unlock(&e->lock);
        r = etcd_read_head(e, NULL); /* raises e->log_head */
        pthread_mutex_lock(&e->lock);
        if (r < 0 || e->stop) {
            pthread_mutex_unlock(&e->lock);
            reads_fail(list, r < 0 ? r : -ECANCELED);
            pthread_mutex_lock(&e->lock);
            continue;
        }
        while (list) {
            struct catch_up *w = list;

            list = w->next;
            w->target = e->log_head;
            w->deadline = after_us((uint64_t)w->timeout_ms * 1000);
            w->next = e->catch_ups;
            e->catch_ups = w;
            e->n_catch_ups++;
        }
        pthread_cond_broadcast(&e->cond); /* the waiter: new waits */
    }
}
