// SPDX-License-Identifier: MIT
/*
 * append.c - the commit of a batch in cluster mode: its entry appended to
 * the shared log with one CAS on the head (chunks first for a big one),
 * told apart from a conflict when the answer was lost, then written to
 * the node-local cache.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

/*
 * A batch too big for one request: its deflated entry @*text (@*len bytes)
 * in parts, under a fresh id that begins with the first revision (for
 * trimming), put first; then *@text becomes the log entry that names them
 * (plain JSON). @chunk_prefix (@cap bytes) gets the parts' prefix. @return
 * 0, or an etcd errno or -ENOMEM (the parts put are deleted: no entry
 * names them).
 */
static int put_chunks(struct store_etcd *e,
                      uint64_t first,
                      uint64_t last,
                      const char *nonce,
                      char **text,
                      size_t *len,
                      char *chunk_prefix,
                      size_t cap)
{
    char id[40];
    size_t k = 0;
    json_t *val;
    int r = 0;

    (void)snprintf(id, sizeof(id), "%020" PRIu64 "-", first);
    etcd_random_hex(id + 21, 8);
    (void)snprintf(chunk_prefix, cap, "%s/chunk/%s/", e->prefix, id);
    for (size_t off = 0; off < *len && r == 0; off += ETCD_CHUNK, k++) {
        char key[640];
        size_t part = *len - off < ETCD_CHUNK ? *len - off : ETCD_CHUNK;

        (void)snprintf(key, sizeof(key), "%s%06zu", chunk_prefix, k);
        r = etcd_put_plain(e, key, *text + off, part);
    }
    if (r < 0) {
        etcd_delete_prefix(e, chunk_prefix); /* named by no entry */
        chunk_prefix[0] = '\0';
        return r;
    }
    val = etcd_entry_new(first, last, nonce);
    json_object_set_new(val, "chunks", json_integer((json_int_t)k));
    json_object_set_new(val, "id", json_string(id));
    free(*text);
    *text = json_dumps(val, JSON_COMPACT);
    json_decref(val);
    if (!*text) {
        return -ENOMEM;
    }
    *len = strlen(*text);
    return 0;
}

/* The txn that appends: if the head is @base (absent for 0), put the log
 * key @lk = @text (@len bytes) and the head @last; else read the head and
 * the log key (whose entry may be this append's own). */
static json_t *append_txn(struct store_etcd *e,
                          const char *lk,
                          const char *text,
                          size_t len,
                          uint64_t base,
                          uint64_t last)
{
    char basestr[24], laststr[24];
    json_t *body = json_object(), *succ = json_array(), *fail = json_object();

    (void)snprintf(basestr, sizeof(basestr), "%" PRIu64, base);
    (void)snprintf(laststr, sizeof(laststr), "%" PRIu64, last);
    json_object_set_new(
        body,
        "compare",
        json_pack("[o]", etcd_cmp_value(e->k_head, base ? basestr : NULL)));
    json_array_append_new(succ, etcd_op_put(lk, text, len));
    json_array_append_new(succ,
                          etcd_op_put(e->k_head, laststr, strlen(laststr)));
    json_object_set_new(body, "success", succ);
    json_object_set_new(fail, "key", etcd_jb64s(e->k_head));
    json_object_set_new(body,
                        "failure",
                        json_pack("[{so}{s{so}}]",
                                  "request_range",
                                  fail,
                                  "request_range",
                                  "key",
                                  etcd_jb64s(lk)));
    return body;
}

/*
 * Append @sets (revisions consecutive, in order) to the log with one CAS on
 * the head. @return 0; -ESTALE if another node appended first (the head
 * now known is noted for the applier); -ETIMEDOUT/-ECONNREFUSED/-EIO when
 * etcd could not be reached or has no quorum (it may or may not have been
 * appended); -ENOMEM.
 */
static int etcd_append(struct store_etcd *e,
                       const struct cfs_store_changeset *sets,
                       size_t n,
                       int64_t time_us)
{
    uint64_t first = etcd_set_rev(&sets[0]), last = etcd_set_rev(&sets[n - 1]);
    json_t *val, *body = NULL, *ans = NULL;
    char *plain, *text = NULL, *lk = etcd_log_key(e, first);
    char chunk_prefix[600] = "", nonce[17];
    size_t bytes = 0, text_len; /* the entry deflated; what the log key holds */
    int r = 0;

    /* Names this append. A request etcd carried out but whose answer was
     * lost is sent again (by libcurl on a fresh connection, or here to
     * the next member) and then loses the CAS to itself: the entry at
     * @first, which the failure returns, tells. */
    etcd_random_hex(nonce, 8);
    val = etcd_entry_new(first, last, nonce);
    etcd_enc_sets(val, sets, n, time_us);
    plain = json_dumps(val, JSON_COMPACT);
    json_decref(val);
    text = plain ? etcd_deflate_bytes(plain, strlen(plain), &bytes) : NULL;
    free(plain);
    text_len = bytes;
    if (!text || !lk) {
        r = -ENOMEM;
    } else if (bytes > ETCD_INLINE_MAX) {
        r = put_chunks(e,
                       first,
                       last,
                       nonce,
                       &text,
                       &text_len,
                       chunk_prefix,
                       sizeof(chunk_prefix));
    }
    if (r == 0) {
        body = append_txn(e, lk, text, text_len, first - 1, last);
        r = etcd_post(e, "/v3/kv/txn", body, &ans);
    }
    if (r == 0 && !json_is_true(json_object_get(ans, "succeeded")) &&
        !etcd_own_entry(etcd_range_kv(ans, 1), nonce)) {
        char *hv = etcd_kv_field(etcd_range_kv(ans, 0), "value", NULL);

        etcd_note_head(e, hv ? strtoull(hv, NULL, 10) : 0);
        free(hv);
        atomic_fetch_add(&e->n_conflicts, 1);
        r = -ESTALE;
    }
    /* The parts go only with an entry surely not made: after a timeout
     * the entry that names them may be in the log. */
    if (r == -ESTALE && chunk_prefix[0]) {
        etcd_delete_prefix(e, chunk_prefix);
    }
    if (r == 0) {
        etcd_count_log(e, bytes, last - first + 1);
    }
    json_decref(ans);
    json_decref(body);
    free(text);
    free(lk);
    return r;
}

int etcd_commit(struct cfs_store *s,
                const struct cfs_store_changeset *sets,
                size_t n)
{
    struct store_etcd *e = s->backend;
    /* the journal's time on every node */
    int64_t time_us = cfs_store_wall_us();
    int r;

    if (n == 0) {
        return store_write_sets(s, sets, 0, 0); /* nothing to append */
    }
    pthread_mutex_lock(&e->lock);
    e->appending = true;
    e->append_first = etcd_set_rev(&sets[0]);
    pthread_mutex_unlock(&e->lock);
    r = etcd_append(e, sets, n, time_us);
    if (r < 0) {
        pthread_mutex_lock(&e->lock);
        e->appending = false;
        pthread_cond_broadcast(&e->cond);
        pthread_mutex_unlock(&e->lock);
        return r;
    }
    /* In etcd: the cluster's truth. The cache follows. */
    r = store_write_sets(s, sets, n, time_us);
    if (r < 0) {
        store_problem_add(s, "/", CFS_STORE_STEP_UNDO, r);
    }
    pthread_mutex_lock(&e->lock);
    e->appending = false;
    e->applied = etcd_set_rev(&sets[n - 1]);
    if (e->applied > e->log_head) {
        e->log_head = e->applied;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return 0;
}
