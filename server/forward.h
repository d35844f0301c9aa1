/* SPDX-License-Identifier: MIT */
/*
 * forward.h - cluster mode: a node that is not the writer sends its write
 * requests to the writer (cfs_store_writer()) instead of racing it for
 * the head of the log, and answers with the writer's answer once it has
 * applied the change itself.
 */
#ifndef CFS_HTTP_FORWARD_H
#define CFS_HTTP_FORWARD_H

#include <stdbool.h>

#include "context.h"

/* The header a forwarded request carries: its receiver never forwards
 * it again (two nodes that each see the other as the writer). */
#define CFS_FORWARDED_HEADER "X-Configfsd-Forwarded"
/* The revision a forwarded write made durable, on the writer's answer. */
#define CFS_REVISION_HEADER "X-Configfsd-Revision"

/* The forwarding threads of @srv (only with a cluster store); @peer_cacert
 * verifies writers served over https (NULL: the system's CAs). */
int cfs_http_forward_new(struct cfs_http_server *srv,
                         const char *peer_cacert,
                         struct cfs_http_forward **ret);
/* Stopping: transfers in flight end at once (their requests are answered
 * 503), nothing new is forwarded. */
void cfs_http_forward_stop(struct cfs_http_forward *f);
/* After every forwarded request was answered. NULL is fine. */
void cfs_http_forward_free(struct cfs_http_forward *f);

/* @req is what a node forwards: a write (POST, PUT, DELETE) its route
 * takes. */
bool cfs_http_forwardable(const struct cfs_http_req *req);
/* @req, a write with its body read, goes to the writer when another node
 * is the writer. @return true: it went, and its answer comes back as a
 * commit does (CFS_WAIT_FORWARD, server/wait/); false: run it here. */
bool cfs_http_forward(struct cfs_http_req *req);
/* Back from the writer (CFS_WAIT_FORWARD over, in the worker): build the
 * answer.
 * @return true when the writer could not be reached and nothing was
 * sent: run the request here instead. */
bool cfs_http_forward_finish(struct cfs_http_req *req);
/* The request came from another node (it carries CFS_FORWARDED_HEADER):
 * tell it the revision of its change, once answered. */
void cfs_http_forward_mark(struct cfs_http_req *req);

#endif
