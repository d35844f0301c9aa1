// SPDX-License-Identifier: MIT
/*
 * stream-state.c - stream the stored state as replay steps (cfs_store_load()).
 *
 * One read transaction, one pass in global write order (the seq every
 * directory, value, link and commit was stored with): a subsystem whose
 * store() looks at another item's state sees at start-up the history it
 * saw live. A directory's seq is its creation, so parents come before
 * children and values; a link's is after both its ends were made; a
 * commit's after the values written while pending. A committed item is
 * stored where it is, in
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

#define BLOCK_SIZE ((size_t)256 * 1024)
#define READ_AHEAD 4

/* ---- rows, as the reader packs them ------------------------------------ */

enum rec_kind {
    REC_DIR = 1, /* a: path; u1: revision; flags: created, committed */
    REC_ATTR,    /* a: directory path, b: value, c: name; u1: revision;
                    flags: binary */
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

struct consumer {
    cfs_store_step_fn fn;
    void *data;
    /* Committed items (their stored, live paths) and those re-committed. */
    struct store_strset committed, done;
    struct store_buf path, target;
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
static int
replay_path(struct consumer *c, struct store_buf *out, const char *path)
{
    size_t len = strlen(path);
    size_t i = 0;

    out->n = 0;
    if (c->committed.n == 0) {
        return store_buf_add(out, path, len);
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
            r = store_buf_add(out, "/pending", 8);
        } else {
            r = store_buf_add(out, path + i, end - i);
        }
        if (r < 0) {
            return r;
        }
        i = end;
    }
    return 0;
}

static int on_dir(struct consumer *c, const struct rec *d)
{
    struct cfs_store_step step = {
        .op = (d->flags & REC_CREATED) ? CFS_STORE_STEP_MKDIR
                                       : CFS_STORE_STEP_DIR,
        .revision = d->u1,
    };
    int r = 0;

    if (d->flags & REC_COMMITTED) {
        r = store_strset_add(&c->committed, rec_a(d), d->a_len);
    }
    if (r == 0) {
        r = replay_path(c, &c->path, rec_a(d));
    }
    if (r < 0) {
        return r;
    }
    step.path = c->path.p;
    c->fn(c->data, &step);
    return 0;
}

static int on_attr(struct consumer *c, const struct rec *a)
{
    struct cfs_store_step step = {
        .op = CFS_STORE_STEP_STORE,
        .arg = rec_b(a),
        .arg_len = a->b_len,
        .binary = (a->flags & REC_BINARY) != 0,
        .revision = a->u1,
    };
    int r = replay_path(c, &c->path, rec_a(a));

    if (r == 0) {
        r = store_buf_add(&c->path, "/", 1);
    }
    if (r == 0) {
        r = store_buf_add(&c->path, rec_c(a), a->c_len);
    }
    if (r < 0) {
        return r;
    }
    step.path = c->path.p;
    c->fn(c->data, &step);
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
    step->arg_len = c->target.n;
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
        r = store_buf_add(&c->path, "/", 1);
    }
    if (r == 0) {
        r = store_buf_add(&c->path, rec_b(l), l->b_len);
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
            r = on_dir(c, rec);
            break;
        case REC_ATTR:
            r = on_attr(c, rec);
            break;
        case REC_LINK:
            r = on_link(c, rec);
            break;
        case REC_COMMIT:
            r = on_commit(c, rec);
            break;
        default:
            r = -EUCLEAN;
            break;
        }
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

/* Room for @need more bytes: a new block once the current one is mostly
 * used. */
static int reserve(struct reader *rd, size_t need)
{
    struct block *b = rd->cur;

    if (b && b->len > b->cap / 4 * 3) {
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
        /* A row bigger than what is left: grow the block. */
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
    int r = reserve(rd, need);

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

/* Whether column @col is @prefix (?1) or below it. */
#define UNDER(col)                                                             \
    "(" col " = ?1 OR (" col " > ?1 || '/' AND " col " < ?1 || '0'))"

/* Every row as (kind, seq, path, name, flags, revision, value, target),
 * in write order. Ranged: the subtree of ?1, and the links from elsewhere
 * that point into it (they could not be made before it existed). */
#define ALL_ROWS(NODE_WHERE, ATTR_WHERE, LINK_WHERE)                           \
    "SELECT 1, seq, path, NULL,"                                               \
    " (created != 0) | ((committed != 0) << 1), revision, NULL, NULL"          \
    " FROM node WHERE " NODE_WHERE                                             \
    " UNION ALL SELECT 2, a.seq, n.path, a.name, (a.binary != 0) << 2,"        \
    " a.revision, a.value, NULL FROM attr a JOIN node n ON n.id = a.node"      \
    " WHERE " ATTR_WHERE                                                       \
    " UNION ALL SELECT 3, l.seq, o.path, l.name, 0, l.revision, NULL, t.path"  \
    " FROM link l JOIN node o ON o.id = l.owner"                               \
    " JOIN node t ON t.id = l.target WHERE " LINK_WHERE                        \
    " UNION ALL SELECT 4, commit_seq, path, NULL, 0, commit_rev, NULL, NULL"   \
    " FROM node WHERE commit_seq IS NOT NULL AND " NODE_WHERE " ORDER BY 2"

static int pass_all(struct reader *rd, sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE, r;

    r = prepare(db,
                rd->prefix ? ALL_ROWS(UNDER("path"),
                                      UNDER("n.path"),
                                      UNDER("o.path") " OR " UNDER("t.path"))
                           : ALL_ROWS("id > 1", "n.id > 1", "1"),
                rd->prefix,
                &st);
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(st, 0);
        const char *path = (const char *)sqlite3_column_text(st, 2);
        size_t path_len = (size_t)sqlite3_column_bytes(st, 2);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        size_t name_len = (size_t)sqlite3_column_bytes(st, 3);
        uint8_t flags = (uint8_t)sqlite3_column_int(st, 4);
        uint64_t rev = (uint64_t)sqlite3_column_int64(st, 5);

        if (!path || !wanted(rd, path)) {
            continue;
        }
        switch (kind) {
        case 1: /* a directory: flags REC_CREATED | REC_COMMITTED */
            r = put(
                rd, REC_DIR, flags, rev, 0, path, path_len, NULL, 0, NULL, 0);
            break;
        case 2: { /* a value: flags REC_BINARY */
            const void *value = sqlite3_column_blob(st, 6);
            size_t len = (size_t)sqlite3_column_bytes(st, 6);

            if (name) {
                r = put(rd,
                        REC_ATTR,
                        flags,
                        rev,
                        0,
                        path,
                        path_len,
                        value,
                        len,
                        name,
                        name_len);
            }
            break;
        }
        case 3: { /* a link */
            const char *target = (const char *)sqlite3_column_text(st, 7);

            if (name && target) {
                r = put(rd,
                        REC_LINK,
                        0,
                        rev,
                        0,
                        path,
                        path_len,
                        name,
                        name_len,
                        target,
                        (size_t)sqlite3_column_bytes(st, 7));
            }
            break;
        }
        default: /* a commit */
            r = put(
                rd, REC_COMMIT, 0, rev, 0, path, path_len, NULL, 0, NULL, 0);
            break;
        }
    }
    if (r == 0) {
        r = store_errno(rc);
    }
    sqlite3_finalize(st);
    return r;
}

/* The reader: one snapshot, one pass. @pre r_lock */
static int read_all(struct reader *rd)
{
    sqlite3 *db = rd->store->rdb;
    int r = store_exec(db, "BEGIN");

    if (r == 0) {
        r = pass_all(rd, db);
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
