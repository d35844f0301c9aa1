// SPDX-License-Identifier: MIT
/*
 * group-commit.c - group commit: callers of cfs_store_commit_txn() queue their
 * sealed transactions; whoever finds no commit running becomes the leader,
 * writes everything queued in one SQLite transaction, wakes exactly the
 * callers it settled and hands the lead to the next one queued. A caller
 * alone is its own leader and commits inline, in its own thread (a hand-off
 * to a writer thread costs more than it saves, see
 * docs/internals/store.md). Each waiter sleeps on its own condition
 * variable: waking all of them at every commit costs more than the commit
 * when there are many.
 *
 * Ordering: a transaction is queued while it still holds the tree's
 * mutation lock (before cfs_txn_seal()), so queue order is lock order,
 * which is revision order, and later transactions may depend on earlier
 * ones. That is why a failed commit fails every transaction queued after
 * the failed batch too, and why the failed ones are aborted strictly
 * newest first: the "failed" list is kept in queue order and only its tail
 * may abort. A transaction that arrives while the list is not empty may
 * have been built on top of the failed ones; it fails as well, and being
 * the newest (and still holding the mutation lock) it aborts at once.
 *
 * Asynchronous requests (cfs_store_submit_async) have no thread of their
 * own: wherever the protocol above wakes a request's thread (to lead, or to
 * abort), an asynchronous one wakes the store's commit thread instead,
 * which leads and aborts, and calls them back in queue order: the durable
 * ones after each batch, the failed ones once undone. Under load that
 * thread leads batch after batch without sleeping, so a commit costs no
 * context switch per request. (A second thread that called back while the
 * next batch was written measured slower: on two cores its hand-offs and
 * wake-ups cost more CPU than the overlap saved, and the batches came out
 * smaller.)
 */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "store-internal.h"

/* Batches a leader writes for others after its own transaction is durable
 * before it hands the lead on. */
#define LEAD_MORE 8

enum req_state {
    REQ_QUEUED,
    REQ_DONE,
    REQ_FAILED,
};

/* Lives on its caller's stack for the duration of cfs_store_commit_txn(). */
struct store_req {
    struct cfs_txn *txn;
    struct cfs_store_changeset set;
    enum req_state state;
    bool lead; /* it is this request's turn to write a batch */
    int err;
    pthread_cond_t cond; /* its owner waits here, alone */
    struct store_req *next, *prev;
    cfs_store_done_fn done; /* asynchronous: called back, no owner waits */
    void *ctx;
    struct store_req *d_next; /* on the list of settled ones to call back */
};

/* Wake whoever acts for @req: its owner, or the commit thread. @pre q_lock */
static void wake(struct cfs_store *s, struct store_req *req)
{
    pthread_cond_signal(req->done ? &s->a_cond : &req->cond);
}

/* @pre q_lock */
static void q_append(struct store_req **head,
                     struct store_req **tail,
                     struct store_req *req)
{
    req->next = NULL;
    req->prev = *tail;
    if (*tail) {
        (*tail)->next = req;
    } else {
        *head = req;
    }
    *tail = req;
}

/* @pre q_lock */
static void q_remove(struct store_req **head,
                     struct store_req **tail,
                     struct store_req *req)
{
    if (req->prev) {
        req->prev->next = req->next;
    } else {
        *head = req->next;
    }
    if (req->next) {
        req->next->prev = req->prev;
    } else {
        *tail = req->prev;
    }
    req->next = req->prev = NULL;
}

/* Write @sets in one SQLite transaction under w_lock and forget the replay
 * problems they settle; the revision and floor after it come back either
 * way. @return 0 or -errno (everything rolled back). */
static int write_sets(struct cfs_store *s,
                      const struct cfs_store_changeset *sets,
                      size_t n,
                      uint64_t *ret_revision,
                      uint64_t *ret_floor)
{
    int r;

    pthread_mutex_lock(&s->w_lock);
    /* the backend makes them durable (cluster mode: appended to etcd's
     * log) and writes them to the database */
    r = s->ops->commit(s, sets, n);
    *ret_revision = s->revision;
    *ret_floor = s->floor;
    pthread_mutex_unlock(&s->w_lock);
    if (r == 0) {
        store_problems_forget(s, sets, n);
    }
    return r;
}

/*
 * Write one batch from the head of the queue, wake exactly the requests it
 * settled, and pass the lead on to the next request queued, if any.
 * @pre q_lock held, me->lead; returns with q_lock held.
 */
