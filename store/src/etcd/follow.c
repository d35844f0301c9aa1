// SPDX-License-Identifier: MIT
/*
 * follow.c - following the log: reading it by range from a revision on
 * (start-up, and whatever the watch did not bring), and the applier
 * thread, which applies other nodes' batches (from the watch's events when
 * they follow on, else from the log) to the tree and the cache, and
 * notices when what it needs next was trimmed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

void etcd_note_head(struct store_etcd *e, uint64_t head)
{
    pthread_mutex_lock(&e->lock);
    if (head > e->log_head) {
        e->log_head = head;
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
}

/*
 * Read the log from revision @from on, in order, and hand each batch to
 * @fn. @head: a head read before (the log holds at least up to it unless
 * trimmed). @ret_etcd_rev: etcd's revision of the first read (to watch
 * from). @return 0; -ESTALE when the log no longer holds @from (trimmed
 * below a snapshot: this node cannot catch up from it); an etcd errno.
 */
int etcd_read_log(struct cfs_store *s,
                  uint64_t from,
                  uint64_t head,
                  batch_fn fn,
                  int64_t *ret_etcd_rev)
{
    struct store_etcd *e = s->backend;
    char *key = etcd_log_key(e, from);
    uint64_t next = from;
    int r = 0;

    if (!key) {
        return -ENOMEM;
    }
    for (;;) {
        json_t *body = json_object(), *ans = NULL, *kvs;
        size_t n;
        bool more;

        json_object_set_new(body, "key", etcd_jb64s(key));
        json_object_set_new(body, "range_end", etcd_jb64s(e->k_log_end));
        json_object_set_new(body, "limit", json_integer(ETCD_RANGE_LIMIT));
        r = etcd_post(e, "/v3/kv/range", body, &ans);
        json_decref(body);
        if (r < 0) {
            break;
        }
        if (ret_etcd_rev && *ret_etcd_rev == 0) {
            *ret_etcd_rev = (int64_t)etcd_jnum(
                json_object_get(json_object_get(ans, "header"), "revision"));
        }
        kvs = json_object_get(ans, "kvs");
        n = json_array_size(kvs);
        more = json_is_true(json_object_get(ans, "more"));
        if (n == 0 && next == from && head >= from) {
            r = -ESTALE; /* the head says it was there: trimmed */
        }
        for (size_t i = 0; i < n && r == 0; i++) {
            size_t vl = 0;
            char *v = etcd_kv_field(json_array_get(kvs, i), "value", &vl);
            struct dec_batch d;

            r = v ? etcd_read_entry(e, v, vl, &d) : -EUCLEAN;
            free(v);
            if (r == 0 && d.first != next) {
                etcd_dec_free(&d);
                r = -ESTALE; /* a gap: what this node needs was trimmed */
            }
            if (r == 0) {
                next = d.last + 1;
                r = fn(s, &d);
                etcd_dec_free(&d);
                free(key);
                key = etcd_log_key(e, next);
                if (!key) {
                    r = -ENOMEM;
                }
            }
        }
        json_decref(ans);
        if (r < 0 || !more || n == 0) {
            break;
        }
    }
    free(key);
    return r;
}

/* Start-up: into the cache only; replay builds the tree from it. */
int etcd_load_batch(struct cfs_store *s, struct dec_batch *d)
{
    int r;

    pthread_mutex_lock(&s->w_lock);
    r = store_write_sets(s, d->sets, d->n, d->time_us);
    pthread_mutex_unlock(&s->w_lock);
    if (r == 0) {
        pthread_mutex_lock(&((struct store_etcd *)s->backend)->lock);
        ((struct store_etcd *)s->backend)->applied = d->last;
        pthread_mutex_unlock(&((struct store_etcd *)s->backend)->lock);
    }
    return r;
}

