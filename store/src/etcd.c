// SPDX-License-Identifier: MIT
/*
 * etcd.c - the cluster backend: etcd v3 (its JSON gateway, over libcurl)
 * holds the one ordered log of change sets every node shares; each node
 * keeps the whole tree in memory and a node-local SQLite cache of the same
 * state (for history, export and replay), both fed from that log.
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
 * Following: a watch on the head key (a long-lived POST /v3/watch) only
 * tells the applier thread how far the log goes; the applier reads the
 * log from its own last revision (a range, so nothing is missed across a
 * reconnection or an etcd compaction) and applies each batch in a replay
 * transaction stamped with the batch's revisions, after every local commit
 * in flight has settled (they fail: the head moved).
 *
 * Snapshots (the keeper thread): every snapshot_every revisions one node
 * (whoever takes PREFIX/snapshot-lock) copies its cache with VACUUM INTO,
 * writes it in parts, publishes it with one txn on PREFIX/snapshot (only
 * while it still holds the lock) and deletes older parts; then, that
 * second and the following ones, the node that knows the snapshot trims
 * the log below min(snapshot, lowest applied revision of a live node). A
 * starting node loads the published snapshot into its cache and reads the log
 * from its revision on. A node whose next entry was trimmed cannot catch up:
 * read_log() says -ESTALE and the owner is told (on_fell_behind).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <zlib.h>

#include "store-internal.h"

#define ETCD_MAX_EP      16
#define ETCD_INLINE_MAX  ((size_t)900 * 1024) /* JSON bytes in one request */
#define ETCD_CHUNK       ((size_t)900 * 1024)
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

    pthread_t applier, watcher, keeper, waiter;
    bool threads;

    atomic_uint_fast64_t n_requests, n_failures, rtt_us, n_conflicts, n_remote,
        n_replay_errors, n_snap_loaded, n_snap_written, n_trimmed;
    /* log entries this node appended or read, for the bytes per revision
     * of the log (maybe_snapshot()) */
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

/* A cfs_store_catch_up_async() waiting, in the waiter thread's list. */
struct catch_up {
    uint64_t target;            /* the revision to apply (with the head) */
    struct timespec not_before; /* CLOCK_REALTIME, as e->cond waits */
    struct timespec deadline;
    cfs_store_caught_up_fn done;
    void *ctx;
    int err; /* what done() is told, decided under the lock */
    struct catch_up *next;
};

/* A pointer as PREFIX/snapshot holds it. */
struct snap_ptr {
    uint64_t revision, parts, length; /* length: of the parts, joined */
    uint64_t size; /* version 2: the cache's, inflated; 0 in version 1 */
    char id[33];
    char sha256[2 * SHA256_DIGEST_SIZE + 1];
};

/* ---- base64 ------------------------------------------------------------ */

static const char b64c[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_enc(const void *data, size_t len)
{
    const unsigned char *p = data;
    char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;

        if (i + 1 < len) {
            v |= (unsigned)p[i + 1] << 8;
        }
        if (i + 2 < len) {
            v |= p[i + 2];
        }
        *o++ = b64c[(v >> 18) & 63];
        *o++ = b64c[(v >> 12) & 63];
        *o++ = (char)(i + 1 < len ? b64c[(v >> 6) & 63] : '=');
        *o++ = (char)(i + 2 < len ? b64c[v & 63] : '=');
    }
    *o = '\0';
    return out;
}

static int b64_val(char c)
{
    const char *p = c ? strchr(b64c, c) : NULL;

    return p ? (int)(p - b64c) : -1;
}

/* Decode into a new buffer with a NUL after it. NULL on bad input. */
static char *b64_dec(const char *s, size_t *ret_len)
{
    size_t len = strlen(s);
    char *out = malloc(len / 4 * 3 + 1);
    size_t n = 0;
    unsigned v = 0;
    int bits = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        int d;

        if (s[i] == '=') {
            break;
        }
        d = b64_val(s[i]);
        if (d < 0) {
            free(out);
            return NULL;
        }
        v = (v << 6) | (unsigned)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (char)((v >> bits) & 0xff);
        }
    }
    out[n] = '\0';
    *ret_len = n;
    return out;
}

static json_t *jb64(const void *p, size_t len)
{
    char *e = b64_enc(p, len);
    json_t *j = e ? json_string(e) : NULL;

    free(e);
    return j;
}

static json_t *jb64s(const char *s)
{
    return jb64(s, strlen(s));
}

/* ---- HTTP -------------------------------------------------------------- */

struct buf {
    char *p;
    size_t n, cap;
};

static size_t buf_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct buf *b = ud;
    size_t n = size * nmemb;

    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);

        if (!p) {
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
    return n;
}

static uint64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* TLS as etcdctl's --cacert, --cert, --key (etcds:// endpoints). */
static void set_tls(const struct store_etcd *e, CURL *c)
{
    if (e->cacert) {
        curl_easy_setopt(c, CURLOPT_CAINFO, e->cacert);
    }
    if (e->cert) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, e->cert);
    }
    if (e->key) {
        curl_easy_setopt(c, CURLOPT_SSLKEY, e->key);
    }
}

static CURL *curl_take(struct store_etcd *e)
{
    CURL *c = NULL;

    pthread_mutex_lock(&e->lock);
    if (e->n_pool > 0) {
        c = e->pool[--e->n_pool];
    }
    pthread_mutex_unlock(&e->lock);
    return c ? c : curl_easy_init();
}

static void curl_give(struct store_etcd *e, CURL *c)
{
    pthread_mutex_lock(&e->lock);
    if (e->n_pool < ETCD_CURL_POOL) {
        e->pool[e->n_pool++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&e->lock);
    if (c) {
        curl_easy_cleanup(c);
    }
}

static void set_error(struct store_etcd *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_error(struct store_etcd *e, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&e->lock);
    va_start(ap, fmt);
    (void)vsnprintf(e->error, sizeof(e->error), fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&e->lock);
}

static int etcd_post_raw(struct store_etcd *e,
                         const char *api,
                         json_t *body,
                         json_t **ret);

/* Get a token for the user (etcd's simple tokens expire: called again
 * when a request is refused for its token). */
static int etcd_authenticate(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    const char *tok;
    char *h = NULL;
    int r;

    json_object_set_new(body, "name", json_string(e->user));
    json_object_set_new(body, "password", json_string(e->password));
    r = etcd_post_raw(e, "/v3/auth/authenticate", body, &ans);
    json_decref(body);
    tok = json_string_value(json_object_get(ans, "token"));
    if (r == 0 && (!tok || asprintf(&h, "Authorization: %s", tok) < 0)) {
        h = NULL;
        r = -EACCES;
    }
    json_decref(ans);
    if (r == 0) {
        pthread_mutex_lock(&e->lock);
        free(e->auth_header);
        e->auth_header = h;
        pthread_mutex_unlock(&e->lock);
    }
    return r;
}

/* The Authorization header list of a request (NULL without a user). */
static struct curl_slist *auth_headers(struct store_etcd *e)
{
    struct curl_slist *l = NULL;

    pthread_mutex_lock(&e->lock);
    if (e->auth_header) {
        l = curl_slist_append(NULL, e->auth_header);
    }
    pthread_mutex_unlock(&e->lock);
    return l;
}

/* With a user: a request refused for its token (expired, or etcd lost
 * it) authenticates again and is made once more. */
static int
etcd_post(struct store_etcd *e, const char *api, json_t *body, json_t **ret)
{
    int r = etcd_post_raw(e, api, body, ret);

    if (r == -EACCES && e->user && etcd_authenticate(e) == 0) {
        r = etcd_post_raw(e, api, body, ret);
    }
    return r;
}

/*
 * POST @body to @api on the endpoint that answered last, then on the
 * others in turn. @return 0 with *ret the parsed answer, or -ETIMEDOUT /
 * -ECONNREFUSED / -EIO when no endpoint gave a 200; the reason is kept for
 * cfs_store_cluster().
 */
static int
etcd_post_raw(struct store_etcd *e, const char *api, json_t *body, json_t **ret)
{
    char *text = json_dumps(body, JSON_COMPACT);
    struct curl_slist *hdrs = auth_headers(e);
    CURL *c = curl_take(e);
    size_t start = atomic_load(&e->cur);
    int r = -EIO;

    *ret = NULL;
    if (!text || !c) {
        curl_slist_free_all(hdrs);
        free(text);
        if (c) {
            curl_give(e, c);
        }
        return -ENOMEM;
    }
    for (size_t i = 0; i < e->n_ep; i++) {
        size_t k = (start + i) % e->n_ep;
        char url[512];
        struct buf b = {0};
        long code = 0;
        uint64_t t0 = mono_us();
        CURLcode cc;

        (void)snprintf(url, sizeof(url), "%s%s", e->ep[k], api);
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ETCD_TIMEOUT_MS);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ETCD_CONNECT_MS);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        if (hdrs) {
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        }
        set_tls(e, c);
        cc = curl_easy_perform(c);
        atomic_fetch_add(&e->n_requests, 1);
        atomic_fetch_add(&e->rtt_us, mono_us() - t0);
        if (cc == CURLE_OK) {
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        }
        if (cc == CURLE_OK && code == 200) {
            json_t *j = json_loadb(b.p ? b.p : "", b.n, 0, NULL);

            free(b.p);
            if (!j) {
                r = -EIO;
                set_error(e, "etcd %s answered with bad JSON", e->ep[k]);
                continue;
            }
            atomic_store(&e->cur, k);
            pthread_mutex_lock(&e->lock);
            e->error[0] = '\0';
            pthread_mutex_unlock(&e->lock);
            *ret = j;
            free(text);
            curl_slist_free_all(hdrs);
            curl_give(e, c);
            return 0;
        }
        atomic_fetch_add(&e->n_failures, 1);
        if (cc != CURLE_OK) {
            switch (cc) {
            case CURLE_OPERATION_TIMEDOUT:
                r = -ETIMEDOUT;
                break;
            case CURLE_SSL_CONNECT_ERROR:
            case CURLE_SSL_CERTPROBLEM:
            case CURLE_SSL_CIPHER:
            case CURLE_PEER_FAILED_VERIFICATION:
            case CURLE_SSL_CACERT_BADFILE:
            case CURLE_RECV_ERROR:
            case CURLE_SEND_ERROR:
                r = -EACCES; /* TLS refused: certificates or CA */
                break;
            default:
                r = -ECONNREFUSED;
                break;
            }
            set_error(e, "etcd %s: %s", e->ep[k], curl_easy_strerror(cc));
        } else {
            json_t *j = json_loadb(b.p ? b.p : "", b.n, 0, NULL);
            const char *msg = json_string_value(json_object_get(j, "error"));

            /* no quorum, no leader, timed out; or refused credentials */
            r = code == 401 || (msg && strstr(msg, "auth")) ? -EACCES
                                                            : -ETIMEDOUT;
            set_error(e,
                      "etcd %s: HTTP %ld: %s",
                      e->ep[k],
                      code,
                      msg ? msg : "no reason given");
            json_decref(j);
        }
        free(b.p);
    }
    free(text);
    curl_slist_free_all(hdrs);
    curl_give(e, c);
    return r;
}

/* A log entry of @bytes for @revs revisions, appended or read here. */
static void count_log(struct store_etcd *e, size_t bytes, uint64_t revs)
{
    atomic_fetch_add(&e->log_bytes, bytes);
    atomic_fetch_add(&e->log_revs, revs);
}

/* Where the parts of big batches from revision @rev on begin. */
static char *chunk_key(const struct store_etcd *e, uint64_t rev)
{
    char *k = NULL;

    if (asprintf(&k, "%s/chunk/%020" PRIu64, e->prefix, rev) < 0) {
        return NULL;
    }
    return k;
}

/* A kv's base64 field decoded, or NULL. */
static char *kv_field(json_t *kv, const char *name, size_t *ret_len)
{
    const char *v = json_string_value(json_object_get(kv, name));
    size_t n = 0;
    char *d = v ? b64_dec(v, &n) : NULL;

    if (ret_len) {
        *ret_len = n;
    }
    return d;
}