static void lead(struct cfs_store *s, struct store_req *me) CFS_STORE_NO_TSA
{
    struct cfs_store_changeset sets_small[16];
    struct cfs_store_changeset *sets = sets_small;
    struct store_req *first = s->q_head, *last = NULL, *req, *next;
    uint64_t revision = 0, floor = 0;
    size_t n = 0;
    int r;

    me->lead = false;
    for (req = first; req && n < s->max_batch; req = req->next) {
        last = req;
        n++;
    }
    if (!last) {
        return; /* nothing queued (cannot happen: @me is) */
    }
    /* Detach first..last from the queue. */
    s->q_head = last->next;
    if (s->q_head) {
        s->q_head->prev = NULL;
    } else {
        s->q_tail = NULL;
    }
    last->next = NULL;
    pthread_mutex_unlock(&s->q_lock);

    if (n > sizeof(sets_small) / sizeof(sets_small[0])) {
        sets = cfs_malloc(n * sizeof(*sets));
    }
    if (sets) {
        size_t i = 0;

        for (req = first; req; req = req->next) {
            sets[i++] = req->set;
        }
        r = write_sets(s, sets, n, &revision, &floor);
        if (sets != sets_small) {
            cfs_free(sets);
        }
    } else {
        r = -ENOMEM;
    }

    pthread_mutex_lock(&s->q_lock);
    if (r == 0) {
        bool async = false;

        for (req = first; req; req = next) {
            next = req->next;
            req->state = REQ_DONE;
            if (req->done) {
                req->d_next = NULL;
                if (s->d_tail) {
                    s->d_tail->d_next = req;
                } else {
                    s->d_head = req;
                }
                s->d_tail = req;
                async = true;
            } else if (req != me) {
                pthread_cond_signal(&req->cond);
            }
        }
        if (async && !me->done) {
            pthread_cond_signal(&s->a_cond); /* to call them back */
        }
        s->n_txns += n;
        s->n_pending -= n;
        s->n_commits++;
        s->info_revision = revision;
        s->info_floor = floor;
    } else {
        /* The batch and everything queued behind it fail, in queue order;
         * the newest is woken to abort first, and wakes the next. */
        s->n_failures++;
        for (req = first; req; req = next) {
            next = req->next;
            req->state = REQ_FAILED;
            req->err = r;
            q_append(&s->f_head, &s->f_tail, req);
            s->n_pending--;
        }
        for (req = s->q_head; req; req = next) {
            next = req->next;
            req->state = REQ_FAILED;
            req->err = r;
            q_append(&s->f_head, &s->f_tail, req);
            s->n_pending--;
        }
        s->q_head = s->q_tail = NULL;
        if (s->f_tail != me) {
            wake(s, s->f_tail);
        }
    }
    if (s->q_head) {
        /* The next batch is led by its oldest request (this one again if
         * it did not fit). Keeping the lead in this thread measured no
         * faster: the batch only gets smaller. */
        s->q_head->lead = true;
        if (s->q_head != me) {
            wake(s, s->q_head);
        }
    } else {
        s->leader = false;
        pthread_cond_broadcast(&s->q_cond); /* store_drain() */
    }
}

/* Abort @req, the newest failed transaction, then wake the next newest.
 * @pre q_lock held; returns with it released. */
static void abort_newest(struct cfs_store *s,
                         struct store_req *req) CFS_STORE_NO_TSA
{
    char *path = NULL;
    int r;

    pthread_mutex_unlock(&s->q_lock);
    if (req->set.n > 0) {
        path = cfs_strdup(req->set.changes[0].path);
    }
    r = cfs_txn_abort(req->txn);
    if (r < 0) {
        /* The tree keeps part of a change the database does not have; say
         * so where operators look. */
        store_problem_add(s, path ? path : "/", CFS_STORE_STEP_UNDO, r);
    }
    cfs_free(path);
    pthread_mutex_lock(&s->q_lock);
    q_remove(&s->f_head, &s->f_tail, req);
    if (s->f_tail) {
        wake(s, s->f_tail);
    } else {
        pthread_cond_broadcast(&s->q_cond); /* store_drain() */
    }
    pthread_mutex_unlock(&s->q_lock);
}

/* Abort a failed transaction once it is the newest failed one, then wake
 * the next newest. @pre q_lock held; returns with it released. */
static void abort_in_turn(struct cfs_store *s,
                          struct store_req *req) CFS_STORE_NO_TSA
{
    while (s->f_tail != req) {
        pthread_cond_wait(&req->cond, &s->q_lock);
    }
    abort_newest(s, req);
}

static void *commit_thread(void *arg);

struct cfs_store_ticket {
    struct store_req req;
    struct cfs_store *store;
    uint64_t revision;
};

/* Queue @txn with a new ticket (asynchronous if @done). @return 0 and
 * *ret_ticket (NULL if @txn had no change: committed), or a negative
 * errno with @txn aborted. */
