// SPDX-License-Identifier: MIT
/*
 * replay.c - rebuild the tree from the store through the normal operations,
 * at open and when a subsystem registers later (the tree observer).
 *
 * Replay runs in a replay transaction (cfs_txn_begin_replay()): the same
 * checks and callbacks as any front end, but no change records and no new
 * revision, so nothing is journalled; each step is stamped with the
 * revision it had. A step that fails is recorded as a problem and its data
 * stays in the database; steps below a directory that could not be made
 * are skipped and counted against it.
 */
#include <errno.h>
#include <string.h>

#include "store-internal.h"

struct replayer {
    struct cfs_store *store;
    struct cfs_txn *txn;
    const char *only; /* the subsystem being replayed, or NULL for all */
    /* At open (only NULL): the subsystems this run replays. */
    const char *const *names;
    size_t n_names;
    struct store_strset failed; /* directories that could not be made */
    struct store_problem_list problems;
    int error; /* first allocation failure */
};

/* ---- the step runner --------------------------------------------------- */

/* The failed directory that @path (a directory, @len bytes) is in, if any:
 * the index of its problem, or -1. */
static long
failed_ancestor(const struct replayer *rp, const char *path, size_t len)
{
    if (rp->failed.n == 0) {
        return -1;
    }
    for (size_t i = 1; i <= len; i++) {
        if ((i == len || path[i] == '/') &&
            store_strset_has(&rp->failed, path, i)) {
            for (size_t k = 0; k < rp->problems.n; k++) {
                if (strlen(rp->problems.v[k].path) == i &&
                    memcmp(rp->problems.v[k].path, path, i) == 0) {
                    return (long)k;
                }
            }
            return -1;
        }
    }
    return -1;
}

static bool is_dir_kind(enum cfs_kind kind)
{
    return kind == CFS_KIND_SUBSYSTEM || kind == CFS_KIND_GROUP ||
           kind == CFS_KIND_ITEM;
}

/* Is @path's subsystem replayed (so a link from it can be made now)? */
static bool subsystem_live(struct cfs_store *s, const char *path)
{
    const char *end = strchr(path + 1, '/');
    size_t len = end ? (size_t)(end - path - 1) : strlen(path + 1);
    bool live = false;

    pthread_mutex_lock(&s->p_lock);
    for (size_t i = 0; i < s->n_replayed && !live; i++) {
        live = strlen(s->replayed[i]) == len &&
               memcmp(s->replayed[i], path + 1, len) == 0;
    }
    pthread_mutex_unlock(&s->p_lock);
    return live;
}

/* Is @path in one of the @n subsystems @names (all when @n is 0)? */
static bool in_subsystems(const char *path, const char *const *names, size_t n)
{
    const char *end = strchr(path + 1, '/');
    size_t len = end ? (size_t)(end - path - 1) : strlen(path + 1);

    if (len == 0) {
        return false; /* the root */
    }
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], path + 1, len) == 0) {
            return true;
        }
    }
    return n == 0;
}

static int replay_step(void *data, const struct cfs_store_step *st)
{
    struct replayer *rp = data;
    size_t len = strlen(st->path);
    size_t dlen =
        st->op == CFS_STORE_STEP_STORE || st->op == CFS_STORE_STEP_SYMLINK
            ? store_dirname_len(st->path, len)
            : len;
    long anc = failed_ancestor(rp, st->path, dlen);
    struct cfs_entry entry;
    int r;

    if (anc >= 0) {
        rp->problems.v[anc].skipped++;
        return 0;
    }
    if (st->op == CFS_STORE_STEP_SYMLINK && rp->only &&
        !subsystem_live(rp->store, st->path)) {
        return 0; /* a link into us from a subsystem not here yet */
    }
    if (st->op == CFS_STORE_STEP_SYMLINK && !rp->only &&
        !in_subsystems(st->path, rp->names, rp->n_names)) {
        /* a link into us from a subsystem this run does not replay: its
         * own replay made it (or reported it), or it is not here */
        return 0;
    }
    cfs_txn_set_stamp(rp->txn, st->revision);
    switch (st->op) {
    case CFS_STORE_STEP_MKDIR:
        r = cfs_mkdir(rp->txn, st->path);
        break;
    case CFS_STORE_STEP_DIR:
        r = cfs_stat(st->path, &entry);
        if (r == 0) {
            r = is_dir_kind(entry.kind) ? 0 : -ENOTDIR;
            cfs_entry_done(&entry);
        }
        break;
    case CFS_STORE_STEP_STORE:
        r = cfs_write(rp->txn, st->path, st->arg, st->arg_len);
        break;
    case CFS_STORE_STEP_SYMLINK:
        /* Every stored link is tried by one replay only, so -EEXIST is
         * never "already made by the other end's replay": it means the
         * name is taken (an attribute or default group of that name in
         * this version of the subsystem), a problem to report. Why one
         * replay: a link from O into T is tried by the replay of O (at
         * open: O among the names; later: the registration of O), or by
         * the registration of T while O is live - never both while both
         * stay registered: the first that can make it needs the other
         * subsystem registered, so the other was replayed before (its
         * replay skipped the link: O not live, or T not there yet), and
         * leaving and coming back drops the link with the subsystem. At
         * open, links from a subsystem not among the names are skipped
         * (above), and open holds the mutation lock from choosing the
         * names to the last step, so no registration's replay interleaves.
         */
        r = cfs_symlink(rp->txn, st->path, st->arg);
        break;
    case CFS_STORE_STEP_COMMIT:
        r = cfs_rename(rp->txn, st->path, st->arg);
        break;
    default:
        r = -EINVAL;
        break;
    }
    if (r < 0) {
        int e = store_plist_add(&rp->problems, st->path, st->op, r);

        if (e == 0 &&
            (st->op == CFS_STORE_STEP_MKDIR || st->op == CFS_STORE_STEP_DIR)) {
            e = store_strset_add(&rp->failed, st->path, len);
        }
        if (e < 0 && rp->error == 0) {
            rp->error = e;
        }
    } else if (st->op == CFS_STORE_STEP_SYMLINK && rp->only) {
        /* It may have failed before, replayed with its own subsystem. */
        pthread_mutex_lock(&rp->store->p_lock);
        store_plist_remove_under(&rp->store->problems, st->path);
        pthread_mutex_unlock(&rp->store->p_lock);
    }
    return r;
}