static uint64_t jnum(json_t *j)
{
    if (json_is_integer(j)) {
        return (uint64_t)json_integer_value(j);
    }
    if (json_is_string(j)) {
        return strtoull(json_string_value(j), NULL, 10);
    }
    return 0;
}

/* ---- encoding change sets ---------------------------------------------- */

static json_t *enc_change(const struct cfs_change *c)
{
    json_t *o = json_object();

    json_object_set_new(o, "o", json_integer(c->op));
    json_object_set_new(o, "p", json_string(c->path));
    if (c->arg) {
        json_object_set_new(o, "a", jb64(c->arg, c->arg_len));
    }
    if (c->has_old && c->old) {
        json_object_set_new(o, "h", jb64(c->old, c->old_len));
    }
    if (c->binary) {
        json_object_set_new(o, "b", json_true());
    }
    if (c->write_only) {
        json_object_set_new(o, "w", json_true());
    }
    return o;
}

/* CLOCK_REALTIME (as e->cond waits) @us microseconds from now. */
static struct timespec after_us(uint64_t us)
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

static uint64_t set_rev(const struct cfs_store_changeset *set)
{
    return set->n ? set->changes[0].revision : 0;
}

static bool same_principal(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * Into the log entry @val: @n change sets (revisions consecutive, so each
 * set's is "first" plus its index), committed at @t, and their principal
 * once for the entry when every set has the same one, else with each set.
 * A batch's entry is what etcd stores, replicates and sends every watcher,
 * so nothing in it is said twice.
 */
static void enc_sets(json_t *val,
                     const struct cfs_store_changeset *sets,
                     size_t n,
                     int64_t t)
{
    json_t *arr = json_array();
    bool one = true;

    for (size_t i = 1; i < n && one; i++) {
        one = same_principal(sets[i].principal, sets[0].principal);
    }
    json_object_set_new(val, "t", json_integer(t));
    if (one && sets[0].principal) {
        json_object_set_new(val, "u", json_string(sets[0].principal));
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object(), *cs = json_array();

        if (!one && sets[i].principal) {
            json_object_set_new(o, "u", json_string(sets[i].principal));
        }
        for (size_t j = 0; j < sets[i].n; j++) {
            json_array_append_new(cs, enc_change(&sets[i].changes[j]));
        }
        json_object_set_new(o, "c", cs);
        json_array_append_new(arr, o);
    }
    json_object_set_new(val, "sets", arr);
}

/* Change sets read back from the log: everything owned here. */
struct dec_batch {
    struct cfs_store_changeset *sets;
    size_t n;
    uint64_t first, last;
    int64_t time_us; /* when it was committed; 0: not said */
};

static void dec_free(struct dec_batch *d)
{
    for (size_t i = 0; d->sets && i < d->n; i++) {
        struct cfs_change *cs = (struct cfs_change *)d->sets[i].changes;

        for (size_t j = 0; j < d->sets[i].n; j++) {
            free(cs[j].path);
            free(cs[j].arg);
            free(cs[j].old);
        }
        free(cs);
        free((char *)d->sets[i].principal);
    }
    free(d->sets);
    memset(d, 0, sizeof(*d));
}

/* The change sets of the log entry @entry (format 1: revision, principal and
 * time with each set; 2: enc_sets()'s; 3: the same, the entry deflated). */
static int dec_sets(json_t *entry, struct dec_batch *d)
{
    json_t *arr = json_object_get(entry, "sets");
    json_int_t v = json_integer_value(json_object_get(entry, "v"));
    const char *u_all = json_string_value(json_object_get(entry, "u"));
    json_t *t = json_object_get(entry, "t");
    size_t n = json_array_size(arr);

    if (v < 1 || v > 3) {
        return -EUCLEAN; /* written by a newer configfsd */
    }
    if (!t && n > 0) {
        t = json_object_get(json_array_get(arr, 0), "t");
    }
    d->time_us = json_integer_value(t);
    d->sets = calloc(n ? n : 1, sizeof(*d->sets));
    if (!d->sets) {
        return -ENOMEM;
    }
    d->n = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i), *cs = json_object_get(o, "c");
        json_t *r = json_object_get(o, "r"), *u_set = json_object_get(o, "u");
        uint64_t rev = r ? jnum(r) : d->first + i;
        const char *u = u_set ? json_string_value(u_set) : u_all;
        size_t m = json_array_size(cs);
        struct cfs_change *ch = calloc(m ? m : 1, sizeof(*ch));

        if (!ch) {
            return -ENOMEM;
        }
        d->sets[i].changes = ch;
        d->sets[i].n = m;
        d->sets[i].principal = u ? strdup(u) : NULL;
        for (size_t j = 0; j < m; j++) {
            json_t *c = json_array_get(cs, j);
            const char *p = json_string_value(json_object_get(c, "p"));
            const char *a = json_string_value(json_object_get(c, "a"));
            const char *h = json_string_value(json_object_get(c, "h"));

            ch[j].op = (enum cfs_op)json_integer_value(json_object_get(c, "o"));
            ch[j].revision = rev;
            ch[j].path = strdup(p ? p : "/");
            if (a) {
                ch[j].arg = b64_dec(a, &ch[j].arg_len);
            }
            if (h) {
                ch[j].old = b64_dec(h, &ch[j].old_len);
                ch[j].has_old = true;
            }
            ch[j].binary = json_is_true(json_object_get(c, "b"));
            ch[j].write_only = json_is_true(json_object_get(c, "w"));
            if (!ch[j].path || (a && !ch[j].arg) || (h && !ch[j].old)) {
                return -EUCLEAN;
            }
        }
    }
    return 0;
}

/* ---- keys -------------------------------------------------------------- */

/* @bytes (at most 16) random bytes as hex digits and a NUL into @out. */
static void random_hex(char *out, size_t bytes)
{
    unsigned char rnd[16];

    if (bytes > sizeof(rnd) || getrandom(rnd, bytes, 0) != (ssize_t)bytes) {
        /* no entropy: a name from the clock and pid is unique enough */
        (void)snprintf(out,
                       2 * bytes + 1,
                       "%0*" PRIx64,
                       (int)(2 * bytes),
                       mono_us() ^ ((uint64_t)getpid() << 40));
        return;
    }
    for (size_t i = 0; i < bytes; i++) {
        (void)snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    }
}

static char *log_key(const struct store_etcd *e, uint64_t rev)
{
    char *k = NULL;

    if (asprintf(&k, "%s%020" PRIu64, e->k_log, rev) < 0) {
        return NULL;
    }
    return k;
}

/* ---- appending --------------------------------------------------------- */

static json_t *op_put(const char *key, const char *val, size_t len)
{
    json_t *p = json_object(), *o = json_object();

    json_object_set_new(p, "key", jb64s(key));
    json_object_set_new(p, "value", jb64(val, len));
    json_object_set_new(o, "request_put", p);
    return o;
}

/* A txn's compare: @key equals @value, or (@value NULL) does not exist. */
static json_t *cmp_value(const char *key, const char *value)
{
    json_t *c = json_object();

    json_object_set_new(c, "key", jb64s(key));
    if (value) {
        json_object_set_new(c, "target", json_string("VALUE"));
        json_object_set_new(c, "value", jb64s(value));
    } else {
        json_object_set_new(c, "target", json_string("VERSION"));
        json_object_set_new(c, "version", json_string("0"));
    }
    json_object_set_new(c, "result", json_string("EQUAL"));
    return c;
}

static int
put_plain(struct store_etcd *e, const char *key, const char *val, size_t len)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "key", jb64s(key));
    json_object_set_new(body, "value", jb64(val, len));
    r = etcd_post(e, "/v3/kv/put", body, &ans);
    json_decref(body);
    json_decref(ans);
    return r;
}

/* Delete [@key, @end): @return the number of keys deleted, or an errno. */
static int64_t
delete_range(struct store_etcd *e, const char *key, const char *end)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t r;

    json_object_set_new(body, "key", jb64s(key));
    json_object_set_new(body, "range_end", jb64s(end));
    r = etcd_post(e, "/v3/kv/deleterange", body, &ans);
    if (r == 0) {
        r = (int64_t)jnum(json_object_get(ans, "deleted"));
    }
    json_decref(ans);
    json_decref(body);
    return r;
}

static void delete_prefix(struct store_etcd *e, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end = strdup(prefix);

    if (end && n > 0) {
        end[n - 1]++;
        (void)delete_range(e, prefix, end);
    }
    free(end);
}

