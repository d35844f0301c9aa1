// SPDX-License-Identifier: MIT
/*
 * store.c - open and close: two connections to one WAL database (one that
 * writes, one that reads while the other commits), the schema brought
 * forward, the tree's revision counter restored, then replay.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "store-internal.h"

#define DEFAULT_BUSY_TIMEOUT_MS 5000
#define DEFAULT_MAX_BATCH       1024

static int check_integrity(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
    int r;

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(st, 0);

        r = res && strcmp(res, "ok") == 0 ? 0 : -EUCLEAN;
    } else {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

/* A cluster node's cache: a private directory of its own, made fresh. */
static int make_cache(struct cfs_store *s)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = NULL, *file = NULL;

    if (asprintf(&dir,
                 "%s/configfsd-cache-XXXXXX",
                 tmp && tmp[0] ? tmp : "/tmp") < 0) {
        return -ENOMEM;
    }
    if (!mkdtemp(dir)) {
        int r = -errno;

        free(dir);
        return r;
    }
    s->cache_dir = dir;
    cfs_free(s->path);
    s->path = NULL;
    if (asprintf(&file, "%s/cache.db", dir) < 0) {
        return -ENOMEM;
    }
    s->path = cfs_strdup(file);
    free(file);
    if (!s->path) {
        return -ENOMEM;
    }
    s->sync = CFS_STORE_SYNC_NORMAL; /* etcd is what makes it durable */
    return 0;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int cfs_store_open(const struct cfs_store_options *opts,
                   struct cfs_store **ret_store)
{
    struct cfs_store *s = NULL;
    int r;

    if (!opts || ((!opts->path || !opts->path[0]) && !opts->etcd) ||
        !ret_store ||
        (opts->sync != CFS_STORE_SYNC_FULL &&
         opts->sync != CFS_STORE_SYNC_NORMAL)) {
        return -EINVAL;
    }
    s = cfs_zalloc(sizeof(*s));
    if (!s) {
        return -ENOMEM;
    }
    pthread_mutex_init(&s->w_lock, NULL);
    pthread_mutex_init(&s->r_lock, NULL);
    pthread_mutex_init(&s->q_lock, NULL);
    pthread_mutex_init(&s->p_lock, NULL);
    pthread_cond_init(&s->q_cond, NULL);
    pthread_cond_init(&s->a_cond, NULL);
    s->sync = opts->sync;
    s->history_limit = opts->history_limit;
    s->busy_timeout_ms =
        opts->busy_timeout_ms ? opts->busy_timeout_ms : DEFAULT_BUSY_TIMEOUT_MS;
    s->max_batch = opts->max_batch ? opts->max_batch : DEFAULT_MAX_BATCH;
    s->ops = opts->etcd ? &store_etcd_ops : &store_sqlite_ops;
    s->path = cfs_strdup(opts->path ? opts->path : "");
    if (!s->path) {
        r = -ENOMEM;
        goto fail;
    }
    if (opts->etcd) {
        r = make_cache(s);
        if (r < 0) {
            goto fail;
        }
        s->on_applied = opts->on_applied;
        s->on_applied_ctx = opts->on_applied_ctx;
        s->on_replay_error = opts->on_replay_error;
        s->on_replay_error_ctx = opts->on_replay_error_ctx;
        s->on_fell_behind = opts->on_fell_behind;
        s->on_fell_behind_ctx = opts->on_fell_behind_ctx;
    }
    if (opts->vfs) {
        s->vfs = cfs_strdup(opts->vfs);
        if (!s->vfs) {
            r = -ENOMEM;
            goto fail;
        }
    }

