// SPDX-License-Identifier: MIT
/*
 * visible.c - committed reads: what lets a reader tell whether what it
 * just read of the tree is committed state, waiting only for the
 * transactions that changed what it read.
 *
 * A transaction changes the tree in place from its first operation on,
 * long before the store has made it durable (or, in a cluster, before
 * etcd's quorum took it); if its commit then fails it is undone. A
 * reader must never answer with such a state, nor with a torn one (part
 * of a transaction, or a value from after a change beside a revision from
 * before it).
 *
 * Resources. Every node of the tree has two keys, hashes of its path's
 * components: its subtree ("sub": anything at or below it) and its self
 * (it exists under that name). The keys fall into VIS_N stripes. An
 * operation of a transaction touches, under the mutation lock and before
 * it changes anything: the sub key of every node on its path from the root
 * down to the node it changes, that node's self key, and for a link (or a
 * rename) the same for the other end (a link target's used_by). A
 * touched stripe is odd from the transaction's first touch until it lets
 * go of the mutation lock (sealed, committed or undone): a reader that
 * meets it odd, or sees its sequence move, is torn. The stripe remembers
 * the newest ticket that touched it (tickets are handed out in lock order
 * and transactions end in that order) and counts the undone ones.
 *
 * A read notes what it reads as core's read functions resolve paths
 * (cfs_stat(), cfs_readdir(), cfs_show(), ... through cfs__read_note()):
 * the self key of every node on the path as given and as resolved, and the
 * sub key of what it reads - a node, a directory's listing, an attribute's
 * item (its whole subsystem unless the subsystem says su_show_item_local).
 * It may answer once every ticket its stripes name is closed; it reads
 * again when one of them counted an undo, or it was torn. A read whose
 * stripes no open transaction touched neither waits nor reads again,
 * whatever runs elsewhere (hash collisions make it conservative, never
 * wrong).
 *
 * Progress: a read that keeps being torn (writers inside what it reads)
 * is run under the mutation lock (cfs_read_lock()): then it cannot be
 * torn, and it waits for at most the transactions queued before it. Only
 * undos make it read again (docs/DESIGN.md "Committed reads").
 *
 * What cannot be named by path takes the whole tree: registrations (the
 * world sequence, odd while one runs) and a transaction that touches more
 * than CFS_VIS_TXN_MAX stripes (an import); then every read waits for it,
 * as all did before. A mark that overflows reads as the whole tree too.
 */
#include "internal.h"

#define NONE_OPEN UINT64_MAX

struct vis_stripe {
    atomic_uint_fast64_t seq;    /* odd while its toucher holds the lock */
    atomic_uint_fast64_t ticket; /* the newest transaction that touched it */
    atomic_uint_fast64_t undone; /* undone transactions that touched it */
    /* the ticket holding it odd: written by the lock holder only, read by
     * readers too */
    atomic_uint_fast64_t owner;
};

static struct vis_stripe stripes[CFS_VIS_N];
static struct vis_stripe world; /* registrations and big transactions */

static pthread_mutex_t vis_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vis_cond = PTHREAD_COND_INITIALIZER;
static struct cfs_txn *open_head, *open_tail; /* vis_lock, ticket order */
static atomic_uint_fast64_t tickets = 0;      /* handed out */
static atomic_uint_fast64_t low = NONE_OPEN;  /* oldest open ticket */

/* The read this thread is doing (between cfs_read_begin() and its first
 * cfs_read_end()), whose stripes this thread's own writes do not tear. */
static _Thread_local struct cfs_read_mark *my_mark;
/* The ticket of the transaction this thread holds the lock for, or 0. */
static _Thread_local uint64_t my_ticket;
/* Registrations under way (the mutation lock's holder, recursive). */
static unsigned world_depth;

#define MAX_HOOKS 8
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void (*fn)(void *arg);
    void *arg;
} hooks[MAX_HOOKS]; /* hook_lock */

