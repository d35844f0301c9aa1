// SPDX-License-Identifier: MIT
/*
 * role.c - this node's lease, its entry in the node registry, the writer
 * role (who appends for the others), and the keeper thread that keeps
 * them alive once a second and writes snapshots and trims.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

int64_t etcd_lease_of(struct store_etcd *e)
{
    int64_t l;

    pthread_mutex_lock(&e->lock);
    l = e->lease;
    pthread_mutex_unlock(&e->lock);
    return l;
}

int etcd_lease_grant(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int r;

    json_object_set_new(body, "TTL", json_integer(ETCD_LEASE_TTL));
    r = etcd_post(e, "/v3/lease/grant", body, &ans);
    json_decref(body);
    if (r == 0) {
        int64_t id = (int64_t)etcd_jnum(json_object_get(ans, "ID"));

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
int etcd_lease_keepalive(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t lease = etcd_lease_of(e);
    int r;

    if (lease == 0) {
        json_decref(body);
        return -ENOENT;
    }
    json_object_set_new(body, "ID", etcd_lease_json(lease));
    r = etcd_post(e, "/v3/lease/keepalive", body, &ans);
    json_decref(body);
    if (r == 0 && etcd_jnum(json_object_get(json_object_get(ans, "result"),
                                            "TTL")) == 0) {
        r = -ENOENT;
    }
    json_decref(ans);
    return r;
}

void etcd_lease_revoke(struct store_etcd *e)
{
    json_t *body = json_object(), *ans = NULL;
    int64_t lease = etcd_lease_of(e);

    if (lease != 0) {
        json_object_set_new(body, "ID", etcd_lease_json(lease));
        (void)etcd_post(e, "/v3/lease/revoke", body, &ans);
        json_decref(ans);
    }
    json_decref(body);
}

/* PREFIX/nodes/NODE = @applied, under this node's lease: trimming keeps
 * the log this node still needs. */
int etcd_node_register(struct store_etcd *e, uint64_t applied)
{
    json_t *body = json_object(), *ans = NULL;
    char key[600], val[24];
    int64_t lease = etcd_lease_of(e);
    int r;

    if (lease == 0) {
        json_decref(body);
        return -ENOENT;
    }
    (void)snprintf(key, sizeof(key), "%s%s", e->k_nodes, e->node_id);
    (void)snprintf(val, sizeof(val), "%" PRIu64, applied);
    json_object_set_new(body, "key", etcd_jb64s(key));
    json_object_set_new(body, "value", etcd_jb64s(val));
    json_object_set_new(body, "lease", etcd_lease_json(lease));
    r = etcd_post(e, "/v3/kv/put", body, &ans);
    json_decref(body);
    json_decref(ans);
    return r;
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
        etcd_put_if_absent(e, e->k_writer, mine, lease, &ok) == 0 && ok) {
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
void *etcd_keeper_main(void *arg)
{
    struct cfs_store *s = arg;
    struct store_etcd *e = s->backend;
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
        r = etcd_lease_keepalive(e);
        if (r == -ENOENT && etcd_lease_grant(e) == 0) {
            reported = UINT64_MAX; /* the entry went with the old lease */
        }
        if (behind) {
            continue; /* it needs what was trimmed: not a live reader */
        }
        if (applied != reported && etcd_node_register(e, applied) == 0) {
            reported = applied;
        }
        elect_writer(e, etcd_lease_of(e));
        etcd_maybe_snapshot(s);
        etcd_maybe_trim(e, &trimmed);
    }
    return NULL;
}

int etcd_writer(struct cfs_store *s, char *url, size_t size)
{
    struct store_etcd *e = s->backend;
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

int etcd_advertise(struct cfs_store *s, const char *url)
{
    struct store_etcd *e = s->backend;
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