static enum cfs_store_step_op step_of(enum cfs_op op)
{
    switch (op) {
    case CFS_OP_MKDIR:
        return CFS_STORE_STEP_MKDIR;
    case CFS_OP_STORE:
        return CFS_STORE_STEP_STORE;
    case CFS_OP_SYMLINK:
        return CFS_STORE_STEP_SYMLINK;
    case CFS_OP_RENAME:
        return CFS_STORE_STEP_COMMIT;
    default:
        return CFS_STORE_STEP_DIR;
    }
}

/* The subsystem @path is in is registered (else its data waits in the
 * cache for its replay at registration). */
static bool subsystem_registered(const char *path)
{
    char name[CFS_NAME_MAX + 2];
    struct cfs_entry en;
    size_t i = 0;

    while (*path == '/') {
        path++;
    }
    name[i++] = '/';
    while (*path && *path != '/' && i < sizeof(name) - 1) {
        name[i++] = *path++;
    }
    name[i] = '\0';
    if (cfs_stat(name, &en) < 0) {
        return false;
    }
    cfs_entry_done(&en);
    return true;
}

static void touch_parent(struct cfs_txn *txn, const char *path)
{
    char *p = strdup(path);
    char *slash = p ? strrchr(p, '/') : NULL;

    if (slash) {
        *slash = '\0';
        (void)cfs_replay_touch(txn, p[0] ? p : "/");
    }
    free(p);
}

static int apply_one(struct cfs_txn *txn, const struct cfs_change *c)
{
    int r;

    switch (c->op) {
    case CFS_OP_MKDIR:
        return cfs_mkdir(txn, c->path);
    case CFS_OP_RMDIR:
        r = cfs_rmdir(txn, c->path);
        touch_parent(txn, c->path);
        return r;
    case CFS_OP_STORE:
        return cfs_write(txn, c->path, c->arg ? c->arg : "", c->arg_len);
    case CFS_OP_SYMLINK:
        return cfs_symlink(txn, c->path, c->arg ? c->arg : "/");
    case CFS_OP_UNLINK:
        r = cfs_unlink(txn, c->path);
        touch_parent(txn, c->path);
        return r;
    case CFS_OP_RENAME:
        r = cfs_rename(txn, c->path, c->arg ? c->arg : "/");
        touch_parent(txn, c->path);
        if (c->arg) {
            touch_parent(txn, c->arg);
        }
        return r;
    }
    return -EINVAL;
}

/*
 * Another node's batch: wait until no local commit is in flight (they are
 * failing: the head moved), then, holding the tree, run its operations
 * through the subsystems' callbacks stamped with their revisions, write
 * them to the cache and move the revision counter on.
 */
