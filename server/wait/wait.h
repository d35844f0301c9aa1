/* SPDX-License-Identifier: MIT */
/*
 * wait.h - what a request waits for, and how its wait ends: one kind per
 * wait (enum cfs_http_wait_kind in context.h), each in its own file of
 * server/wait/, and the meeting of the worker with the thread that ends
 * the wait (wait.c). daemon.c's run() takes a request to its WAIT phase
 * when req->wait.kind is not CFS_WAIT_NONE, and its FINISH phase calls the
 * finish of that kind.
 */
#ifndef CFS_HTTP_WAIT_H
#define CFS_HTTP_WAIT_H

#include "context.h"

/* ---- wait.c: the meeting ----------------------------------------------- */

/* @req now waits for @kind; cfs_http_wait_resolve() ends it. Each wait
 * starts afresh (a request may wait more than once). */
void cfs_http_wait_begin(struct cfs_http_req *req,
                         enum cfs_http_wait_kind kind);
/* The wait of @req is over (@err 0 or an errno; @revision it made
 * durable, or 0): resume it. Any thread, once per wait. */
void cfs_http_wait_resolve(struct cfs_http_req *req,
                           int err,
                           uint64_t revision);
/* The daemon, after the handler of a waiting request: true if the answer
 * must wait (the connection is then suspended until the wait is
 * resolved). While the server stops, the worker waits here instead and
 * false is returned. */
bool cfs_http_wait_suspend(struct cfs_http_req *req);
/* The request is back from a wait that is over: finish it. */
bool cfs_http_wait_over(const struct cfs_http_req *req);
/* Let every suspended request be resumed; from now on, workers wait
 * themselves instead of suspending. Before the daemon stops. */
void cfs_http_wait_stop(struct cfs_http_server *srv);
/* The wait just begun has its result at once (no call back will come),
 * in the worker's thread. */
void cfs_http_wait_ended(struct cfs_http_req *req, int err);
/* Its answer is dropped: the request runs again, afresh. */
void cfs_http_wait_run_again(struct cfs_http_req *req);

/* ---- commit.c: CFS_WAIT_COMMIT ----------------------------------------- */

/* Commit a transaction durably (through the store when there is one) and
 * publish it. Consumes @txn. @return 0 (the handler goes on to build the
 * answer, sent once the change is durable, or replaced by a 503 if it
 * cannot be), or a negative errno: the change was undone and the request
 * is answered already. */
int cfs_http_commit(struct cfs_http_req *req, struct cfs_txn *txn);
/* Runs a request again that lost a race on the cluster (bounded), each
 * time once this node caught up (at most this long). */
#define CFS_HTTP_CAS_RETRIES   32
#define CFS_HTTP_RETRY_WAIT_MS 2000u
/* How long ?min_revision=N waits for this node to apply N (then 504). */
#define CFS_HTTP_MIN_REVISION_WAIT_MS 5000u
/* The commit is over: a failed one replaces the answer with a 503. In
 * cluster mode a change undone because another node appended first is
 * run again once the node caught up: true when it is to be dispatched
 * again at once (its answer was reset), false with a CFS_WAIT_CATCH_UP
 * wait begun (cfs_http_catch_up()); after CFS_HTTP_CAS_RETRIES, a 503
 * with EAGAIN. */
bool cfs_http_commit_finish(struct cfs_http_req *req);
/* 503 EAGAIN: other nodes won every race. */
void cfs_http_lost_every_race(struct cfs_http_req *req);

/* ---- catch-up.c: CFS_WAIT_CATCH_UP ------------------------------------- */

/* Cluster mode: the request waits (the worker goes on) until this node
 * has applied @revision and the log's head, not before @delay_us, at most
 * @timeout_ms; @why says what comes after (cfs_http_catch_up_finish()).
 * @return true when caught up already (no wait); false when waiting, a
 * wait that could not begin included: its error is its result, as if
 * called back. */
bool cfs_http_catch_up(struct cfs_http_req *req,
                       enum cfs_http_catch_up_why why,
                       uint64_t revision,
                       unsigned delay_us,
                       unsigned timeout_ms);
/* The catch-up is over: true to dispatch the request (caught up for
 * ?min_revision=, or to run again), false with its answer (504 for
 * ?min_revision=, 503 EAGAIN when a retry could not catch up). */
bool cfs_http_catch_up_finish(struct cfs_http_req *req);
/* The store's call back of a catch-up or a read index. */
void cfs_http_caught_up(void *req, int err);
/* The store was asked to wait for @req (@r its answer): true when there
 * is nothing to wait for, false when the request waits. */
bool cfs_http_wait_asked(struct cfs_http_req *req, int r);

/* ---- read-index.c: CFS_WAIT_READ_INDEX --------------------------------- */

/* Cluster mode: a read (req->tree_read) first waits until this node
 * applied everything etcd held when it came (linearizable), unless
 * ?consistency=serializable. @return true to go on at once; false with an
 * answer (400), or waiting (cfs_http_read_index_finish() then answers 503
 * or 504 on failure). */
bool cfs_http_read_index(struct cfs_http_req *req);
/* The same wait, begun: @return true when there is nothing to wait for. */
bool cfs_http_read_index_start(struct cfs_http_req *req);
/* The read index is over: true to dispatch, false with its answer. */
bool cfs_http_read_index_finish(struct cfs_http_req *req);

/* ---- held-read.c: CFS_WAIT_HELD_READ ----------------------------------- */

/*
 * Committed reads (docs/DESIGN.md "Committed reads"). A request whose
 * answer says what the tree holds (req->tree_answer: a read, or a write
 * refused on what it found) answers only with committed state: before its
 * handler runs, cfs_http_read_begin() marks where it starts; after,
 * cfs_http_read_hold() holds the answer while a transaction that changed
 * what it read is not committed (the connection sleeps; the read hook
 * resumes it), or resets it when it was torn or one was undone. @return
 * true: run the handler again now; false: answer, or wait.
 */
void cfs_http_read_begin(struct cfs_http_req *req);
bool cfs_http_read_hold(struct cfs_http_req *req);
/* The hold is over: true to run the handler again (something it saw was
 * undone), false to answer. */
bool cfs_http_read_finish(struct cfs_http_req *req);
/* Core's read hook (cfs_read_hook_add()): a transaction ended or the
 * mutation lock went; resume the held reads that may answer now. */
void cfs_http_reads_hook(void *srv);
/* Times a read is run again (torn, or what it saw was undone) before it
 * is answered 503; from the CFS_HTTP_READ_LOCK_AFTER-th on it runs under
 * the mutation lock, where it cannot be torn: only undos (a store that
 * fails, or a cluster node losing races for what it reads) count then. */
#define CFS_HTTP_REREADS         32
#define CFS_HTTP_READ_LOCK_AFTER 3
/* Run this read (a GET or HEAD of the tree) under the mutation lock: it
 * was torn CFS_HTTP_READ_LOCK_AFTER times. */
bool cfs_http_read_locked(const struct cfs_http_req *req);

/* ---- mount-commit.c ---------------------------------------------------- */
/* cfs_http_server_commit() (http.h): the mount's commit, its thread
 * waiting. */

#endif /* CFS_HTTP_WAIT_H */