/* ---- keys --------------------------------------------------------------- */

#define KEY_ROOT  0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define SELF_SALT 0x9e3779b97f4a7c15ull
#define OWN_SALT  0xc2b2ae3d27d4eb4full

uint64_t cfs__vis_key_child(uint64_t parent, const char *name, size_t len)
{
    uint64_t h = (parent ^ '/') * FNV_PRIME;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)name[i]) * FNV_PRIME;
    }
    return h;
}

uint32_t cfs__vis_stripe(uint64_t key, enum cfs_vis_key kind)
{
    uint64_t x = key ^ (kind == CFS_VIS_SELF  ? SELF_SALT
                        : kind == CFS_VIS_OWN ? OWN_SALT
                                              : 0);

    /* splitmix64's finalizer: every bit of the key moves the stripe */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (uint32_t)(x & (CFS_VIS_N - 1));
}

/* The keys of @d's path, root first, into @keys (CFS_DEPTH_MAX + 1).
 * @return how many. @pre the tree lock or the mutation lock. */
static size_t dirent_keys(const struct cfs_dirent *d, uint64_t *keys)
{
    const struct cfs_dirent *chain[CFS_DEPTH_MAX + 1];
    size_t n = 0, k = 0;

    for (; d && d->parent && n < CFS_DEPTH_MAX; d = d->parent) {
        chain[n++] = d;
    }
    keys[k++] = KEY_ROOT;
    while (n-- > 0) {
        keys[k] =
            cfs__vis_key_child(keys[k - 1], chain[n]->name, chain[n]->name_len);
        k++;
    }
    return k;
}

/* The keys of the first @plen bytes of @path, root first (empty
 * components skipped, as path.c does). @return how many. */
static size_t path_keys(const char *path, size_t plen, uint64_t *keys)
{
    size_t k = 0, i = 0;

    keys[k++] = KEY_ROOT;
    while (i < plen && k <= CFS_DEPTH_MAX) {
        size_t len = 0;

        while (i < plen && path[i] == '/') {
            i++;
        }
        while (i + len < plen && path[i + len] != '/') {
            len++;
        }
        if (len) {
            keys[k] = cfs__vis_key_child(keys[k - 1], path + i, len);
            k++;
        }
        i += len;
    }
    return k;
}

/* ---- writers ------------------------------------------------------------ */

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

/* This thread moved @s (one of its read's stripes, maybe): its own moves
 * tear nothing it reads. */
static void own_move(const struct vis_stripe *s, bool undo)
{
    struct cfs_read_mark *m = my_mark;

    if (!m) {
        return;
    }
    if (s == &world) {
        m->own_world += !undo;
        m->own_world_undone += undo;
        return;
    }
    for (unsigned i = 0; i < m->n; i++) {
        if (&stripes[m->e[i].idx] == s) {
            m->e[i].own_seq += !undo;
            m->e[i].own_undone += undo;
        }
    }
}

static void stripe_odd(struct vis_stripe *s, uint64_t ticket)
{
    atomic_store(&s->owner, ticket);
    if (atomic_load(&s->ticket) < ticket) {
        atomic_store(&s->ticket, ticket);
    }
    atomic_fetch_add(&s->seq, 1);
    own_move(s, false);
}

static void stripe_even(struct vis_stripe *s, bool undone)
{
    if (undone) {
        atomic_fetch_add(&s->undone, 1); /* before it reads even */
        own_move(s, true);
    }
    atomic_store(&s->owner, 0);
    atomic_fetch_add(&s->seq, 1);
    own_move(s, false);
}

