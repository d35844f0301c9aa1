// SPDX-License-Identifier: MIT
/*
 * kv.c - etcd's key-value verbs as the backend uses them, over the gateway
 * (gateway.c): put, get, range deletion, txns and their compares and
 * operations, keys and values in base64 (the store's one codec); the
 * authentication of a user, made again when etcd refuses its token.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <configfs/base64.h>

#include "etcd.h"

json_t *etcd_jb64(const void *p, size_t len)
{
    char *e = cfs_base64_encode(p, len);
    json_t *j = e ? json_string(e) : NULL;

    free(e);
    return j;
}

json_t *etcd_jb64s(const char *s)
{
    return etcd_jb64(s, strlen(s));
}

void etcd_set_error(struct store_etcd *e, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&e->lock);
    va_start(ap, fmt);
    (void)vsnprintf(e->error, sizeof(e->error), fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&e->lock);
}

/* Get a token for the user (etcd's simple tokens expire: called again
 * when a request is refused for its token). */
int etcd_authenticate(struct store_etcd *e)
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

/* With a user: a request refused for its token (expired, or etcd lost
 * it) authenticates again and is made once more. */
int etcd_post(struct store_etcd *e, const char *api, json_t *body, json_t **ret)
{
    int r = etcd_post_raw(e, api, body, ret);

    if (r == -EACCES && e->user && etcd_authenticate(e) == 0) {
        r = etcd_post_raw(e, api, body, ret);
    }
    return r;
}

/* A kv's base64 field decoded, or NULL. */
char *etcd_kv_field(json_t *kv, const char *name, size_t *ret_len)
{
    const char *v = json_string_value(json_object_get(kv, name));
    size_t n = 0;
    char *d = NULL;

    if (v && cfs_base64_decode(v, strlen(v), &d, &n) < 0) {
        d = NULL;
    }

    if (ret_len) {
        *ret_len = n;
    }
    return d;
}

uint64_t etcd_jnum(json_t *j)
{
    if (json_is_integer(j)) {
        return (uint64_t)json_integer_value(j);
    }
    if (json_is_string(j)) {
        return strtoull(json_string_value(j), NULL, 10);
    }
    return 0;
}

json_t *etcd_op_put(const char *key, const char *val, size_t len)
{
    json_t *p = json_object(), *o = json_object();

    json_object_set_new(p, "key", etcd_jb64s(key));
    json_object_set_new(p, "value", etcd_jb64(val, len));
    json_object_set_new(o, "request_put", p);
    return o;
}

/* A txn's compare: @key equals @value, or (@value NULL) does not exist. */
json_t *etcd_cmp_value(const char *key, const char *value)
{
    json_t *c = json_object();

    json_object_set_new(c, "key", etcd_jb64s(key));
    if (value) {
        json_object_set_new(c, "target", json_string("VALUE"));
        json_object_set_new(c, "value", etcd_jb64s(value));
    } else {
        json_object_set_new(c, "target", json_string("VERSION"));
        json_object_set_new(c, "version", json_string("0"));
    }
    json_object_set_new(c, "result", json_string("EQUAL"));
    return c;
}

int etcd_put_plain(struct store_etcd *e,
                   const char *key,
                   const char *val,
                   size_t len)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "key", etcd_jb64s(key));
    json_object_set_new(body, "value", etcd_jb64(val, len));
    r = etcd_post(e, "/v3/kv/put", body, &ans);
    json_decref(body);
    json_decref(ans);
    return r;
}

/* Delete [@key, @end): @return the number of keys deleted, or an errno. */
int64_t
etcd_delete_range(struct store_etcd *e, const char *key, const char *end)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t r;

    json_object_set_new(body, "key", etcd_jb64s(key));
    json_object_set_new(body, "range_end", etcd_jb64s(end));
    r = etcd_post(e, "/v3/kv/deleterange", body, &ans);
    if (r == 0) {
        r = (int64_t)etcd_jnum(json_object_get(ans, "deleted"));
    }
    json_decref(ans);
    json_decref(body);
    return r;
}

