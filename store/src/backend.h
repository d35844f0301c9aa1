/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the seam between the store's generic part (store.c opens and
 * closes, group-commit.c runs the group commit, the public cluster verbs in
 * store.c) and the backend that makes a batch durable. The generic part
 * calls a backend only through its ops table and knows nothing else of it;
 * a backend calls down into the node-local SQLite database (store-internal.h:
 * db.c, apply.c, replay.c, paths.c), never up into store.c or group-commit.c,
 * so the calls between the two point one way (tests/style/check-includes.py
 * checks the includes that make it so).
 *
 * Backends: sqlite/sqlite.c (the database is the truth) and etcd/ (etcd's
 * shared log is the truth; the database is the node's cache of it). The
 * readers (history, export, load, replay) read that database whichever
 * backend is behind, so they are not ops.
 */
#ifndef CFS_STORE_BACKEND_H
#define CFS_STORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <configfs/store.h>

struct store_backend_ops {
    const char *name;

    /* After the database is open and brought forward, before replay: make
     * the backend's state (etcd: connect, load the snapshot and the log
     * into the fresh cache). Required. @return 0 or -errno (then close()
     * is called). */
    int (*open)(struct cfs_store *s, const struct cfs_store_options *opts);
    /* After replay: start following (NULL: nothing to start). */
    int (*start)(struct cfs_store *s);
    /* No thread of the backend runs after it; NULL-safe to call twice. */
    void (*stop)(struct cfs_store *s);
    /* After the database is closed: free what open() made (also after a
     * failed open()). */
    void (*close)(struct cfs_store *s);
    /* Make @n >= 1 change sets durable and write them to the database.
     * @pre w_lock. @return 0, or -errno with nothing written (-ESTALE:
     * another node appended first). Required. */
    int (*commit)(struct cfs_store *s,
                  const struct cfs_store_changeset *sets,
                  size_t n);

    /* The cluster verbs (store.h), NULL for a backend without a cluster:
     * the public functions then answer as a lone node does. */
    int (*catch_up_async)(struct cfs_store *s,
                          uint64_t revision,
                          unsigned delay_us,
                          unsigned timeout_ms,
                          cfs_store_caught_up_fn done,
                          void *ctx);
    int (*read_index_async)(struct cfs_store *s,
                            unsigned timeout_ms,
                            cfs_store_caught_up_fn done,
                            void *ctx);
    int (*cluster)(struct cfs_store *s, struct cfs_store_cluster_info *ret);
    bool (*stale)(struct cfs_store *s);
    int (*cluster_subsystems)(struct cfs_store *s,
                              const char *set,
                              char **ret_cluster_set);
    int (*writer)(struct cfs_store *s, char *url, size_t size);
    int (*advertise)(struct cfs_store *s, const char *url);
};

extern const struct store_backend_ops store_sqlite_ops;
extern const struct store_backend_ops store_etcd_ops;

#endif /* CFS_STORE_BACKEND_H */
