// SPDX-License-Identifier: MIT
/*
 * txn.c - transactions, change records, revisions and undo.
 *
 * A transaction holds the mutation lock from begin to seal (or end), so its
 * operations form one uninterrupted sequence; every operation that took
 * effect left one change record. Abort walks the records newest first and
 * applies the inverse operation of each through the ordinary code paths
 * (and so the ordinary callbacks), with recording and stamping switched off,
 * then puts the touched nodes' revisions back.
 */
#include "internal.h"

static atomic_uint_fast64_t g_revision;
static uint64_t g_seq; /* cfs__wlock */

uint64_t cfs_revision(void)
{
    return atomic_load(&g_revision);
}

void cfs_revision_set(uint64_t revision)
{
    atomic_store(&g_revision, revision);
}

uint64_t cfs__next_seq(void)
{
    return ++g_seq;
}

uint64_t cfs__txn_rev(struct cfs_txn *txn)
{
    if (txn->undoing) {
        return 0;
    }
    if (txn->replay) {
        return txn->stamp;
    }
    if (!txn->revision) {
        txn->revision = atomic_fetch_add(&g_revision, 1) + 1;
    }
    return txn->revision;
}

const char *cfs_op_name(enum cfs_op op)
{
    switch (op) {
    case CFS_OP_MKDIR:
        return "mkdir";
    case CFS_OP_RMDIR:
        return "rmdir";
    case CFS_OP_STORE:
        return "store";
    case CFS_OP_SYMLINK:
        return "symlink";
    case CFS_OP_UNLINK:
        return "unlink";
    case CFS_OP_RENAME:
        return "rename";
    }
    return "unknown";
}

/* ---- records ----------------------------------------------------------- */

static void change_done(struct cfs_change *ch)
{
    cfs_free(ch->path);
    cfs_free(ch->arg);
    cfs_free(ch->old);
    cfs_values_free(ch->dropped, ch->n_dropped);
    if (ch->priv) {
        cfs_free(ch->priv->before);
        cfs__link_free(ch->priv->link);
        cfs_free(ch->priv->dg_revs);
    }
    cfs_free(ch->priv);
    memset(ch, 0, sizeof(*ch));
}

char *cfs__join_path(struct cfs_dirent *parent, const char *name)
{
    char *ppath = NULL;
    char *path;
    size_t plen;
    size_t nlen = strlen(name);

    if (cfs__dirent_path(parent, &ppath) < 0) {
        return NULL;
    }
    plen = strlen(ppath);
    if (plen == 1) {
        plen = 0; /* the root: "/" + name */
    }
    path = cfs_malloc(plen + nlen + 2);
    if (path) {
        memcpy(path, ppath, plen);
        path[plen] = '/';
        memcpy(path + plen + 1, name, nlen + 1);
    }
    cfs_free(ppath);
    return path;
}

int cfs__txn_prepare(struct cfs_txn *txn,
                     enum cfs_op op,
                     struct cfs_dirent *parent,
                     const char *name,
                     const void *arg,
                     size_t arg_len,
                     struct cfs_change **ret_change)
{
    struct cfs_change *ch;

    *ret_change = NULL;
    /* before anything changes: readers of what it touches are torn */
    cfs__vis_touch(
        txn,
        parent,
        name,
        (op == CFS_OP_SYMLINK || op == CFS_OP_UNLINK || op == CFS_OP_RENAME)
            ? (const char *)arg
            : NULL);
    if (txn->undoing || txn->replay) {
        return 0;
    }
    CFS_BUG_ON(txn->prepared);
    if (cfs_grow(&txn->changes, &txn->cap, txn->n, sizeof(*txn->changes), 4)) {
        return -ENOMEM;
    }
    ch = &txn->changes[txn->n];
    memset(ch, 0, sizeof(*ch));
    ch->op = op;
    ch->path = cfs__join_path(parent, name);
    ch->priv = cfs_zalloc(sizeof(*ch->priv));
    if (arg) {
        ch->arg = cfs_memdup(arg, arg_len);
        ch->arg_len = arg_len;
    }
    if (!ch->path || !ch->priv || (arg && !ch->arg)) {
        change_done(ch);
        return -ENOMEM;
    }
    txn->prepared = true;
    *ret_change = ch;
    return 0;
}