static int remote_batch(struct cfs_store *s, struct dec_batch *d)
{
    struct store_etcd *e = s->backend;
    struct cfs_txn *txn = NULL;
    uint64_t applied;
    int r;

    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    if (d->last <= applied) {
        pthread_mutex_unlock(&e->lock);
        return 0; /* ours, applied when it was appended */
    }
    e->applying = true;
    pthread_mutex_unlock(&e->lock);

    pthread_mutex_lock(&s->q_lock);
    s->remote_waiting = true;
    while (s->q_head || s->leader || s->f_head) {
        pthread_cond_wait(&s->q_cond, &s->q_lock);
    }
    pthread_mutex_unlock(&s->q_lock);

    r = cfs_txn_begin_replay(&txn);
    if (r < 0) {
        goto out;
    }
    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    pthread_mutex_unlock(&e->lock);
    if (d->last <= applied) {
        cfs_txn_commit(txn); /* ours, or seen already */
        goto out;
    }
    for (size_t i = 0; i < d->n; i++) {
        for (size_t j = 0; j < d->sets[i].n; j++) {
            const struct cfs_change *c = &d->sets[i].changes[j];
            int rr;

            cfs_txn_set_stamp(txn, c->revision);
            rr = apply_one(txn, c);
            if (rr < 0 && subsystem_registered(c->path)) {
                /* Accepted by the node that made it, refused here: a
                 * replay problem, reported, never skipped silently. */
                atomic_fetch_add(&e->n_replay_errors, 1);
                store_problem_add(s, c->path, step_of(c->op), rr);
                if (s->on_replay_error) {
                    s->on_replay_error(s->on_replay_error_ctx, c, rr);
                }
            } else if (rr >= 0) {
                /* made again: what failed under it is settled, as when
                 * this node makes it itself (write_sets()) */
                store_problems_forget(
                    s, &(struct cfs_store_changeset){.changes = c, .n = 1}, 1);
            }
        }
    }
    pthread_mutex_lock(&s->w_lock);
    r = store_write_sets(s, d->sets, d->n, d->time_us);
    pthread_mutex_unlock(&s->w_lock);
    if (r < 0) {
        store_problem_add(s, "/", CFS_STORE_STEP_UNDO, r);
    }
    cfs_revision_set(d->last);
    cfs_txn_commit(txn);
    pthread_mutex_lock(&s->q_lock);
    s->info_revision = d->last;
    s->n_txns += d->n;
    /* the tree is current again: a local change built from now on is
     * not behind (cleared before applied moves on, so that whoever sees
     * this revision applied may write at once) */
    s->remote_waiting = false;
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_add(&e->n_remote, d->n);
    pthread_mutex_lock(&e->lock);
    e->applied = d->last;
    if (d->last > e->log_head) {
        e->log_head = d->last;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    if (s->on_applied) {
        for (size_t i = 0; i < d->n; i++) {
            s->on_applied(s->on_applied_ctx, d->sets[i].changes, d->sets[i].n);
        }
    }
    r = 0;
out:
    pthread_mutex_lock(&s->q_lock);
    s->remote_waiting = false;
    pthread_mutex_unlock(&s->q_lock);
    pthread_mutex_lock(&e->lock);
    e->applying = false;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return r;
}

/* @pre e->lock */
void etcd_seen_pop(struct store_etcd *e)
{
    struct seen *x = e->seen_head;

    e->seen_head = x->next;
    if (!e->seen_head) {
        e->seen_tail = NULL;
    }
    e->seen_bytes -= x->size;
    json_decref(x->entry);
    free(x);
}

/*
 * Apply the next log entry from what the watch brought, if it is the one
 * after the last applied: no request to etcd (entries applied already are
 * dropped). @return whether one was taken (applied, or failed: the caller
 * looks again, and reads the log for what is missing). @pre e->lock held;
 * released while applying.
 */
static bool apply_seen(struct cfs_store *s) CFS_STORE_NO_TSA
{
    struct store_etcd *e = s->backend;
    struct dec_batch d;
    size_t bytes;
    json_t *j;
    int r;

    while (e->seen_head && e->seen_head->last <= e->applied) {
        etcd_seen_pop(e);
    }
    if (!e->seen_head || e->seen_head->first != e->applied + 1) {
        return false; /* none, or a gap: the log has it */
    }
    j = json_incref(e->seen_head->entry);
    bytes = e->seen_head->bytes;
    etcd_seen_pop(e);
    pthread_mutex_unlock(&e->lock);
    r = etcd_decode_entry(e, j, bytes, &d);
    if (r == 0) {
        (void)remote_batch(s, &d);
        etcd_dec_free(&d);
    }
    pthread_mutex_lock(&e->lock);
    return r == 0;
}

/*
 * The log lost the entry after the last applied, but the watch may still
 * bring it: a node frozen with its watch open finds the entries in its
 * socket, and the applier, woken first, read the log before the watch
 * thread read them. Wait a moment for it. @pre e->lock
 */
static bool watch_brings(struct store_etcd *e) CFS_STORE_NO_TSA
{
    struct timespec ts = after_us((uint64_t)ETCD_WATCH_GRACE_S * 1000000u);

    while (e->watching && !e->stop &&
           !(e->seen_head && e->seen_head->first <= e->applied + 1)) {
        if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT) {
            break;
        }
    }
    return e->seen_head && e->seen_head->first <= e->applied + 1;
}

