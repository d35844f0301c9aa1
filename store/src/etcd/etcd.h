/* SPDX-License-Identifier: MIT */
/*
 * etcd.h - what the files of the etcd backend share. The backend: etcd
 * v3 (its JSON gateway, over libcurl) holds the one ordered log of change sets
 * every node shares; each node keeps the whole tree in memory and a node-local
 * SQLite cache of the same state (for history, export and replay), both fed
 * from that log.
 *
 * Keys under PREFIX:
 *   PREFIX/head               the last configfsd revision appended
 *   PREFIX/log/%020llu        one batch of change sets, keyed by its first
 *                             revision: {"v":3,"first":F,"last":L,
 *                             "nonce":N,"t":TIME,"u":WHO,"sets":[..]}
 *                             (enc_sets()), deflated (a zlib stream), or,
 *                             too big for one request, in plain JSON
 *                             {"v":3,"first":F,"last":L,"nonce":N,
 *                              "chunks":K,"id":ID}
 *   PREFIX/chunk/%020llu-ID/%06u
 *                             the K parts of a big batch's deflated entry,
 *                             written first, named by its first revision
 *                             (ID: F-hex)
 *   PREFIX/snapshot           the published snapshot of the cache:
 *                             {"v":2,"revision":S,"id":ID,"parts":K,
 *                              "length":L,"sha256":HEX,"size":N}
 *   PREFIX/snap/ID/%06u       its K parts: VACUUM INTO of the cache (N
 *                             bytes), deflated (L bytes, SHA-256 HEX);
 *                             version 1, still read: not deflated
 *   PREFIX/snapshot-lock      the node writing a snapshot (under its lease)
 *   PREFIX/nodes/NODE         a live node's applied revision (its lease)
 *   PREFIX/writer             "NODE URL" of the writer (its lease; role.c)
 *   PREFIX/subsystems         the set of subsystems the first node had
 *
 * Appending a batch is one etcd txn: compare head's value with the
 * revision before the batch's first (absent for the first batch), then put
 * the log key and the new head. Whoever appends first wins; the loser's
 * txn fails as a whole (-ESTALE here), its change sets are undone in its
 * tree by the group commit's failure path, and it catches up from the log.
 * A big batch's chunks are plain puts made before that txn: until the txn
 * names them nobody reads them, so the batch still becomes visible at once
 * and entirely, or (if the txn fails) never; the losing node deletes them.
 * Trimming the log deletes the parts of every revision it trims, named or
 * not, so the parts of an append that never landed (a node killed between
 * its parts and its txn, a timeout) go with the entries around them.
 *
 * Following (follow.c, watch.c): a watch on the head and the log keys (a
 * long-lived POST /v3/watch) brings each new entry with its value; the
 * applier thread applies the entries it brought in order when they follow
 * on from its last revision, with no request to etcd, and reads the log by
 * range from its last revision for whatever the watch did not bring (a
 * gap, a reconnection, an etcd compaction, entries past the bound it
 * keeps). Each batch is applied in a replay transaction stamped with its
 * revisions, after every local commit in flight has settled (they fail:
 * the head moved).
 *
 * Snapshots (the keeper thread): every snapshot_every revisions one node
 * (whoever takes PREFIX/snapshot-lock) copies its cache with VACUUM INTO,
 * writes it in parts, publishes it with one txn on PREFIX/snapshot (only
 * while it still holds the lock) and deletes older parts; then, that
 * second and the following ones, the node that knows the snapshot trims
 * the log below min(snapshot, lowest applied revision of a live node). A
 * starting node loads the published snapshot into its cache and reads the log
 * from its revision on. A node whose next entry was trimmed cannot catch up:
 * etcd_read_log() says -ESTALE and the owner is told (on_fell_behind).
 *
 * The files: gateway.c (the HTTP client), kv.c (etcd's verbs), entry.c
 * (the log entry format), append.c, follow.c, watch.c, snapshot.c,
 * trim.c, role.c (lease, registry, writer), catchup.c, etcd.c (open,
 * close, the ops table).
 */
#ifndef CFS_STORE_ETCD_H
#define CFS_STORE_ETCD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <nettle/sha2.h>

#include "backend.h"
#include "store-internal.h"

#define ETCD_MAX_EP 16
/* bytes of a log entry in one request, and in each chunk of a bigger one
 * (smaller in the unit tests, to chunk small batches) */
