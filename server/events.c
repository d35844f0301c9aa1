// SPDX-License-Identifier: MIT
/*
 * events.c - GET /api/v1/events: Server-Sent Events of committed changes.
 *
 * Every committed transaction is published here, in revision order (the
 * revisions that stand are contiguous: a failed commit aborts everything
 * sealed after it, so a publication that arrives early waits for the one
 * before it; one that comes again, or after its place was given up, is
 * dropped). Recent events stay in a ring that only ever holds whole
 * revisions in increasing order, but for its oldest one, whose first
 * records it may have let go. A stream sends every revision after its
 * cursor once, in order and whole, or - wherever the revision it needs
 * next is not there whole - the event "reset" (never a silent gap). A
 * client resuming from older revisions is served from the store's
 * journal, when it holds every revision in between, or told to start
 * over. Clients hold no thread: a connection with nothing to send is
 * suspended and resumed by the next publication or by the heartbeat
 * thread, which also keeps idle connections alive with comment lines.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <configfs/store.h>

#include "events.h"
#include "jsonw.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

#define RING_CAP 4096
/* Revisions published early, waiting for the ones before them: at most
 * this many, and at most RING_CAP records, before the missing ones are
 * given up (the streams that need them get a reset). */
#define HOLD_CAP 1024
/* ... and for at most this long (then once more HOLD_GRACE_MS, in case
 * the process was only stopped): a commit's callback follows its commit
 * within milliseconds; a publication that never comes must not hold the
 * streams back while no more changes come to push it out. */
#define HOLD_MS       2000
#define HOLD_GRACE_MS 200
#define HEARTBEAT_S   15
#define BACKLOG_MAX   10000

struct ev {
    uint64_t rev;
    size_t index;      /* of the revision's records */
    char *frame;       /* "id: N\nevent: OP\ndata: {...}\n\n"; owns the paths */
    const char *path;  /* for the prefix filter, after the frame's NUL */
    const char *path2; /* after path: a rename's destination, a link's
                        * target; or NULL */
};

struct sse_client {
    struct sse_client *next, *prev;
    struct cfs_http_events *hub;
    struct MHD_Connection *conn;
    /* Who it was authorized as: the table of the request (a reference of
     * its own: the request may complete before the stream is freed) and
     * the principal in it (NULL, NULL without tokens). */
    struct cfs_http_tokens *tokens;
    const char *principal;
    /* Its token's subtrees (borrowed from tokens), NULL: the whole tree. */
    const struct cfs_http_scope *scope;
    bool revoked;    /* its token is gone: the stream ends */
    char *prefix;    /* NULL: everything */
    uint64_t cursor; /* last revision sent */
    char *out;       /* frames waiting to be copied out */
    size_t out_len, out_pos, out_cap;
    bool suspended;
    bool heartbeat;
};

struct cfs_http_evbatch {
    uint64_t held_ms; /* when it began to wait in the hold */
    size_t n;
    struct ev evs[]; /* the records of one revision, in order */
};

struct cfs_http_events {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct ev ring[RING_CAP];
    size_t head, count;                      /* oldest at head */
    struct cfs_http_evbatch *hold[HOLD_CAP]; /* early, in no order */
    size_t n_hold, held_records;
    bool overdue;  /* the heart saw a held one wait too long */
    uint64_t last; /* last revision published, or given up */
    struct sse_client *clients;
    struct cfs_store *store;
    pthread_t heart;
    bool stop;
};

static void ev_done(struct ev *e)
{
    free(e->frame);
    memset(e, 0, sizeof(*e));
}

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- frames ------------------------------------------------------------ */

static void frame_write(struct jw *w,
                        uint64_t rev,
                        size_t index,
                        size_t count,
                        enum cfs_op op,
                        const char *path,
                        const char *arg,
                        size_t arg_len,
                        bool write_only)
{
    /* only the revision's last record carries the id: a client that
     * resumes from it never gets half a batch */
    if (index + 1 == count) {
        JW_LIT(w, "id: ");
        jw_u64(w, rev);
        JW_LIT(w, "\n");
    }
    JW_LIT(w, "event: ");
    jw_raw(w, cfs_op_name(op), strlen(cfs_op_name(op)));
    JW_LIT(w, "\ndata: {\"revision\":");
    jw_u64(w, rev);
    JW_LIT(w, ",\"index\":");
    jw_u64(w, index);
    JW_LIT(w, ",\"count\":");
    jw_u64(w, count);
    JW_LIT(w, ",\"op\":");
    jw_str(w, cfs_op_name(op));
    if (op == CFS_OP_RENAME) {
        JW_LIT(w, ",\"from\":");
        jw_str(w, path);
        JW_LIT(w, ",\"to\":");
        jw_str(w, arg ? arg : "");
    }
    JW_LIT(w, ",\"path\":");
    jw_str(w, path);
    if (op == CFS_OP_STORE && arg && !write_only) {
        jw_value(w, arg, arg_len);
    } else if ((op == CFS_OP_SYMLINK || op == CFS_OP_UNLINK) && arg) {
        JW_LIT(w, ",\"target\":");
        jw_str(w, arg);
    }
    JW_LIT(w, "}\n\n");
}