/* Sleep @ms whatever wakes the thread meanwhile, unless stopping.
 * @pre e->lock */
static void sleep_locked(struct store_etcd *e, unsigned ms) CFS_STORE_NO_TSA
{
    struct timespec ts = after_us((uint64_t)ms * 1000u);

    while (!e->stop &&
           pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT) {
    }
}

void *etcd_applier_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->backend;
    unsigned unreadable_ms = ETCD_RETRY_MS;

    pthread_setname_np(pthread_self(), "cfs-etcd-apply");
    pthread_mutex_lock(&e->lock);
    while (!e->stop) {
        uint64_t from, head;
        int r;

        if (e->appending && e->applied < e->log_head) {
            /* The watch may have seen this node's own append before its
             * answer came: wait for it rather than read the log and hold
             * local commits back for nothing. */
            pthread_cond_wait(&e->cond, &e->lock);
            continue;
        }
        if (e->applied >= e->log_head) {
            struct timespec ts = after_us(1000000);

            if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT &&
                !e->stop) {
                /* Idle for a second: a linearizable read of the head, so
                 * that a node whose watch went quiet because etcd lost its
                 * quorum notices it (its answers then say they may be
                 * stale), and so that nothing the watch missed stays
                 * unapplied. */
                pthread_mutex_unlock(&e->lock);
                (void)etcd_read_head(e, NULL);
                pthread_mutex_lock(&e->lock);
            }
            continue;
        }
        if (e->fell_behind) {
            pthread_cond_wait(&e->cond, &e->lock); /* until stopped */
            continue;
        }
        if (apply_seen(s)) {
            continue;
        }
        from = e->applied + 1;
        head = e->log_head;
        pthread_mutex_unlock(&e->lock);
        r = etcd_read_log(s, from, head, remote_batch, NULL);
        pthread_mutex_lock(&e->lock);
        if (r == -ESTALE && !e->stop && watch_brings(e)) {
            continue; /* the watch had it: applied next time round */
        }
        if (r == -ESTALE && !e->stop) {
            /* Trimmed below a snapshot while this node was away (stopped,
             * cut off past its lease): the log cannot bring it back. */
            struct snap_ptr ptr;
            uint64_t applied = e->applied, snap;

            e->fell_behind = true;
            pthread_cond_broadcast(&e->cond);
            pthread_mutex_unlock(&e->lock);
            (void)etcd_read_pointer(e, &ptr);
            pthread_mutex_lock(&e->lock);
            snap = e->snap_rev;
            pthread_mutex_unlock(&e->lock);
            if (s->on_fell_behind) {
                s->on_fell_behind(s->on_fell_behind_ctx, applied, snap);
            }
            pthread_mutex_lock(&e->lock);
            continue;
        }
        if (r == -EUCLEAN && !e->stop && e->unreadable != e->applied + 1) {
            /* Written by a newer configfsd, or damaged: nothing after it
             * can be applied. Reported once, as a problem of this node
             * (/readyz, /metrics); it is read again, as other errors. */
            e->unreadable = e->applied + 1;
            atomic_fetch_add(&e->n_replay_errors, 1);
            pthread_mutex_unlock(&e->lock);
            store_problem_add(s, "/", CFS_STORE_STEP_LOG, r);
            pthread_mutex_lock(&e->lock);
        }
        if (r == -EUCLEAN) {
            /* It stays unreadable: every entry the watch brings wakes this
             * thread, and must not cost another read of the log. */
            sleep_locked(e, unreadable_ms);
            unreadable_ms = unreadable_ms * 2 < ETCD_UNREADABLE_MAX_MS
                                ? unreadable_ms * 2
                                : ETCD_UNREADABLE_MAX_MS;
            continue;
        }
        unreadable_ms = ETCD_RETRY_MS;
        if (r < 0 && !e->stop) {
            struct timespec ts = after_us((uint64_t)ETCD_RETRY_MS * 1000u);

            pthread_cond_timedwait(&e->cond, &e->lock, &ts);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}