#ifndef ETCD_INLINE_MAX
#define ETCD_INLINE_MAX ((size_t)900 * 1024)
#endif
#ifndef ETCD_CHUNK
#define ETCD_CHUNK ((size_t)900 * 1024)
#endif
#define ETCD_TIMEOUT_MS  4000L
#define ETCD_CONNECT_MS  700L
#define ETCD_RANGE_LIMIT 32
#define ETCD_CURL_POOL   8
#define ETCD_SNAP_PART   ((size_t)640 * 1024) /* snapshot bytes per key */
#define ETCD_LEASE_TTL   5                    /* seconds, node registry */
#define ETCD_ENTRY_MAX   ((size_t)1 << 30)    /* a log entry, inflated */
#define ETCD_START_TRIES 5 /* snapshot replaced while a node loads it */
/* log entries held from the watch for the applier, at most (bytes): past
 * that it reads them from the log instead */
#define ETCD_SEEN_MAX ((size_t)32 * 1024 * 1024)
/* how long the applier waits for the watch before it takes a log that
 * lost what it needs for a fall behind (seconds) */
#define ETCD_WATCH_GRACE_S 2
/* A failed read of the log is made again after this (ms) */
#define ETCD_RETRY_MS 200u
/* ... an entry this node cannot read after ETCD_RETRY_MS, then twice as
 * long each time, up to this (ms) */
#define ETCD_UNREADABLE_MAX_MS 5000u

struct store_etcd {
    char *ep[ETCD_MAX_EP]; /* "http://host:port" */
    size_t n_ep;
    atomic_size_t cur;         /* the endpoint that answered last */
    char *prefix;              /* no trailing '/' */
    char *cacert, *cert, *key; /* TLS files (etcds://), or NULL */
    char *user, *password;     /* etcd authentication, or NULL */
    char *auth_header;         /* "Authorization: TOKEN", under lock */
    char *k_head, *k_log, *k_log_end;
    char *k_snapshot, *k_snap_lock, *k_nodes, *k_writer;
    char *advertise;          /* this node's URL for other nodes, or NULL */
    bool forwarding;          /* it follows the writer's role (advertise()) */
    char node_id[17];         /* this process, in PREFIX/nodes/ */
    uint64_t snapshot_every;  /* 0: write none */
    uint64_t snapshot_growth; /* percent of the last snapshot's size */

    pthread_mutex_t lock; /* what follows */
    pthread_cond_t cond;
    uint64_t applied;  /* last revision in the tree and the cache */
    uint64_t log_head; /* last revision known to be in etcd */
    bool stop, watching, loaded;
    bool applying;         /* the applier holds back local commits (catch_up()
                              waits for it to be done) */
    bool appending;        /* this node's CAS is in flight: the head the watch
                              reports may be its own */
    uint64_t append_first; /* ... the first revision it appends */
    char error[256];   /* the last etcd failure, "" when the last call worked */
    int64_t lease;     /* this node's lease (registry, snapshot lock), or 0 */
    uint64_t snap_rev; /* the last snapshot known to be published */
    bool fell_behind;  /* the log after applied was trimmed */
    char writer[512];  /* the writer's URL ("" none), as last read */
    uint64_t unreadable; /* the revision whose entry cannot be read here */
    bool writer_self;    /* ... and it is this node */
    bool kick;           /* the keeper runs now, not at its next second */
    struct seen *seen_head, *seen_tail; /* log entries the watch brought */
    size_t seen_bytes;                  /* ... their size, bounded */
    CURL *pool[ETCD_CURL_POOL];
    size_t n_pool;

    struct catch_up *catch_ups;  /* waiting; the waiter thread calls back */
    uint64_t n_catch_ups;        /* ... how many, until called back */
    struct timespec waiter_wake; /* when the waiter thread wakes unless
                                    e->cond wakes it first */

    struct catch_up *reads; /* waiting for the reader's next request */
    pthread_t applier, watcher, keeper, waiter, reader;
    bool threads;

    atomic_uint_fast64_t n_requests, n_failures, rtt_us, n_conflicts, n_remote,
        n_replay_errors, n_snap_loaded, n_snap_written, n_trimmed;
    /* log entries this node appended or read, for the bytes per revision
     * of the log (etcd_maybe_snapshot()) */
    atomic_uint_fast64_t log_bytes, log_revs;
};