static void note_head(struct store_etcd *e, uint64_t head)
{
    pthread_mutex_lock(&e->lock);
    if (head > e->log_head) {
        e->log_head = head;
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
}

/* The first kv of the @i-th answer of a txn's ranges, or NULL. */
static json_t *range_kv(json_t *ans, size_t i)
{
    json_t *resp = json_array_get(json_object_get(ans, "responses"), i);

    return json_array_get(
        json_object_get(json_object_get(resp, "response_range"), "kvs"), 0);
}

/*
 * Log entries (format 3) and snapshots (pointer version 2) are deflated:
 * etcd's cost grows with the bytes it is sent, and it stores, replicates
 * and sends every watcher each entry, while the change sets of one batch
 * repeat their paths and field names (a batch of attribute writes shrinks
 * about fivefold) and a cache's pages compress as well. zlib's fastest
 * level: a batch costs less to deflate than etcd spends per byte saved.
 */
static char *deflate_bytes(const void *p, size_t len, size_t *ret_len)
{
    uLongf cap = compressBound((uLong)len);
    char *out = malloc(cap);

    if (!out ||
        compress2(
            (Bytef *)out, &cap, (const Bytef *)p, (uLong)len, Z_BEST_SPEED) !=
            Z_OK) {
        free(out);
        return NULL;
    }
    *ret_len = cap;
    return out;
}

/* The zlib stream @v of @len bytes inflated into @out, NUL-terminated
 * (for the JSON parser). @size: what it must inflate to exactly, or 0
 * for anything up to ETCD_ENTRY_MAX bytes. @return 0, or -EUCLEAN when it
 * is not one stream whole of that size, -ENOMEM. */
static int
inflate_bytes(const char *v, size_t len, size_t size, struct buf *out)
{
    /* a byte for the NUL, and (@size) one to see it would be bigger */
    size_t limit = size ? size + 2 : ETCD_ENTRY_MAX;
    z_stream z = {0};
    int zr = Z_OK, r = 0;

    memset(out, 0, sizeof(*out));
    if (len > UINT_MAX || inflateInit(&z) != Z_OK) {
        return -EUCLEAN;
    }
    z.next_in = (Bytef *)v;
    z.avail_in = (uInt)len;
    while (zr == Z_OK && r == 0) {
        size_t room;

        if (out->cap - out->n <= 1) {
            size_t cap = size ? limit : out->cap ? out->cap * 2 : len * 8 + 256;
            char *p;

            if (cap > limit) {
                cap = limit;
            }
            if (cap <= out->cap) {
                r = -EUCLEAN; /* bigger than it may be */
                break;
            }
            p = realloc(out->p, cap);
            if (!p) {
                r = -ENOMEM;
                break;
            }
            out->p = p;
            out->cap = cap;
        }
        room = out->cap - out->n - 1;
        z.next_out = (Bytef *)out->p + out->n;
        z.avail_out = room < UINT_MAX ? (uInt)room : UINT_MAX;
        room = z.avail_out;
        zr = inflate(&z, Z_NO_FLUSH);
        out->n += room - z.avail_out;
    }
    inflateEnd(&z);
    if (r == 0 &&
        (zr != Z_STREAM_END || z.avail_in != 0 || (size && out->n != size))) {
        r = -EUCLEAN;
    }
    if (r < 0) {
        free(out->p);
        memset(out, 0, sizeof(*out));
        return r;
    }
    out->p[out->n] = '\0';
    return 0;
}

/* A log entry's value @v as read from etcd, parsed: a zlib stream (format
 * 3) or plain JSON (a big batch's entry naming its parts, formats 1, 2).
 * @ret_len (or NULL): the JSON's length. NULL if it is neither, or
 * damaged. */
static json_t *entry_load(const char *v, size_t len, size_t *ret_len)
{
    struct buf b;
    json_t *j;

    if (len > 0 && v[0] == '{') {
        b.n = len;
        j = json_loadb(v, len, 0, NULL);
    } else if (inflate_bytes(v, len, 0, &b) == 0) {
        j = json_loadb(b.p, b.n, 0, NULL);
        free(b.p);
    } else {
        return NULL;
    }
    if (ret_len) {
        *ret_len = b.n;
    }
    return j;
}

/* A log entry's own fields (format 3), for an append named by @nonce; the
 * change sets, or the parts that hold them, go in after. */
static json_t *entry_new(uint64_t first, uint64_t last, const char *nonce)
{
    json_t *val = json_object();

    json_object_set_new(val, "v", json_integer(3));
    json_object_set_new(val, "first", json_integer((json_int_t)first));
    json_object_set_new(val, "last", json_integer((json_int_t)last));
    json_object_set_new(val, "nonce", json_string(nonce));
    return val;
}

/* Whether @kv, a log entry read back, is the one with @nonce. */
static bool own_entry(json_t *kv, const char *nonce)
{
    size_t len = 0;
    char *v = kv_field(kv, "value", &len);
    json_t *j = v ? entry_load(v, len, NULL) : NULL;
    const char *n = json_string_value(json_object_get(j, "nonce"));
    bool own = n && strcmp(n, nonce) == 0;

    json_decref(j);
    free(v);
    return own;
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
    uint64_t first = set_rev(&sets[0]), last = set_rev(&sets[n - 1]);
    uint64_t base = first - 1;
    json_t *val, *body = NULL, *ans = NULL, *succ, *fail;
    char *plain, *text = NULL, *lk = log_key(e, first);
    char chunk_prefix[600] = "", basestr[24], laststr[24], nonce[17];
    size_t bytes = 0, text_len; /* the entry deflated; what the log key holds */
    int r = 0;

    /* Names this append. A request etcd carried out but whose answer was
     * lost is sent again (by libcurl on a fresh connection, or here to
     * the next member) and then loses the CAS to itself: the entry at
     * @first, which the failure returns, tells. */
    random_hex(nonce, 8);
    val = entry_new(first, last, nonce);
    enc_sets(val, sets, n, time_us);
    plain = json_dumps(val, JSON_COMPACT);
    text = plain ? deflate_bytes(plain, strlen(plain), &bytes) : NULL;
    free(plain);
    text_len = bytes;
    if (!text || !lk) {
        r = -ENOMEM;
        goto out;
    }
    if (bytes > ETCD_INLINE_MAX) {
        /* Too big for one request: the parts first, under a fresh id
         * that begins with the first revision (for trimming), then the
         * log entry that names them. */
        char id[40];
        size_t k = 0;

        (void)snprintf(id, sizeof(id), "%020" PRIu64 "-", first);
        random_hex(id + 21, 8);
        (void)snprintf(
            chunk_prefix, sizeof(chunk_prefix), "%s/chunk/%s/", e->prefix, id);
        for (size_t off = 0; off < bytes && r == 0; off += ETCD_CHUNK, k++) {
            char key[640];
            size_t part = bytes - off < ETCD_CHUNK ? bytes - off : ETCD_CHUNK;

            (void)snprintf(key, sizeof(key), "%s%06zu", chunk_prefix, k);
            r = put_plain(e, key, text + off, part);
        }
        if (r < 0) {
            delete_prefix(e, chunk_prefix); /* named by no entry */
            goto out;
        }
        json_decref(val);
        val = entry_new(first, last, nonce);
        json_object_set_new(val, "chunks", json_integer((json_int_t)k));
        json_object_set_new(val, "id", json_string(id));
        free(text);
        text = json_dumps(val, JSON_COMPACT);
        if (!text) {
            r = -ENOMEM;
            goto out;
        }
        text_len = strlen(text);
    }

    (void)snprintf(basestr, sizeof(basestr), "%" PRIu64, base);
    (void)snprintf(laststr, sizeof(laststr), "%" PRIu64, last);
    body = json_object();
    json_object_set_new(
        body,
        "compare",
        json_pack("[o]", cmp_value(e->k_head, base ? basestr : NULL)));
    succ = json_array();
    json_array_append_new(succ, op_put(lk, text, text_len));
    json_array_append_new(succ, op_put(e->k_head, laststr, strlen(laststr)));
    json_object_set_new(body, "success", succ);
    fail = json_object();
    json_object_set_new(fail, "key", jb64s(e->k_head));
    json_object_set_new(body,
                        "failure",
                        json_pack("[{so}{s{so}}]",
                                  "request_range",
                                  fail,
                                  "request_range",
                                  "key",
                                  jb64s(lk)));
    r = etcd_post(e, "/v3/kv/txn", body, &ans);
    if (r == 0 && !json_is_true(json_object_get(ans, "succeeded")) &&
        !own_entry(range_kv(ans, 1), nonce)) {
        char *hv = kv_field(range_kv(ans, 0), "value", NULL);

        note_head(e, hv ? strtoull(hv, NULL, 10) : 0);
        free(hv);
        atomic_fetch_add(&e->n_conflicts, 1);
        r = -ESTALE;
    }
    /* The parts go only with an entry surely not made: after a timeout
     * the entry that names them may be in the log. */
    if (r == -ESTALE && chunk_prefix[0]) {
        delete_prefix(e, chunk_prefix);
    }
    if (r == 0) {
        count_log(e, bytes, last - first + 1);
    }
out:
    json_decref(ans);
    json_decref(body);
    json_decref(val);
    free(text);
    free(lk);
    return r;
}

/* ---- reading the log --------------------------------------------------- */

/* One log entry of @bytes, parsed (@j: taken), chunks fetched, as change
 * sets. */
static int
decode_entry(struct store_etcd *e, json_t *j, size_t bytes, struct dec_batch *d)
{
    int r = 0;

    memset(d, 0, sizeof(*d));
    if (!j) {
        return -EUCLEAN;
    }
    d->first = jnum(json_object_get(j, "first"));
    d->last = jnum(json_object_get(j, "last"));
    if (json_object_get(j, "chunks")) {
        const char *id = json_string_value(json_object_get(j, "id"));
        size_t k = (size_t)jnum(json_object_get(j, "chunks"));
        struct buf all = {0};

        for (size_t i = 0; i < k && r == 0 && id; i++) {
            char key[640];
            json_t *body = json_object(), *ans = NULL;

            (void)snprintf(
                key, sizeof(key), "%s/chunk/%s/%06zu", e->prefix, id, i);
            json_object_set_new(body, "key", jb64s(key));
            r = etcd_post(e, "/v3/kv/range", body, &ans);
            json_decref(body);
            if (r == 0) {
                size_t pl = 0;
                char *part =
                    kv_field(json_array_get(json_object_get(ans, "kvs"), 0),
                             "value",
                             &pl);

                if (!part || buf_write(part, 1, pl, &all) != pl) {
                    r = -EUCLEAN;
                }
                free(part);
            }
            json_decref(ans);
        }
        json_decref(j);
        j = r == 0 && all.p ? entry_load(all.p, all.n, NULL) : NULL;
        bytes = all.n;
        free(all.p);
        if (!j) {
            return r < 0 ? r : -EUCLEAN;
        }
    }
    r = dec_sets(j, d);
    json_decref(j);
    if (r < 0) {
        dec_free(d);
        return r;
    }
    count_log(e, bytes, d->last >= d->first ? d->last - d->first + 1 : 0);
    return 0;
}

/* One log entry's value, as change sets. */
static int
read_entry(struct store_etcd *e, const char *v, size_t len, struct dec_batch *d)
{
    return decode_entry(e, entry_load(v, len, NULL), len, d);
}

typedef int (*batch_fn)(struct cfs_store *s, struct dec_batch *d);

/*
 * Read the log from revision @from on, in order, and hand each batch to
 * @fn. @head: a head read before (the log holds at least up to it unless
 * trimmed). @ret_etcd_rev: etcd's revision of the first read (to watch
 * from). @return 0; -ESTALE when the log no longer holds @from (trimmed
 * below a snapshot: this node cannot catch up from it); an etcd errno.
 */
static int read_log(struct cfs_store *s,
                    uint64_t from,
                    uint64_t head,
                    batch_fn fn,
                    int64_t *ret_etcd_rev)
{
    struct store_etcd *e = s->etcd;
    char *key = log_key(e, from);
    uint64_t next = from;
    int r = 0;

    if (!key) {
        return -ENOMEM;
    }
    for (;;) {
        json_t *body = json_object(), *ans = NULL, *kvs;
        size_t n;
        bool more;

        json_object_set_new(body, "key", jb64s(key));
        json_object_set_new(body, "range_end", jb64s(e->k_log_end));
        json_object_set_new(body, "limit", json_integer(ETCD_RANGE_LIMIT));
        r = etcd_post(e, "/v3/kv/range", body, &ans);
        json_decref(body);
        if (r < 0) {
            break;
        }
        if (ret_etcd_rev && *ret_etcd_rev == 0) {
            *ret_etcd_rev = (int64_t)jnum(
                json_object_get(json_object_get(ans, "header"), "revision"));
        }
        kvs = json_object_get(ans, "kvs");
        n = json_array_size(kvs);
        more = json_is_true(json_object_get(ans, "more"));
        if (n == 0 && next == from && head >= from) {
            r = -ESTALE; /* the head says it was there: trimmed */
        }
        for (size_t i = 0; i < n && r == 0; i++) {
            size_t vl = 0;
            char *v = kv_field(json_array_get(kvs, i), "value", &vl);
            struct dec_batch d;

            r = v ? read_entry(e, v, vl, &d) : -EUCLEAN;
            free(v);
            if (r == 0 && d.first != next) {
                dec_free(&d);
                r = -ESTALE; /* a gap: what this node needs was trimmed */
            }
            if (r == 0) {
                next = d.last + 1;
                r = fn(s, &d);
                dec_free(&d);
                free(key);
                key = log_key(e, next);
                if (!key) {
                    r = -ENOMEM;
                }
            }
        }
        json_decref(ans);
        if (r < 0 || !more || n == 0) {
            break;
        }
    }
    free(key);
    return r;
}

/* ---- applying ----------------------------------------------------------- */

/* Start-up: into the cache only; replay builds the tree from it. */
static int load_batch(struct cfs_store *s, struct dec_batch *d)
{
    int r;

    pthread_mutex_lock(&s->w_lock);
    r = store_write_sets(s, d->sets, d->n, d->time_us);
    pthread_mutex_unlock(&s->w_lock);
    if (r == 0) {
        pthread_mutex_lock(&s->etcd->lock);
        s->etcd->applied = d->last;
        pthread_mutex_unlock(&s->etcd->lock);
    }
    return r;
}

static enum cfs_store_step_op step_of(enum cfs_op op)
{
    switch (op) {
    case CFS_OP_MKDIR:
        return CFS_STORE_STEP_MKDIR;
    case CFS_OP_STORE:
        return CFS_STORE_STEP_STORE;
    case CFS_OP_SYMLINK:
        return CFS_STORE_STEP_SYMLINK;
    case CFS_OP_RENAME:
        return CFS_STORE_STEP_COMMIT;
    default:
        return CFS_STORE_STEP_DIR;
    }
}

/* The subsystem @path is in is registered (else its data waits in the
 * cache for its replay at registration). */
static bool subsystem_registered(const char *path)
{
    char name[CFS_NAME_MAX + 2];
    struct cfs_entry en;
    size_t i = 0;

    while (*path == '/') {
        path++;
    }
    name[i++] = '/';
    while (*path && *path != '/' && i < sizeof(name) - 1) {
        name[i++] = *path++;
    }
    name[i] = '\0';
    if (cfs_stat(name, &en) < 0) {
        return false;
    }
    cfs_entry_done(&en);
    return true;
}

static void touch_parent(struct cfs_txn *txn, const char *path)
{
    char *p = strdup(path);
    char *slash = p ? strrchr(p, '/') : NULL;

    if (slash) {
        *slash = '\0';
        (void)cfs_replay_touch(txn, p[0] ? p : "/");
    }
    free(p);
}

static int apply_one(struct cfs_txn *txn, const struct cfs_change *c)
{
    int r;

    switch (c->op) {
    case CFS_OP_MKDIR:
        return cfs_mkdir(txn, c->path);
    case CFS_OP_RMDIR:
        r = cfs_rmdir(txn, c->path);
        touch_parent(txn, c->path);
        return r;
    case CFS_OP_STORE:
        return cfs_store(txn, c->path, c->arg ? c->arg : "", c->arg_len);
    case CFS_OP_SYMLINK:
        return cfs_symlink(txn, c->path, c->arg ? c->arg : "/");
    case CFS_OP_UNLINK:
        r = cfs_unlink(txn, c->path);
        touch_parent(txn, c->path);
        return r;
    case CFS_OP_RENAME:
        r = cfs_rename(txn, c->path, c->arg ? c->arg : "/");
        touch_parent(txn, c->path);
        if (c->arg) {
            touch_parent(txn, c->arg);
        }
        return r;
    }
    return -EINVAL;
}

/*
 * Another node's batch: wait until no local commit is in flight (they are
 * failing: the head moved), then, holding the tree, run its operations
 * through the subsystems' callbacks stamped with their revisions, write
 * them to the cache and move the revision counter on.
 */
static int remote_batch(struct cfs_store *s, struct dec_batch *d)
{
    struct store_etcd *e = s->etcd;
    struct cfs_txn *txn = NULL;
    uint64_t applied;
    int r;

    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    if (d->last <= applied) {
        pthread_mutex_unlock(&e->lock);
        return 0; /* ours, applied when it was appended */
    }
    e->applying = true;
    pthread_mutex_unlock(&e->lock);

    pthread_mutex_lock(&s->q_lock);
    s->remote_waiting = true;
    while (s->q_head || s->leader || s->f_head) {
        pthread_cond_wait(&s->q_cond, &s->q_lock);
    }
    pthread_mutex_unlock(&s->q_lock);

    r = cfs_txn_begin_replay(&txn);
    if (r < 0) {
        goto out;
    }
    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    pthread_mutex_unlock(&e->lock);
    if (d->last <= applied) {
        cfs_txn_commit(txn); /* ours, or seen already */
        goto out;
    }
    for (size_t i = 0; i < d->n; i++) {
        for (size_t j = 0; j < d->sets[i].n; j++) {
            const struct cfs_change *c = &d->sets[i].changes[j];
            int rr;

            cfs_txn_set_stamp(txn, c->revision);
            rr = apply_one(txn, c);
            if (rr < 0 && subsystem_registered(c->path)) {
                /* Accepted by the node that made it, refused here: a
                 * replay problem, reported, never skipped silently. */
                atomic_fetch_add(&e->n_replay_errors, 1);
                store_problem_add(s, c->path, step_of(c->op), rr);
                if (s->on_replay_error) {
                    s->on_replay_error(s->on_replay_error_ctx, c, rr);
                }
            } else if (rr >= 0) {
                /* made again: what failed under it is settled, as when
                 * this node makes it itself (write_sets()) */
                store_problems_forget(
                    s, &(struct cfs_store_changeset){.changes = c, .n = 1}, 1);
            }
        }
    }
    pthread_mutex_lock(&s->w_lock);
    r = store_write_sets(s, d->sets, d->n, d->time_us);
    pthread_mutex_unlock(&s->w_lock);
    if (r < 0) {
        store_problem_add(s, "/", CFS_STORE_STEP_UNDO, r);
    }
    cfs_revision_set(d->last);
    cfs_txn_commit(txn);
    pthread_mutex_lock(&s->q_lock);
    s->info_revision = d->last;
    s->n_txns += d->n;
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_add(&e->n_remote, d->n);
    pthread_mutex_lock(&e->lock);
    e->applied = d->last;
    if (d->last > e->log_head) {
        e->log_head = d->last;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    if (s->on_applied) {
        for (size_t i = 0; i < d->n; i++) {
            s->on_applied(s->on_applied_ctx, d->sets[i].changes, d->sets[i].n);
        }
    }
    r = 0;
out:
    pthread_mutex_lock(&s->q_lock);
    s->remote_waiting = false;
    pthread_mutex_unlock(&s->q_lock);
    pthread_mutex_lock(&e->lock);
    e->applying = false;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return r;
}

static int read_head(struct store_etcd *e, int64_t *ret_etcd_rev);
static int read_pointer(struct store_etcd *e, struct snap_ptr *ptr);

/* @pre e->lock */
static void seen_pop(struct store_etcd *e)
{
    struct seen *x = e->seen_head;

    e->seen_head = x->next;
    if (!e->seen_head) {
        e->seen_tail = NULL;
    }
    e->seen_bytes -= x->size;
    json_decref(x->entry);
    free(x);
}

/*
 * Apply the next log entry from what the watch brought, if it is the one
 * after the last applied: no request to etcd (entries applied already are
 * dropped). @return whether one was taken (applied, or failed: the caller
 * looks again, and reads the log for what is missing). @pre e->lock held;
 * released while applying.
 */
static bool apply_seen(struct cfs_store *s) CFS_STORE_NO_TSA
{
    struct store_etcd *e = s->etcd;
    struct dec_batch d;
    size_t bytes;
    json_t *j;
    int r;

    while (e->seen_head && e->seen_head->last <= e->applied) {
        seen_pop(e);
    }
    if (!e->seen_head || e->seen_head->first != e->applied + 1) {
        return false; /* none, or a gap: the log has it */
    }
    j = json_incref(e->seen_head->entry);
    bytes = e->seen_head->bytes;
    seen_pop(e);
    pthread_mutex_unlock(&e->lock);
    r = decode_entry(e, j, bytes, &d);
    if (r == 0) {
        (void)remote_batch(s, &d);
        dec_free(&d);
    }
    pthread_mutex_lock(&e->lock);
    return r == 0;
}

/*
 * The log lost the entry after the last applied, but the watch may still
 * bring it: a node frozen with its watch open finds the entries in its
 * socket, and the applier, woken first, read the log before the watch
 * thread read them. Wait a moment for it. @pre e->lock
 */
static bool watch_brings(struct store_etcd *e) CFS_STORE_NO_TSA
{
    struct timespec ts = after_us((uint64_t)ETCD_WATCH_GRACE_S * 1000000u);

    while (e->watching && !e->stop &&
           !(e->seen_head && e->seen_head->first <= e->applied + 1)) {
        if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT) {
            break;
        }
    }
    return e->seen_head && e->seen_head->first <= e->applied + 1;
}

/* Sleep @ms whatever wakes the thread meanwhile, unless stopping.
 * @pre e->lock */
static void sleep_locked(struct store_etcd *e, unsigned ms) CFS_STORE_NO_TSA
{
    struct timespec ts = after_us((uint64_t)ms * 1000u);

    while (!e->stop &&
           pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT) {
    }
}

static void *applier_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->etcd;
    unsigned unreadable_ms = ETCD_RETRY_MS;

    pthread_setname_np(pthread_self(), "cfs-etcd-apply");
    pthread_mutex_lock(&e->lock);
    while (!e->stop) {
        uint64_t from, head;
        int r;

        if (e->appending && e->applied < e->log_head) {
            /* The watch may have seen this node's own append before its
             * answer came: wait for it rather than read the log and hold
             * local commits back for nothing. */
            pthread_cond_wait(&e->cond, &e->lock);
            continue;
        }
        if (e->applied >= e->log_head) {
            struct timespec ts = after_us(1000000);

            if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT &&
                !e->stop) {
                /* Idle for a second: a linearizable read of the head, so
                 * that a node whose watch went quiet because etcd lost its
                 * quorum notices it (its answers then say they may be
                 * stale), and so that nothing the watch missed stays
                 * unapplied. */
                pthread_mutex_unlock(&e->lock);
                (void)read_head(e, NULL);
                pthread_mutex_lock(&e->lock);
            }
            continue;
        }
        if (e->fell_behind) {
            pthread_cond_wait(&e->cond, &e->lock); /* until stopped */
            continue;
        }
        if (apply_seen(s)) {
            continue;
        }
        from = e->applied + 1;
        head = e->log_head;
        pthread_mutex_unlock(&e->lock);
        r = read_log(s, from, head, remote_batch, NULL);
        pthread_mutex_lock(&e->lock);
        if (r == -ESTALE && !e->stop && watch_brings(e)) {
            continue; /* the watch had it: applied next time round */
        }
        if (r == -ESTALE && !e->stop) {
            /* Trimmed below a snapshot while this node was away (stopped,
             * cut off past its lease): the log cannot bring it back. */
            struct snap_ptr ptr;
            uint64_t applied = e->applied, snap;

            e->fell_behind = true;
            pthread_cond_broadcast(&e->cond);
            pthread_mutex_unlock(&e->lock);
            (void)read_pointer(e, &ptr);
            pthread_mutex_lock(&e->lock);
            snap = e->snap_rev;
            pthread_mutex_unlock(&e->lock);
            if (s->on_fell_behind) {
                s->on_fell_behind(s->on_fell_behind_ctx, applied, snap);
            }
            pthread_mutex_lock(&e->lock);
            continue;
        }
        if (r == -EUCLEAN && !e->stop && e->unreadable != e->applied + 1) {
            /* Written by a newer configfsd, or damaged: nothing after it
             * can be applied. Reported once, as a problem of this node
             * (/readyz, /metrics); it is read again, as other errors. */
            e->unreadable = e->applied + 1;
            atomic_fetch_add(&e->n_replay_errors, 1);
            pthread_mutex_unlock(&e->lock);
            store_problem_add(s, "/", CFS_STORE_STEP_LOG, r);
            pthread_mutex_lock(&e->lock);
        }
        if (r == -EUCLEAN) {
            /* It stays unreadable: every entry the watch brings wakes this
             * thread, and must not cost another read of the log. */
            sleep_locked(e, unreadable_ms);
            unreadable_ms = unreadable_ms * 2 < ETCD_UNREADABLE_MAX_MS
                                ? unreadable_ms * 2
                                : ETCD_UNREADABLE_MAX_MS;
            continue;
        }
        unreadable_ms = ETCD_RETRY_MS;
        if (r < 0 && !e->stop) {
            struct timespec ts = after_us((uint64_t)ETCD_RETRY_MS * 1000u);

            pthread_cond_timedwait(&e->cond, &e->lock, &ts);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* ---- the watch ---------------------------------------------------------- */

struct watch_ctx {
    struct store_etcd *e;
    struct buf b;
    int64_t next_rev; /* etcd revision to watch from after a reconnection */
    bool compacted, canceled;
};

/* A log entry from the watch (@kv, at @key): kept for the applier,
 * within a bound. */
static void keep_seen(struct store_etcd *e, const char *key, json_t *kv)
{
    uint64_t first = strtoull(key + strlen(e->k_log), NULL, 10);
    size_t len = 0, size = 0;
    json_t *j = NULL;
    struct seen *x;
    char *v;

    pthread_mutex_lock(&e->lock);
    if (first <= e->applied || (e->appending && first == e->append_first)) {
        /* Applied, or this node's own append, whose answer is on its way:
         * not even decoded. (If the append failed, this entry is another
         * node's, or it was made after all: the applier reads it from the
         * log.) */
        pthread_mutex_unlock(&e->lock);
        return;
    }
    if (e->seen_bytes >= ETCD_SEEN_MAX) {
        pthread_mutex_unlock(&e->lock);
        return; /* the applier reads it from the log */
    }
    pthread_mutex_unlock(&e->lock);
    v = kv_field(kv, "value", &len);
    j = v ? entry_load(v, len, &size) : NULL;
    free(v);
    x = j ? calloc(1, sizeof(*x)) : NULL;
    if (!x) {
        json_decref(j);
        return;
    }
    x->entry = j;
    x->first = jnum(json_object_get(j, "first"));
    x->last = jnum(json_object_get(j, "last"));
    x->bytes = len;
    x->size = size;
    pthread_mutex_lock(&e->lock);
    if (e->seen_bytes + size > ETCD_SEEN_MAX) {
        pthread_mutex_unlock(&e->lock);
        json_decref(j);
        free(x);
        return; /* the applier reads it from the log */
    }
    if (e->seen_tail) {
        e->seen_tail->next = x;
    } else {
        e->seen_head = x;
    }
    e->seen_tail = x;
    e->seen_bytes += size;
    if (x->last > e->log_head) {
        e->log_head = x->last;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

static void watch_line(struct watch_ctx *w, const char *line, size_t len)
{
    json_t *j = json_loadb(line, len, 0, NULL);
    json_t *res = json_object_get(j, "result"), *evs;
    int64_t hrev;

    if (!res) {
        json_decref(j);
        return;
    }
    if (jnum(json_object_get(res, "compact_revision")) > 0) {
        w->compacted = true;
    }
    if (json_is_true(json_object_get(res, "canceled"))) {
        w->canceled = true; /* compacted past us, or refused: ask again */
    }
    hrev = (int64_t)jnum(
        json_object_get(json_object_get(res, "header"), "revision"));
    if (hrev + 1 > w->next_rev) {
        w->next_rev = hrev + 1;
    }
    evs = json_object_get(res, "events");
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *ev = json_array_get(evs, i), *kv = json_object_get(ev, "kv");
        char *k = kv_field(kv, "key", NULL);

        /* a PUT: no "type"; its value decoded only when needed (a log
         * entry is big, and this node's own is not decoded at all) */
        if (k && json_is_string(json_object_get(kv, "value")) &&
            json_object_get(ev, "type") == NULL) {
            if (strcmp(k, w->e->k_head) == 0) {
                char *v = kv_field(kv, "value", NULL);

                note_head(w->e, v ? strtoull(v, NULL, 10) : 0);
                free(v);
            } else if (strncmp(k, w->e->k_log, strlen(w->e->k_log)) == 0) {
                keep_seen(w->e, k, kv);
            }
        }
        free(k);
    }
    json_decref(j);
}

static size_t watch_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct watch_ctx *w = ud;
    size_t n = size * nmemb;
    char *nl;

    if (buf_write(data, size, nmemb, &w->b) != n) {
        return 0;
    }
    pthread_mutex_lock(&w->e->lock);
    w->e->watching = true;
    pthread_mutex_unlock(&w->e->lock);
    while ((nl = memchr(w->b.p, '\n', w->b.n)) != NULL) {
        size_t len = (size_t)(nl - w->b.p);

        watch_line(w, w->b.p, len);
        memmove(w->b.p, nl + 1, w->b.n - len - 1);
        w->b.n -= len + 1;
    }
    if (w->canceled) {
        return 0; /* ends the transfer */
    }
    /* The gateway may end an object without a newline: try it whole. */
    if (w->b.n > 0 && w->b.p[w->b.n - 1] == '}') {
        json_t *j = json_loadb(w->b.p, w->b.n, 0, NULL);

        if (j) {
            json_decref(j);
            watch_line(w, w->b.p, w->b.n);
            w->b.n = 0;
        }
    }
    return n;
}

static int
watch_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct store_etcd *e = ud;
    bool stop;

    (void)a;
    (void)b;
    (void)c;
    (void)d;
    pthread_mutex_lock(&e->lock);
    stop = e->stop;
    pthread_mutex_unlock(&e->lock);
    return stop ? 1 : 0;
}

/* Ask etcd for the head once: the applier's target when no watch runs. */
static int read_head(struct store_etcd *e, int64_t *ret_etcd_rev)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "key", jb64s(e->k_head));
    r = etcd_post(e, "/v3/kv/range", body, &ans);
    json_decref(body);
    if (r == 0) {
        char *hv = kv_field(
            json_array_get(json_object_get(ans, "kvs"), 0), "value", NULL);

        note_head(e, hv ? strtoull(hv, NULL, 10) : 0);
        free(hv);
        if (ret_etcd_rev) {
            *ret_etcd_rev = (int64_t)jnum(
                json_object_get(json_object_get(ans, "header"), "revision"));
        }
    }
    json_decref(ans);
    return r;
}

