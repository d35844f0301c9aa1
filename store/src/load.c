// SPDX-License-Identifier: MIT
/*
 * load.c - stream the stored state as replay steps (cfs_store_load()).
 *
 * One read transaction, three passes: directories in id order (creation
 * order, so parents first) merged with their attribute rows (clustered by
 * directory) and emitted in write order; links in creation order; commits
 * in their original order. A committed item is stored where it is, in
 * live/; replay re-makes it in pending/ (live/ accepts no mkdir), so every
 * path below a committed item that is not yet re-committed is rewritten
 * with "pending" for that "live".
 *
 * Reading the rows costs about as much as running the steps through core
 * does, so the two overlap: a reader thread steps SQLite and packs rows
 * into blocks; the calling thread (which must be the one that holds the
 * replay transaction) turns them into steps and runs them. The rows of one
 * directory never span two blocks. Blocks cross threads, so they come from
 * libc's allocator rather than cfs_malloc() (a test allocator may keep its
 * books per thread); at most READ_AHEAD of them exist at a time. If the
 * thread cannot be started the reader runs inline, block by block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define SUBTREE "(path = ?1 OR (path > ?1 || '/' AND path < ?1 || '0'))"

#define BLOCK_SIZE (256u * 1024u)
#define READ_AHEAD 4

/* ---- rows, as the reader packs them ------------------------------------ */

enum rec_kind {
    REC_DIR = 1, /* a: path; u1: revision; flags: created, committed */
    REC_ATTR,    /* a: name, b: value; u1: seq, u2: revision; flags: binary */
    REC_LINK,    /* a: owner path, b: name, c: target path; u1: revision */
    REC_COMMIT,  /* a: path; u1: revision of the commit */
};

#define REC_CREATED   1u
#define REC_COMMITTED 2u
#define REC_BINARY    4u

/* A row; its strings follow it, each with a NUL, padded to 8 bytes. */
struct rec {
    uint8_t kind;
    uint8_t flags;
    uint32_t a_len, b_len, c_len;
    uint64_t u1, u2;
};

struct block {
    struct block *next;
    size_t len, cap;
    char *data;
};

/* Between the reader and the caller; under lock. */
struct stream {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct block *head, *tail;
    unsigned queued;
    bool done, stop, threaded;
    int rc;
    struct consumer *consumer; /* inline mode: blocks go straight here */
};

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void block_free(struct block *b)
{
    if (b) {
        free(b->data);
        free(b);
    }
}

/* ---- the caller's side: rows to steps ---------------------------------- */

/* A growable byte buffer (caller's thread: cfs_malloc). */
struct buf {
    char *p;
    size_t len, cap;
};