static char *frame_for(uint64_t rev,
                       size_t index,
                       size_t count,
                       enum cfs_op op,
                       const char *path,
                       const char *arg,
                       size_t arg_len,
                       bool write_only)
{
    struct jw w = {0};
    char *frame = NULL;
    size_t len;

    frame_write(&w, rev, index, count, op, path, arg, arg_len, write_only);
    return jw_finish(&w, &frame, &len) == 0 ? frame : NULL;
}

/* The other path a record is about, which ?path= matches too: a rename's
 * destination, a link's target; NULL for others. */
static const char *second_path(enum cfs_op op, const char *arg)
{
    return op == CFS_OP_RENAME || op == CFS_OP_SYMLINK || op == CFS_OP_UNLINK
               ? arg
               : NULL;
}

/* @e for record @index of @count: the frame and the paths the filter
 * reads in one block (one allocation, one free, whichever thread frees
 * it). @return false when out of memory. */
static bool
ev_make(struct ev *e, const struct cfs_change *c, size_t index, size_t count)
{
    const char *path2 = second_path(c->op, c->arg);
    size_t flen, plen = strlen(c->path);
    struct jw w = {0};
    size_t len;

    frame_write(&w,
                c->revision,
                index,
                count,
                c->op,
                c->path,
                c->arg,
                c->arg_len,
                c->write_only);
    flen = w.len;
    jw_raw(&w, "", 1);
    jw_raw(&w, c->path, plen + 1);
    if (path2) {
        jw_raw(&w, path2, strlen(path2));
    }
    if (jw_finish(&w, &e->frame, &len) < 0) {
        return false;
    }
    e->rev = c->revision;
    e->index = index;
    e->path = e->frame + flen + 1;
    e->path2 = path2 ? e->path + plen + 1 : NULL;
    return true;
}