static void *watcher_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->etcd;
    struct watch_ctx w = {.e = e};

    pthread_setname_np(pthread_self(), "cfs-etcd-watch");
    for (;;) {
        CURL *c;
        struct curl_slist *hdrs = NULL;
        json_t *body, *cr;
        char *text, url[512];
        int64_t rev = 0;
        bool stop;

        pthread_mutex_lock(&e->lock);
        stop = e->stop;
        e->watching = false;
        pthread_mutex_unlock(&e->lock);
        if (stop) {
            break;
        }
        /* Where the log is now, then every change after that. */
        if (read_head(e, &rev) < 0) {
            struct timespec ts = after_us(300000);

            pthread_mutex_lock(&e->lock);
            if (!e->stop) {
                pthread_cond_timedwait(&e->cond, &e->lock, &ts);
            }
            pthread_mutex_unlock(&e->lock);
            continue;
        }
        w.next_rev = rev + 1;
        w.compacted = false;
        w.canceled = false;
        body = json_object();
        cr = json_object();
        /* PREFIX/head up to PREFIX/log0: the head and every log entry,
         * with its value (nothing else sorts between them) */
        json_object_set_new(cr, "key", jb64s(e->k_head));
        json_object_set_new(cr, "range_end", jb64s(e->k_log_end));
        json_object_set_new(cr, "start_revision", json_integer(w.next_rev));
        json_object_set_new(body, "create_request", cr);
        text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        c = curl_easy_init();
        if (!text || !c) {
            free(text);
            if (c) {
                curl_easy_cleanup(c);
            }
            break;
        }
        (void)snprintf(
            url, sizeof(url), "%s/v3/watch", e->ep[atomic_load(&e->cur)]);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watch_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, e);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ETCD_CONNECT_MS);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        hdrs = auth_headers(e);
        if (hdrs) {
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        }
        set_tls(e, c);
        /* A member that lost its quorum keeps the stream open and silent:
         * stop listening to it after a while and ask again. */
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 10L);
        curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
        w.b.n = 0;
        (void)curl_easy_perform(c);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        hdrs = NULL;
        free(text);
    }
    free(w.b.p);
    return NULL;
}