/* A log entry as the watch delivered it, waiting for the applier. */
struct seen {
    json_t *entry; /* the value, parsed */
    uint64_t first, last;
    size_t bytes; /* as etcd holds it */
    size_t size;  /* inflated: what seen_bytes counts */
    struct seen *next;
};

/* A etcd_catch_up_async() waiting, in the waiter thread's list; or a
 * linearizable read (etcd_read_index_async()) waiting in e->reads for the
 * reader thread's next request of the head, then in the waiter's list. */
struct catch_up {
    uint64_t target;            /* the revision to apply (with the head) */
    struct timespec not_before; /* CLOCK_REALTIME, as e->cond waits */
    struct timespec deadline;
    cfs_store_caught_up_fn done;
    void *ctx;
    int err;             /* what done() is told, decided under the lock */
    unsigned timeout_ms; /* a read: its wait, counted from etcd's answer */
    struct catch_up *next;
};

/* A pointer as PREFIX/snapshot holds it. */
struct snap_ptr {
    uint64_t revision, parts, length; /* length: of the parts, joined */
    uint64_t size; /* version 2: the cache's, inflated; 0 in version 1 */
    char id[33];
    char sha256[2 * SHA256_DIGEST_SIZE + 1];
};

/* Change sets read back from the log: everything owned here. */
struct dec_batch {
    struct cfs_store_changeset *sets;
    size_t n;
    uint64_t first, last;
    int64_t time_us; /* when it was committed; 0: not said */
};

/* ---- time ---- */

static inline uint64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* CLOCK_REALTIME (as e->cond waits) @us microseconds from now. */
static inline struct timespec after_us(uint64_t us)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(us / 1000000);
    ts.tv_nsec += (long)(us % 1000000) * 1000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* ---- gateway.c: the only file that speaks HTTP ---- */

/* Once per open, and once per close (libcurl's global state). */
void etcd_gateway_init(void);
void etcd_gateway_cleanup(struct store_etcd *e);

/*
 * POST @body to @api on the endpoint that answered last, then on the
 * others in turn. @return 0 with *ret the parsed answer, or -ETIMEDOUT /
 * -ECONNREFUSED / -EIO / -EACCES when no endpoint gave a 200 (it may or
 * may not have been carried out); the reason is kept for etcd_cluster().
 */
int etcd_post_raw(struct store_etcd *e,
                  const char *api,
                  json_t *body,
                  json_t **ret);

/*
 * A watch: POST @body (its JSON text) to /v3/watch on the endpoint that
 * answered last and hand each piece of the answer stream to @on_data, until
 * the stream ends, @on_data returns anything but the length it was given,
 * or the store stops. @return 0, or -errno when the stream broke.
 */
int etcd_watch_stream(struct store_etcd *e,
                      const char *body,
                      size_t (*on_data)(const char *data, size_t len, void *ud),
                      void *ud);

/* ---- kv.c ---- */