static int buf_add(struct buf *b, const void *data, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap;
        char *p;

        if (cfs_grow_cap(b->cap, b->len + len + 1, 256, 1, &cap)) {
            return -ENOMEM;
        }
        p = cfs_realloc(b->p, cap);
        if (!p) {
            return -ENOMEM;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    b->p[b->len] = '\0';
    return 0;
}

struct consumer {
    cfs_store_step_fn fn;
    void *data;
    /* Committed items (their stored, live paths) and those re-committed. */
    struct store_strset committed, done;
    struct buf path, target;
    /* The directory being collected and its attribute rows. */
    const struct rec *dir;
    const struct rec **attrs;
    size_t n_attrs, cap_attrs;
    int error; /* first allocation failure */
};

static const char *rec_a(const struct rec *r)
{
    return (const char *)(r + 1);
}

static const char *rec_b(const struct rec *r)
{
    return rec_a(r) + r->a_len + 1;
}

static const char *rec_c(const struct rec *r)
{
    return rec_b(r) + r->b_len + 1;
}

/* Where @path is at replay time: "live" becomes "pending" for every
 * committed item on the path that is not re-committed yet. */
static int replay_path(struct consumer *c, struct buf *out, const char *path)
{
    size_t len = strlen(path);
    size_t i = 0;

    out->len = 0;
    if (c->committed.n == 0) {
        return buf_add(out, path, len);
    }
    while (i < len) {
        size_t seg = i + 1, end = seg, next_end;
        int r;

        while (end < len && path[end] != '/') {
            end++;
        }
        next_end = end + 1;
        while (next_end < len && path[next_end] != '/') {
            next_end++;
        }
        if (end - seg == 4 && memcmp(path + seg, "live", 4) == 0 && end < len &&
            store_strset_has(&c->committed, path, next_end) &&
            !store_strset_has(&c->done, path, next_end)) {
            r = buf_add(out, "/pending", 8);
        } else {
            r = buf_add(out, path + i, end - i);
        }
        if (r < 0) {
            return r;
        }
        i = end;
    }
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const struct rec *x = *(const struct rec *const *)a;
    const struct rec *y = *(const struct rec *const *)b;

    return x->u1 < y->u1 ? -1 : x->u1 > y->u1;
}

/* Emit the collected directory's step, then its values in write order. */
static int flush_dir(struct consumer *c)
{
    const struct rec *d = c->dir;
    struct cfs_store_step step;
    size_t dlen;
    int r;

    if (!d) {
        return 0;
    }
    c->dir = NULL;
    r = replay_path(c, &c->path, rec_a(d));
    if (r < 0) {
        return r;
    }
    step = (struct cfs_store_step){
        .op = (d->flags & REC_CREATED) ? CFS_STORE_STEP_MKDIR
                                       : CFS_STORE_STEP_DIR,
        .path = c->path.p,
        .revision = d->u1,
    };
    c->fn(c->data, &step);

    if (c->n_attrs > 1) {
        qsort(c->attrs, c->n_attrs, sizeof(*c->attrs), cmp_seq);
    }
    dlen = c->path.len;
    for (size_t i = 0; i < c->n_attrs; i++) {
        const struct rec *a = c->attrs[i];

        c->path.len = dlen;
        r = buf_add(&c->path, "/", 1);
        if (r == 0) {
            r = buf_add(&c->path, rec_a(a), a->a_len);
        }
        if (r < 0) {
            return r;
        }
        step = (struct cfs_store_step){
            .op = CFS_STORE_STEP_STORE,
            .path = c->path.p,
            .arg = rec_b(a),
            .arg_len = a->b_len,
            .binary = (a->flags & REC_BINARY) != 0,
            .revision = a->u2,
        };
        c->fn(c->data, &step);
    }
    c->n_attrs = 0;
    return 0;
}

/* Unless @r is an error, hand @step to the consumer with the path and
 * the target just built in c->path and c->target. */
static int
emit_path_target(struct consumer *c, struct cfs_store_step *step, int r)
{
    if (r < 0) {
        return r;
    }
    step->path = c->path.p;
    step->arg = c->target.p;
    step->arg_len = c->target.len;
    c->fn(c->data, step);
    return 0;
}

static int on_link(struct consumer *c, const struct rec *l)
{
    struct cfs_store_step step = {
        .op = CFS_STORE_STEP_SYMLINK,
        .revision = l->u1,
    };
    int r = replay_path(c, &c->path, rec_a(l));

    if (r == 0 && strcmp(rec_a(l), "/") != 0) {
        r = buf_add(&c->path, "/", 1);
    }
    if (r == 0) {
        r = buf_add(&c->path, rec_b(l), l->b_len);
    }
    if (r == 0) {
        r = replay_path(c, &c->target, rec_c(l));
    }
    return emit_path_target(c, &step, r);
}

static int on_commit(struct consumer *c, const struct rec *m)
{
    struct cfs_store_step step = {
        .op = CFS_STORE_STEP_COMMIT,
        .revision = m->u1,
    };
    int r = replay_path(c, &c->path, rec_a(m));

    if (r == 0) {
        r = store_strset_add(&c->done, rec_a(m), m->a_len);
    }
    if (r == 0) {
        r = replay_path(c, &c->target, rec_a(m));
    }
    return emit_path_target(c, &step, r);
}

/* Turn one block's rows into steps. */
static int consume_block(struct consumer *c, const struct block *b)
{
    size_t off = 0;
    int r = 0;

    while (off < b->len && r == 0) {
        const struct rec *rec = (const struct rec *)(b->data + off);

        off += sizeof(*rec) + pad8(rec->a_len + rec->b_len + rec->c_len + 3);
        switch (rec->kind) {
        case REC_DIR:
            r = flush_dir(c);
            if (r == 0 && (rec->flags & REC_COMMITTED)) {
                r = store_strset_add(&c->committed, rec_a(rec), rec->a_len);
            }
            c->dir = rec;
            break;
        case REC_ATTR:
            if (cfs_grow(&c->attrs,
                         &c->cap_attrs,
                         c->n_attrs,
                         sizeof(*c->attrs),
                         16)) {
                r = -ENOMEM;
                break;
            }
            c->attrs[c->n_attrs++] = rec;
            break;
        case REC_LINK:
            r = flush_dir(c);
            if (r == 0) {
                r = on_link(c, rec);
            }
            break;
        case REC_COMMIT:
            r = flush_dir(c);
            if (r == 0) {
                r = on_commit(c, rec);
            }
            break;
        default:
            r = -EUCLEAN;
            break;
        }
    }
    /* A directory's rows never span blocks. */
    if (r == 0) {
        r = flush_dir(c);
    }
    return r;
}

/* ---- the reader's side: SQLite to rows --------------------------------- */

struct reader {
    struct cfs_store *store;
    const char *const *subsystems;
    size_t n_subsystems;
    const char *prefix; /* ranged read of one subsystem, or NULL */
    struct stream *stream;
    struct block *cur;
    bool any_committed;
};

/* Hand a full block over: to the queue (waiting while READ_AHEAD blocks are
 * not consumed yet) or, inline, straight to the consumer. */
static int push_block(struct reader *rd)
{
    struct stream *s = rd->stream;
    struct block *b = rd->cur;
    int r = 0;

    rd->cur = NULL;
    if (!b || b->len == 0) {
        block_free(b);
        return 0;
    }
    if (!s->threaded) {
        r = consume_block(s->consumer, b);
        block_free(b);
        return r;
    }
    pthread_mutex_lock(&s->lock);
    while (s->queued >= READ_AHEAD && !s->stop) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    if (s->stop) {
        r = -ECANCELED;
        block_free(b);
    } else {
        b->next = NULL;
        if (s->tail) {
            s->tail->next = b;
        } else {
            s->head = b;
        }
        s->tail = b;
        s->queued++;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* Room for @need more bytes; @group: start a new block first if the
 * current one is mostly used (a directory's rows stay together). */
static int reserve(struct reader *rd, size_t need, bool group)
{
    struct block *b = rd->cur;

    if (b && group && b->len > b->cap / 4 * 3) {
        int r = push_block(rd);

        if (r < 0) {
            return r;
        }
        b = NULL;
    }
    if (!b) {
        b = calloc(1, sizeof(*b));
        if (!b) {
            return -ENOMEM;
        }
        b->cap = need > BLOCK_SIZE ? need : BLOCK_SIZE;
        b->data = malloc(b->cap);
        if (!b->data) {
            free(b);
            return -ENOMEM;
        }
        rd->cur = b;
    }
    if (b->len + need > b->cap) {
        /* Only within a directory's rows: grow rather than split them. */
        size_t cap;
        char *data;

        if (cfs_grow_cap(b->cap, b->len + need, 0, 1, &cap)) {
            return -ENOMEM;
        }
        data = realloc(b->data, cap);
        if (!data) {
            return -ENOMEM;
        }
        b->data = data;
        b->cap = cap;
    }
    return 0;
}

static int put(struct reader *rd,
               uint8_t kind,
               uint8_t flags,
               uint64_t u1,
               uint64_t u2,
               const void *a,
               size_t a_len,
               const void *b,
               size_t b_len,
               const void *c,
               size_t c_len)
{
    size_t need = sizeof(struct rec) + pad8(a_len + b_len + c_len + 3);
    struct rec *rec;
    char *p;
    int r = reserve(rd, need, kind != REC_ATTR);

    if (r < 0) {
        return r;
    }
    rec = (struct rec *)(rd->cur->data + rd->cur->len);
    *rec = (struct rec){
        .kind = kind,
        .flags = flags,
        .a_len = (uint32_t)a_len,
        .b_len = (uint32_t)b_len,
        .c_len = (uint32_t)c_len,
        .u1 = u1,
        .u2 = u2,
    };
    p = (char *)(rec + 1);
    if (a_len) {
        memcpy(p, a, a_len);
    }
    p[a_len] = '\0';
    p += a_len + 1;
    if (b_len) {
        memcpy(p, b, b_len);
    }
    p[b_len] = '\0';
    p += b_len + 1;
    if (c_len) {
        memcpy(p, c, c_len);
    }
    p[c_len] = '\0';
    rd->cur->len += need;
    return 0;
}

static bool wanted(const struct reader *rd, const char *path)
{
    const char *end;
    size_t len;

    if (rd->n_subsystems == 0 || rd->prefix) {
        return true;
    }
    end = strchr(path + 1, '/');
    len = end ? (size_t)(end - path - 1) : strlen(path + 1);
    for (size_t i = 0; i < rd->n_subsystems; i++) {
        if (strlen(rd->subsystems[i]) == len &&
            memcmp(rd->subsystems[i], path + 1, len) == 0) {
            return true;
        }
    }
    return false;
}

static int
prepare(sqlite3 *db, const char *sql, const char *prefix, sqlite3_stmt **ret)
{
    int r = store_errno(sqlite3_prepare_v2(db, sql, -1, ret, NULL));

    if (r == 0 && prefix) {
        r = store_bind_text(*ret, 1, prefix, strlen(prefix));
    }
    return r;
}

static int pass_dirs(struct reader *rd, sqlite3 *db)
{
    sqlite3_stmt *nodes = NULL, *attrs = NULL;
    const char *prefix = rd->prefix;
    int nrc = SQLITE_DONE, arc = SQLITE_DONE, r;

    if (prefix) {
        r = prepare(db,
                    "SELECT id, path, created, committed, revision FROM node"
                    " WHERE " SUBTREE " ORDER BY id",
                    prefix,
                    &nodes);
        if (r == 0) {
            r = prepare(
                db,
                "SELECT node, name, seq, revision, binary, value"
                " FROM attr WHERE node IN (SELECT id FROM node WHERE " SUBTREE
                ") ORDER BY node",
                prefix,
                &attrs);
        }
    } else {
        r = prepare(db,
                    "SELECT id, path, created, committed, revision FROM node"
                    " WHERE id > 1 ORDER BY id",
                    NULL,
                    &nodes);
        if (r == 0) {
            r = prepare(db,
                        "SELECT node, name, seq, revision, binary, value"
                        " FROM attr ORDER BY node",
                        NULL,
                        &attrs);
        }
    }
    if (r < 0) {
        goto out;
    }
    arc = sqlite3_step(attrs);
    while (r == 0 && (nrc = sqlite3_step(nodes)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(nodes, 0);
        const char *path = (const char *)sqlite3_column_text(nodes, 1);
        bool want = path && wanted(rd, path);

        while (arc == SQLITE_ROW && sqlite3_column_int64(attrs, 0) < id) {
            arc = sqlite3_step(attrs);
        }
        if (want) {
            bool committed = sqlite3_column_int(nodes, 3) != 0;

            rd->any_committed |= committed;
            r = put(rd,
                    REC_DIR,
                    (uint8_t)((sqlite3_column_int(nodes, 2) ? REC_CREATED : 0) |
                              (committed ? REC_COMMITTED : 0)),
                    (uint64_t)sqlite3_column_int64(nodes, 4),
                    0,
                    path,
                    (size_t)sqlite3_column_bytes(nodes, 1),
                    NULL,
                    0,
                    NULL,
                    0);
        }
        while (r == 0 && arc == SQLITE_ROW &&
               sqlite3_column_int64(attrs, 0) == id) {
            if (want) {
                const void *name = sqlite3_column_text(attrs, 1);
                size_t name_len = (size_t)sqlite3_column_bytes(attrs, 1);
                const void *value = sqlite3_column_blob(attrs, 5);
                size_t len = (size_t)sqlite3_column_bytes(attrs, 5);

                r = put(rd,
                        REC_ATTR,
                        sqlite3_column_int(attrs, 4) ? REC_BINARY : 0,
                        (uint64_t)sqlite3_column_int64(attrs, 2),
                        (uint64_t)sqlite3_column_int64(attrs, 3),
                        name,
                        name_len,
                        value,
                        len,
                        NULL,
                        0);
            }
            arc = sqlite3_step(attrs);
        }
        if (arc != SQLITE_ROW && arc != SQLITE_DONE) {
            break;
        }
    }
    if (r == 0) {
        r = store_errno(nrc);
    }
    if (r == 0 && arc != SQLITE_ROW) {
        r = store_errno(arc);
    }
out:
    sqlite3_finalize(nodes);
    sqlite3_finalize(attrs);
    return r;
}

/* Links owned in the loaded subsystems, and (for one subsystem) links from
 * elsewhere that point into it: they could not be made before it existed. */
static int pass_links(struct reader *rd, sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE, r;

    r = prepare(db,
                rd->prefix
                    ? "SELECT o.path, l.name, t.path, l.revision FROM link l"
                      " JOIN node o ON o.id = l.owner"
                      " JOIN node t ON t.id = l.target"
                      " WHERE (o.path = ?1 OR (o.path > ?1 || '/' AND"
                      " o.path < ?1 || '0')) OR (t.path = ?1 OR"
                      " (t.path > ?1 || '/' AND t.path < ?1 || '0'))"
                      " ORDER BY l.seq"
                    : "SELECT o.path, l.name, t.path, l.revision FROM link l"
                      " JOIN node o ON o.id = l.owner"
                      " JOIN node t ON t.id = l.target ORDER BY l.seq",
                rd->prefix,
                &st);
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *target = (const char *)sqlite3_column_text(st, 2);

        if (!owner || !name || !target || !wanted(rd, owner)) {
            continue;
        }
        r = put(rd,
                REC_LINK,
                0,
                (uint64_t)sqlite3_column_int64(st, 3),
                0,
                owner,
                strlen(owner),
                name,
                strlen(name),
                target,
                strlen(target));
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

static int pass_commits(struct reader *rd, sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE, r;

    if (!rd->any_committed) {
        return 0;
    }
    r = prepare(db,
                rd->prefix
                    ? "SELECT path, commit_rev FROM node WHERE " SUBTREE
                      " AND commit_seq IS NOT NULL ORDER BY commit_seq"
                    : "SELECT path, commit_rev FROM node"
                      " WHERE commit_seq IS NOT NULL ORDER BY commit_seq",
                rd->prefix,
                &st);
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);

        if (!path || !wanted(rd, path)) {
            continue;
        }
        r = put(rd,
                REC_COMMIT,
                0,
                (uint64_t)sqlite3_column_int64(st, 1),
                0,
                path,
                (size_t)sqlite3_column_bytes(st, 0),
                NULL,
                0,
                NULL,
                0);
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

/* The reader: one snapshot, three passes. @pre r_lock */
static int read_all(struct reader *rd)
{
    sqlite3 *db = rd->store->rdb;
    int r = store_exec(db, "BEGIN");

    if (r == 0) {
        r = pass_dirs(rd, db);
        if (r == 0) {
            r = pass_links(rd, db);
        }
        if (r == 0) {
            r = pass_commits(rd, db);
        }
        if (r == 0) {
            r = push_block(rd);
        }
        store_exec(db, "COMMIT");
    }
    block_free(rd->cur);
    rd->cur = NULL;
    return r;
}

static void *reader_main(void *arg)
{
    struct reader *rd = arg;
    struct stream *s = rd->stream;
    int r = read_all(rd);

    pthread_mutex_lock(&s->lock);
    s->done = true;
    s->rc = r;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the two together -------------------------------------------------- */

int store_load(struct cfs_store *s,
               const char *const *subsystems,
               size_t n,
               bool ranged,
               cfs_store_step_fn fn,
               void *data)
{
    struct consumer c = {.fn = fn, .data = data};
    struct stream st = {.consumer = &c};
    struct reader rd = {
        .store = s,
        .subsystems = subsystems,
        .n_subsystems = n,
        .stream = &st,
    };
    char *prefix = NULL;
    pthread_t thread;
    int r = 0;

    if (!s || !fn || (n > 0 && !subsystems)) {
        return -EINVAL;
    }
    if (n == 1 && ranged) {
        prefix = store_asprintf("/%s", subsystems[0]);
        if (!prefix) {
            return -ENOMEM;
        }
        rd.prefix = prefix;
    }
    pthread_mutex_init(&st.lock, NULL);
    pthread_cond_init(&st.cond, NULL);

    pthread_mutex_lock(&s->r_lock);
    st.threaded = pthread_create(&thread, NULL, reader_main, &rd) == 0;
    if (!st.threaded) {
        r = read_all(&rd);
    } else {
        for (;;) {
            struct block *b;

            pthread_mutex_lock(&st.lock);
            while (!st.head && !st.done) {
                pthread_cond_wait(&st.cond, &st.lock);
            }
            b = st.head;
            if (b) {
                st.head = b->next;
                if (!st.head) {
                    st.tail = NULL;
                }
                st.queued--;
                pthread_cond_broadcast(&st.cond);
            }
            pthread_mutex_unlock(&st.lock);
            if (!b) {
                break;
            }
            if (r == 0) {
                r = consume_block(&c, b);
            }
            block_free(b);
            if (r < 0) {
                /* Tell the reader to stop; keep draining what it queued. */
                pthread_mutex_lock(&st.lock);
                st.stop = true;
                pthread_cond_broadcast(&st.cond);
                pthread_mutex_unlock(&st.lock);
            }
        }
        pthread_join(thread, NULL);
        if (r == 0) {
            r = st.rc;
        }
    }
    pthread_mutex_unlock(&s->r_lock);

    pthread_cond_destroy(&st.cond);
    pthread_mutex_destroy(&st.lock);
    store_strset_free(&c.committed);
    store_strset_free(&c.done);
    cfs_free(c.path.p);
    cfs_free(c.target.p);
    cfs_free(c.attrs);
    cfs_free(prefix);
    return r;
}

int cfs_store_load(struct cfs_store *s,
                   const char *const *subsystems,
                   size_t n,
                   cfs_store_step_fn fn,
                   void *data)
{
    return store_load(s, subsystems, n, n == 1, fn, data);
}
