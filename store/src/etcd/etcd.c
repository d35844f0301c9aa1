// SPDX-License-Identifier: MIT
/*
 * etcd.c - the etcd backend's entry points (its ops table, backend.h):
 * open (a fresh cache, the snapshot and the log loaded), start and stop of
 * its four threads, close, and what it tells of the cluster.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

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

int etcd_open(struct cfs_store *s, const struct cfs_store_options *opts)
{
    const char *url = opts->etcd;
    struct store_etcd *e;
    int r;

    etcd_gateway_init();
    e = calloc(1, sizeof(*e));
    if (!e) {
        return -ENOMEM;
    }
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    s->backend = e;
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
    etcd_random_hex(e->node_id, 8);
    r = etcd_lease_grant(e);
    if (r < 0) {
        return r;
    }
    /* The published snapshot (if any) into the (fresh) cache, then the
     * log after it. A newer snapshot may replace it meanwhile and the log
     * below that be trimmed: then again, from the newer one. */
    for (int attempt = 0;; attempt++) {
        uint64_t snap = 0, head;

        r = etcd_load_snapshot(s, &snap);
        if (r == 0 && snap == 0 && attempt > 0) {
            r = -ESTALE; /* the cache holds a part of the log: start over */
        }
        if (r == 0) {
            pthread_mutex_lock(&e->lock);
            if (snap > 0) {
                e->applied = snap;
            }
            pthread_mutex_unlock(&e->lock);
            r = etcd_node_register(e, snap); /* trimming keeps what follows */
        }
        if (r == 0) {
            r = etcd_read_head(e, NULL);
        }
        if (r == 0) {
            pthread_mutex_lock(&e->lock);
            head = e->log_head;
            pthread_mutex_unlock(&e->lock);
            r = etcd_read_log(s, snap + 1, head, etcd_load_batch, NULL);
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

/* Every thread of the store ends (each sees e->stop). */
static void stop_threads(struct store_etcd *e)
{
    pthread_mutex_lock(&e->lock);
    e->stop = true;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

int etcd_start(struct cfs_store *s)
{
    struct store_etcd *e = s->backend;
    struct {
        pthread_t *thread;
        void *(*main)(void *);
    } th[] = {
        {&e->applier, etcd_applier_main},
        {&e->watcher, etcd_watcher_main},
        {&e->keeper, etcd_keeper_main},
        {&e->waiter, etcd_waiter_main},
        {&e->reader, etcd_reader_main},
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

void etcd_stop(struct cfs_store *s)
{
    struct store_etcd *e = s->backend;

    if (!e || !e->threads) {
        return;
    }
    stop_threads(e);
    pthread_join(e->reader, NULL);
    pthread_join(e->waiter, NULL);
    pthread_join(e->keeper, NULL);
    pthread_join(e->watcher, NULL);
    pthread_join(e->applier, NULL);
    e->threads = false;
}

void etcd_close(struct cfs_store *s)
{
    struct store_etcd *e = s->backend;
    bool reachable;

    if (!e) {
        return;
    }
    etcd_stop(s);
    pthread_mutex_lock(&e->lock);
    reachable = e->error[0] == '\0';
    pthread_mutex_unlock(&e->lock);
    if (reachable) {
        etcd_lease_revoke(e); /* gone from the registry at once, not in 5 s */
    }
    for (size_t i = 0; i < e->n_ep; i++) {
        free(e->ep[i]);
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
        etcd_seen_pop(e);
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
    etcd_gateway_cleanup(e);
    free(e);
    s->backend = NULL;
}

int etcd_cluster(struct cfs_store *s, struct cfs_store_cluster_info *ret)
{
    struct store_etcd *e = s->backend;

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

bool etcd_stale(struct cfs_store *s)
{
    struct store_etcd *e = s->backend;
    bool stale;

    if (!e) {
        return false;
    }
    pthread_mutex_lock(&e->lock);
    stale = e->error[0] || !e->watching || e->fell_behind;
    pthread_mutex_unlock(&e->lock);
    return stale;
}

int etcd_cluster_subsystems(struct cfs_store *s,
                            const char *set,
                            char **ret_cluster_set)
{
    struct store_etcd *e = s->backend;
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
        body, "compare", json_pack("[o]", etcd_cmp_value(key, NULL)));
    json_object_set_new(
        body, "success", json_pack("[o]", etcd_op_put(key, set, strlen(set))));
    fail = json_object();
    json_object_set_new(fail, "key", etcd_jb64s(key));
    json_object_set_new(
        body, "failure", json_pack("[{so}]", "request_range", fail));
    r = etcd_post(e, "/v3/kv/txn", body, &ans);
    json_decref(body);
    free(key);
    if (r == 0 && !json_is_true(json_object_get(ans, "succeeded"))) {
        json_t *resp = json_array_get(json_object_get(ans, "responses"), 0);
        json_t *kvs =
            json_object_get(json_object_get(resp, "response_range"), "kvs");
        char *v = etcd_kv_field(json_array_get(kvs, 0), "value", NULL);

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

const struct store_backend_ops store_etcd_ops = {
    .name = "etcd",
    .open = etcd_open,
    .start = etcd_start,
    .stop = etcd_stop,
    .close = etcd_close,
    .commit = etcd_commit,
    .catch_up_async = etcd_catch_up_async,
    .read_index_async = etcd_read_index_async,
    .cluster = etcd_cluster,
    .stale = etcd_stale,
    .cluster_subsystems = etcd_cluster_subsystems,
    .writer = etcd_writer,
    .advertise = etcd_advertise,
};