void cfs__txn_push(struct cfs_txn *txn)
{
    if (!txn->prepared) {
        return;
    }
    txn->changes[txn->n].revision = cfs__txn_rev(txn);
    txn->n++;
    txn->prepared = false;
}

void cfs__txn_unprepare(struct cfs_txn *txn)
{
    if (!txn->prepared) {
        return;
    }
    change_done(&txn->changes[txn->n]);
    txn->prepared = false;
}

/* ---- life cycle -------------------------------------------------------- */

/* Holds the mutation lock across calls: beyond the analysis. */
CFS_NO_TSA static int txn_new(struct cfs_txn **ret_txn)
{
    struct cfs_txn *txn;

    if (cfs__in_callback()) {
        return -EDEADLK; /* a callback would wait for itself */
    }
    txn = cfs_zalloc(sizeof(*txn));
    if (!txn) {
        return -ENOMEM;
    }
    cfs__wlock_acquire();
    cfs__vis_open(txn);
    *ret_txn = txn;
    return 0;
}

int cfs_txn_begin(struct cfs_txn **ret_txn)
{
    return txn_new(ret_txn);
}

int cfs_txn_begin_replay(struct cfs_txn **ret_txn)
{
    int r = txn_new(ret_txn);

    if (r == 0) {
        (*ret_txn)->replay = true;
    }
    return r;
}

void cfs_txn_set_stamp(struct cfs_txn *txn, uint64_t revision)
{
    txn->stamp = revision;
}

int cfs_replay_touch(struct cfs_txn *txn, const char *path)
{
    struct cfs_resolved res;
    int r;

    if (!txn || !txn->replay) {
        return -EINVAL;
    }
    r = cfs__resolve(path, &res);
    if (r < 0) {
        return r;
    }
    if (res.kind != CFS_R_DIR) {
        return -ENOTDIR;
    }
    cfs__vis_touch_dirent(txn, res.dir);
    cfs__tree_wrlock();
    if (res.dir->revision < txn->stamp) {
        res.dir->revision = txn->stamp;
    }
    cfs__tree_unlock();
    return 0;
}

const struct cfs_change *cfs_txn_changes(const struct cfs_txn *txn,
                                         size_t *ret_n)
{
    *ret_n = txn->n;
    return txn->changes;
}

uint64_t cfs_txn_revision(const struct cfs_txn *txn)
{
    return txn->n ? txn->revision : 0;
}

/* Hand back a revision that no record carries, if it is the newest. */
static void txn_return_revision(struct cfs_txn *txn)
{
    uint64_t rev = txn->revision;

    if (rev) {
        atomic_compare_exchange_strong(&g_revision, &rev, rev - 1);
        txn->revision = 0;
    }
}

/* Holds the mutation lock across calls: beyond the analysis. */
CFS_NO_TSA void cfs_txn_seal(struct cfs_txn *txn)
{
    if (!txn->sealed) {
        if (!txn->n) {
            txn_return_revision(txn);
        }
        txn->sealed = true;
        cfs__vis_release(txn, false);
        cfs__wlock_release();
    }
}

static void txn_free(struct cfs_txn *txn)
{
    for (size_t i = 0; i < txn->n; i++) {
        change_done(&txn->changes[i]);
    }
    cfs__txn_unprepare(txn);
    cfs_free(txn->changes);
    cfs_free(txn);
}

/* Holds the mutation lock across calls: beyond the analysis. */
CFS_NO_TSA void cfs_txn_commit(struct cfs_txn *txn)
{
    if (!txn) {
        return;
    }
    if (!txn->sealed) {
        if (!txn->n) {
            txn_return_revision(txn);
        }
        cfs__vis_release(txn, false);
        cfs__vis_close(txn); /* the release tells the readers */
        cfs__wlock_release();
    } else {
        cfs__vis_close(txn);
    }
    txn_free(txn);
}

int cfs__op_begin(struct cfs_txn **txn)
{
    int r;

    if (cfs__in_callback()) {
        return -EDEADLK;
    }
    if (*txn) {
        return (*txn)->sealed ? -EINVAL : 0;
    }
    r = cfs_txn_begin(txn);
    if (r == 0) {
        (*txn)->implicit = true;
    }
    return r;
}