/* After the steps: raise the revision of each directory that a change
 * replay cannot re-make touched last (a removal inside it, an uncommit),
 * so that revisions and ETags survive a restart. */
static int replay_touches(struct replayer *rp,
                          const char *const *names,
                          size_t n) CFS_STORE_NO_TSA
{
    struct cfs_store *s = rp->store;
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE, r;

    pthread_mutex_lock(&s->r_lock);
    r = store_errno(sqlite3_prepare_v2(s->rdb,
                                       "SELECT path, touch_rev FROM node"
                                       " WHERE touch_rev > 0",
                                       -1,
                                       &st,
                                       NULL));
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);

        if (path && in_subsystems(path, names, n)) {
            cfs_txn_set_stamp(rp->txn, (uint64_t)sqlite3_column_int64(st, 1));
            /* a directory that replay could not make has nothing to raise */
            (void)cfs_replay_touch(rp->txn, path);
        }
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->r_lock);
    return r;
}

/* Hand the run's problems to the store. */
static void replayer_finish(struct replayer *rp)
{
    struct cfs_store *s = rp->store;

    pthread_mutex_lock(&s->p_lock);
    for (size_t i = 0; i < rp->problems.n; i++) {
        struct store_problem_list *l = &s->problems;

        if (cfs_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 8)) {
            break;
        }
        l->v[l->n++] = rp->problems.v[i];
        rp->problems.v[i].path = NULL;
    }
    pthread_mutex_unlock(&s->p_lock);
    store_plist_free(&rp->problems);
    store_strset_free(&rp->failed);
}

/* ---- which subsystems are replayed ------------------------------------- */

/* Mark @name replayed; false if it already was. @pre p_lock */
static bool replayed_add(struct cfs_store *s, const char *name)
{
    char *copy;

    for (size_t i = 0; i < s->n_replayed; i++) {
        if (strcmp(s->replayed[i], name) == 0) {
            return false;
        }
    }
    if (cfs_grow(&s->replayed,
                 &s->cap_replayed,
                 s->n_replayed,
                 sizeof(*s->replayed),
                 8)) {
        return false;
    }
    copy = cfs_strdup(name);
    if (!copy) {
        return false;
    }
    s->replayed[s->n_replayed++] = copy;
    return true;
}

/* @pre p_lock */
static void replayed_remove(struct cfs_store *s, const char *name)
{
    for (size_t i = 0; i < s->n_replayed; i++) {
        if (strcmp(s->replayed[i], name) == 0) {
            cfs_free(s->replayed[i]);
            s->replayed[i] = s->replayed[--s->n_replayed];
            return;
        }
    }
}

/* Forget the problems of subsystem @name (it is replayed again). @pre p_lock */
static void problems_of_subsystem_clear(struct cfs_store *s, const char *name)
{
    char *path = store_asprintf("/%s", name);

    if (path) {
        store_plist_remove_under(&s->problems, path);
        cfs_free(path);
    }
}