/* ---- snapshots, the node registry, trimming ------------------------------ */

static void sha256_hex(const void *p, size_t len, char *hex)
{
    struct sha256_ctx ctx;
    uint8_t d[SHA256_DIGEST_SIZE];

    sha256_init(&ctx);
    sha256_update(&ctx, len, p);
    sha256_digest(&ctx, sizeof(d), d);
    for (size_t i = 0; i < sizeof(d); i++) {
        (void)snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
}

/* The value of @key (NULL when absent). @return 0 or an etcd errno. */
static int
etcd_get(struct store_etcd *e, const char *key, char **ret, size_t *ret_len)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    *ret = NULL;
    json_object_set_new(body, "key", jb64s(key));
    r = etcd_post(e, "/v3/kv/range", body, &ans);
    json_decref(body);
    if (r == 0) {
        *ret = kv_field(
            json_array_get(json_object_get(ans, "kvs"), 0), "value", ret_len);
    }
    json_decref(ans);
    return r;
}

/* Run a txn. @return 0 with *ret_ok whether its compares held. */
static int etcd_txn(struct store_etcd *e, json_t *body, bool *ret_ok)
{
    json_t *ans = NULL;
    int r = etcd_post(e, "/v3/kv/txn", body, &ans);

    *ret_ok = r == 0 && json_is_true(json_object_get(ans, "succeeded"));
    json_decref(ans);
    return r;
}

static json_t *lease_json(int64_t lease)
{
    char v[24];

    (void)snprintf(v, sizeof(v), "%" PRId64, lease);
    return json_string(v);
}

/* A compare: @key is held under this node's @lease. */
static json_t *cmp_lease(const char *key, int64_t lease)
{
    json_t *c = json_object();

    json_object_set_new(c, "key", jb64s(key));
    json_object_set_new(c, "target", json_string("LEASE"));
    json_object_set_new(c, "lease", lease_json(lease));
    json_object_set_new(c, "result", json_string("EQUAL"));
    return c;
}

static json_t *op_delete_range(const char *key, size_t klen, const char *end)
{
    json_t *d = json_object(), *o = json_object();

    json_object_set_new(d, "key", jb64(key, klen));
    json_object_set_new(d, "range_end", jb64s(end));
    json_object_set_new(o, "request_delete_range", d);
    return o;
}

static int64_t lease_of(struct store_etcd *e)
{
    int64_t l;

    pthread_mutex_lock(&e->lock);
    l = e->lease;
    pthread_mutex_unlock(&e->lock);
    return l;
}

static int lease_grant(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "TTL", json_integer(ETCD_LEASE_TTL));
    r = etcd_post(e, "/v3/lease/grant", body, &ans);
    json_decref(body);
    if (r == 0) {
        int64_t id = (int64_t)jnum(json_object_get(ans, "ID"));

        if (id == 0) {
            r = -EIO;
        } else {
            pthread_mutex_lock(&e->lock);
            e->lease = id;
            pthread_mutex_unlock(&e->lock);
        }
    }
    json_decref(ans);
    return r;
}

/* @return 0 while the lease lives; -ENOENT once it expired; etcd errnos. */
static int lease_keepalive(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t lease = lease_of(e);
    int r;

    if (lease == 0) {
        json_decref(body);
        return -ENOENT;
    }
    json_object_set_new(body, "ID", lease_json(lease));
    r = etcd_post(e, "/v3/lease/keepalive", body, &ans);
    json_decref(body);
    if (r == 0 &&
        jnum(json_object_get(json_object_get(ans, "result"), "TTL")) == 0) {
        r = -ENOENT;
    }
    json_decref(ans);
    return r;
}

static void lease_revoke(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t lease = lease_of(e);

    if (lease != 0) {
        json_object_set_new(body, "ID", lease_json(lease));
        (void)etcd_post(e, "/v3/lease/revoke", body, &ans);
        json_decref(ans);
    }
    json_decref(body);
}

/* PREFIX/nodes/NODE = @applied, under this node's lease: trimming keeps
 * the log this node still needs. */
static int node_register(struct store_etcd *e, uint64_t applied)
{
    json_t *body = json_object(), *ans = NULL;
    char key[600], val[24];
    int64_t lease = lease_of(e);
    int r;

    if (lease == 0) {
        json_decref(body);
        return -ENOENT;
    }
    (void)snprintf(key, sizeof(key), "%s%s", e->k_nodes, e->node_id);
    (void)snprintf(val, sizeof(val), "%" PRIu64, applied);
    json_object_set_new(body, "key", jb64s(key));
    json_object_set_new(body, "value", jb64s(val));
    json_object_set_new(body, "lease", lease_json(lease));
    r = etcd_post(e, "/v3/kv/put", body, &ans);
    json_decref(body);
    json_decref(ans);
    return r;
}

/* PREFIX/snapshot. @return 0 (ptr->revision 0: none), -EUCLEAN, etcd
 * errnos. */