int cfs__op_end(struct cfs_txn *txn, int ret)
{
    if (txn && txn->implicit) {
        cfs_txn_commit(txn);
    }
    return ret;
}

/* ---- undo -------------------------------------------------------------- */

/* The length of @path's parent ("/a/b" -> 2, "/a" -> 1). */
static size_t dirname_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 0;

    return len ? len : 1;
}

/* Put back a node's revisions after its inverse operation. Allocates
 * nothing. */
static void
restore_rev(const char *path, bool dirname, uint64_t rev, uint64_t created)
{
    struct cfs_resolved res;
    size_t len = dirname ? dirname_len(path) : strlen(path);

    if (cfs__resolve_n(path, len, &res) == 0 &&
        (res.kind == CFS_R_DIR || res.kind == CFS_R_LINK)) {
        cfs__tree_wrlock();
        res.dir->revision = rev;
        if (created) {
            res.dir->created_rev = created;
        }
        cfs__tree_unlock();
    }
}

/* Put back the revision of a written value re-stored by undo. */
static void restore_wval_rev(const char *path, uint64_t rev)
{
    struct cfs_resolved res;
    struct cfs_wval *w;

    if (cfs__resolve(path, &res) == 0 &&
        (res.kind == CFS_R_ATTR || res.kind == CFS_R_BIN_ATTR)) {
        cfs__tree_wrlock();
        w = cfs__wval_find(res.dir, res.idx, res.kind == CFS_R_BIN_ATTR);
        if (w) {
            w->revision = rev;
        }
        cfs__tree_unlock();
    }
}

/* An inverse step that fails for memory is tried again a few times: it
 * is all that stands between a failed batch and a half-undone one. */
#define UNDO_TRIES 4

static int undo_rmdir(struct cfs_txn *txn, const struct cfs_change *ch)
{
    int r = -ENOMEM;
    int first;

    for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
        txn->insert_before = ch->priv->before;
        r = cfs__do_mkdir(txn, ch->path);
        txn->insert_before = NULL;
    }
    first = r;
    for (size_t i = 0; r == 0 && i < ch->n_dropped; i++) {
        const struct cfs_value *v = &ch->dropped[i];
        size_t plen = strlen(ch->path);
        size_t nlen = strlen(v->name);
        char *apath = NULL;
        int rs = -ENOMEM;

        for (int t = 0; t < UNDO_TRIES && rs == -ENOMEM; t++) {
            if (!apath) {
                apath = cfs_malloc(plen + nlen + 2);
                if (!apath) {
                    continue;
                }
                memcpy(apath, ch->path, plen);
                apath[plen] = '/';
                memcpy(apath + plen + 1, v->name, nlen + 1);
            }
            rs = cfs__do_store(txn, apath, v->data, v->len);
        }
        if (rs == 0) {
            restore_wval_rev(apath, v->revision);
        }
        cfs_free(apath);
        if (rs < 0 && first == 0) {
            first = rs;
        }
    }
    if (r == 0) {
        struct cfs_resolved res;

        restore_rev(
            ch->path, false, ch->priv->rev_self, ch->priv->created_self);
        if (cfs__resolve(ch->path, &res) == 0 && res.kind == CFS_R_DIR) {
            cfs__dg_revs_restore(
                res.dir, ch->priv->dg_revs, ch->priv->n_dg_revs);
        }
    }
    return first;
}

static int undo_store(struct cfs_txn *txn, struct cfs_change *ch)
{
    struct cfs_resolved res;
    int r = 0;

    if (ch->has_old) {
        /* A raw store allocates nothing; the written value is fixed up
         * below by handing it the record's copy of the old bytes. */
        r = -ENOMEM;
        txn->undo_raw_store = true;
        for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
            r = cfs__do_store(txn, ch->path, ch->old, ch->old_len);
        }
        txn->undo_raw_store = false;
    }
    if (cfs__resolve(ch->path, &res) == 0 &&
        (res.kind == CFS_R_ATTR || res.kind == CFS_R_BIN_ATTR)) {
        bool bin = res.kind == CFS_R_BIN_ATTR;
        struct cfs_wval *w;

        cfs__tree_wrlock();
        w = cfs__wval_find(res.dir, res.idx, bin);
        if (!ch->priv->had_wval) {
            cfs__wval_remove(res.dir, res.idx, bin);
        } else if (w && r == 0) {
            cfs_free(w->data);
            w->data = ch->old; /* the record gives up its copy */
            w->len = ch->old_len;
            w->seq = ch->priv->old_seq;
            w->revision = ch->priv->old_wrev;
            ch->old = NULL;
        }
        cfs__tree_unlock();
    }
    restore_rev(ch->path, true, ch->priv->rev_self, 0);
    return r;
}