static void touch_stripe(struct cfs_txn *txn, uint32_t idx)
{
    struct vis_stripe *s = &stripes[idx];

    if (txn->vis_big || atomic_load(&s->owner) == txn->ticket) {
        return; /* odd for it already */
    }
    if (txn->vis_n == CFS_VIS_TXN_MAX) {
        /* too many to name: the whole tree (released with the rest;
         * already odd while a registration runs) */
        txn->vis_big = true;
        if (atomic_load(&world.seq) & 1) {
            if (atomic_load(&world.ticket) < txn->ticket) {
                atomic_store(&world.ticket, txn->ticket);
            }
        } else {
            stripe_odd(&world, txn->ticket);
        }
        return;
    }
    txn->vis_idx[txn->vis_n++] = idx;
    stripe_odd(s, txn->ticket);
}

/* Touch the path whose keys are @keys[0..n): sub of each, self and own
 * of the last, own of its parent (its children and revision change). */
static void touch_keys(struct cfs_txn *txn, const uint64_t *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        touch_stripe(txn, cfs__vis_stripe(keys[i], CFS_VIS_SUB));
    }
    touch_stripe(txn, cfs__vis_stripe(keys[n - 1], CFS_VIS_SELF));
    touch_stripe(txn, cfs__vis_stripe(keys[n - 1], CFS_VIS_OWN));
    if (n >= 2) {
        touch_stripe(txn, cfs__vis_stripe(keys[n - 2], CFS_VIS_OWN));
    }
}

void cfs__vis_touch(struct cfs_txn *txn,
                    const struct cfs_dirent *parent,
                    const char *name,
                    const char *other)
{
    uint64_t keys[CFS_DEPTH_MAX + 2] = {0};
    size_t n;

    if (txn->undoing) {
        return; /* the undo moves what the operations touched */
    }
    n = dirent_keys(parent, keys);
    if (name) {
        keys[n] = cfs__vis_key_child(keys[n - 1], name, strlen(name));
        n++;
    }
    touch_keys(txn, keys, n);
    if (other) {
        n = path_keys(other, strlen(other), keys);
        touch_keys(txn, keys, n);
    }
}

void cfs__vis_touch_dirent(struct cfs_txn *txn, const struct cfs_dirent *d)
{
    cfs__vis_touch(txn, d, NULL, NULL);
}

void cfs__vis_release(struct cfs_txn *txn, bool undone)
{
    for (size_t i = 0; i < txn->vis_n; i++) {
        struct vis_stripe *s = &stripes[txn->vis_idx[i]];

        if (atomic_load(&s->owner) == txn->ticket) {
            stripe_even(s, undone);
        }
    }
    if (txn->vis_big && atomic_load(&world.owner) == txn->ticket) {
        stripe_even(&world, undone);
    }
    if (my_ticket == txn->ticket) {
        my_ticket = 0;
    }
}

void cfs__vis_retouch(struct cfs_txn *txn)
{
    for (size_t i = 0; i < txn->vis_n; i++) {
        stripe_odd(&stripes[txn->vis_idx[i]], txn->ticket);
    }
    if (txn->vis_big && !(atomic_load(&world.seq) & 1)) {
        stripe_odd(&world, txn->ticket);
    }
}

void cfs__vis_world_begin(void)
{
    if (world_depth++ == 0 && !(atomic_load(&world.seq) & 1)) {
        stripe_odd(&world, 0);
    }
}

void cfs__vis_world_end(void)
{
    if (--world_depth == 0 && atomic_load(&world.owner) == 0 &&
        (atomic_load(&world.seq) & 1)) {
        stripe_even(&world, false);
    }
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
    my_ticket = txn->ticket;
}

