// SPDX-License-Identifier: MIT
/*
 * snapshot.c - snapshots of the cache: written (VACUUM INTO, deflated, in
 * parts, published by one txn under the snapshot lock) every
 * snapshot_every revisions once the log has grown enough; read and checked
 * (length, SHA-256, revision) by a starting node.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <nettle/sha2.h>

#include "etcd.h"

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

/* PREFIX/snapshot. @return 0 (ptr->revision 0: none), -EUCLEAN, etcd
 * errnos. */
int etcd_read_pointer(struct store_etcd *e, struct snap_ptr *ptr)
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
    ptr->revision = etcd_jnum(json_object_get(j, "revision"));
    ptr->parts = etcd_jnum(json_object_get(j, "parts"));
    ptr->length = etcd_jnum(json_object_get(j, "length"));
    ptr->size = etcd_jnum(json_object_get(j, "size"));
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

static int read_file(const char *path, struct store_buf *b)
{
    FILE *f = fopen(path, "rb");
    char chunk[65536];
    size_t got;
    int r = 0;

    if (!f) {
        return -errno;
    }
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (store_buf_add(b, chunk, got) < 0) {
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
int etcd_load_snapshot(struct cfs_store *s, uint64_t *ret_revision)
{
    struct store_etcd *e = s->backend;
    struct snap_ptr ptr;
    struct store_buf all = {0};
    char hex[2 * SHA256_DIGEST_SIZE + 1], *file = NULL;
    uint64_t rev = 0;
    sqlite3 *src = NULL;
    int r = etcd_read_pointer(e, &ptr);

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
        } else if (r == 0 && store_buf_add(&all, part, pl) < 0) {
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
        struct store_buf raw;

        r = etcd_inflate_bytes(all.p ? all.p : "", all.n, ptr.size, &raw);
        if (r == 0) {
            cfs_free(all.p);
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
    cfs_free(all.p);
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

/* The cache copied with VACUUM INTO (a consistent copy of what is durable
 * in it, read beside the writers) into *@ret, with its revision. @return
 * 0, -EALREADY when it is not past @known, storage errnos. */
static int copy_cache(struct cfs_store *s,
                      uint64_t known,
                      uint64_t *ret_rev,
                      struct store_buf *ret)
{
    char *file = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
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
        r = file_revision(file, ret_rev);
    }
    if (r == 0 && *ret_rev <= known) {
        r = -EALREADY; /* nothing new since the published one */
    }
    if (r == 0) {
        r = read_file(file, ret);
    }
    (void)unlink(file);
    free(file);
    return r;
}

/* @z (@zlen bytes) in parts under @mine, keeping the lease alive. @return
 * 0 with *ret_parts, -ECANCELED when the store is closing, etcd errnos. */
static int upload(struct store_etcd *e,
                  const char *mine,
                  const char *z,
                  size_t zlen,
                  uint64_t *ret_parts)
{
    uint64_t parts = 0;
    int r = 0;

    for (size_t off = 0; r == 0 && (off < zlen || parts == 0);
         off += ETCD_SNAP_PART, parts++) {
        char key[640];
        size_t part = zlen - off < ETCD_SNAP_PART ? zlen - off : ETCD_SNAP_PART;

        (void)snprintf(key, sizeof(key), "%s%06" PRIu64, mine, parts);
        r = etcd_put_plain(e, key, z + off, part);
        (void)etcd_lease_keepalive(e); /* a long upload keeps the lock */
        pthread_mutex_lock(&e->lock);
        if (e->stop && r == 0) {
            r = -ECANCELED; /* closing: the next writer deletes the parts */
        }
        pthread_mutex_unlock(&e->lock);
    }
    *ret_parts = parts;
    return r;
}

/* Every part but @mine's (older snapshots, uploads that lost their lock),
 * while the lock is still this node's: nobody is writing one now. */
static void delete_other_parts(struct store_etcd *e,
                               int64_t lease,
                               const char *id,
                               const char *mine)
{
    char pfx[600], after[600], end[600];
    json_t *body = json_object(), *ops = json_array();
    bool ok = false;

    (void)snprintf(pfx, sizeof(pfx), "%s/snap/", e->prefix);
    (void)snprintf(after, sizeof(after), "%s/snap/%s0", e->prefix, id);
    (void)snprintf(end, sizeof(end), "%s/snap0", e->prefix);
    json_object_set_new(
        body,
        "compare",
        json_pack("[o]", etcd_cmp_lease(e->k_snap_lock, lease)));
    json_array_append_new(ops, etcd_op_delete_range(pfx, strlen(pfx), mine));
    json_array_append_new(ops, etcd_op_delete_range(after, strlen(after), end));
    json_object_set_new(body, "success", ops);
    (void)etcd_txn(e, body, &ok);
    json_decref(body);
}

/* Put PREFIX/snapshot = @ptext if the snapshot lock is still under @lease.
 * @return 0, -EBUSY (the lock was lost), etcd errnos (no answer: it may
 * have been published). */
static int publish(struct store_etcd *e, int64_t lease, const char *ptext)
{
    json_t *body = json_object();
    bool ok = false;
    int r;

    json_object_set_new(
        body,
        "compare",
        json_pack("[o]", etcd_cmp_lease(e->k_snap_lock, lease)));
    json_object_set_new(
        body,
        "success",
        json_pack("[o]", etcd_op_put(e->k_snapshot, ptext, strlen(ptext))));
    r = etcd_txn(e, body, &ok);
    json_decref(body);
    return r == 0 && !ok ? -EBUSY : r;
}

/*
 * Write a snapshot of the cache and publish it, holding the snapshot lock
 * under this node's @lease: VACUUM INTO a file, deflated, its parts under a
 * fresh id, then one txn that puts PREFIX/snapshot only if the lock is
 * still this node's. Then older parts go (etcd_maybe_trim() trims the log).
 */
static int write_snapshot(struct cfs_store *s, int64_t lease, uint64_t known)
{
    struct store_etcd *e = s->backend;
    char id[17], hex[2 * SHA256_DIGEST_SIZE + 1], mine[600];
    struct store_buf all = {0};
    uint64_t rev = 0, parts = 0;
    size_t size, zlen = 0;
    json_t *ptr;
    char *z, *ptext;
    int r = copy_cache(s, known, &rev, &all);

    if (r < 0) {
        cfs_free(all.p);
        return r;
    }
    size = all.n;
    z = etcd_deflate_bytes(all.p ? all.p : "", all.n, &zlen);
    cfs_free(all.p);
    if (!z) {
        return -ENOMEM;
    }
    sha256_hex(z, zlen, hex);
    etcd_random_hex(id, 8);
    (void)snprintf(mine, sizeof(mine), "%s/snap/%s/", e->prefix, id);
    r = upload(e, mine, z, zlen, &parts);
    free(z);
    if (r == -ECANCELED) {
        return r;
    }
    if (r < 0) {
        etcd_delete_prefix(e, mine);
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
        etcd_delete_prefix(e, mine);
        return -ENOMEM;
    }
    r = publish(e, lease, ptext);
    free(ptext);
    if (r == -EBUSY) {
        etcd_delete_prefix(e, mine); /* the lock was lost: never published */
        return r;
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
    delete_other_parts(e, lease, id, mine);
    return 0;
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
void etcd_maybe_snapshot(struct cfs_store *s)
{
    struct store_etcd *e = s->backend;
    struct snap_ptr ptr;
    uint64_t applied, known;
    int64_t lease = etcd_lease_of(e);
    json_t *body;
    bool ok = false;

    pthread_mutex_lock(&e->lock);
    applied = e->applied;
    known = e->snap_rev;
    pthread_mutex_unlock(&e->lock);
    if (e->snapshot_every == 0 || lease == 0 ||
        applied < known + e->snapshot_every || etcd_read_pointer(e, &ptr) < 0 ||
        applied < ptr.revision + e->snapshot_every ||
        !log_grown(e, applied, &ptr)) {
        return;
    }
    (void)etcd_put_if_absent(e, e->k_snap_lock, e->node_id, lease, &ok);
    if (!ok) {
        return; /* another node writes it */
    }
    /* Under the lock: the pointer now is the last one published. */
    if (etcd_read_pointer(e, &ptr) == 0 &&
        applied >= ptr.revision + e->snapshot_every &&
        log_grown(e, applied, &ptr)) {
        (void)write_snapshot(s, lease, ptr.revision);
    }
    /* Release the lock, if it is still this node's. */
    body = json_object();
    json_object_set_new(
        body,
        "compare",
        json_pack("[o]", etcd_cmp_lease(e->k_snap_lock, lease)));
    {
        json_t *d = json_object(), *o = json_object();

        json_object_set_new(d, "key", etcd_jb64s(e->k_snap_lock));
        json_object_set_new(o, "request_delete_range", d);
        json_object_set_new(body, "success", json_pack("[o]", o));
    }
    (void)etcd_txn(e, body, &ok);
    json_decref(body);
}
