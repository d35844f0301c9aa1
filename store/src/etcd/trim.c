// SPDX-License-Identifier: MIT
/*
 * trim.c - trimming the log below the snapshot, no further than the lowest
 * revision a live node has applied (the node registry), with the chunks
 * of the revisions trimmed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

/* The lowest applied revision of a live node, or @bound if lower. */
static int lowest_live(struct store_etcd *e, uint64_t bound, uint64_t *ret)
{
    json_t *body = json_object(), *ans = NULL, *kvs;
    char *end = strdup(e->k_nodes);
    int r = -ENOMEM;

    *ret = bound;
    if (end) {
        end[strlen(end) - 1]++;
        json_object_set_new(body, "key", etcd_jb64s(e->k_nodes));
        json_object_set_new(body, "range_end", etcd_jb64s(end));
        r = etcd_post(e, "/v3/kv/range", body, &ans);
    }
    kvs = json_object_get(ans, "kvs");
    for (size_t i = 0; r == 0 && i < json_array_size(kvs); i++) {
        char *v = etcd_kv_field(json_array_get(kvs, i), "value", NULL);
        uint64_t a = v ? strtoull(v, NULL, 10) : 0;

        if (a < *ret) {
            *ret = a;
        }
        free(v);
    }
    json_decref(ans);
    json_decref(body);
    free(end);
    return r;
}

/*
 * Delete the log entries at or below @upto, a batch boundary, and the
 * parts of big batches from those revisions: the entries' own, and any
 * left by an append that never landed (a node killed between its parts
 * and its txn, a timeout). Nobody reads them again: a starting node loads
 * a snapshot at or above @upto, and every live node has applied at least
 * @upto. Two requests and nothing read, as the keys begin with the
 * revision. The entries go first: a failure in between leaves parts that
 * nothing names (the next trim takes them), never an entry without them.
 */
static void trim_log(struct store_etcd *e, uint64_t upto)
{
    char *log_end = etcd_log_key(e, upto + 1),
         *parts_end = etcd_chunk_key(e, upto + 1);
    char *parts = etcd_chunk_key(e, 0); /* no revision 0: before every part */
    int64_t n = -ENOMEM;

    if (log_end && parts_end && parts) {
        n = etcd_delete_range(e, e->k_log, log_end);
    }
    if (n > 0) {
        atomic_fetch_add(&e->n_trimmed, (uint64_t)n);
        (void)etcd_delete_range(e, parts, parts_end);
    }
    free(log_end);
    free(parts);
    free(parts_end);
}

/*
 * Trim the log below the snapshot this node knows (it wrote or loaded
 * it), as far as every live node has applied: right after the snapshot,
 * and again on later seconds, as the registry says each node's applied
 * revision once a second only and a node may have been listed below the
 * snapshot when it was published. *trimmed: how far it did.
 */
void etcd_maybe_trim(struct store_etcd *e, uint64_t *trimmed)
{
    uint64_t snap, low = 0;

    pthread_mutex_lock(&e->lock);
    snap = e->snap_rev;
    pthread_mutex_unlock(&e->lock);
    if (e->snapshot_every == 0 || snap <= *trimmed ||
        lowest_live(e, snap, &low) < 0 || low <= *trimmed) {
        return;
    }
    trim_log(e, low);
    *trimmed = low;
}
