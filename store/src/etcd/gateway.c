// SPDX-License-Identifier: MIT
/*
 * gateway.c - the client of etcd's JSON gateway over libcurl: the endpoints
 * of the etcd:// or etcds:// URL, TLS as etcdctl's --cacert, --cert and
 * --key, a pool of connections, and the two kinds of request the backend
 * makes: one POST answered by one JSON object (tried on each endpoint in
 * turn), and the watch, a stream of JSON objects. Everything else of the
 * backend reaches etcd through these (tests put a fake in this file's
 * place: tests/unit/fake-etcd.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "etcd.h"

void etcd_gateway_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void etcd_gateway_cleanup(struct store_etcd *e)
{
    for (size_t i = 0; i < e->n_pool; i++) {
        curl_easy_cleanup(e->pool[i]);
    }
    e->n_pool = 0;
    curl_global_cleanup();
}

static size_t buf_write(char *data, size_t size, size_t nmemb, void *ud)
{
    size_t n = size * nmemb;

    return store_buf_add(ud, data, n) == 0 ? n : 0;
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

/* What a failed transfer means for the caller, and the reason kept. */
static int transfer_error(struct store_etcd *e, size_t k, CURLcode cc)
{
    int r;

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
    etcd_set_error(e, "etcd %s: %s", e->ep[k], curl_easy_strerror(cc));
    return r;
}

/* What an answer other than 200 (@code, body @b) means, and the reason
 * kept: no quorum, no leader, timed out; or refused credentials. */
static int status_error(struct store_etcd *e,
                        size_t k,
                        long code,
                        const struct store_buf *b)
{
    json_t *j = json_loadb(b->p ? b->p : "", b->n, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    int r = code == 401 || (msg && strstr(msg, "auth")) ? -EACCES : -ETIMEDOUT;

    etcd_set_error(e,
                   "etcd %s: HTTP %ld: %s",
                   e->ep[k],
                   code,
                   msg ? msg : "no reason given");
    json_decref(j);
    return r;
}

/* One POST of @text to endpoint @k: 0 with *@ret the parsed answer, or
 * -errno (the reason kept). */
static int post_one(struct store_etcd *e,
                    CURL *c,
                    struct curl_slist *hdrs,
                    size_t k,
                    const char *api,
                    const char *text,
                    json_t **ret)
{
    char url[512];
    struct store_buf b = {0};
    long code = 0;
    uint64_t t0 = mono_us();
    CURLcode cc;
    int r = 0;

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
        *ret = json_loadb(b.p ? b.p : "", b.n, 0, NULL);
        if (!*ret) {
            r = -EIO;
            etcd_set_error(e, "etcd %s answered with bad JSON", e->ep[k]);
        }
    } else {
        atomic_fetch_add(&e->n_failures, 1);
        r = cc != CURLE_OK ? transfer_error(e, k, cc)
                           : status_error(e, k, code, &b);
    }
    cfs_free(b.p);
    return r;
}

/*
 * POST @body to @api on the endpoint that answered last, then on the
 * others in turn. @return 0 with *ret the parsed answer, or -ETIMEDOUT /
 * -ECONNREFUSED / -EIO when no endpoint gave a 200; the reason is kept for
 * etcd_cluster().
 */
int etcd_post_raw(struct store_etcd *e,
                  const char *api,
                  json_t *body,
                  json_t **ret)
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

        r = post_one(e, c, hdrs, k, api, text, ret);
        if (r == 0) {
            atomic_store(&e->cur, k);
            pthread_mutex_lock(&e->lock);
            e->error[0] = '\0';
            pthread_mutex_unlock(&e->lock);
            break;
        }
    }
    free(text);
    curl_slist_free_all(hdrs);
    curl_give(e, c);
    return r;
}

struct stream {
    size_t (*on_data)(const char *data, size_t len, void *ud);
    void *ud;
};

static size_t stream_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct stream *st = ud;

    return st->on_data(data, size * nmemb, st->ud);
}

/* The transfer ends when the store stops. */
static int stream_progress(
    void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
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

int etcd_watch_stream(struct store_etcd *e,
                      const char *body,
                      size_t (*on_data)(const char *data, size_t len, void *ud),
                      void *ud)
{
    struct stream st = {.on_data = on_data, .ud = ud};
    struct curl_slist *hdrs;
    char url[512];
    CURL *c = curl_easy_init();
    CURLcode cc;

    if (!c) {
        return -ENOMEM;
    }
    (void)snprintf(
        url, sizeof(url), "%s/v3/watch", e->ep[atomic_load(&e->cur)]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stream_progress);
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
    cc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
    return cc == CURLE_OK ? 0 : -ECONNRESET;
}