static int submit(struct cfs_store *s,
                  struct cfs_txn *txn,
                  const char *principal,
                  cfs_store_done_fn done,
                  void *ctx,
                  struct cfs_store_ticket **ret_ticket) CFS_STORE_NO_TSA
{
    struct cfs_store_ticket *t;
    struct store_req *req;
    size_t n = 0;

    *ret_ticket = NULL;
    (void)cfs_txn_changes(txn, &n);
    if (n == 0) {
        cfs_txn_commit(txn);
        return 0;
    }
    t = cfs_zalloc(sizeof(*t));
    if (!t) {
        cfs_txn_abort(txn);
        return -ENOMEM;
    }
    t->store = s;
    t->revision = cfs_txn_revision(txn);
    req = &t->req;
    req->txn = txn;
    req->set.changes = cfs_txn_changes(txn, &req->set.n);
    req->set.principal = principal;
    req->done = done;
    req->ctx = ctx;
    pthread_cond_init(&req->cond, NULL);

    pthread_mutex_lock(&s->q_lock);
    if (done && !s->a_started) {
        /* the first asynchronous one: start the thread that acts for it */
        int r = -pthread_create(&s->a_thread, NULL, commit_thread, s);

        if (r < 0) {
            pthread_mutex_unlock(&s->q_lock);
            pthread_cond_destroy(&req->cond);
            cfs_free(t);
            cfs_txn_abort(txn);
            return r;
        }
        s->a_started = true;
        /* for top -H and perf: it would inherit its creator's name */
        pthread_setname_np(s->a_thread, "cfs-commit");
    }
    if (s->f_head) {
        /* a failed commit is being undone: this one goes with it */
        int r;

        req->done = NULL; /* answered by the return value */
        req->state = REQ_FAILED;
        req->err = s->f_tail->err;
        q_append(&s->f_head, &s->f_tail, req);
        abort_in_turn(s, req);
        r = req->err;
        pthread_cond_destroy(&req->cond);
        cfs_free(t);
        return r;
    }
    if (s->remote_waiting) {
        /* Another node's change set waits to be applied: this one was
         * built on a tree that is behind and would lose the race anyway.
         * Still holding the mutation lock, it is the newest: undo it. */
        pthread_mutex_unlock(&s->q_lock);
        pthread_cond_destroy(&req->cond);
        cfs_free(t);
        cfs_txn_abort(txn);
        return -ESTALE;
    }
    req->state = REQ_QUEUED;
    q_append(&s->q_head, &s->q_tail, req);
    s->n_pending++;
    if (done) {
        s->n_async++;
    }
    if (!s->leader) {
        /* Nothing being written: the waiter commits, in its thread (or
         * the commit thread, for an asynchronous request). */
        s->leader = true;
        req->lead = true;
        if (done) {
            pthread_cond_signal(&s->a_cond);
        }
    }
    /* Sealed in the thread that holds the mutation lock, and before any
     * other thread can settle @txn (and commit or free it). */
    cfs_txn_seal(txn);
    pthread_mutex_unlock(&s->q_lock);
    *ret_ticket = t;
    return 0;
}

int cfs_store_submit(struct cfs_store *s,
                     struct cfs_txn *txn,
                     const char *principal,
                     struct cfs_store_ticket **ret_ticket)
{
    return submit(s, txn, principal, NULL, NULL, ret_ticket);
}

/* Call back a settled asynchronous request and free it. @pre no lock. */
static void call_back_one(struct store_req *req, int err)
{
    struct cfs_store_ticket *t = (struct cfs_store_ticket *)req;

    if (err == 0) {
        cfs_txn_commit(req->txn);
    }
    req->done(req->ctx, err, err == 0 ? t->revision : 0);
    pthread_cond_destroy(&req->cond);
    cfs_free(t);
}

/* @n asynchronous requests were called back. @pre q_lock */
static void called_back(struct cfs_store *s, size_t n)
{
    s->n_async -= n;
    if (s->n_async == 0) {
        pthread_cond_broadcast(&s->a_cond); /* cfs_store_close() */
    }
}

/* Call back a list of durable requests (linked by d_next), in order.
 * @pre q_lock held; returns with it held. */
static void call_back_all(struct cfs_store *s,
                          struct store_req *req) CFS_STORE_NO_TSA
{
    size_t n = 0;

    pthread_mutex_unlock(&s->q_lock);
    while (req) {
        struct store_req *next = req->d_next;

        call_back_one(req, 0);
        n++;
        req = next;
    }
    pthread_mutex_lock(&s->q_lock);
    called_back(s, n);
}

