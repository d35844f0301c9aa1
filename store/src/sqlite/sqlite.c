// SPDX-License-Identifier: MIT
/*
 * sqlite.c - the SQLite backend: the node's own database is the truth, so a
 * batch is durable once apply.c has written it in one transaction (synced
 * as the store's sync option says). Nothing to open, follow or close
 * beyond the database itself, which the generic part owns.
 */
#include "backend.h"
#include "store-internal.h"

static int sqlite_open(struct cfs_store *s,
                       const struct cfs_store_options *opts)
{
    (void)s;
    (void)opts;
    return 0;
}

static void sqlite_close(struct cfs_store *s)
{
    (void)s;
}

static int sqlite_commit(struct cfs_store *s,
                         const struct cfs_store_changeset *sets,
                         size_t n) CFS_STORE_NO_TSA
{
    return store_write_sets(s, sets, n, 0);
}

const struct store_backend_ops store_sqlite_ops = {
    .name = "sqlite",
    .open = sqlite_open,
    .close = sqlite_close,
    .commit = sqlite_commit,
};
