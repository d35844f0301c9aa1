// SPDX-License-Identifier: MIT
/*
 * watch.c - the watcher thread: one watch on the head and the log keys
 * (the gateway's stream); the head it reports wakes the applier, the log
 * entries it brings are kept (bounded) for the applier to apply without
 * reading them again. Reconnects from where it was.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

struct watch_ctx {
    struct store_etcd *e;
    struct store_buf b;
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
    v = etcd_kv_field(kv, "value", &len);
    j = v ? etcd_entry_load(v, len, &size) : NULL;
    free(v);
    x = j ? calloc(1, sizeof(*x)) : NULL;
    if (!x) {
        json_decref(j);
        return;
    }
    x->entry = j;
    x->first = etcd_jnum(json_object_get(j, "first"));
    x->last = etcd_jnum(json_object_get(j, "last"));
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
    if (etcd_jnum(json_object_get(res, "compact_revision")) > 0) {
        w->compacted = true;
    }
    if (json_is_true(json_object_get(res, "canceled"))) {
        w->canceled = true; /* compacted past us, or refused: ask again */
    }
    hrev = (int64_t)etcd_jnum(
        json_object_get(json_object_get(res, "header"), "revision"));
    if (hrev + 1 > w->next_rev) {
        w->next_rev = hrev + 1;
    }
    evs = json_object_get(res, "events");
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *ev = json_array_get(evs, i), *kv = json_object_get(ev, "kv");
        char *k = etcd_kv_field(kv, "key", NULL);

        /* a PUT: no "type"; its value decoded only when needed (a log
         * entry is big, and this node's own is not decoded at all) */
        if (k && json_is_string(json_object_get(kv, "value")) &&
            json_object_get(ev, "type") == NULL) {
            if (strcmp(k, w->e->k_head) == 0) {
                char *v = etcd_kv_field(kv, "value", NULL);

                etcd_note_head(w->e, v ? strtoull(v, NULL, 10) : 0);
                free(v);
            } else if (strncmp(k, w->e->k_log, strlen(w->e->k_log)) == 0) {
                keep_seen(w->e, k, kv);
            }
        }
        free(k);
    }
    json_decref(j);
}

/* A piece of the stream: whole lines (JSON objects) go to watch_line(). */
static size_t watch_data(const char *data, size_t n, void *ud)
{
    struct watch_ctx *w = ud;
    char *nl;

    if (store_buf_add(&w->b, data, n) < 0) {
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

/* Ask etcd for the head once: the applier's target when no watch runs. */
int etcd_read_head(struct store_etcd *e, int64_t *ret_etcd_rev)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "key", etcd_jb64s(e->k_head));
    r = etcd_post(e, "/v3/kv/range", body, &ans);
    json_decref(body);
    if (r == 0) {
        char *hv = etcd_kv_field(
            json_array_get(json_object_get(ans, "kvs"), 0), "value", NULL);

        etcd_note_head(e, hv ? strtoull(hv, NULL, 10) : 0);
        free(hv);
        if (ret_etcd_rev) {
            *ret_etcd_rev = (int64_t)etcd_jnum(
                json_object_get(json_object_get(ans, "header"), "revision"));
        }
    }
    json_decref(ans);
    return r;
}

void *etcd_watcher_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->backend;
    struct watch_ctx w = {.e = e};

    pthread_setname_np(pthread_self(), "cfs-etcd-watch");
    for (;;) {
        json_t *body, *cr;
        char *text;
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
        if (etcd_read_head(e, &rev) < 0) {
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
        json_object_set_new(cr, "key", etcd_jb64s(e->k_head));
        json_object_set_new(cr, "range_end", etcd_jb64s(e->k_log_end));
        json_object_set_new(cr, "start_revision", json_integer(w.next_rev));
        json_object_set_new(body, "create_request", cr);
        text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        if (!text) {
            break;
        }
        w.b.n = 0;
        (void)etcd_watch_stream(e, text, watch_data, &w);
        free(text);
    }
    cfs_free(w.b.p);
    return NULL;
}
