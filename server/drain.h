/* SPDX-License-Identifier: MIT */
/*
 * drain.h - how the server stops: no new connection, the requests in
 * flight answered, then every connection closed by us, and only then
 * libmicrohttpd's own stop.
 *
 * libmicrohttpd 0.9.75 must never meet a connection still at work when
 * MHD_stop_daemon() runs: a worker that answers a malformed header line
 * in that window queues its 400 after the stop flag is set, which
 * MHD_queue_response() accepts without keeping, and then reads the
 * response it did not keep (a NULL dereference). The stop below leaves it
 * no connection to work on.
 */
#ifndef CFS_HTTP_DRAIN_H
#define CFS_HTTP_DRAIN_H

#include <sys/socket.h>

#include "context.h"

/* How long the stop waits for requests in flight to be answered, then
 * for the connections it closed to be gone. */
#define CFS_DRAIN_ANSWER_MS 2000u
#define CFS_DRAIN_CLOSE_MS  1000u

void cfs_http_drain_init(struct cfs_http_drain *d);
void cfs_http_drain_fini(struct cfs_http_drain *d);

/* libmicrohttpd's accept policy (cls: the server): refuses new
 * connections once the server stops. */
enum MHD_Result cfs_http_drain_accept(void *cls,
                                      const struct sockaddr *addr,
                                      socklen_t addrlen);

/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION (cls: the server): keeps
 * the set of open connections. */
void cfs_http_drain_notify(void *cls,
                           struct MHD_Connection *conn,
                           void **socket_context,
                           enum MHD_ConnectionNotificationCode code);

/* A request began (its context was made) / completed. */
void cfs_http_drain_busy(struct cfs_http_drain *d);
void cfs_http_drain_idle(struct cfs_http_drain *d);

/* The stop, before MHD_stop_daemon(): refuse new connections, wait up to
 * CFS_DRAIN_ANSWER_MS for every request in flight to be answered, shut
 * every connection down, wait up to CFS_DRAIN_CLOSE_MS for them to be
 * closed. Returns the number of connections still open. */
size_t cfs_http_drain(struct cfs_http_drain *d);

#endif