void cfs__vis_close(struct cfs_txn *txn)
{
    pthread_mutex_lock(&vis_lock);
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

/* ---- readers ------------------------------------------------------------ */

void cfs_read_begin(struct cfs_read_mark *mark)
{
    struct vis_stripe *root = &stripes[cfs__vis_stripe(KEY_ROOT, CFS_VIS_SUB)];

    memset(mark, 0, offsetof(struct cfs_read_mark, e));
    mark->world = atomic_load(&world.seq);
    mark->world_undone = atomic_load(&world.undone);
    mark->torn = (mark->world & 1) && atomic_load(&world.owner) != my_ticket;
    /* e[0]: the root's subtree from the start, for a mark that overflows
     * (every transaction touches it) */
    mark->e[0].idx = cfs__vis_stripe(KEY_ROOT, CFS_VIS_SUB);
    mark->e[0].seq = atomic_load(&root->seq);
    mark->e[0].undone = atomic_load(&root->undone);
    mark->e[0].own_seq = mark->e[0].own_undone = 0;
    mark->whole_torn =
        (mark->e[0].seq & 1) && atomic_load(&root->owner) != my_ticket;
    mark->n = 1;
    my_mark = mark;
}

void cfs_read_stop(void)
{
    my_mark = NULL;
}

/* Is a subtree the read already holds at or above the node of @keys? */
static bool
covered(const struct cfs_read_mark *m, const uint64_t *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (unsigned j = 0; j < m->n_sub; j++) {
            if (m->sub[j] == keys[i]) {
                return true;
            }
        }
    }
    return false;
}

/* Note one stripe of the read. */
static void note_stripe(struct cfs_read_mark *m, uint32_t idx)
{
    struct vis_stripe *s = &stripes[idx];
    uint64_t seq;

    for (unsigned i = 1; i < m->n; i++) {
        if (m->e[i].idx == idx) {
            return;
        }
    }
    if (m->n == CFS_READ_MARK_MAX) {
        m->whole = true; /* cfs_read_end() takes the whole tree */
        return;
    }
    seq = atomic_load(&s->seq);
    if ((seq & 1) && atomic_load(&s->owner) != my_ticket) {
        m->torn = true; /* a transaction is changing it now */
    }
    m->e[m->n].idx = idx;
    m->e[m->n].seq = seq;
    m->e[m->n].undone = atomic_load(&s->undone);
    m->e[m->n].own_seq = 0;
    m->e[m->n].own_undone = 0;
    m->n++;
}

/* Note the self keys of @keys[0..n), and of the last: its own key
 * (CFS_READ_NODE) or its subtree (CFS_READ_TREE). */
static void note_keys(struct cfs_read_mark *m,
                      const uint64_t *keys,
                      size_t n,
                      enum cfs_read_what what)
{
    if (m->whole || covered(m, keys, n)) {
        return;
    }
    for (size_t i = 1; i < n; i++) {
        note_stripe(m, cfs__vis_stripe(keys[i], CFS_VIS_SELF));
    }
    if (what == CFS_READ_NODE) {
        note_stripe(m, cfs__vis_stripe(keys[n - 1], CFS_VIS_OWN));
    } else if (what == CFS_READ_TREE) {
        note_stripe(m, cfs__vis_stripe(keys[n - 1], CFS_VIS_SUB));
        if (m->n_sub < CFS_READ_MARK_SUBS) {
            m->sub[m->n_sub++] = keys[n - 1];
        }
    }
}

void cfs__read_note_path(const char *path, size_t plen)
{
    uint64_t keys[CFS_DEPTH_MAX + 2] = {0};

    if (my_mark && path) {
        note_keys(my_mark, keys, path_keys(path, plen, keys), CFS_READ_SELF);
    }
}

/* The subsystem @d is in: its dirent just below the root, or NULL. */
static const struct cfs_dirent *subsystem_of(const struct cfs_dirent *d)
{
    while (d && d->parent && d->parent->parent) {
        d = d->parent;
    }
    return d && d->parent ? d : NULL;
}

static bool show_item_local(const struct cfs_dirent *sd)
{
    const struct config_group *g;
    const struct configfs_subsystem *su;

    if (!sd || !(sd->flags & CFS_DF_SUBSYS) || !sd->item) {
        return false;
    }
    g = container_of(sd->item, struct config_group, cg_item);
    su = container_of(g, struct configfs_subsystem, su_group);
    return su->su_show_item_local;
}

