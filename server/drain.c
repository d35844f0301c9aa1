// SPDX-License-Identifier: MIT
/*
 * drain.c - see drain.h.
 *
 * Every open connection has a node in a list, made when libmicrohttpd
 * reports it started and freed when it reports it closed; shutting the
 * socket down makes its worker read the end of stream and close it, as a
 * client leaving would. One lock for the list and the counts: it is taken
 * once per connection and twice per request, never on a path that waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"

struct cfs_http_conn {
    struct cfs_http_conn *prev, *next;
    int fd;
};

void cfs_http_drain_init(struct cfs_http_drain *d)
{
    pthread_condattr_t ca;

    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->changed, &ca);
    pthread_condattr_destroy(&ca);
    d->conns = NULL;
    d->n_conns = 0;
    d->n_busy = 0;
    atomic_store(&d->stopping, false);
}

/* @pre no connection is left: libmicrohttpd has stopped. */
void cfs_http_drain_fini(struct cfs_http_drain *d)
{
    pthread_cond_destroy(&d->changed);
    pthread_mutex_destroy(&d->lock);
}

enum MHD_Result
cfs_http_drain_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct cfs_http_server *srv = cls;

    (void)addr;
    (void)addrlen;
    return atomic_load(&srv->drain.stopping) ? MHD_NO : MHD_YES;
}

void cfs_http_drain_notify(void *cls,
                           struct MHD_Connection *conn,
                           void **socket_context,
                           enum MHD_ConnectionNotificationCode code)
{
    struct cfs_http_drain *d = &((struct cfs_http_server *)cls)->drain;
    struct cfs_http_conn *c = *socket_context;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

        c = calloc(1, sizeof(*c));
        if (!c || !info) {
            /* untracked: libmicrohttpd's own stop closes it */
            free(c);
            *socket_context = NULL;
            return;
        }
        c->fd = info->connect_fd;
        pthread_mutex_lock(&d->lock);
        c->next = d->conns;
        if (d->conns) {
            d->conns->prev = c;
        }
        d->conns = c;
        d->n_conns++;
        if (atomic_load(&d->stopping)) {
            /* accepted before the stop, seen after its sweep */
            (void)shutdown(c->fd, SHUT_RDWR);
        }
        pthread_mutex_unlock(&d->lock);
        *socket_context = c;
        return;
    }
    if (!c) {
        return;
    }
    pthread_mutex_lock(&d->lock);
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        d->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    d->n_conns--;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    free(c);
    *socket_context = NULL;
}

void cfs_http_drain_busy(struct cfs_http_drain *d)
{
    pthread_mutex_lock(&d->lock);
    d->n_busy++;
    pthread_mutex_unlock(&d->lock);
}

void cfs_http_drain_idle(struct cfs_http_drain *d)
{
    pthread_mutex_lock(&d->lock);
    if (--d->n_busy == 0) {
        pthread_cond_broadcast(&d->changed);
    }
    pthread_mutex_unlock(&d->lock);
}

/* Waits on d->changed until *@count is 0 or @ms have passed.
 * @pre d->lock */
static void
wait_zero(struct cfs_http_drain *d, const size_t *count, unsigned ms)
{
    struct timespec until;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000u;
    until.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (*count > 0 &&
           pthread_cond_timedwait(&d->changed, &d->lock, &until) != ETIMEDOUT) {
    }
}

size_t cfs_http_drain(struct cfs_http_drain *d)
{
    size_t left;

    pthread_mutex_lock(&d->lock);
    atomic_store(&d->stopping, true);
    wait_zero(d, &d->n_busy, CFS_DRAIN_ANSWER_MS);
    for (struct cfs_http_conn *c = d->conns; c; c = c->next) {
        (void)shutdown(c->fd, SHUT_RDWR);
    }
    wait_zero(d, &d->n_conns, CFS_DRAIN_CLOSE_MS);
    left = d->n_conns;
    pthread_mutex_unlock(&d->lock);
    return left;
}