json_t *etcd_jb64(const void *p, size_t len);
json_t *etcd_jb64s(const char *s);
void etcd_set_error(struct store_etcd *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int etcd_authenticate(struct store_etcd *e);
int etcd_post(struct store_etcd *e,
              const char *api,
              json_t *body,
              json_t **ret);
char *etcd_kv_field(json_t *kv, const char *name, size_t *ret_len);
uint64_t etcd_jnum(json_t *j);
json_t *etcd_op_put(const char *key, const char *val, size_t len);
json_t *etcd_cmp_value(const char *key, const char *value);
int etcd_put_plain(struct store_etcd *e,
                   const char *key,
                   const char *val,
                   size_t len);
int64_t
etcd_delete_range(struct store_etcd *e, const char *key, const char *end);
void etcd_delete_prefix(struct store_etcd *e, const char *prefix);
json_t *etcd_range_kv(json_t *ans, size_t i);
int etcd_get(struct store_etcd *e,
             const char *key,
             char **ret,
             size_t *ret_len);
int etcd_txn(struct store_etcd *e, json_t *body, bool *ret_ok);
json_t *etcd_lease_json(int64_t lease);
json_t *etcd_cmp_lease(const char *key, int64_t lease);
json_t *etcd_op_delete_range(const char *key, size_t klen, const char *end);
int etcd_put_if_absent(struct store_etcd *e,
                       const char *key,
                       const char *val,
                       int64_t lease,
                       bool *ret_ok);

/* ---- entry.c ---- */

void etcd_count_log(struct store_etcd *e, size_t bytes, uint64_t revs);
char *etcd_chunk_key(const struct store_etcd *e, uint64_t rev);
uint64_t etcd_set_rev(const struct cfs_store_changeset *set);
void etcd_enc_sets(json_t *val,
                   const struct cfs_store_changeset *sets,
                   size_t n,
                   int64_t t);
void etcd_dec_free(struct dec_batch *d);
void etcd_random_hex(char *out, size_t bytes);
char *etcd_log_key(const struct store_etcd *e, uint64_t rev);
char *etcd_deflate_bytes(const void *p, size_t len, size_t *ret_len);
int etcd_inflate_bytes(const char *v,
                       size_t len,
                       size_t size,
                       struct store_buf *out);
json_t *etcd_entry_load(const char *v, size_t len, size_t *ret_len);
json_t *etcd_entry_new(uint64_t first, uint64_t last, const char *nonce);
bool etcd_own_entry(json_t *kv, const char *nonce);
int etcd_decode_entry(struct store_etcd *e,
                      json_t *j,
                      size_t bytes,
                      struct dec_batch *d);
int etcd_read_entry(struct store_etcd *e,
                    const char *v,
                    size_t len,
                    struct dec_batch *d);

/* ---- append.c ---- */

int etcd_commit(struct cfs_store *s,
                const struct cfs_store_changeset *sets,
                size_t n);

/* ---- follow.c ---- */

typedef int (*batch_fn)(struct cfs_store *s, struct dec_batch *d);

void etcd_note_head(struct store_etcd *e, uint64_t head);
int etcd_read_log(struct cfs_store *s,
                  uint64_t from,
                  uint64_t head,
                  batch_fn fn,
                  int64_t *ret_etcd_rev);
int etcd_load_batch(struct cfs_store *s, struct dec_batch *d);
void etcd_seen_pop(struct store_etcd *e);
void *etcd_applier_main(void *arg);

/* ---- watch.c ---- */

int etcd_read_head(struct store_etcd *e, int64_t *ret_etcd_rev);
void *etcd_watcher_main(void *arg);

/* ---- snapshot.c ---- */

int etcd_read_pointer(struct store_etcd *e, struct snap_ptr *ptr);
int etcd_load_snapshot(struct cfs_store *s, uint64_t *ret_revision);
void etcd_maybe_snapshot(struct cfs_store *s);

/* ---- trim.c ---- */

void etcd_maybe_trim(struct store_etcd *e, uint64_t *trimmed);

/* ---- role.c ---- */

int64_t etcd_lease_of(struct store_etcd *e);
int etcd_lease_grant(struct store_etcd *e);
int etcd_lease_keepalive(struct store_etcd *e);
void etcd_lease_revoke(struct store_etcd *e);
int etcd_node_register(struct store_etcd *e, uint64_t applied);
void *etcd_keeper_main(void *arg);
int etcd_writer(struct cfs_store *s, char *url, size_t size);
int etcd_advertise(struct cfs_store *s, const char *url);

/* ---- catchup.c ---- */

int etcd_catch_up_async(struct cfs_store *s,
                        uint64_t revision,
                        unsigned delay_us,
                        unsigned timeout_ms,
                        cfs_store_caught_up_fn done,
                        void *ctx);
void *etcd_waiter_main(void *arg);
int etcd_read_index_async(struct cfs_store *s,
                          unsigned timeout_ms,
                          cfs_store_caught_up_fn done,
                          void *ctx);
void *etcd_reader_main(void *arg);

/* ---- etcd.c ---- */

int etcd_open(struct cfs_store *s, const struct cfs_store_options *opts);
int etcd_start(struct cfs_store *s);
void etcd_stop(struct cfs_store *s);
void etcd_close(struct cfs_store *s);
int etcd_cluster(struct cfs_store *s, struct cfs_store_cluster_info *ret);
bool etcd_stale(struct cfs_store *s);
int etcd_cluster_subsystems(struct cfs_store *s,
                            const char *set,
                            char **ret_cluster_set);

#endif /* CFS_STORE_ETCD_H */