    r = store_db_open(s, &s->wdb);
    if (r == 0) {
        r = store_migrate(s->wdb, store_migrations, store_n_migrations);
    }
    if (r == 0 && opts->integrity_check) {
        r = check_integrity(s->wdb);
    }
    if (r == 0) {
        r = store_read_state(s);
    }
    if (r == 0) {
        r = store_prepare_write(s);
    }
    if (r == 0) {
        r = store_db_open(s, &s->rdb);
    }
    if (r == 0) {
        r = s->ops->open(s, opts);
    }
    if (r < 0) {
        goto fail;
    }
    s->info_revision = s->revision;
    s->info_floor = s->floor;
    cfs_revision_set(s->revision);

    if (!opts->no_replay) {
        r = store_replay_open(s);
        if (r < 0) {
            goto fail;
        }
    }
    if (s->ops->start) {
        r = s->ops->start(s);
        if (r < 0) {
            goto fail;
        }
    }
    *ret_store = s;
    return 0;
fail:
    cfs_store_close(s);
    return r;
}

void cfs_store_close(struct cfs_store *s)
{
    if (!s) {
        return;
    }
    if (s->ops->stop) {
        s->ops->stop(s); /* nothing applied from other nodes after this */
    }
    store_stop_async(s);
    store_replay_close(s);
    store_finalize_write(s);
    if (s->wdb) {
        /* Keep the query planner's statistics fresh for the next open. */
        sqlite3_exec(s->wdb, "PRAGMA optimize", NULL, NULL, NULL);
    }
    sqlite3_close_v2(s->rdb);
    sqlite3_close_v2(s->wdb);
    pthread_cond_destroy(&s->q_cond);
    pthread_cond_destroy(&s->a_cond);
    pthread_mutex_destroy(&s->p_lock);
    pthread_mutex_destroy(&s->q_lock);
    pthread_mutex_destroy(&s->r_lock);
    pthread_mutex_destroy(&s->w_lock);
    s->ops->close(s);
    if (s->cache_dir) {
        (void)nftw(s->cache_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        free(s->cache_dir);
    }
    cfs_free(s->vfs);
    cfs_free(s->path);
    cfs_free(s);
}

/* ---- the cluster verbs: the backend's, or a lone node's answers -------- */

int cfs_store_catch_up_async(struct cfs_store *s,
                             uint64_t revision,
                             unsigned delay_us,
                             unsigned timeout_ms,
                             cfs_store_caught_up_fn done,
                             void *ctx)
{
    if (!s || !s->ops->catch_up_async) {
        return revision <= cfs_revision() ? 1 : -ETIMEDOUT;
    }
    return s->ops->catch_up_async(s, revision, delay_us, timeout_ms, done, ctx);
}

int cfs_store_read_index_async(struct cfs_store *s,
                               unsigned timeout_ms,
                               cfs_store_caught_up_fn done,
                               void *ctx)
{
    if (!s || !s->ops->read_index_async) {
        return 1;
    }
    return s->ops->read_index_async(s, timeout_ms, done, ctx);
}

int cfs_store_cluster(struct cfs_store *s, struct cfs_store_cluster_info *ret)
{
    if (!ret) {
        return -EINVAL;
    }
    if (!s || !s->ops->cluster) {
        memset(ret, 0, sizeof(*ret));
        return -ENOTSUP;
    }
    return s->ops->cluster(s, ret);
}

bool cfs_store_stale(struct cfs_store *s)
{
    return s && s->ops->stale && s->ops->stale(s);
}

int cfs_store_cluster_subsystems(struct cfs_store *s,
                                 const char *set,
                                 char **ret_cluster_set)
{
    *ret_cluster_set = NULL;
    if (!s || !s->ops->cluster_subsystems) {
        return -ENOTSUP;
    }
    return s->ops->cluster_subsystems(s, set, ret_cluster_set);
}

int cfs_store_writer(struct cfs_store *s, char *url, size_t size)
{
    if (!s || !s->ops->writer) {
        return 0;
    }
    return s->ops->writer(s, url, size);
}

int cfs_store_advertise(struct cfs_store *s, const char *url)
{
    if (!s || !s->ops->advertise) {
        return -ENOTSUP;
    }
    return s->ops->advertise(s, url);
}