/* Record a SUBSYSTEM problem for each stored subsystem not replayed. */
static int report_absent_subsystems(struct cfs_store *s)
{
    sqlite3_stmt *st = NULL;
    int rc, r;

    pthread_mutex_lock(&s->r_lock);
    r = store_errno(sqlite3_prepare_v2(
        s->rdb,
        "SELECT name, path FROM node WHERE parent = 1 ORDER BY id",
        -1,
        &st,
        NULL));
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *path = (const char *)sqlite3_column_text(st, 1);
        bool found = false;

        pthread_mutex_lock(&s->p_lock);
        for (size_t i = 0; name && i < s->n_replayed && !found; i++) {
            found = strcmp(s->replayed[i], name) == 0;
        }
        if (!found && path) {
            store_plist_remove_under(&s->problems, path);
            r = store_plist_add(
                &s->problems, path, CFS_STORE_STEP_SUBSYSTEM, -ENOENT);
        }
        pthread_mutex_unlock(&s->p_lock);
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->r_lock);
    return r;
}

/* ---- the observer ------------------------------------------------------ */

static void on_registered(void *data, struct cfs_txn *txn, const char *name)
{
    struct cfs_store *s = data;
    struct replayer rp = {.store = s, .txn = txn, .only = name};
    const char *names[1] = {name};
    bool fresh;
    int r;

    pthread_mutex_lock(&s->p_lock);
    fresh = replayed_add(s, name);
    if (fresh) {
        problems_of_subsystem_clear(s, name);
    }
    pthread_mutex_unlock(&s->p_lock);
    if (!fresh) {
        return;
    }
    /* Transactions sealed before we took the mutation lock may still be on
     * their way to the database; replay must see them. */
    store_drain(s);
    r = cfs_store_load(s, names, 1, replay_step, &rp);
    if (r == 0) {
        r = replay_touches(&rp, names, 1);
    }
    if (r < 0) {
        store_plist_add(&rp.problems, names[0], CFS_STORE_STEP_SUBSYSTEM, r);
    }
    replayer_finish(&rp);
}

static void on_unregistered(void *data, const char *name)
{
    struct cfs_store *s = data;

    pthread_mutex_lock(&s->p_lock);
    replayed_remove(s, name);
    problems_of_subsystem_clear(s, name);
    pthread_mutex_unlock(&s->p_lock);
    report_absent_subsystems(s);
}

int store_replay_open(struct cfs_store *s)
{
    static const struct cfs_observer ops_template = {
        .subsystem_registered = on_registered,
        .subsystem_unregistered = on_unregistered,
    };
    struct cfs_observer ops = ops_template;
    struct replayer rp = {.store = s};
    struct cfs_entry *entries = NULL;
    const char **names = NULL;
    size_t n = 0, n_names = 0;
    struct cfs_txn *txn = NULL;
    int r;

    ops.data = s;
    cfs_set_observer(&ops);
    s->observing = true;

    /* The mutation lock from choosing the names to the last step: a
     * subsystem registering meanwhile is replayed by the observer either
     * wholly before (and is not among the names) or wholly after. */
    r = cfs_txn_begin_replay(&txn);
    if (r < 0) {
        return r;
    }
    r = cfs_readdir("/", &entries, &n);
    if (r < 0) {
        goto out;
    }
    names = cfs_zalloc((n ? n : 1) * sizeof(*names));
    if (!names) {
        r = -ENOMEM;
        goto out;
    }
    pthread_mutex_lock(&s->p_lock);
    for (size_t i = 0; i < n; i++) {
        /* One the observer replayed meanwhile is skipped. */
        if (entries[i].kind == CFS_KIND_SUBSYSTEM &&
            replayed_add(s, entries[i].name)) {
            names[n_names++] = entries[i].name;
        }
    }
    pthread_mutex_unlock(&s->p_lock);

    if (n_names > 0) {
        rp.txn = txn;
        rp.names = names;
        rp.n_names = n_names;
        /* At start-up the subsystems hold most of the rows: one pass over
         * the tables beats a sorted index range. */
        r = store_load(s, names, n_names, false, replay_step, &rp);
        if (r == 0) {
            r = replay_touches(&rp, names, n_names);
        }
        cfs_txn_commit(txn);
        txn = NULL;
        if (r == 0) {
            r = rp.error;
        }
        replayer_finish(&rp);
        if (r < 0) {
            goto out;
        }
    }
    cfs_txn_commit(txn);
    txn = NULL;
    r = report_absent_subsystems(s);
out:
    cfs_txn_commit(txn);
    cfs_free(names);
    cfs_entries_free(entries, n);
    return r;
}

void store_replay_close(struct cfs_store *s)
{
    if (s->observing) {
        cfs_set_observer(NULL);
        s->observing = false;
    }
    pthread_mutex_lock(&s->p_lock);
    for (size_t i = 0; i < s->n_replayed; i++) {
        cfs_free(s->replayed[i]);
    }
    cfs_free(s->replayed);
    s->replayed = NULL;
    s->n_replayed = s->cap_replayed = 0;
    store_plist_free(&s->problems);
    pthread_mutex_unlock(&s->p_lock);
}
