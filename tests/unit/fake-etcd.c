// SPDX-License-Identifier: MIT
/*
 * fake-etcd.c - the fake etcd of fake-etcd.h: the gateway interface of the
 * etcd backend (etcd_gateway_init/cleanup, etcd_post_raw,
 * etcd_watch_stream) answered from memory, in the JSON etcd's gateway
 * speaks (keys and values in base64, 64-bit numbers as strings). One
 * cluster per process, under one lock; the backend's threads call in.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <configfs/base64.h>

#include "etcd.h"
#include "fake-etcd.h"

struct fkv {
    char *key, *val;
    size_t klen, vlen;
    int64_t lease, mod, version;
};

struct fev {
    int64_t rev;
    char *key, *val;
    size_t klen, vlen;
    bool del;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct fkv *kv;
    size_t n, cap;
    struct fev *ev;
    size_t n_ev, cap_ev;
    int64_t rev, next_lease;
    char lose_prefix[256];
    int lose_n;
    bool resend; /* a lost answer's request is sent again */
    char race_prefix[256];
    void (*race)(void);
    int64_t compacted;
    bool reorder;
    bool watch_cut;
    unsigned watch_gen; /* changes when streams are cut */
} F = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
    .next_lease = 1000,
};

/* ---- the store ---------------------------------------------------------- */

static int kcmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);

    return c ? c : al < bl ? -1 : al > bl ? 1 : 0;
}

/* In [key, end): end NULL is the key alone; "\0" (elen 1) everything
 * from key on. */
static bool in_range(const struct fkv *x,
                     const char *key,
                     size_t klen,
                     const char *end,
                     size_t elen)
{
    if (!end || elen == 0) {
        return kcmp(x->key, x->klen, key, klen) == 0;
    }
    if (kcmp(x->key, x->klen, key, klen) < 0) {
        return false;
    }
    return (elen == 1 && end[0] == '\0') ||
           kcmp(x->key, x->klen, end, elen) < 0;
}

static struct fkv *find(const char *key, size_t klen)
{
    for (size_t i = 0; i < F.n; i++) {
        if (kcmp(F.kv[i].key, F.kv[i].klen, key, klen) == 0) {
            return &F.kv[i];
        }
    }
    return NULL;
}

