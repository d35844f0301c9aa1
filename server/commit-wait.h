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
/* Runs a request again that lost a race on the cluster (bounded), each
 * time once this node caught up (at most this long). */
#define CFS_HTTP_CAS_RETRIES   32
#define CFS_HTTP_RETRY_WAIT_MS 2000u
/* How long ?min_revision=N waits for this node to apply N (then 504). */
#define CFS_HTTP_MIN_REVISION_WAIT_MS 5000u
/* The commit is over: a failed one replaces the answer with a 503. In
 * cluster mode a change undone because another node appended first is
 * run again once the node caught up: true when it is to be dispatched
 * again at once (its answer was reset), false with req->wait.committing set
 * when it waits to catch up first (cfs_http_catch_up()); after
 * CFS_HTTP_CAS_RETRIES, a 503 with EAGAIN. */
bool cfs_http_commit_finish(struct cfs_http_req *req);

/* Cluster mode: the request waits (as for a commit, the worker goes on)
 * until this node has applied @revision and the log's head, not before
 * @delay_us, at most @timeout_ms; @why says what comes after
 * (cfs_http_catch_up_finish()). @return true when caught up already (no
 * wait); false when waiting (req->wait.committing), a wait that could not
 * begin included: its error is its result, as if called back. */
bool cfs_http_catch_up(struct cfs_http_req *req,
                       int why,
                       uint64_t revision,
                       unsigned delay_us,
                       unsigned timeout_ms);
/* The catch-up is over: true to dispatch the request (caught up for
 * ?min_revision=, or to run again), false with its answer (504 for
 * ?min_revision=, 503 EAGAIN when a retry could not catch up). */
bool cfs_http_catch_up_finish(struct cfs_http_req *req);

/* For a request whose answer comes from elsewhere (forward.h): it now
 * waits as for a commit; cfs_http_commit_resolve() wakes it. */
void cfs_http_commit_begin(struct cfs_http_req *req);
/* The wait of @req is over (@err 0 or an errno; @revision it made
 * durable, or 0): resume it. Any thread, once. */
void cfs_http_commit_resolve(struct cfs_http_req *req,
                             int err,
                             uint64_t revision);

/*
 * Committed reads (docs/DESIGN.md "Committed reads"). A request whose
 * answer says what the tree holds (req->tree_answer: a read, or a write
 * refused on what it found) answers only with committed state: before its
 * handler runs, cfs_http_read_begin() marks where it starts; after,
 * cfs_http_read_hold() holds the answer while a transaction it may have
 * seen is not committed (the connection sleeps as for a commit; the read
 * hook resumes it), or resets it when one was undone or the tree changed
 * under it. @return true: run the handler again now; false: answer, or
 * wait (req->wait.committing).
 */
void cfs_http_read_begin(struct cfs_http_req *req);
bool cfs_http_read_hold(struct cfs_http_req *req);
/* The hold is over: true to run the handler again (something it saw was
 * undone), false to answer. */
bool cfs_http_read_finish(struct cfs_http_req *req);
/* Core's read hook (cfs_read_hook_add()): a transaction ended or the
 * mutation lock went; resume the held reads that may answer now. */
void cfs_http_reads_hook(void *srv);
/* Cluster mode: a read (req->tree_read) first waits (as for a commit) until
 * this node applied everything etcd held when it came (linearizable),
 * unless ?consistency=serializable. @return true to go on at once; false
 * with an answer (400), or waiting (cfs_http_catch_up_finish() then
 * answers 503 or 504 on failure). */
bool cfs_http_read_index(struct cfs_http_req *req);
/* Times a read is run again (torn, or what it saw was undone) before it
 * is answered 503; from the CFS_HTTP_READ_LOCK_AFTER-th on it runs under
 * the mutation lock, where it cannot be torn: only undos (a store that
 * fails, or a cluster node losing races for what it reads) count then. */
#define CFS_HTTP_REREADS         32
#define CFS_HTTP_READ_LOCK_AFTER 3
/* Run this read (a GET or HEAD of the tree) under the mutation lock: it
 * was torn CFS_HTTP_READ_LOCK_AFTER times. */
bool cfs_http_read_locked(const struct cfs_http_req *req);

/* Let every suspended answer be resumed; from now on, workers wait for
 * their commits themselves instead of suspending. Before the daemon stops. */
void cfs_http_commit_stop(struct cfs_http_server *srv);

#endif /* CFS_HTTP_COMMIT_H */
