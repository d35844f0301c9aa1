// SPDX-License-Identifier: MIT
/*
 * visible.c - committed reads: what lets a reader tell whether what it
 * just read of the tree is committed state.
 *
 * A transaction changes the tree in place from its first operation on,
 * long before the store has made it durable (or, in a cluster, before
 * etcd's quorum took it); if its commit then fails it is undone. A
 * reader must never answer with such a state. Every transaction gets a
 * ticket when it begins (under the mutation lock, so tickets follow lock
 * order) and stays on the list of open transactions until it is
 * committed (cfs_txn_commit(), which the store calls once the change is
 * durable) or undone. A read notes, when it ends, the last ticket handed
 * out: everything it may have seen was done by a transaction with a
 * ticket up to that one. It may answer once none of those is open any
 * more; it reads again when one was undone since it began (any but its
 * own thread's during the read: conservative, never wrong). cfs_read_end()
 * says which; cfs_read_wait() blocks until then, and the hooks tell a server
 * that does not block (it holds the answer, its worker goes on) when a
 * transaction ended or the mutation lock went (once: a transaction that
 * ends under the lock leaves the telling to its release).
 *
 * The rule covers whatever a read sees, module state included: a show()
 * that reads a module's own structures is answered only once every
 * transaction that ran before or during it is settled.
 *
 * A read must also not be torn: a value from after a change with a
 * revision from before it names a state that never was. Every change to
 * the tree is made under the mutation lock, so a read during which the
 * lock was neither held nor taken saw one state; one that overlapped a
 * holder reads again once the holder let go (the epoch below counts the
 * lock's acquisitions and releases: odd while it is held).
 */
#include "internal.h"

/*
 * The list is kept under vis_lock; what a reader needs of it is published
 * in atomics (written under vis_lock, read without it), so that a read
 * that meets no open transaction takes no lock: @low the ticket of the
 * oldest open transaction (NONE_OPEN without one) is set before @tickets
 * counts a new one, and @undone moves before @low does.
 */
#define NONE_OPEN UINT64_MAX
static pthread_mutex_t vis_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vis_cond = PTHREAD_COND_INITIALIZER;
static struct cfs_txn *open_head, *open_tail; /* vis_lock, ticket order */
static atomic_uint_fast64_t tickets = 0;      /* handed out */
static atomic_uint_fast64_t low = NONE_OPEN;  /* oldest open ticket */
static atomic_uint_fast64_t undone = 0;       /* transactions undone that had
                                                 changed the tree */
static atomic_uint_fast64_t epoch; /* the mutation lock: odd while held */
/* This thread's own share of the epoch: a request's own failed write
 * (taken and undone in the thread that reads) tears nothing it answers. */
static _Thread_local uint64_t my_epoch, my_undone;

#define MAX_HOOKS 8
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void (*fn)(void *arg);
    void *arg;
} hooks[MAX_HOOKS]; /* hook_lock */

static void call_hooks(void)
{
    pthread_mutex_lock(&hook_lock);
    for (size_t i = 0; i < MAX_HOOKS; i++) {
        if (hooks[i].fn) {
            hooks[i].fn(hooks[i].arg);
        }
    }
    pthread_mutex_unlock(&hook_lock);
}

void cfs__vis_turn(void)
{
    atomic_fetch_add(&epoch, 1);
    my_epoch++;
}

/* Tell the waiting readers (cfs_read_wait(), the hooks) to look again. */
static void wake_readers(void)
{
    pthread_mutex_lock(&vis_lock);
    pthread_cond_broadcast(&vis_cond);
    pthread_mutex_unlock(&vis_lock);
    call_hooks();
}

void cfs__vis_unlocked(void)
{
    wake_readers(); /* a read torn by the holder may read again now */
}

void cfs__vis_open(struct cfs_txn *txn)
{
    pthread_mutex_lock(&vis_lock);
    txn->ticket = atomic_load(&tickets) + 1;
    if (!open_head) {
        atomic_store(&low, txn->ticket); /* before the ticket counts */
    }
    atomic_store(&tickets, txn->ticket);
    txn->vprev = open_tail;
    txn->vnext = NULL;
    if (open_tail) {
        open_tail->vnext = txn;
    } else {
        open_head = txn;
    }
    open_tail = txn;
    pthread_mutex_unlock(&vis_lock);
}

void cfs__vis_close(struct cfs_txn *txn, bool was_undone)
{
    pthread_mutex_lock(&vis_lock);
    if (was_undone) {
        atomic_fetch_add(&undone, 1); /* before @low moves past it */
        my_undone++;
    }
    if (txn->vprev) {
        txn->vprev->vnext = txn->vnext;
    } else {
        open_head = txn->vnext;
    }
    if (txn->vnext) {
        txn->vnext->vprev = txn->vprev;
    } else {
        open_tail = txn->vprev;
    }
    txn->vprev = txn->vnext = NULL;
    atomic_store(&low, open_head ? open_head->ticket : NONE_OPEN);
    pthread_mutex_unlock(&vis_lock);
    if (!cfs__wlock_held()) {
        wake_readers(); /* otherwise the lock's release does */
    }
}

void cfs_read_begin(struct cfs_read_mark *mark)
{
    mark->ticket = 0;
    mark->epoch = atomic_load(&epoch);
    mark->own_epoch = my_epoch;
    mark->undone = atomic_load(&undone);
    mark->own_undone = my_undone;
}

/* No lock: the atomics above. */
int cfs_read_end(struct cfs_read_mark *mark)
{
    if (!mark->ticket) {
        /* the first call, in the thread that read, as the read ends: what
         * it may have seen, at most; and whether another thread held the
         * lock meanwhile (its own holds tear nothing) */
        uint64_t end = atomic_load(&epoch);

        mark->ticket = atomic_load(&tickets);
        mark->torn = (mark->epoch & 1) ||
                     end - mark->epoch != my_epoch - mark->own_epoch;
        mark->own_undone = my_undone - mark->own_undone;
    }
    if (atomic_load(&low) <= mark->ticket) {
        return -EINPROGRESS;
    }
    if (atomic_load(&undone) - mark->undone > mark->own_undone) {
        return -EAGAIN; /* what it saw may be gone (conservative: any) */
    }
    if (mark->torn) {
        /* read again once the lock is free (its release calls the hooks) */
        return (atomic_load(&epoch) & 1) ? -EINPROGRESS : -EAGAIN;
    }
    return 0;
}

int cfs_read_wait(struct cfs_read_mark *mark)
{
    int r;

    pthread_mutex_lock(&vis_lock);
    while ((r = cfs_read_end(mark)) == -EINPROGRESS) {
        pthread_cond_wait(&vis_cond, &vis_lock);
    }
    pthread_mutex_unlock(&vis_lock);
    return r;
}

int cfs_read_hook_add(void (*fn)(void *arg), void *arg)
{
    int r = -ENOSPC;

    pthread_mutex_lock(&hook_lock);
    for (size_t i = 0; i < MAX_HOOKS; i++) {
        if (!hooks[i].fn) {
            hooks[i].fn = fn;
            hooks[i].arg = arg;
            r = 0;
            break;
        }
    }
    pthread_mutex_unlock(&hook_lock);
    return r;
}

void cfs_read_hook_remove(void (*fn)(void *arg), void *arg)
{
    pthread_mutex_lock(&hook_lock);
    for (size_t i = 0; i < MAX_HOOKS; i++) {
        if (hooks[i].fn == fn && hooks[i].arg == arg) {
            hooks[i].fn = NULL;
            hooks[i].arg = NULL;
        }
    }
    pthread_mutex_unlock(&hook_lock);
}