static int undo_unlink(struct cfs_change *ch)
{
    int r = -ENOMEM;

    for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
        r = cfs__link_restore(
            ch->priv->link, ch->path, ch->arg, ch->priv->before);
    }
    if (r == 0) {
        ch->priv->link = NULL; /* back in the tree */
        restore_rev(
            ch->path, false, ch->priv->created_self, ch->priv->created_self);
    }
    return r;
}

static int undo_one(struct cfs_txn *txn, struct cfs_change *ch)
{
    int r = -ENOMEM; /* "not tried yet" for the retry loops */

    switch (ch->op) {
    case CFS_OP_MKDIR:
        for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
            r = cfs__do_rmdir(txn, ch->path);
        }
        restore_rev(ch->path, true, ch->priv->rev_parent, 0);
        break;
    case CFS_OP_RMDIR:
        r = undo_rmdir(txn, ch);
        restore_rev(ch->path, true, ch->priv->rev_parent, 0);
        break;
    case CFS_OP_STORE:
        r = undo_store(txn, ch);
        break;
    case CFS_OP_SYMLINK:
        for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
            r = cfs__do_unlink(txn, ch->path);
        }
        restore_rev(ch->path, true, ch->priv->rev_parent, 0);
        break;
    case CFS_OP_UNLINK:
        r = undo_unlink(ch);
        restore_rev(ch->path, true, ch->priv->rev_parent, 0);
        break;
    case CFS_OP_RENAME:
        for (int t = 0; t < UNDO_TRIES && r == -ENOMEM; t++) {
            r = cfs__do_rename(txn, ch->arg, ch->path);
        }
        restore_rev(ch->path, true, ch->priv->rev_parent, 0);
        restore_rev(ch->arg, true, ch->priv->rev_other, 0);
        restore_rev(ch->path, false, ch->priv->rev_self, 0);
        break;
    }
    return r;
}

/* Holds the mutation lock across calls: beyond the analysis. */
CFS_NO_TSA int cfs_txn_abort(struct cfs_txn *txn)
{
    int first = 0;

    if (!txn) {
        return 0;
    }
    if (txn->replay) {
        cfs_txn_commit(txn);
        return -EINVAL;
    }
    if (txn->sealed) {
        cfs__wlock_acquire();
        cfs__vis_retouch(txn); /* readers of what it touched: torn */
    }
    cfs__txn_unprepare(txn);
    txn->undoing = true;
    for (size_t i = txn->n; i-- > 0;) {
        int r = undo_one(txn, &txn->changes[i]);

        if (r < 0 && first == 0) {
            first = r;
        }
    }
    txn_return_revision(txn);
    /* Closed before the lock goes (whose release tells the readers): a
     * reader that saw the undone state reads again before a later writer
     * can change the tree. */
    cfs__vis_release(txn, true);
    cfs__vis_close(txn);
    cfs__wlock_release();
    txn_free(txn);
    return first;
}

/* ---- the public mutations ---------------------------------------------- */

int cfs_mkdir(struct cfs_txn *txn, const char *path)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_mkdir(txn, path));
}

int cfs_rmdir(struct cfs_txn *txn, const char *path)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_rmdir(txn, path));
}

int cfs_write(struct cfs_txn *txn,
              const char *path,
              const void *buf,
              size_t len)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_store(txn, path, buf, len));
}

int cfs_symlink(struct cfs_txn *txn, const char *path, const char *target)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_symlink(txn, path, target));
}

int cfs_unlink(struct cfs_txn *txn, const char *path)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_unlink(txn, path));
}

int cfs_rename(struct cfs_txn *txn, const char *from, const char *to)
{
    int r = cfs__op_begin(&txn);

    return r < 0 ? r : cfs__op_end(txn, cfs__do_rename(txn, from, to));
}