/* The commit thread: acts for the asynchronous requests. */
static void *commit_thread(void *arg) CFS_STORE_NO_TSA
{
    struct cfs_store *s = arg;

    pthread_mutex_lock(&s->q_lock);
    for (;;) {
        struct store_req *req = s->d_head;

        if (req) {
            /* Answer the settled ones before writing the next batch. */
            s->d_head = s->d_tail = NULL;
            call_back_all(s, req);
        } else if (s->f_tail && s->f_tail->done) {
            int err;

            req = s->f_tail;
            err = req->err;
            abort_newest(s, req); /* unlocks */
            call_back_one(req, err);
            pthread_mutex_lock(&s->q_lock);
            called_back(s, 1);
        } else if (s->q_head && s->q_head->lead && s->q_head->done) {
            lead(s, s->q_head);
        } else if (s->a_stop && s->n_async == 0) {
            break;
        } else {
            pthread_cond_wait(&s->a_cond, &s->q_lock);
        }
    }
    pthread_mutex_unlock(&s->q_lock);
    return NULL;
}

int cfs_store_submit_async(struct cfs_store *s,
                           struct cfs_txn *txn,
                           const char *principal,
                           cfs_store_done_fn done,
                           void *ctx)
{
    struct cfs_store_ticket *t = NULL;
    int r = submit(s, txn, principal, done, ctx, &t);

    return r < 0 ? r : t ? 0 : 1;
}

void store_stop_async(struct cfs_store *s)
{
    bool started;

    pthread_mutex_lock(&s->q_lock);
    s->a_stop = true;
    started = s->a_started;
    pthread_cond_broadcast(&s->a_cond);
    pthread_mutex_unlock(&s->q_lock);
    if (started) {
        pthread_join(s->a_thread, NULL); /* after the last call back */
    }
}

int cfs_store_wait(struct cfs_store_ticket *t, uint64_t *ret_revision)
{
    struct cfs_store *s;
    struct store_req *req;
    int r = 0;

    if (!t) {
        if (ret_revision) {
            *ret_revision = 0;
        }
        return 0;
    }
    s = t->store;
    req = &t->req;
    pthread_mutex_lock(&s->q_lock);
    while (req->state == REQ_QUEUED) {
        if (req->lead) {
            lead(s, req);
        } else {
            pthread_cond_wait(&req->cond, &s->q_lock);
        }
    }
    if (req->state == REQ_FAILED) {
        abort_in_turn(s, req);
        r = req->err;
    } else {
        pthread_mutex_unlock(&s->q_lock);
        cfs_txn_commit(req->txn);
        if (ret_revision) {
            *ret_revision = t->revision;
        }
    }
    pthread_cond_destroy(&req->cond);
    cfs_free(t);
    return r;
}

int cfs_store_commit_txn(struct cfs_store *s,
                         struct cfs_txn *txn,
                         const char *principal,
                         uint64_t *ret_revision)
{
    struct cfs_store_ticket *t = NULL;
    int r = cfs_store_submit(s, txn, principal, &t);

    if (r < 0) {
        return r;
    }
    return cfs_store_wait(t, ret_revision);
}

void store_drain(struct cfs_store *s)
{
    pthread_mutex_lock(&s->q_lock);
    while ((s->q_head || s->leader) && !s->f_head) {
        pthread_cond_wait(&s->q_cond, &s->q_lock);
    }
    pthread_mutex_unlock(&s->q_lock);
}

int cfs_store_apply(struct cfs_store *s,
                    const struct cfs_store_changeset *sets,
                    size_t n)
{
    uint64_t revision, floor;
    int r;

    if (!s || (n > 0 && !sets)) {
        return -EINVAL;
    }
    r = write_sets(s, sets, n, &revision, &floor);
    pthread_mutex_lock(&s->q_lock);
    if (r == 0) {
        for (size_t i = 0; i < n; i++) {
            s->n_txns += sets[i].n > 0;
        }
        s->n_commits++;
        s->info_revision = revision;
        s->info_floor = floor;
    } else {
        s->n_failures++;
    }
    pthread_mutex_unlock(&s->q_lock);
    return r;
}

int cfs_store_info(struct cfs_store *s, struct cfs_store_info *ret_info)
{
    if (!s || !ret_info) {
        return -EINVAL;
    }
    pthread_mutex_lock(&s->q_lock);
    *ret_info = (struct cfs_store_info){
        .revision = s->info_revision,
        .history_floor = s->info_floor,
        .txns = s->n_txns,
        .commits = s->n_commits,
        .failures = s->n_failures,
        .pending = s->n_pending,
    };
    pthread_mutex_unlock(&s->q_lock);
    return 0;
}