static char *dup(const void *p, size_t n)
{
    char *d = malloc(n + 1);

    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void event(const struct fkv *x, bool del)
{
    struct fev *e;

    if (F.n_ev == F.cap_ev) {
        F.cap_ev = F.cap_ev ? F.cap_ev * 2 : 64;
        F.ev = realloc(F.ev, F.cap_ev * sizeof(*F.ev));
    }
    e = &F.ev[F.n_ev++];
    *e = (struct fev){.rev = F.rev, .del = del, .klen = x->klen};
    e->key = dup(x->key, x->klen);
    e->val = del ? NULL : dup(x->val, x->vlen);
    e->vlen = del ? 0 : x->vlen;
    pthread_cond_broadcast(&F.cond);
}

static void
put(const char *key, size_t klen, const char *val, size_t vlen, int64_t lease)
{
    struct fkv *x = find(key, klen);

    F.rev++;
    if (!x) {
        if (F.n == F.cap) {
            F.cap = F.cap ? F.cap * 2 : 64;
            F.kv = realloc(F.kv, F.cap * sizeof(*F.kv));
        }
        x = &F.kv[F.n++];
        *x = (struct fkv){.key = dup(key, klen), .klen = klen};
    } else {
        free(x->val);
    }
    x->val = dup(val, vlen);
    x->vlen = vlen;
    x->lease = lease;
    x->mod = F.rev;
    x->version++;
    event(x, false);
}

static int64_t
delete_range(const char *key, size_t klen, const char *end, size_t elen)
{
    int64_t n = 0;
    size_t j = 0;
    bool bumped = false;

    for (size_t i = 0; i < F.n; i++) {
        if (in_range(&F.kv[i], key, klen, end, elen)) {
            if (!bumped) {
                F.rev++;
                bumped = true;
            }
            event(&F.kv[i], true);
            free(F.kv[i].key);
            free(F.kv[i].val);
            n++;
        } else {
            F.kv[j++] = F.kv[i];
        }
    }
    F.n = j;
    return n;
}

/* The keys under @lease go. */
static void revoke(int64_t lease)
{
    size_t j = 0;

    for (size_t i = 0; i < F.n; i++) {
        if (F.kv[i].lease == lease) {
            F.rev++;
            event(&F.kv[i], true);
            free(F.kv[i].key);
            free(F.kv[i].val);
        } else {
            F.kv[j++] = F.kv[i];
        }
    }
    F.n = j;
}

/* ---- JSON --------------------------------------------------------------- */

static char *field(json_t *o, const char *name, size_t *len)
{
    const char *v = json_string_value(json_object_get(o, name));
    char *d = NULL;

    *len = 0;
    if (v && cfs_base64_decode(v, strlen(v), &d, len) < 0) {
        d = NULL;
    }
    return d;
}

static json_t *num(int64_t v)
{
    char s[24];

    (void)snprintf(s, sizeof(s), "%" PRId64, v);
    return json_string(s);
}

static json_t *b64(const void *p, size_t n)
{
    char *e = cfs_base64_encode(p, n);
    json_t *j = json_string(e);

    free(e);
    return j;
}

static json_t *kv_json(const struct fkv *x)
{
    json_t *o = json_object();

    json_object_set_new(o, "key", b64(x->key, x->klen));
    json_object_set_new(o, "value", b64(x->val, x->vlen));
    json_object_set_new(o, "mod_revision", num(x->mod));
    json_object_set_new(o, "version", num(x->version));
    if (x->lease) {
        json_object_set_new(o, "lease", num(x->lease));
    }
    return o;
}

static json_t *header(void)
{
    json_t *h = json_object();

    json_object_set_new(h, "revision", num(F.rev));
    return json_pack("{so}", "header", h);
}

static int64_t jint(json_t *j)
{
    return json_is_string(j) ? strtoll(json_string_value(j), NULL, 10)
                             : json_integer_value(j);
}

/* A range request: key, range_end, limit. */
static json_t *range(json_t *req)
{
    size_t kl, el;
    char *k = field(req, "key", &kl), *end = field(req, "range_end", &el);
    int64_t limit = jint(json_object_get(req, "limit"));
    json_t *ans = header(), *kvs = json_array();
    struct fkv **hits = calloc(F.n + 1, sizeof(*hits));
    size_t n = 0;

    for (size_t i = 0; i < F.n; i++) {
        if (in_range(&F.kv[i], k, kl, end, el)) {
            hits[n++] = &F.kv[i];
        }
    }
    /* sorted by key, as etcd answers */
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && kcmp(hits[j - 1]->key,
                                         hits[j - 1]->klen,
                                         hits[j]->key,
                                         hits[j]->klen) > 0;
             j--) {
            struct fkv *t = hits[j];

            hits[j] = hits[j - 1];
            hits[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n && (limit <= 0 || (int64_t)i < limit); i++) {
        json_array_append_new(kvs, kv_json(hits[i]));
    }
    if (limit > 0 && (int64_t)n > limit) {
        json_object_set_new(ans, "more", json_true());
    }
    json_object_set_new(ans, "kvs", kvs);
    json_object_set_new(ans, "count", num((int64_t)n));
    free(hits);
    free(k);
    free(end);
    return ans;
}

static json_t *do_put(json_t *req)
{
    size_t kl, vl;
    char *k = field(req, "key", &kl), *v = field(req, "value", &vl);

    put(k, kl, v ? v : "", vl, jint(json_object_get(req, "lease")));
    free(k);
    free(v);
    return header();
}

static json_t *do_delete(json_t *req)
{
    size_t kl, el;
    char *k = field(req, "key", &kl), *end = field(req, "range_end", &el);
    json_t *ans = header();

    json_object_set_new(ans, "deleted", num(delete_range(k, kl, end, el)));
    free(k);
    free(end);
    return ans;
}

static bool compare(json_t *c)
{
    size_t kl, vl;
    char *k = field(c, "key", &kl);
    const char *target = json_string_value(json_object_get(c, "target"));
    struct fkv *x = find(k, kl);
    bool ok = false;

    if (strcmp(target, "VALUE") == 0) {
        char *v = field(c, "value", &vl);

        ok = x && kcmp(x->val, x->vlen, v, vl) == 0;
        free(v);
    } else if (strcmp(target, "VERSION") == 0) {
        ok = (x ? x->version : 0) == jint(json_object_get(c, "version"));
    } else if (strcmp(target, "LEASE") == 0) {
        ok = x && x->lease == jint(json_object_get(c, "lease"));
    }
    free(k);
    return ok;
}

static bool has_prefix(const char *k, size_t kl, const char *prefix)
{
    size_t pl = strlen(prefix);

    return pl > 0 && kl >= pl && memcmp(k, prefix, pl) == 0;
}

/* Whether txn @req puts a key beginning with @prefix. */
static bool txn_puts(json_t *req, const char *prefix)
{
    json_t *ops = json_object_get(req, "success");
    bool hit = false;

    for (size_t i = 0; i < json_array_size(ops) && !hit; i++) {
        json_t *r = json_object_get(json_array_get(ops, i), "request_put");
        size_t kl;
        char *k = r ? field(r, "key", &kl) : NULL;

        hit = k && has_prefix(k, kl, prefix);
        free(k);
    }
    return hit;
}

static json_t *txn(json_t *req, bool *ret_lose)
{
    json_t *cmp = json_object_get(req, "compare"), *ops, *resps, *ans;
    bool ok = true;

    for (size_t i = 0; i < json_array_size(cmp); i++) {
        ok = ok && compare(json_array_get(cmp, i));
    }
    ops = json_object_get(req, ok ? "success" : "failure");
    resps = json_array();
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *op = json_array_get(ops, i), *r;

        if ((r = json_object_get(op, "request_put"))) {
            size_t kl;
            char *k = field(r, "key", &kl);

            if (F.lose_n > 0 && has_prefix(k, kl, F.lose_prefix)) {
                *ret_lose = true;
            }
            free(k);
            json_decref(do_put(r));
            json_array_append_new(resps, json_pack("{s{}}", "response_put"));
        } else if ((r = json_object_get(op, "request_range"))) {
            json_array_append_new(
                resps, json_pack("{so}", "response_range", range(r)));
        } else if ((r = json_object_get(op, "request_delete_range"))) {
            json_array_append_new(
                resps,
                json_pack("{so}", "response_delete_range", do_delete(r)));
        }
    }
    if (*ret_lose) {
        F.lose_n--;
    }
    ans = header();
    if (ok) {
        json_object_set_new(ans, "succeeded", json_true());
    }
    json_object_set_new(ans, "responses", resps);
    return ans;
}

