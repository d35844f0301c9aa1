/* SPDX-License-Identifier: MIT */
/*
 * commit.h - a handler's durable commit, and the daemon's side of the wait:
 * the handler commits and builds its answer; the daemon suspends the
 * connection until the change is durable, then sends it.
 */
#ifndef CFS_HTTP_COMMIT_H
#define CFS_HTTP_COMMIT_H

#include "context.h"

/* Commit a transaction durably (through the store when there is one) and
 * publish it. Consumes @txn. @return 0 (the handler goes on to build the
 * answer, sent once the change is durable, or replaced by a 503 if it
 * cannot be), or a negative errno: the change was undone and the request
 * is answered already. */
int cfs_http_commit(struct cfs_http_req *req, struct cfs_txn *txn);

/* The daemon, after the handler of a committing request: true if the
 * answer must wait (the connection is then suspended until the commit
 * thread resumes it). While the server stops, the worker waits here
 * instead and false is returned. */
bool cfs_http_commit_wait(struct cfs_http_req *req);
/* The request is back from a commit that is done: answer it. */
bool cfs_http_commit_ready(const struct cfs_http_req *req);
/* Runs a request again that lost a race on the cluster (bounded). */
#define CFS_HTTP_CAS_RETRIES 32
/* The commit is over: a failed one replaces the answer with a 503. In
 * cluster mode a change undone because another node appended first
 * returns true: the request is to be dispatched again (its answer was
 * reset); after CFS_HTTP_CAS_RETRIES, a 503 with EAGAIN. */
bool cfs_http_commit_finish(struct cfs_http_req *req);

/* For a request whose answer comes from elsewhere (forward.h): it now
 * waits as for a commit; cfs_http_commit_resolve() wakes it. */
void cfs_http_commit_begin(struct cfs_http_req *req);
/* The wait of @req is over (@err 0 or an errno; @revision it made
 * durable, or 0): resume it. Any thread, once. */
void cfs_http_commit_resolve(struct cfs_http_req *req,
                             int err,
                             uint64_t revision);

/* Let every suspended answer be resumed; from now on, workers wait for
 * their commits themselves instead of suspending. Before the daemon stops. */
void cfs_http_commit_stop(struct cfs_http_server *srv);

#endif /* CFS_HTTP_COMMIT_H */