void etcd_delete_prefix(struct store_etcd *e, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end = strdup(prefix);

    if (end && n > 0) {
        end[n - 1]++;
        (void)etcd_delete_range(e, prefix, end);
    }
    free(end);
}

/* The first kv of the @i-th answer of a txn's ranges, or NULL. */
json_t *etcd_range_kv(json_t *ans, size_t i)
{
    json_t *resp = json_array_get(json_object_get(ans, "responses"), i);

    return json_array_get(
        json_object_get(json_object_get(resp, "response_range"), "kvs"), 0);
}

/* The value of @key (NULL when absent). @return 0 or an etcd errno. */
int etcd_get(struct store_etcd *e, const char *key, char **ret, size_t *ret_len)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    *ret = NULL;
    json_object_set_new(body, "key", etcd_jb64s(key));
    r = etcd_post(e, "/v3/kv/range", body, &ans);
    json_decref(body);
    if (r == 0) {
        *ret = etcd_kv_field(
            json_array_get(json_object_get(ans, "kvs"), 0), "value", ret_len);
    }
    json_decref(ans);
    return r;
}

/* Run a txn. @return 0 with *ret_ok whether its compares held. */
int etcd_txn(struct store_etcd *e, json_t *body, bool *ret_ok)
{
    json_t *ans = NULL;
    int r = etcd_post(e, "/v3/kv/txn", body, &ans);

    *ret_ok = r == 0 && json_is_true(json_object_get(ans, "succeeded"));
    json_decref(ans);
    return r;
}

json_t *etcd_lease_json(int64_t lease)
{
    char v[24];

    (void)snprintf(v, sizeof(v), "%" PRId64, lease);
    return json_string(v);
}

/* A compare: @key is held under this node's @lease. */
json_t *etcd_cmp_lease(const char *key, int64_t lease)
{
    json_t *c = json_object();

    json_object_set_new(c, "key", etcd_jb64s(key));
    json_object_set_new(c, "target", json_string("LEASE"));
    json_object_set_new(c, "lease", etcd_lease_json(lease));
    json_object_set_new(c, "result", json_string("EQUAL"));
    return c;
}

json_t *etcd_op_delete_range(const char *key, size_t klen, const char *end)
{
    json_t *d = json_object(), *o = json_object();

    json_object_set_new(d, "key", etcd_jb64(key, klen));
    json_object_set_new(d, "range_end", etcd_jb64s(end));
    json_object_set_new(o, "request_delete_range", d);
    return o;
}

/* Put @key = @val under @lease (not 0) if @key does not exist. @return 0
 * with *ret_ok whether @key is this node's now: put, or found held under
 * @lease already. That is a put whose answer was lost: etcd made it, and
 * the request sent again (to the next member, or by libcurl on a kept
 * connection), or the next round's, finds the key there. Taken for a
 * refusal, a lock would stay held, under a lease that lives as long as
 * the node, by a node that does not know it holds it. */
int etcd_put_if_absent(struct store_etcd *e,
                       const char *key,
                       const char *val,
                       int64_t lease,
                       bool *ret_ok)
{
    json_t *body = json_object(), *ans = NULL;
    json_t *put = etcd_op_put(key, val, strlen(val));
    json_t *held = json_object();
    int r;

    json_object_set_new(
        body, "compare", json_pack("[o]", etcd_cmp_value(key, NULL)));
    json_object_set_new(
        json_object_get(put, "request_put"), "lease", etcd_lease_json(lease));
    json_object_set_new(body, "success", json_pack("[o]", put));
    json_object_set_new(held, "key", etcd_jb64s(key));
    json_object_set_new(
        body, "failure", json_pack("[{so}]", "request_range", held));
    r = etcd_post(e, "/v3/kv/txn", body, &ans);
    *ret_ok =
        r == 0 && (json_is_true(json_object_get(ans, "succeeded")) ||
                   etcd_jnum(json_object_get(etcd_range_kv(ans, 0), "lease")) ==
                       (uint64_t)lease);
    json_decref(ans);
    json_decref(body);
    return r;
}