/* ---- the gateway interface ---------------------------------------------- */

void etcd_gateway_init(void)
{
}

void etcd_gateway_cleanup(struct store_etcd *e)
{
    (void)e;
}

int etcd_post_raw(struct store_etcd *e,
                  const char *api,
                  json_t *body,
                  json_t **ret)
{
    json_t *ans = NULL;
    bool lose = false;

    *ret = NULL;
    atomic_fetch_add(&e->n_requests, 1);
    if (strcmp(api, "/v3/kv/txn") == 0) {
        void (*hook)(void) = NULL;

        pthread_mutex_lock(&F.lock);
        if (F.race && txn_puts(body, F.race_prefix)) {
            hook = F.race;
            F.race = NULL;
        }
        pthread_mutex_unlock(&F.lock);
        if (hook) {
            hook(); /* another node, first */
        }
    }
    pthread_mutex_lock(&F.lock);
    if (strcmp(api, "/v3/kv/range") == 0) {
        ans = range(body);
    } else if (strcmp(api, "/v3/kv/put") == 0) {
        ans = do_put(body);
    } else if (strcmp(api, "/v3/kv/deleterange") == 0) {
        ans = do_delete(body);
    } else if (strcmp(api, "/v3/kv/txn") == 0) {
        ans = txn(body, &lose);
        if (lose && F.resend) {
            bool again = false;

            /* the next member carries it out once more and answers */
            json_decref(ans);
            ans = txn(body, &again);
            lose = false;
        }
    } else if (strcmp(api, "/v3/lease/grant") == 0) {
        ans = header();
        json_object_set_new(ans, "ID", num(F.next_lease++));
        json_object_set_new(ans, "TTL", num(5));
    } else if (strcmp(api, "/v3/lease/keepalive") == 0) {
        ans = json_pack("{s{so}}", "result", "TTL", num(5));
    } else if (strcmp(api, "/v3/lease/revoke") == 0) {
        revoke(jint(json_object_get(body, "ID")));
        ans = header();
    }
    pthread_mutex_unlock(&F.lock);
    if (!ans) {
        return -EIO;
    }
    if (lose) {
        /* carried out; the answer lost on every member */
        json_decref(ans);
        atomic_fetch_add(&e->n_failures, 1);
        etcd_set_error(e, "fake etcd: answer lost");
        return -ETIMEDOUT;
    }
    pthread_mutex_lock(&e->lock);
    e->error[0] = '\0';
    pthread_mutex_unlock(&e->lock);
    *ret = ans;
    return 0;
}