static int read_pointer(struct store_etcd *e, struct snap_ptr *ptr)
{
    char *v = NULL;
    size_t len = 0;
    json_int_t v_ptr;
    json_t *j;
    int r = etcd_get(e, e->k_snapshot, &v, &len);

    memset(ptr, 0, sizeof(*ptr));
    if (r < 0 || !v) {
        free(v);
        return r;
    }
    j = json_loadb(v, len, 0, NULL);
    free(v);
    if (!j || !json_string_value(json_object_get(j, "id")) ||
        !json_string_value(json_object_get(j, "sha256"))) {
        json_decref(j);
        return -EUCLEAN;
    }
    ptr->revision = jnum(json_object_get(j, "revision"));
    ptr->parts = jnum(json_object_get(j, "parts"));
    ptr->length = jnum(json_object_get(j, "length"));
    ptr->size = jnum(json_object_get(j, "size"));
    v_ptr = json_integer_value(json_object_get(j, "v"));
    if (v_ptr < 1 || v_ptr > 2 || (v_ptr == 2) != (ptr->size > 0)) {
        json_decref(j);
        memset(ptr, 0, sizeof(*ptr));
        return -EUCLEAN; /* a newer configfsd's, or damaged */
    }
    (void)snprintf(ptr->id,
                   sizeof(ptr->id),
                   "%s",
                   json_string_value(json_object_get(j, "id")));
    (void)snprintf(ptr->sha256,
                   sizeof(ptr->sha256),
                   "%s",
                   json_string_value(json_object_get(j, "sha256")));
    json_decref(j);
    pthread_mutex_lock(&e->lock);
    if (ptr->revision > e->snap_rev) {
        e->snap_rev = ptr->revision;
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static int write_file(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    int r = 0;

    if (!f) {
        return -errno;
    }
    if (len > 0 && fwrite(p, 1, len, f) != len) {
        r = -EIO;
    }
    if (fclose(f) != 0 && r == 0) {
        r = -EIO;
    }
    return r;
}

static int read_file(const char *path, struct buf *b)
{
    FILE *f = fopen(path, "rb");
    char chunk[65536];
    size_t got;
    int r = 0;

    if (!f) {
        return -errno;
    }
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (buf_write(chunk, 1, got, b) != got) {
            r = -ENOMEM;
            break;
        }
    }
    if (ferror(f) && r == 0) {
        r = -EIO;
    }
    (void)fclose(f);
    return r;
}

/* The revision in the state row of the database file @path. */
static int file_revision(const char *path, uint64_t *ret)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(
            db, "SELECT revision FROM state WHERE id = 1", -1, &st, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        *ret = (uint64_t)sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_CORRUPT;
    }
    sqlite3_finalize(st);
    sqlite3_close_v2(db);
    return store_errno(rc);
}

/*
 * Start-up: the published snapshot, checked (length, SHA-256, the
 * revision in its state row), copied over the cache (the SQLite backup
 * API: the cache's connections stay open). @return 0 with *ret_revision
 * (0: no snapshot, the cache untouched); -ESTALE when its parts are gone
 * (a newer one replaced it meanwhile); -EUCLEAN when it does not check;
 * etcd and storage errnos.
 */
static int load_snapshot(struct cfs_store *s, uint64_t *ret_revision)
{
    struct store_etcd *e = s->etcd;
    struct snap_ptr ptr;
    struct buf all = {0};
    char hex[2 * SHA256_DIGEST_SIZE + 1], *file = NULL;
    uint64_t rev = 0;
    sqlite3 *src = NULL;
    int r = read_pointer(e, &ptr);

    *ret_revision = 0;
    if (r < 0 || ptr.revision == 0) {
        return r;
    }
    for (uint64_t k = 0; k < ptr.parts && r == 0; k++) {
        char key[640], *part = NULL;
        size_t pl = 0;

        (void)snprintf(
            key, sizeof(key), "%s/snap/%s/%06" PRIu64, e->prefix, ptr.id, k);
        r = etcd_get(e, key, &part, &pl);
        if (r == 0 && !part) {
            r = -ESTALE;
        } else if (r == 0 && buf_write(part, 1, pl, &all) != pl) {
            r = -ENOMEM;
        }
        free(part);
    }
    if (r == 0) {
        sha256_hex(all.p ? all.p : "", all.n, hex);
        if (all.n != ptr.length || strcmp(hex, ptr.sha256) != 0) {
            r = -EUCLEAN;
        }
    }
    if (r == 0 && ptr.size > 0) {
        struct buf raw;

        r = inflate_bytes(all.p ? all.p : "", all.n, ptr.size, &raw);
        if (r == 0) {
            free(all.p);
            all = raw;
        }
    }
    if (r == 0 && asprintf(&file, "%s/snapshot-in.db", s->cache_dir) < 0) {
        file = NULL;
        r = -ENOMEM;
    }
    if (r == 0) {
        r = write_file(file, all.p, all.n);
    }
    free(all.p);
    if (r == 0) {
        r = file_revision(file, &rev);
        if (r == 0 && rev != ptr.revision) {
            r = -EUCLEAN;
        }
    }
    if (r == 0) {
        r = store_errno(
            sqlite3_open_v2(file, &src, SQLITE_OPEN_READONLY, NULL));
    }
    if (r == 0) {
        sqlite3_backup *b;

        pthread_mutex_lock(&s->w_lock);
        b = sqlite3_backup_init(s->wdb, "main", src, "main");
        if (!b) {
            r = store_errno(sqlite3_errcode(s->wdb));
        } else {
            int rc = sqlite3_backup_step(b, -1);

            r = store_errno(rc == SQLITE_DONE ? SQLITE_OK : rc);
            rc = sqlite3_backup_finish(b);
            if (r == 0) {
                r = store_errno(rc);
            }
        }
        store_idcache_clear(&s->idcache);
        if (r == 0) { /* a snapshot of an older schema is brought forward */
            r = store_migrate(s->wdb, store_migrations, store_n_migrations);
        }
        if (r == 0) {
            r = store_read_state(s);
        }
        pthread_mutex_unlock(&s->w_lock);
    }
    sqlite3_close_v2(src);
    if (file) {
        (void)unlink(file);
        free(file);
    }
    if (r == 0) {
        *ret_revision = rev;
        atomic_fetch_add(&e->n_snap_loaded, 1);
    }
    return r;
}

/* The lowest applied revision of a live node, or @bound if lower. */
static int lowest_live(struct store_etcd *e, uint64_t bound, uint64_t *ret)
{
    json_t *body = json_object(), *ans = NULL, *kvs;
    char *end = strdup(e->k_nodes);
    int r = -ENOMEM;

    *ret = bound;
    if (end) {
        end[strlen(end) - 1]++;
        json_object_set_new(body, "key", jb64s(e->k_nodes));
        json_object_set_new(body, "range_end", jb64s(end));
        r = etcd_post(e, "/v3/kv/range", body, &ans);
    }
    kvs = json_object_get(ans, "kvs");
    for (size_t i = 0; r == 0 && i < json_array_size(kvs); i++) {
        char *v = kv_field(json_array_get(kvs, i), "value", NULL);
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
    char *log_end = log_key(e, upto + 1), *parts_end = chunk_key(e, upto + 1);
    char *parts = chunk_key(e, 0); /* no revision 0: before every part */
    int64_t n = -ENOMEM;

    if (log_end && parts_end && parts) {
        n = delete_range(e, e->k_log, log_end);
    }
    if (n > 0) {
        atomic_fetch_add(&e->n_trimmed, (uint64_t)n);
        (void)delete_range(e, parts, parts_end);
    }
    free(log_end);
    free(parts);
    free(parts_end);
}

/*
 * Write a snapshot of the cache and publish it, holding the snapshot lock
 * under this node's @lease: VACUUM INTO a file (a consistent copy of what
 * is durable in the cache, read beside the writers), its parts under a
 * fresh id, then one txn that puts PREFIX/snapshot only if the lock is
 * still this node's. Then older parts go (maybe_trim() trims the log).
 */
static int write_snapshot(struct cfs_store *s, int64_t lease, uint64_t known)
{
    struct store_etcd *e = s->etcd;
    char *file = NULL, id[17], hex[2 * SHA256_DIGEST_SIZE + 1];
    char pfx[600], after[600], mine[600];
    struct buf all = {0};
    uint64_t rev = 0, parts = 0;
    size_t size, zlen = 0;
    char *z;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    json_t *ptr = NULL, *body;
    char *ptext = NULL;
    bool ok = false;
    int r;

    if (asprintf(&file, "%s/snapshot-out.db", s->cache_dir) < 0) {
        return -ENOMEM;
    }
    (void)unlink(file);
    r = store_errno(sqlite3_open_v2(s->path, &db, SQLITE_OPEN_READWRITE, NULL));
    if (r == 0) {
        sqlite3_busy_timeout(db, (int)s->busy_timeout_ms);
        r = store_errno(sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &st, NULL));
    }
    if (r == 0) {
        sqlite3_bind_text(st, 1, file, -1, SQLITE_STATIC);
        r = store_step_done(st);
    }
    sqlite3_finalize(st);
    sqlite3_close_v2(db);
    if (r == 0) {
        r = file_revision(file, &rev);
    }
    if (r == 0 && rev <= known) {
        r = -EALREADY; /* nothing new since the published one */
    }
    if (r == 0) {
        r = read_file(file, &all);
    }
    (void)unlink(file);
    free(file);
    if (r < 0) {
        free(all.p);
        return r;
    }
    size = all.n;
    z = deflate_bytes(all.p ? all.p : "", all.n, &zlen);
    free(all.p);
    if (!z) {
        return -ENOMEM;
    }
    all.p = z;
    all.n = zlen;
    sha256_hex(all.p, all.n, hex);
    random_hex(id, 8);
    (void)snprintf(mine, sizeof(mine), "%s/snap/%s/", e->prefix, id);
    for (size_t off = 0; r == 0 && (off < all.n || parts == 0);
         off += ETCD_SNAP_PART, parts++) {
        char key[640];
        size_t part =
            all.n - off < ETCD_SNAP_PART ? all.n - off : ETCD_SNAP_PART;

        (void)snprintf(key, sizeof(key), "%s%06" PRIu64, mine, parts);
        r = put_plain(e, key, all.p ? all.p + off : "", part);
        (void)lease_keepalive(e); /* a long upload keeps the lock */
        pthread_mutex_lock(&e->lock);
        if (e->stop && r == 0) {
            r = -ECANCELED; /* closing: the next writer deletes the parts */
        }
        pthread_mutex_unlock(&e->lock);
    }
    free(all.p);
    if (r == -ECANCELED) {
        return r;
    }
    if (r < 0) {
        delete_prefix(e, mine);
        return r;
    }
    ptr = json_object();
    json_object_set_new(ptr, "v", json_integer(2));
    json_object_set_new(ptr, "revision", json_integer((json_int_t)rev));
    json_object_set_new(ptr, "id", json_string(id));
    json_object_set_new(ptr, "parts", json_integer((json_int_t)parts));
    json_object_set_new(ptr, "length", json_integer((json_int_t)zlen));
    json_object_set_new(ptr, "size", json_integer((json_int_t)size));
    json_object_set_new(ptr, "sha256", json_string(hex));
    ptext = json_dumps(ptr, JSON_COMPACT);
    json_decref(ptr);
    if (!ptext) {
        delete_prefix(e, mine);
        return -ENOMEM;
    }
    body = json_object();
    json_object_set_new(
        body, "compare", json_pack("[o]", cmp_lease(e->k_snap_lock, lease)));
    json_object_set_new(
        body,
        "success",
        json_pack("[o]", op_put(e->k_snapshot, ptext, strlen(ptext))));
    r = etcd_txn(e, body, &ok);
    json_decref(body);
    free(ptext);
    if (r == 0 && !ok) {
        delete_prefix(e, mine); /* the lock was lost: never published */
        return -EBUSY;
    }
    if (r < 0) {
        /* No answer: etcd may have published it. Its parts stay (if it
         * was not, the next snapshot's writer deletes them with every
         * other part); deleted, they could leave the pointer naming
         * nothing, and no node could start from it. */
        return r;
    }
    atomic_fetch_add(&e->n_snap_written, 1);
    pthread_mutex_lock(&e->lock);
    if (rev > e->snap_rev) {
        e->snap_rev = rev;
    }
    pthread_mutex_unlock(&e->lock);
    /* Every other part (older snapshots, uploads that lost their lock),
     * while the lock is still this node's: nobody is writing one now. */
    (void)snprintf(pfx, sizeof(pfx), "%s/snap/", e->prefix);
    (void)snprintf(after, sizeof(after), "%s/snap/%s0", e->prefix, id);
    body = json_object();
    json_object_set_new(
        body, "compare", json_pack("[o]", cmp_lease(e->k_snap_lock, lease)));
    {
        char end[600];
        json_t *ops = json_array();

        (void)snprintf(end, sizeof(end), "%s/snap0", e->prefix);
        json_array_append_new(ops, op_delete_range(pfx, strlen(pfx), mine));
        json_array_append_new(ops, op_delete_range(after, strlen(after), end));
        json_object_set_new(body, "success", ops);
    }
    (void)etcd_txn(e, body, &ok);
    json_decref(body);
    return 0;
}