static bool matches(const char *prefix, const char *path)
{
    size_t n;

    if (!prefix || strcmp(prefix, "/") == 0) {
        return true;
    }
    if (!path) {
        return false;
    }
    n = strlen(prefix);
    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A record is sent to @c when it matches the client's ?path= and every
 * path it names (a rename's both ends, a link and its target) lies in the
 * client's subtrees. */
static bool
wanted(const struct sse_client *c, const char *path, const char *path2)
{
    return (matches(c->prefix, path) || matches(c->prefix, path2)) &&
           cfs_http_scope_covers(c->scope, path) &&
           cfs_http_scope_covers(c->scope, path2);
}

/* Append @s to what @c has to send; the buffer grows by doubling, so a
 * backlog of N frames costs O(N) copies, not O(N^2) (a realloc by exact
 * size copies the whole buffer each time under ASan, and often without). */
static int out_append(struct sse_client *c, const char *s)
{
    size_t n = strlen(s);

    if (c->out_len + n + 1 > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        char *o;

        while (cap < c->out_len + n + 1) {
            cap *= 2;
        }
        o = realloc(c->out, cap);
        if (!o) {
            return -ENOMEM;
        }
        c->out = o;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, s, n + 1);
    c->out_len += n;
    return 0;
}

/* ---- publishing -------------------------------------------------------- */

static void ring_push(struct cfs_http_events *h, struct ev *e)
{
    size_t slot;

    if (h->count == RING_CAP) {
        ev_done(&h->ring[h->head]);
        h->head = (h->head + 1) % RING_CAP;
        h->count--;
    }
    slot = (h->head + h->count) % RING_CAP;
    h->ring[slot] = *e;
    h->count++;
    memset(e, 0, sizeof(*e));
}

static uint64_t batch_rev(const struct cfs_http_evbatch *b)
{
    return b->evs[0].rev;
}

/* Every record of @b into the ring, after everything in it: the ring
 * stays in revision order. A revision later than the next one leaves a
 * gap there, which collect() reports to the streams that need it. Frees
 * @b. @pre h->lock, batch_rev(b) > h->last. */
static void push_batch(struct cfs_http_events *h, struct cfs_http_evbatch *b)
{
    h->last = batch_rev(b);
    for (size_t i = 0; i < b->n; i++) {
        ring_push(h, &b->evs[i]);
    }
    free(b);
}

static void resume_all(struct cfs_http_events *h)
{
    for (struct sse_client *c = h->clients; c; c = c->next) {
        if (c->suspended) {
            c->suspended = false;
            MHD_resume_connection(c->conn);
        }
    }
}

void cfs_http_events_retoken(struct cfs_http_events *h,
                             const struct cfs_http_tokens *now)
{
    pthread_mutex_lock(&h->lock);
    for (struct sse_client *c = h->clients; c; c = c->next) {
        if (!c->tokens || c->revoked ||
            (cfs_http_tokens_role_now(c->tokens, c->principal, now) >=
                 CFS_ROLE_READER &&
             cfs_http_tokens_scope_same(c->tokens, c->principal, now))) {
            continue;
        }
        c->revoked = true;
        if (c->suspended) {
            c->suspended = false;
            MHD_resume_connection(c->conn); /* to end */
        }
    }
    pthread_mutex_unlock(&h->lock);
}

/* Take held revision @i out of the hold. @pre h->lock */
static struct cfs_http_evbatch *unhold(struct cfs_http_events *h, size_t i)
{
    struct cfs_http_evbatch *b = h->hold[i];

    h->hold[i] = h->hold[--h->n_hold];
    h->held_records -= b->n;
    return b;
}

/* Move held revisions that are now next into the ring, in order; while
 * the hold is over its bounds, or (@give_up) one waited longer than
 * HOLD_MS, give up the revisions missing before the oldest held one (a
 * publication that never comes must not hold the streams back without
 * bound). @pre h->lock. */
static void drain_hold(struct cfs_http_events *h, bool give_up)
{
    uint64_t now = give_up ? mono_ms() : 0;

    for (;;) {
        size_t low = 0;
        uint64_t oldest = UINT64_MAX;

        for (size_t i = 0; i < h->n_hold; i++) {
            if (batch_rev(h->hold[i]) < batch_rev(h->hold[low])) {
                low = i;
            }
            if (h->hold[i]->held_ms < oldest) {
                oldest = h->hold[i]->held_ms;
            }
        }
        if (h->n_hold == 0 ||
            (batch_rev(h->hold[low]) != h->last + 1 && h->n_hold < HOLD_CAP &&
             h->held_records <= RING_CAP &&
             !(give_up && oldest + HOLD_MS <= now))) {
            return;
        }
        push_batch(h, unhold(h, low));
        h->overdue = false;
    }
}

struct cfs_http_evbatch *cfs_http_events_prepare(const struct cfs_change *ch,
                                                 size_t n)
{
    struct cfs_http_evbatch *b;

    if (n == 0) {
        return NULL;
    }
    b = calloc(1, sizeof(*b) + n * sizeof(b->evs[0]));
    if (!b) {
        return NULL; /* the events are lost; the change is not */
    }
    for (size_t i = 0; i < n; i++) {
        if (!ev_make(&b->evs[b->n], &ch[i], i, n)) {
            /* a revision goes whole or not at all: its streams get a
             * reset rather than part of it */
            cfs_http_events_discard(b);
            return NULL;
        }
        b->n++;
    }
    return b;
}

void cfs_http_events_discard(struct cfs_http_evbatch *b)
{
    for (size_t i = 0; b && i < b->n; i++) {
        ev_done(&b->evs[i]);
    }
    free(b);
}

void cfs_http_events_publish(struct cfs_http_events *h,
                             struct cfs_http_evbatch *b)
{
    uint64_t rev;
    bool dup = false;

    if (!h || !b || b->n == 0) {
        cfs_http_events_discard(b);
        return;
    }
    rev = batch_rev(b);
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->n_hold && !dup; i++) {
        dup = batch_rev(h->hold[i]) == rev;
    }
    if (rev <= h->last || dup) {
        /* published already (a change set applied while the hub started
         * is also counted in its first revision), or given up: the
         * streams went on without it, and it must not come twice */
        pthread_mutex_unlock(&h->lock);
        cfs_http_events_discard(b);
        return;
    }
    if (rev == h->last + 1) {
        push_batch(h, b);
    } else {
        /* an earlier commit is still out */
        b->held_ms = mono_ms();
        h->hold[h->n_hold++] = b;
        h->held_records += b->n;
        if (h->n_hold == 1) {
            pthread_cond_broadcast(&h->wake); /* the heart keeps the time */
        }
    }
    drain_hold(h, false);
    resume_all(h);
    pthread_mutex_unlock(&h->lock);
}

/* ---- clients ----------------------------------------------------------- */

/* The event "reset": what the client was to get from @since on is gone;
 * it must read the tree again and go on from @revision. */
static void reset_event(struct sse_client *c,
                        uint64_t revision,
                        uint64_t since,
                        const char *reason)
{
    char line[160];

    (void)snprintf(line,
                   sizeof(line),
                   "id: %llu\nevent: reset\ndata: {\"revision\":%llu,"
                   "\"since\":%llu,\"reason\":\"%s\"}\n\n",
                   (unsigned long long)revision,
                   (unsigned long long)revision,
                   (unsigned long long)since,
                   reason);
    (void)out_append(c, line);
}

/* The ring's first record of a revision after @cursor, or h->count.
 * @pre h->lock. */
static size_t first_after(const struct cfs_http_events *h, uint64_t cursor)
{
    size_t lo = 0, hi = h->count;

    while (lo < hi) { /* the ring is in revision order */
        size_t mid = lo + (hi - lo) / 2;

        if (h->ring[(h->head + mid) % RING_CAP].rev <= cursor) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Fill @c->out with the revisions after its cursor, each whole and in
 * order. Where the next revision is not in the ring whole (a slow reader
 * the ring overran, so that it let go of the revision or of its first
 * records; a revision given up by drain_hold()), the client gets a reset
 * in its place: never a silent gap, nor a revision cut in part, whose id
 * a reconnect would resume after. @pre h->lock. */
static void collect(struct cfs_http_events *h, struct sse_client *c)
{
    size_t i = first_after(h, c->cursor);

    while (c->cursor < h->last) {
        const struct ev *e = &h->ring[(h->head + i) % RING_CAP];
        size_t start = c->out_len;
        uint64_t rev;

        if (i == h->count || e->rev != c->cursor + 1 || e->index != 0) {
            reset_event(c, h->last, c->cursor, "overrun");
            c->cursor = h->last;
            return;
        }
        /* a revision's records are adjacent: send all of them */
        for (rev = e->rev; i < h->count; i++) {
            e = &h->ring[(h->head + i) % RING_CAP];
            if (e->rev != rev) {
                break;
            }
            if (wanted(c, e->path, e->path2) && out_append(c, e->frame) < 0) {
                c->out_len = start; /* not part of it: again next time */
                return;
            }
        }
        c->cursor = rev;
    }
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct sse_client *c = cls;
    struct cfs_http_events *h = c->hub;
    size_t n;

    (void)pos;
    pthread_mutex_lock(&h->lock);
    if (c->revoked) {
        pthread_mutex_unlock(&h->lock); /* not one more byte */
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (c->out_pos == c->out_len) {
        c->out_pos = c->out_len = 0;
        if (h->stop) {
            pthread_mutex_unlock(&h->lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        collect(h, c);
        if (c->out_len == 0 && c->heartbeat) {
            (void)out_append(c, ": heartbeat\n\n");
        }
        c->heartbeat = false;
        if (c->out_len == 0) {
            c->suspended = true;
            MHD_suspend_connection(c->conn); /* resumed by publish/heart */
            pthread_mutex_unlock(&h->lock);
            return 0;
        }
    }
    n = c->out_len - c->out_pos;
    if (n > max) {
        n = max;
    }
    memcpy(buf, c->out + c->out_pos, n);
    c->out_pos += n;
    pthread_mutex_unlock(&h->lock);
    return (ssize_t)n;
}

static void client_free(void *cls)
{
    struct sse_client *c = cls;
    struct cfs_http_events *h = c->hub;

    pthread_mutex_lock(&h->lock);
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        h->clients = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    pthread_cond_broadcast(&h->wake);
    pthread_mutex_unlock(&h->lock);
    cfs_http_tokens_unref(c->tokens);
    free(c->prefix);
    free(c->out);
    free(c);
}

/* Revisions after @since that the ring no longer has whole (those below
 * @first_in_ring), from the journal (without the hub lock: it reads
 * nothing of the hub but its store). Only every one of them, each whole,
 * will do: a journal that lacks one (pruned, or never holding it: a node
 * that started from a snapshot without that part of the journal) or a
 * read cut by its limit is a reset, never a gap. @return 0, or -ESTALE
 * (the client must reset; what this put in @c->out is to be dropped). */
static int backlog(struct cfs_http_events *h,
                   struct sse_client *c,
                   uint64_t since,
                   uint64_t first_in_ring)
{
    struct cfs_store_history_query q = {0};
    struct cfs_store_history_entry *es = NULL;
    struct cfs_store_info info;
    uint64_t next = since + 1;
    size_t n = 0;
    int r = 0;

    if (!h->store || cfs_store_info(h->store, &info) < 0 ||
        info.history_floor > since || first_in_ring - since > BACKLOG_MAX) {
        return -ESTALE;
    }
    q.before = first_in_ring;
    q.limit = BACKLOG_MAX;
    if (cfs_store_history(h->store, &q, &es, &n) < 0) {
        return -ESTALE;
    }
    if (n == BACKLOG_MAX && es[n - 1].revision > since) {
        r = -ESTALE; /* the oldest revision it needs may be cut */
    }
    for (size_t i = n; i-- > 0 && r == 0;) { /* oldest first */
        size_t first = i, last = i;

        if (es[i].revision <= since) {
            continue;
        }
        /* newest first: records of one revision are adjacent, in reverse */
        while (first + 1 < n && es[first + 1].revision == es[i].revision) {
            first++;
        }
        while (last > 0 && es[last - 1].revision == es[i].revision) {
            last--;
        }
        if (first == i && es[i].revision != next) {
            r = -ESTALE; /* a revision the journal does not hold */
            break;
        }
        next = es[i].revision + 1;
        if (wanted(c, es[i].path, second_path(es[i].op, es[i].arg))) {
            char *f = frame_for(es[i].revision,
                                first - i,
                                first - last + 1,
                                es[i].op,
                                es[i].path,
                                es[i].arg,
                                es[i].arg_len,
                                es[i].write_only);

            if (!f || out_append(c, f) < 0) {
                r = -ESTALE; /* never part of a revision */
            }
            free(f);
        }
        c->cursor = es[i].revision;
    }
    if (r == 0 && next != first_in_ring) {
        r = -ESTALE; /* the journal ends before the ring begins */
    }
    cfs_store_history_free(es, n);
    return r;
}

static void stream_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(
        resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    /* the values of changes: nothing a cache should keep */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
}

void cfs_http_handle_events(struct cfs_http_req *req)
{
    struct cfs_http_events *h = req->srv->events;
    const char *since_s = cfs_http_query(req, "since");
    const char *last_id = cfs_http_header_in(req, "Last-Event-ID");
    const char *path = cfs_http_query(req, "path");
    struct MHD_Response *resp;
    struct sse_client *c;
    uint64_t since = 0, last, first;
    bool resume = false;
    char *end;

    if (since_s || last_id) {
        /* Last-Event-ID wins: an EventSource opened on ?since=N reconnects
         * with the same URL and the last id it received, and must go on
         * from that id, not from N again (api/openapi.yaml, Since) */
        const char *s = last_id ? last_id : since_s;

        errno = 0;
        since = strtoull(s, &end, 10);
        if (!*s || *end || errno || *s == '-') {
            cfs_http_bad_request(req, "since and Last-Event-ID are revisions");
            return;
        }
        resume = true;
    }
    if (path && (!cfs_http_absolute(req, path, strlen(path), "path") ||
                 !cfs_http_scope_allow(req, path, false))) {
        return;
    }
    if (req->method == CFS_M_HEAD) {
        /* what GET would answer, without a stream to hold open */
        resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        if (!resp) {
            cfs_http_no_memory(req);
            return;
        }
        stream_headers(resp);
        cfs_http_reply_response(req, MHD_HTTP_OK, resp);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (!c || (path && !(c->prefix = strdup(path)))) {
        free(c);
        cfs_http_no_memory(req);
        return;
    }
    c->hub = h;
    c->conn = req->conn;
    c->tokens = cfs_http_tokens_ref(req->tokens);
    c->principal = req->principal;
    c->scope = req->scope;
    /* Where the ring stands now: its first whole revision (the oldest
     * one may have lost its first records; then it comes from the
     * journal too). The journal is read without the hub's lock
     * (publishers and other streams go on meanwhile). What the ring drops
     * in between is an overrun collect() reports as a reset. */
    pthread_mutex_lock(&h->lock);
    last = h->last;
    first = !h->count                     ? h->last + 1
            : h->ring[h->head].index == 0 ? h->ring[h->head].rev
                                          : h->ring[h->head].rev + 1;
    pthread_mutex_unlock(&h->lock);
    c->cursor = resume ? since : last;
    if (resume && since < last && since + 1 < first &&
        backlog(h, c, since, first) < 0) {
        /* what was asked for is gone: start over from now */
        c->out_len = 0;
        reset_event(c, last, since, "pruned");
        c->cursor = last;
    }
    if (resume && since > last) {
        /* a revision this tree never had: another database */
        reset_event(c, last, since, "future");
        c->cursor = last;
    }
    (void)out_append(c, ": connected\n\n");
    pthread_mutex_lock(&h->lock);
    c->next = h->clients;
    if (h->clients) {
        h->clients->prev = c;
    }
    h->clients = c;
    pthread_mutex_unlock(&h->lock);

    resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 4096, reader, c, client_free);
    if (!resp) {
        client_free(c);
        cfs_http_no_memory(req);
        return;
    }
    stream_headers(resp);
    cfs_http_reply_response(req, MHD_HTTP_OK, resp);
}

/* ---- life cycle -------------------------------------------------------- */

/* The heart: heartbeats for idle streams every HEARTBEAT_S, and the
 * time held revisions may wait (drain_hold()). */
static void *heart(void *arg)
{
    struct cfs_http_events *h = arg;
    uint64_t beat = mono_ms() + (uint64_t)HEARTBEAT_S * 1000u;

    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        uint64_t now = mono_ms(), until = beat;
        struct timespec ts;

        if (h->n_hold == 0) {
            h->overdue = false;
        }
        for (size_t i = 0; i < h->n_hold; i++) {
            uint64_t due = h->hold[i]->held_ms + HOLD_MS +
                           (h->overdue ? HOLD_GRACE_MS : 0);

            until = due < until ? due : until;
        }
        if (h->n_hold && until <= now && !h->overdue) {
            /* overdue, or the process was stopped: look again a moment
             * later, when the commit that is late had time to run */
            h->overdue = true;
            continue;
        }
        if (h->n_hold && until <= now) {
            drain_hold(h, true); /* gives up what is missing */
            h->overdue = false;
            resume_all(h);
            continue;
        }
        if (beat <= now) {
            for (struct sse_client *c = h->clients; c; c = c->next) {
                c->heartbeat = true; /* also finds clients that went away */
            }
            resume_all(h);
            beat = now + (uint64_t)HEARTBEAT_S * 1000u;
            continue;
        }
        ts.tv_sec = (time_t)(until / 1000u);
        ts.tv_nsec = (long)(until % 1000u) * 1000000L;
        (void)pthread_cond_timedwait(&h->wake, &h->lock, &ts);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int cfs_http_events_new(struct cfs_store *store, struct cfs_http_events **ret)
{
    struct cfs_http_events *h = calloc(1, sizeof(*h));
    pthread_condattr_t ca;

    if (!h) {
        return -ENOMEM;
    }
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* as mono_ms() */
    pthread_cond_init(&h->wake, &ca);
    pthread_condattr_destroy(&ca);
    h->store = store;
    h->last = cfs_revision();
    if (pthread_create(&h->heart, NULL, heart, h) != 0) {
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return -EAGAIN;
    }
    pthread_setname_np(h->heart, "cfs-heartbeat");
    *ret = h;
    return 0;
}

void cfs_http_events_stop(struct cfs_http_events *h)
{
    if (!h) {
        return;
    }
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    resume_all(h); /* every stream ends; none may stay suspended */
    pthread_cond_broadcast(&h->wake);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->heart, NULL);
}

void cfs_http_events_free(struct cfs_http_events *h)
{
    if (!h) {
        return;
    }
    for (size_t i = 0; i < h->count; i++) {
        ev_done(&h->ring[(h->head + i) % RING_CAP]);
    }
    for (size_t i = 0; i < h->n_hold; i++) {
        cfs_http_events_discard(h->hold[i]);
    }
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