static bool stopping(struct store_etcd *e)
{
    bool stop;

    pthread_mutex_lock(&e->lock);
    stop = e->stop;
    pthread_mutex_unlock(&e->lock);
    return stop;
}

static size_t send_line(json_t *msg,
                        size_t (*on_data)(const char *, size_t, void *),
                        void *ud,
                        bool *ok)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    size_t n = strlen(text);

    text = realloc(text, n + 2);
    text[n++] = '\n';
    text[n] = '\0';
    *ok = on_data(text, n, ud) == n;
    free(text);
    json_decref(msg);
    return n;
}

int etcd_watch_stream(struct store_etcd *e,
                      const char *body,
                      size_t (*on_data)(const char *data, size_t len, void *ud),
                      void *ud)
{
    json_t *req = json_loads(body, 0, NULL);
    json_t *cr = json_object_get(req, "create_request");
    size_t kl, el;
    char *k = field(cr, "key", &kl), *end = field(cr, "range_end", &el);
    int64_t next = jint(json_object_get(cr, "start_revision"));
    unsigned gen;
    int64_t now;
    bool ok = true;
    int r = 0;

    pthread_mutex_lock(&F.lock);
    gen = F.watch_gen;
    if (F.watch_cut) {
        /* refused: as a connection that does not come up, not at once */
        struct timespec ts = after_us(20000);

        pthread_cond_timedwait(&F.cond, &F.lock, &ts);
        pthread_mutex_unlock(&F.lock);
        r = -ECONNREFUSED;
        goto out;
    }
    now = F.rev;
    if (F.compacted > 0 && next <= F.compacted) {
        int64_t c = F.compacted;

        pthread_mutex_unlock(&F.lock);
        send_line(json_pack("{s{s{so}sosb}}",
                            "result",
                            "header",
                            "revision",
                            num(now),
                            "compact_revision",
                            num(c),
                            "canceled",
                            1),
                  on_data,
                  ud,
                  &ok);
        r = -ECONNRESET;
        goto out;
    }
    pthread_mutex_unlock(&F.lock);
    send_line(json_pack("{s{s{so}sb}}",
                        "result",
                        "header",
                        "revision",
                        num(now),
                        "created",
                        1),
              on_data,
              ud,
              &ok);
    while (ok && !stopping(e)) {
        json_t *evs = json_array();
        int64_t rev = 0;
        bool reorder;

        pthread_mutex_lock(&F.lock);
        if (F.watch_gen != gen) {
            pthread_mutex_unlock(&F.lock);
            json_decref(evs);
            r = -ECONNRESET;
            break;
        }
        for (size_t i = 0; i < F.n_ev; i++) {
            struct fev *x = &F.ev[i];
            struct fkv probe = {.key = x->key, .klen = x->klen};

            if (x->rev < next || !in_range(&probe, k, kl, end, el)) {
                continue;
            }
            json_t *ev = json_object(), *kv = json_object();

            json_object_set_new(kv, "key", b64(x->key, x->klen));
            json_object_set_new(kv, "mod_revision", num(x->rev));
            if (x->del) {
                json_object_set_new(ev, "type", json_string("DELETE"));
            } else {
                json_object_set_new(kv, "value", b64(x->val, x->vlen));
            }
            json_object_set_new(ev, "kv", kv);
            if (F.reorder) { /* under the lock here */
                json_array_insert_new(evs, 0, ev);
            } else {
                json_array_append_new(evs, ev);
            }
            rev = x->rev;
        }
        if (json_array_size(evs) == 0) {
            struct timespec ts = after_us(50000);

            pthread_cond_timedwait(&F.cond, &F.lock, &ts);
            pthread_mutex_unlock(&F.lock);
            json_decref(evs);
            continue;
        }
        next = rev + 1;
        reorder = F.reorder;
        pthread_mutex_unlock(&F.lock);
        /* in order, all at once; or (reordered) one a message, last first */
        for (size_t i = 0; ok && i < json_array_size(evs); i++) {
            json_t *one = json_array();

            if (json_array_size(evs) > 1 && !reorder) {
                json_decref(one);
                one = json_incref(evs);
                i = json_array_size(evs);
            } else {
                json_array_append(one, json_array_get(evs, i));
            }
            send_line(json_pack("{s{s{so}so}}",
                                "result",
                                "header",
                                "revision",
                                num(rev),
                                "events",
                                one),
                      on_data,
                      ud,
                      &ok);
        }
        json_decref(evs);
    }
out:
    free(k);
    free(end);
    json_decref(req);
    return r;
}