/* Put @key = @val under @lease (not 0) if @key does not exist. @return 0
 * with *ret_ok whether @key is this node's now: put, or found held under
 * @lease already. That is a put whose answer was lost: etcd made it, and
 * the request sent again (to the next member, or by libcurl on a kept
 * connection), or the next round's, finds the key there. Taken for a
 * refusal, a lock would stay held, under a lease that lives as long as
 * the node, by a node that does not know it holds it. */
static int put_if_absent(struct store_etcd *e,
                         const char *key,
                         const char *val,
                         int64_t lease,
                         bool *ret_ok)
{
    json_t *body = json_object(), *ans = NULL;
    json_t *put = op_put(key, val, strlen(val));
    json_t *held = json_object();
    int r;

    json_object_set_new(
        body, "compare", json_pack("[o]", cmp_value(key, NULL)));
    json_object_set_new(
        json_object_get(put, "request_put"), "lease", lease_json(lease));
    json_object_set_new(body, "success", json_pack("[o]", put));
    json_object_set_new(held, "key", jb64s(key));
    json_object_set_new(
        body, "failure", json_pack("[{so}]", "request_range", held));
    r = etcd_post(e, "/v3/kv/txn", body, &ans);
    *ret_ok = r == 0 && (json_is_true(json_object_get(ans, "succeeded")) ||
                         jnum(json_object_get(range_kv(ans, 0), "lease")) ==
                             (uint64_t)lease);
    json_decref(ans);
    json_decref(body);
    return r;
}

/*
 * Whether the log after the snapshot @ptr, up to @applied, holds at least
 * snapshot_growth percent of the snapshot's size, as this node's average
 * bytes per revision of the log estimate it. The snapshot carries the
 * journal, so it grows with every revision: by revisions alone, writing
 * snapshots would cost more and more per change. This way they cost at
 * most 100/snapshot_growth bytes per byte of log, and the log kept stays
 * within that share of the snapshot.
 */
static bool
log_grown(struct store_etcd *e, uint64_t applied, const struct snap_ptr *ptr)
{
    uint64_t bytes = atomic_load(&e->log_bytes);
    uint64_t revs = atomic_load(&e->log_revs);
    double since;

    if (e->snapshot_growth == 0 || ptr->length == 0) {
        return true; /* by revisions alone, or the first snapshot */
    }
    if (revs == 0) {
        return false;
    }
    since = (double)(applied - ptr->revision) * (double)bytes / (double)revs;
    return since * 100.0 >= (double)ptr->length * (double)e->snapshot_growth;
}

/* A snapshot when this node is snapshot_every revisions past the last one
 * and the log has grown enough since (log_grown()), if it gets the lock
 * (else another node is writing it). */
static void maybe_snapshot(struct cfs_store *s)
{
    struct store_etcd *e = s->etcd;
    struct snap_ptr ptr;
    uint64_t applied, known;
    int64_t lease = lease_of(e);
    json_t *body;
    bool ok = false;

    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    known = e->snap_rev;
    pthread_mutex_unlock(&e->lock);
    if (e->snapshot_every == 0 || lease == 0 ||
        applied < known + e->snapshot_every || read_pointer(e, &ptr) < 0 ||
        applied < ptr.revision + e->snapshot_every ||
        !log_grown(e, applied, &ptr)) {
        return;
    }
    (void)put_if_absent(e, e->k_snap_lock, e->node_id, lease, &ok);
    if (!ok) {
        return; /* another node writes it */
    }
    /* Under the lock: the pointer now is the last one published. */
    if (read_pointer(e, &ptr) == 0 &&
        applied >= ptr.revision + e->snapshot_every &&
        log_grown(e, applied, &ptr)) {
        (void)write_snapshot(s, lease, ptr.revision);
    }
    /* Release the lock, if it is still this node's. */
    body = json_object();
    json_object_set_new(
        body, "compare", json_pack("[o]", cmp_lease(e->k_snap_lock, lease)));
    {
        json_t *d = json_object(), *o = json_object();

        json_object_set_new(d, "key", jb64s(e->k_snap_lock));
        json_object_set_new(o, "request_delete_range", d);
        json_object_set_new(body, "success", json_pack("[o]", o));
    }
    (void)etcd_txn(e, body, &ok);
    json_decref(body);
}

/*
 * Trim the log below the snapshot this node knows (it wrote or loaded
 * it), as far as every live node has applied: right after the snapshot,
 * and again on later seconds, as the registry says each node's applied
 * revision once a second only and a node may have been listed below the
 * snapshot when it was published. *trimmed: how far it did.
 */
static void maybe_trim(struct store_etcd *e, uint64_t *trimmed)
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

/*
 * The writer: the node that appends for the others. PREFIX/writer holds
 * "NODE URL" under the writer's lease; the first node that finds it
 * missing (and has a URL to give) takes it. Other nodes forward their
 * writes to that URL (the server's forward.c), so that appends do not
 * race. It is an optimisation, never a condition of correctness: every
 * append is still a CAS on the head, whichever node makes it.
 */
static void elect_writer(struct store_etcd *e, int64_t lease)
{
    char *cur = NULL, *mine = NULL, *url, adv[404];
    size_t len = 0;
    bool ok = false, forwarding;

    pthread_mutex_lock(&e->lock);
    (void)snprintf(adv, sizeof(adv), "%s", e->advertise ? e->advertise : "");
    forwarding = e->forwarding;
    pthread_mutex_unlock(&e->lock);
    if (!forwarding || etcd_get(e, e->k_writer, &cur, &len) < 0) {
        return; /* keep what is known */
    }
    if (!cur && adv[0] && lease != 0 &&
        asprintf(&mine, "%s %s", e->node_id, adv) >= 0 &&
        put_if_absent(e, e->k_writer, mine, lease, &ok) == 0 && ok) {
        cur = mine;
        mine = NULL;
    }
    free(mine);
    url = cur ? strchr(cur, ' ') : NULL;
    pthread_mutex_lock(&e->lock);
    (void)snprintf(e->writer, sizeof(e->writer), "%s", url ? url + 1 : "");
    /* the same URL is this node too: a restarted process, a new id */
    e->writer_self =
        url && (strncmp(cur, e->node_id, (size_t)(url - cur)) == 0 ||
                (adv[0] && strcmp(url + 1, adv) == 0));
    pthread_mutex_unlock(&e->lock);
    free(cur);
}

/* Keeps the lease (and so the registry entry and the lock) alive, says
 * how far this node applied, and writes snapshots. */
static void *keeper_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->etcd;
    uint64_t reported = UINT64_MAX, trimmed = 0;

    pthread_setname_np(pthread_self(), "cfs-etcd-keep");
    for (;;) {
        struct timespec ts;
        uint64_t applied;
        bool stop, behind;
        int r;

        /* Once a second, not on every change: e->cond is broadcast on
         * every commit and every applied batch, and a keep-alive and a
         * registry put each time were most of etcd's load under writes
         * (a Raft proposal per commit per node). */
        ts = after_us(1000000);
        pthread_mutex_lock(&e->lock);
        while (!e->stop && !e->kick &&
               pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT) {
        }
        e->kick = false;
        stop = e->stop;
        applied = e->applied;
        behind = e->fell_behind;
        pthread_mutex_unlock(&e->lock);
        if (stop) {
            break;
        }
        r = lease_keepalive(e);
        if (r == -ENOENT && lease_grant(e) == 0) {
            reported = UINT64_MAX; /* the entry went with the old lease */
        }
        if (behind) {
            continue; /* it needs what was trimmed: not a live reader */
        }
        if (applied != reported && node_register(e, applied) == 0) {
            reported = applied;
        }
        elect_writer(e, lease_of(e));
        maybe_snapshot(s);
        maybe_trim(e, &trimmed);
    }
    return NULL;
}

/* ---- open, close, the commit hook --------------------------------------- */

/* "etcd://h:p[,h:p...][/prefix]" */
static int parse_url(struct store_etcd *e, const char *url)
{
    const char *p, *slash;
    char *hosts;

    const char *scheme = "http";

    if (strncmp(url, "etcds://", 8) == 0) {
        scheme = "https";
        p = url + 8;
    } else if (strncmp(url, "etcd://", 7) == 0) {
        p = url + 7;
    } else {
        return -EINVAL;
    }
    slash = strchr(p, '/');
    hosts = slash ? strndup(p, (size_t)(slash - p)) : strdup(p);
    if (!hosts) {
        return -ENOMEM;
    }
    for (char *save = NULL, *h = strtok_r(hosts, ",", &save); h;
         h = strtok_r(NULL, ",", &save)) {
        if (e->n_ep == ETCD_MAX_EP || !h[0]) {
            free(hosts);
            return -EINVAL;
        }
        if (asprintf(&e->ep[e->n_ep], "%s://%s", scheme, h) < 0) {
            free(hosts);
            return -ENOMEM;
        }
        e->n_ep++;
    }
    free(hosts);
    if (e->n_ep == 0) {
        return -EINVAL;
    }
    if (slash && slash[1]) {
        size_t n = strlen(slash);

        while (n > 1 && slash[n - 1] == '/') {
            n--;
        }
        e->prefix = strndup(slash, n);
    } else {
        e->prefix = strdup("/configfsd");
    }
    if (!e->prefix || asprintf(&e->k_head, "%s/head", e->prefix) < 0 ||
        asprintf(&e->k_log, "%s/log/", e->prefix) < 0 ||
        asprintf(&e->k_log_end, "%s/log0", e->prefix) < 0 ||
        asprintf(&e->k_snapshot, "%s/snapshot", e->prefix) < 0 ||
        asprintf(&e->k_snap_lock, "%s/snapshot-lock", e->prefix) < 0 ||
        asprintf(&e->k_nodes, "%s/nodes/", e->prefix) < 0 ||
        asprintf(&e->k_writer, "%s/writer", e->prefix) < 0) {
        return -ENOMEM;
    }
    return 0;
}

