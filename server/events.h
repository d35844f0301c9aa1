/* SPDX-License-Identifier: MIT */
/*
 * events.h - the hub of committed changes (fed by wait/commit.c) and the
 * Server-Sent Events stream of GET /api/v1/events that reads it.
 */
#ifndef CFS_HTTP_EVENTS_H
#define CFS_HTTP_EVENTS_H

#include "context.h"

struct cfs_store;

int cfs_http_events_new(struct cfs_store *store, struct cfs_http_events **ret);
/* End every stream (none may stay suspended when the daemon stops). */
void cfs_http_events_stop(struct cfs_http_events *h);
void cfs_http_events_free(struct cfs_http_events *h);
/* The events of a transaction's records (@ch: the records of one
 * revision), made before it commits (new, or NULL); published once it is
 * durable, discarded if it is not. Published in any order, each revision
 * is sent once, in revision order; one published again, or after the hub
 * gave its place up (server/events.c), is dropped. */
struct cfs_http_evbatch *cfs_http_events_prepare(const struct cfs_change *ch,
                                                 size_t n);
void cfs_http_events_publish(struct cfs_http_events *h,
                             struct cfs_http_evbatch *b);
void cfs_http_events_discard(struct cfs_http_evbatch *b);
/* The server's tokens are now @now: streams whose token it no longer
 * gives the reader role end (a client that reconnects is asked again). */
void cfs_http_events_retoken(struct cfs_http_events *h,
                             const struct cfs_http_tokens *now);

/* GET /api/v1/events */
void cfs_http_handle_events(struct cfs_http_req *req);

#endif /* CFS_HTTP_EVENTS_H */