/* ---- the test's side ---------------------------------------------------- */

void fake_etcd_reset(void)
{
    pthread_mutex_lock(&F.lock);
    for (size_t i = 0; i < F.n; i++) {
        free(F.kv[i].key);
        free(F.kv[i].val);
    }
    for (size_t i = 0; i < F.n_ev; i++) {
        free(F.ev[i].key);
        free(F.ev[i].val);
    }
    free(F.kv);
    free(F.ev);
    F.kv = NULL;
    F.ev = NULL;
    F.n = F.cap = F.n_ev = F.cap_ev = 0;
    F.rev = 0;
    F.lose_n = 0;
    F.resend = false;
    F.race = NULL;
    F.compacted = 0;
    F.reorder = false;
    F.watch_cut = false;
    F.watch_gen++;
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_put(const char *key, const void *val, size_t len, int64_t lease)
{
    pthread_mutex_lock(&F.lock);
    put(key, strlen(key), val, len, lease);
    pthread_mutex_unlock(&F.lock);
}

int64_t fake_etcd_lease(void)
{
    int64_t id;

    pthread_mutex_lock(&F.lock);
    id = F.next_lease++;
    pthread_mutex_unlock(&F.lock);
    return id;
}

bool fake_etcd_has(const char *key)
{
    bool has;

    pthread_mutex_lock(&F.lock);
    has = find(key, strlen(key)) != NULL;
    pthread_mutex_unlock(&F.lock);
    return has;
}

size_t fake_etcd_count(const char *prefix)
{
    size_t n = 0, pl = strlen(prefix);

    pthread_mutex_lock(&F.lock);
    for (size_t i = 0; i < F.n; i++) {
        n += F.kv[i].klen >= pl && memcmp(F.kv[i].key, prefix, pl) == 0;
    }
    pthread_mutex_unlock(&F.lock);
    return n;
}

void fake_etcd_lose_txn_answers(const char *prefix, int n)
{
    pthread_mutex_lock(&F.lock);
    (void)snprintf(F.lose_prefix, sizeof(F.lose_prefix), "%s", prefix);
    F.lose_n = n;
    F.resend = false;
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_resend_txns(const char *prefix, int n)
{
    pthread_mutex_lock(&F.lock);
    (void)snprintf(F.lose_prefix, sizeof(F.lose_prefix), "%s", prefix);
    F.lose_n = n;
    F.resend = true;
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_before_txn(const char *prefix, void (*hook)(void))
{
    pthread_mutex_lock(&F.lock);
    (void)snprintf(F.race_prefix, sizeof(F.race_prefix), "%s", prefix);
    F.race = hook;
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_revoke(int64_t lease)
{
    pthread_mutex_lock(&F.lock);
    revoke(lease);
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_compact(void)
{
    size_t j = 0;

    pthread_mutex_lock(&F.lock);
    F.compacted = F.rev;
    for (size_t i = 0; i < F.n_ev; i++) {
        if (F.ev[i].rev <= F.compacted) {
            free(F.ev[i].key);
            free(F.ev[i].val);
        } else {
            F.ev[j++] = F.ev[i];
        }
    }
    F.n_ev = j;
    F.watch_gen++;
    pthread_cond_broadcast(&F.cond);
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_reorder(bool on)
{
    pthread_mutex_lock(&F.lock);
    F.reorder = on;
    pthread_mutex_unlock(&F.lock);
}

void fake_etcd_cut_watch(bool cut)
{
    pthread_mutex_lock(&F.lock);
    F.watch_cut = cut;
    F.watch_gen++;
    pthread_cond_broadcast(&F.cond);
    pthread_mutex_unlock(&F.lock);
}