int store_etcd_open(struct cfs_store *s, const struct cfs_store_options *opts)
{
    const char *url = opts->etcd;
    struct store_etcd *e;
    int r;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    e = calloc(1, sizeof(*e));
    if (!e) {
        return -ENOMEM;
    }
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    s->etcd = e;
    r = parse_url(e, url);
    if (r < 0) {
        return r;
    }
    if ((opts->etcd_cacert && !(e->cacert = strdup(opts->etcd_cacert))) ||
        (opts->etcd_cert && !(e->cert = strdup(opts->etcd_cert))) ||
        (opts->etcd_key && !(e->key = strdup(opts->etcd_key))) ||
        (opts->etcd_user && !(e->user = strdup(opts->etcd_user))) ||
        (opts->etcd_user &&
         !(e->password =
               strdup(opts->etcd_password ? opts->etcd_password : "")))) {
        return -ENOMEM;
    }
    if (e->user) {
        r = etcd_authenticate(e);
        if (r < 0) {
            return r;
        }
    }
    e->snapshot_every = opts->snapshot_every;
    e->snapshot_growth = opts->snapshot_growth;
    random_hex(e->node_id, 8);
    r = lease_grant(e);
    if (r < 0) {
        return r;
    }
    /* The published snapshot (if any) into the (fresh) cache, then the
     * log after it. A newer snapshot may replace it meanwhile and the log
     * below that be trimmed: then again, from the newer one. */
    for (int attempt = 0;; attempt++) {
        uint64_t snap = 0, head;

        r = load_snapshot(s, &snap);
        if (r == 0 && snap == 0 && attempt > 0) {
            r = -ESTALE; /* the cache holds a part of the log: start over */
        }
        if (r == 0) {
            pthread_mutex_lock(&e->lock);
            if (snap > 0) {
                e->applied = snap;
            }
            pthread_mutex_unlock(&e->lock);
            r = node_register(e, snap); /* trimming keeps what follows */
        }
        if (r == 0) {
            r = read_head(e, NULL);
        }
        if (r == 0) {
            pthread_mutex_lock(&e->lock);
            head = e->log_head;
            pthread_mutex_unlock(&e->lock);
            r = read_log(s, snap + 1, head, load_batch, NULL);
        }
        if (r != -ESTALE || attempt + 1 >= ETCD_START_TRIES) {
            break;
        }
    }
    if (r < 0) {
        return r;
    }
    pthread_mutex_lock(&e->lock);
    e->log_head = e->applied;
    e->loaded = true;
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static void *waiter_main(void *arg);

/* Every thread of the store ends (each sees e->stop). */
static void stop_threads(struct store_etcd *e)
{
    pthread_mutex_lock(&e->lock);
    e->stop = true;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

int store_etcd_start(struct cfs_store *s)
{
    struct store_etcd *e = s->etcd;
    struct {
        pthread_t *thread;
        void *(*main)(void *);
    } th[] = {
        {&e->applier, applier_main},
        {&e->watcher, watcher_main},
        {&e->keeper, keeper_main},
        {&e->waiter, waiter_main},
    };
    size_t n = 0;
    int r = 0;

    for (; n < sizeof(th) / sizeof(th[0]); n++) {
        r = -pthread_create(th[n].thread, NULL, th[n].main, s);
        if (r < 0) {
            break;
        }
    }
    if (r < 0) {
        stop_threads(e);
        while (n > 0) {
            pthread_join(*th[--n].thread, NULL);
        }
        return r;
    }
    e->threads = true;
    return 0;
}

void store_etcd_stop(struct cfs_store *s)
{
    struct store_etcd *e = s->etcd;

    if (!e || !e->threads) {
        return;
    }
    stop_threads(e);
    pthread_join(e->waiter, NULL);
    pthread_join(e->keeper, NULL);
    pthread_join(e->watcher, NULL);
    pthread_join(e->applier, NULL);
    e->threads = false;
}

void store_etcd_close(struct cfs_store *s)
{
    struct store_etcd *e = s->etcd;
    bool reachable;

    if (!e) {
        return;
    }
    store_etcd_stop(s);
    pthread_mutex_lock(&e->lock);
    reachable = e->error[0] == '\0';
    pthread_mutex_unlock(&e->lock);
    if (reachable) {
        lease_revoke(e); /* gone from the registry at once, not in 5 s */
    }
    for (size_t i = 0; i < e->n_ep; i++) {
        free(e->ep[i]);
    }
    for (size_t i = 0; i < e->n_pool; i++) {
        curl_easy_cleanup(e->pool[i]);
    }
    free(e->prefix);
    free(e->cacert);
    free(e->cert);
    free(e->key);
    free(e->user);
    if (e->password) {
        explicit_bzero(e->password, strlen(e->password));
        free(e->password);
    }
    free(e->auth_header);
    while (e->seen_head) {
        seen_pop(e);
    }
    free(e->k_head);
    free(e->k_log);
    free(e->k_log_end);
    free(e->k_snapshot);
    free(e->k_snap_lock);
    free(e->k_nodes);
    free(e->k_writer);
    free(e->advertise);
    pthread_cond_destroy(&e->cond);
    pthread_mutex_destroy(&e->lock);
    free(e);
    s->etcd = NULL;
    curl_global_cleanup();
}

int store_etcd_commit(struct cfs_store *s,
                      const struct cfs_store_changeset *sets,
                      size_t n)
{
    struct store_etcd *e = s->etcd;
    /* the journal's time on every node */
    int64_t time_us = cfs_store_wall_us();
    int r;

    if (n == 0) {
        return 0;
    }
    pthread_mutex_lock(&e->lock);
    e->appending = true;
    e->append_first = set_rev(&sets[0]);
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
    e->applied = set_rev(&sets[n - 1]);
    if (e->applied > e->log_head) {
        e->log_head = e->applied;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec ||
           (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int cfs_store_catch_up_async(struct cfs_store *s,
                             uint64_t revision,
                             unsigned delay_us,
                             unsigned timeout_ms,
                             cfs_store_caught_up_fn done,
                             void *ctx)
{
    struct store_etcd *e = s ? s->etcd : NULL;
    struct catch_up *w;

    if (!e) {
        return revision <= cfs_revision() ? 1 : -ETIMEDOUT;
    }
    pthread_mutex_lock(&e->lock);
    if (delay_us == 0 && e->applied >= revision && e->applied >= e->log_head &&
        !e->applying) {
        pthread_mutex_unlock(&e->lock);
        return 1;
    }
    pthread_mutex_unlock(&e->lock);
    w = calloc(1, sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    w->not_before = after_us(delay_us);
    w->deadline = after_us((uint64_t)timeout_ms * 1000);
    w->done = done;
    w->ctx = ctx;
    pthread_mutex_lock(&e->lock);
    if (e->stop) {
        pthread_mutex_unlock(&e->lock);
        free(w);
        return -ECANCELED;
    }
    w->target = e->log_head > revision ? e->log_head : revision;
    w->next = e->catch_ups;
    e->catch_ups = w;
    e->n_catch_ups++;
    if ((e->applied >= w->target && !e->applying) ||
        ts_before(&w->deadline, &e->waiter_wake)) {
        /* due before the waiter looks again. Otherwise (the common
         * case: a revision not applied yet) the apply that brings it
         * wakes the waiter, with every other waiter of e->cond. */
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

/*
 * The waiter thread: calls back the cfs_store_catch_up_async() whose
 * revision is applied (or whose time is up), woken with every other
 * waiter of e->cond (an applied batch, a new head, a new wait).
 */
static void *waiter_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->etcd;

    pthread_setname_np(pthread_self(), "cfs-etcd-wait");
    pthread_mutex_lock(&e->lock);
    for (;;) {
        struct catch_up *due = NULL, **pp = &e->catch_ups;
        struct timespec now, next = after_us(1000000);

        clock_gettime(CLOCK_REALTIME, &now);
        while (*pp) {
            struct catch_up *w = *pp;
            bool caught = e->applied >= w->target && !e->applying;
            bool early = ts_before(&now, &w->not_before);

            if (e->stop || !ts_before(&now, &w->deadline) ||
                (caught && !early)) {
                w->err = caught ? 0 : e->stop ? -ECANCELED : -ETIMEDOUT;
                *pp = w->next;
                w->next = due;
                due = w;
                continue;
            }
            if (ts_before(&w->deadline, &next)) {
                next = w->deadline;
            }
            if (caught && ts_before(&w->not_before, &next)) {
                next = w->not_before;
            }
            pp = &w->next;
        }
        if (due) {
            uint64_t called = 0;

            pthread_mutex_unlock(&e->lock);
            for (; due; called++) {
                struct catch_up *w = due;

                due = w->next;
                w->done(w->ctx, w->err);
                free(w);
            }
            pthread_mutex_lock(&e->lock);
            e->n_catch_ups -= called; /* counted until called back */
            continue;
        }
        if (e->stop) {
            break;
        }
        e->waiter_wake = next;
        pthread_cond_timedwait(&e->cond, &e->lock, &next);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

int cfs_store_cluster(struct cfs_store *s, struct cfs_store_cluster_info *ret)
{
    struct store_etcd *e = s ? s->etcd : NULL;

    if (!ret) {
        return -EINVAL;
    }
    memset(ret, 0, sizeof(*ret));
    if (!e) {
        return -ENOTSUP;
    }
    pthread_mutex_lock(&e->lock);
    ret->applied = e->applied;
    ret->head = e->log_head;
    ret->watching = e->watching;
    ret->catch_up_waiting = e->n_catch_ups;
    ret->snapshot_revision = e->snap_rev;
    ret->fell_behind = e->fell_behind;
    (void)snprintf(ret->error, sizeof(ret->error), "%s", e->error);
    (void)snprintf(ret->writer, sizeof(ret->writer), "%s", e->writer);
    ret->writer_self = e->writer_self;
    pthread_mutex_unlock(&e->lock);
    ret->snapshots_loaded = atomic_load(&e->n_snap_loaded);
    ret->snapshots_written = atomic_load(&e->n_snap_written);
    ret->trimmed = atomic_load(&e->n_trimmed);
    ret->requests = atomic_load(&e->n_requests);
    ret->failures = atomic_load(&e->n_failures);
    ret->rtt_us = atomic_load(&e->rtt_us);
    ret->conflicts = atomic_load(&e->n_conflicts);
    ret->remote = atomic_load(&e->n_remote);
    ret->replay_errors = atomic_load(&e->n_replay_errors);
    ret->endpoints = e->n_ep;
    return 0;
}

bool cfs_store_stale(struct cfs_store *s)
{
    struct store_etcd *e = s ? s->etcd : NULL;
    bool stale;

    if (!e) {
        return false;
    }
    pthread_mutex_lock(&e->lock);
    stale = e->error[0] || !e->watching || e->fell_behind;
    pthread_mutex_unlock(&e->lock);
    return stale;
}

int cfs_store_cluster_subsystems(struct cfs_store *s,
                                 const char *set,
                                 char **ret_cluster_set)
{
    struct store_etcd *e = s ? s->etcd : NULL;
    json_t *body, *ans = NULL, *fail;
    char *key = NULL;
    int r;

    *ret_cluster_set = NULL;
    if (!e) {
        return -ENOTSUP;
    }
    if (asprintf(&key, "%s/subsystems", e->prefix) < 0) {
        return -ENOMEM;
    }
    /* The first node records the set; the others compare with it. */
    body = json_object();
    json_object_set_new(
        body, "compare", json_pack("[o]", cmp_value(key, NULL)));
    json_object_set_new(
        body, "success", json_pack("[o]", op_put(key, set, strlen(set))));
    fail = json_object();
    json_object_set_new(fail, "key", jb64s(key));
    json_object_set_new(
        body, "failure", json_pack("[{so}]", "request_range", fail));
    r = etcd_post(e, "/v3/kv/txn", body, &ans);
    json_decref(body);
    free(key);
    if (r == 0 && !json_is_true(json_object_get(ans, "succeeded"))) {
        json_t *resp = json_array_get(json_object_get(ans, "responses"), 0);
        json_t *kvs =
            json_object_get(json_object_get(resp, "response_range"), "kvs");
        char *v = kv_field(json_array_get(kvs, 0), "value", NULL);

        if (!v) {
            r = -EIO;
        } else if (strcmp(v, set) != 0) {
            *ret_cluster_set = v;
            v = NULL;
            r = -EEXIST;
        }
        free(v);
    }
    json_decref(ans);
    return r;
}

int cfs_store_writer(struct cfs_store *s, char *url, size_t size)
{
    struct store_etcd *e = s ? s->etcd : NULL;
    int r = 0;

    if (!e) {
        return 0;
    }
    pthread_mutex_lock(&e->lock);
    if (e->writer[0] && !e->writer_self && !e->fell_behind &&
        strlen(e->writer) < size) {
        memcpy(url, e->writer, strlen(e->writer) + 1);
        r = 1;
    }
    pthread_mutex_unlock(&e->lock);
    return r;
}

int cfs_store_advertise(struct cfs_store *s, const char *url)
{
    struct store_etcd *e = s ? s->etcd : NULL;
    char *copy;

    if (!e) {
        return -ENOTSUP;
    }
    if (url && (strlen(url) > 400 || strchr(url, ' '))) {
        return -EINVAL;
    }
    copy = url ? strdup(url) : NULL;
    if (url && !copy) {
        return -ENOMEM;
    }
    pthread_mutex_lock(&e->lock);
    free(e->advertise);
    e->advertise = copy;
    e->forwarding = true;
    e->kick = true; /* stand as the writer now if there is none */
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return 0;
}