void cfs__read_note(const struct cfs_dirent *d,
                    const char *attr,
                    enum cfs_read_what what)
{
    uint64_t keys[CFS_DEPTH_MAX + 2] = {0};
    struct cfs_read_mark *m = my_mark;
    const struct cfs_dirent *sd;
    size_t n;

    if (!m || !d) {
        return;
    }
    n = dirent_keys(d, keys);
    if (attr) {
        keys[n] = cfs__vis_key_child(keys[n - 1], attr, strlen(attr));
        n++;
    }
    if (what != CFS_READ_SHOW) {
        note_keys(m, keys, n, what);
        return;
    }
    /* an attribute's show() may read its item (the attribute's parent),
     * or the whole module's state */
    note_keys(m, keys, n, CFS_READ_SELF);
    note_keys(m, keys, n - 1, CFS_READ_TREE);
    sd = subsystem_of(d);
    if (sd && !show_item_local(sd)) {
        note_keys(m, keys, dirent_keys(sd, keys), CFS_READ_TREE);
    }
}

/* No lock: the atomics above. */
int cfs_read_end(struct cfs_read_mark *mark)
{
    bool again = false, busy = false;
    uint64_t w;

    if (!mark->ended) {
        /* the first call, in the thread that read, as the read ends: the
         * newest ticket it may have seen, and whether another thread
         * changed what it read meanwhile */
        mark->ended = true;
        if (my_mark == mark) {
            my_mark = NULL;
        }
        if (mark->whole) {
            mark->ticket = atomic_load(&tickets);
            mark->torn = mark->torn || mark->whole_torn;
        }
        /* e[0] counts only for a mark that overflowed */
        for (unsigned i = mark->whole ? 0 : 1; i < mark->n; i++) {
            struct vis_stripe *s = &stripes[mark->e[i].idx];
            uint64_t t = atomic_load(&s->ticket);

            if (atomic_load(&s->seq) - mark->e[i].seq != mark->e[i].own_seq) {
                mark->torn = true;
            }
            mark->e[i].undone += mark->e[i].own_undone;
            if (t > mark->ticket) {
                mark->ticket = t;
            }
        }
        w = atomic_load(&world.seq);
        if (w - mark->world != mark->own_world) {
            mark->torn = true;
        }
        if (atomic_load(&world.ticket) > mark->ticket) {
            mark->ticket = atomic_load(&world.ticket);
        }
        mark->world_undone += mark->own_world_undone;
    }
    if (mark->torn) {
        /* read again once what tore it is let go (its release calls the
         * hooks) */
        for (unsigned i = mark->whole ? 0 : 1; i < mark->n; i++) {
            busy = busy || (atomic_load(&stripes[mark->e[i].idx].seq) & 1);
        }
        busy = busy || (atomic_load(&world.seq) & 1);
        return busy ? -EINPROGRESS : -EAGAIN;
    }
    if (atomic_load(&low) <= mark->ticket) {
        return -EINPROGRESS;
    }
    /* what it saw may be gone: an undo of a transaction that touched it
     * (conservative: any since the read began) */
    for (unsigned i = mark->whole ? 0 : 1; i < mark->n; i++) {
        again = again || atomic_load(&stripes[mark->e[i].idx].undone) !=
                             mark->e[i].undone;
    }
    if (atomic_load(&world.undone) != mark->world_undone) {
        again = true; /* an import, say, undone: it touched everything */
    }
    return again ? -EAGAIN : 0;
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

/* Holds the mutation lock across calls: beyond the analysis. */
CFS_NO_TSA void cfs_read_lock(void)
{
    cfs__wlock_acquire();
}

CFS_NO_TSA void cfs_read_unlock(void)
{
    cfs__wlock_release();
}

bool cfs_mutation_lock_held(void)
{
    return cfs__wlock_held();
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
