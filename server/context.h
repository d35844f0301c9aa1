/* SPDX-License-Identifier: MIT */
/*
 * context.h - the two structures every part of the server reads: the
 * server (made by daemon.c) and one request.
 *
 * The bottom of server/: it declares data and a few inline accessors, no
 * function of another file, so any file may include it. Each request gets
 * one struct cfs_http_req, made on the first call of the access handler and
 * freed in the completion callback (the libmicrohttpd pattern of
 * docs/STYLE.md); a handler answers by filling req->resp once.
 */
#ifndef CFS_HTTP_CONTEXT_H
#define CFS_HTTP_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include <configfs/cfs.h>

#include "http.h"

struct cfs_http_conn;
struct cfs_http_events;
struct cfs_http_evbatch;
struct cfs_http_forward;
struct cfs_http_fwd_batch;
struct cfs_http_fwd_job;
struct cfs_http_req;
struct cfs_http_route;
struct cfs_http_scope;
struct cfs_http_sub;
struct cfs_http_throttle;

/* The methods a route can answer; CFS_M_OTHER is any other, always 405. */
enum cfs_http_method {
    CFS_M_GET = 1,
    CFS_M_HEAD,
    CFS_M_POST,
    CFS_M_PUT,
    CFS_M_DELETE,
    CFS_M_OTHER,
};

/* A set of methods, one bit each (the Allow header of a 405). */
#define CFS_M(m)   (1u << (m))
#define CFS_M_READ (CFS_M(CFS_M_GET) | CFS_M(CFS_M_HEAD))
#define CFS_M_ANY                                                              \
    (CFS_M_READ | CFS_M(CFS_M_POST) | CFS_M(CFS_M_PUT) | CFS_M(CFS_M_DELETE))

/* The open connections and the requests in flight, for the stop (drain.h).
 */
struct cfs_http_drain {
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a connection closed, or none is busy */
    struct cfs_http_conn *conns; /* open connections */
    size_t n_conns;
    size_t n_busy;        /* requests made and not yet completed */
    atomic_bool stopping; /* new connections are refused */
};

struct cfs_http_server {
    struct MHD_Daemon *daemon;
    struct cfs_http_drain drain;
    struct cfs_http_events *events;
    /* Requests whose answer waits for their durable commit (wait/commit.c): the
     * store's commit thread calls each back, which resumes it. No lock on
     * that path but for the last step of a suspended one. */
    pthread_mutex_t c_lock;
    pthread_cond_t c_done; /* a suspended one is resumed, or a worker's
                            * own waits are over */
    atomic_size_t c_async; /* may be or are suspended, not yet resumed */
    atomic_bool c_stop;    /* stopping: no more suspending */
    /* Reads whose answers wait for the transactions they may have seen to
     * be committed (wait/held-read.c); core's read hook resumes them. */
    pthread_mutex_t h_lock;
    struct cfs_http_req *held; /* h_lock */
    atomic_size_t n_held;
    bool read_hooked;
    bool cluster;                 /* the store is in cluster mode */
    struct cfs_http_options opts; /* opts.tokens is NULL: see tokens */
    /* The tokens table new requests are authorized with (a reference), or
     * NULL for none, for the server's life; swapped by
     * cfs_http_server_set_tokens(). Each request holds a reference to the
     * table it was authorized with until it completes. */
    pthread_mutex_t tok_lock;
    struct cfs_http_tokens *tokens;
    /* Failed authentications per client address (throttle.h); NULL
     * without tokens. */
    struct cfs_http_throttle *throttle;
    uint16_t port;
    atomic_bool running; /* MHD_start_daemon() has returned */
    int static_fd;       /* opts.static_dir, O_PATH; -1 without one */
    /* Cluster mode: the threads that send writes to the writer node
     * (forward.h); NULL otherwise. */
    struct cfs_http_forward *fwd;
};

/*
 * Where a request's query and headers come from, and where its answer's
 * body is kept besides the response: a connection of libmicrohttpd's
 * (daemon.c), or a batch of forwarded requests (fwd-batch.c), whose
 * requests have none. request.c and reply.c ask it, never which it is.
 */
struct cfs_http_io {
    /* A query value (MHD_GET_ARGUMENT_KIND) or header (MHD_HEADER_KIND),
     * borrowed, or NULL; names compare without case. */
    const char *(*value)(struct cfs_http_req *req,
                         enum MHD_ValueKind kind,
                         const char *key);
    /* Each one, in order, until @it says MHD_NO. */
    void (*each)(struct cfs_http_req *req,
                 enum MHD_ValueKind kind,
                 MHD_KeyValueIterator it,
                 void *cls);
    /* Keep @len bytes of @data, the answer's body (a response cannot be
     * read back); NULL when the response is all. @return 0 or -ENOMEM. */
    int (*keep)(struct cfs_http_req *req, const void *data, size_t len);
};

/* What a request waits for (server/wait/wait.h): one kind at a time, each
 * with its own file; NONE while it runs or once its wait is finished. */
enum cfs_http_wait_kind {
    CFS_WAIT_NONE = 0,
    CFS_WAIT_COMMIT,     /* its change durable (wait/commit.c) */
    CFS_WAIT_CATCH_UP,   /* this node applying a revision (wait/catch-up.c) */
    CFS_WAIT_READ_INDEX, /* cluster: what etcd holds now (wait/read-index.c) */
    CFS_WAIT_HELD_READ,  /* what it read committed (wait/held-read.c) */
    CFS_WAIT_FORWARD,    /* the writer node's answer (forward.c) */
    CFS_WAIT_BATCH,      /* the requests of its forwarded batch (fwd-batch.c) */
};

/* Why a request waits for this node to catch up (wait/catch-up.c). */
enum cfs_http_catch_up_why {
    CFS_CATCH_UP_READ,  /* ?min_revision= */
    CFS_CATCH_UP_RETRY, /* it lost a race: run it again after */
};

/* The wait of a request (server/wait/): the worker and the thread that
 * ends the wait meet on cstate (wait.c); the rest belongs to one kind. */
struct cfs_http_wait {
    enum cfs_http_wait_kind kind;
    atomic_int cstate;
    bool sync_done;      /* waiting while stopping: resolved (c_lock) */
    int commit_err;      /* its result, set before cstate becomes READY */
    uint64_t commit_rev; /* the revision it made durable, or 0 */
    uint64_t commit_start;
    /* CFS_WAIT_COMMIT */
    struct cfs_http_evbatch *evs; /* the commit's events */
    bool wrote;                   /* it committed (or is committing) a change */
    unsigned retries;             /* cluster: runs again after losing a race */
    unsigned jitter;              /* rand_r() state of its back-off */
    /* CFS_WAIT_CATCH_UP */
    enum cfs_http_catch_up_why catch_up_why;
    uint64_t min_revision; /* ?min_revision=, 0 without */
    /* CFS_WAIT_READ_INDEX: a refused write ran again, caught up */
    bool indexed;
    /* CFS_WAIT_HELD_READ: held until what it read is committed; on
     * srv->held (h_lock) exactly while it waits; read again after it was
     * torn or undone, rereads times */
    struct cfs_read_mark rmark;
    bool on_list;
    unsigned rereads;
    struct cfs_http_req *hnext, *hprev;
};

/* Cluster mode, --forward-writes, at a node that is not the writer
 * (forward.h). */
struct cfs_http_fwd {
    struct cfs_http_fwd_job *job; /* sent to the writer, not yet answered */
    bool no_forward; /* the writer could not be reached: run it here */
};

/* Cluster mode, at the writer (fwd-batch.h): the request that carries a
 * batch of forwarded requests holds it, and counts those of them whose
 * wait is not over (wait/wait.c); each request of the batch has no
 * connection of its own (conn is NULL), outer is the batch's request and
 * sub what the batch says of it. */
struct cfs_http_in_batch {
    struct cfs_http_fwd_batch *batch; /* the batch this request carries */
    atomic_size_t pending;
    struct cfs_http_req *outer; /* the request whose batch this one is in */
    struct cfs_http_sub *sub;
};

/* The phases of a request (daemon.c's run() takes it through them; a
 * request that came alone starts at ADMIT, routed and authorized on its
 * headers already, one of a forwarded batch at ROUTE). */
enum cfs_http_phase {
    CFS_HTTP_PHASE_ROUTE,    /* one of a batch: routed, held to what a node
                              * forwards, authorized on its own token */
    CFS_HTTP_PHASE_ADMIT,    /* refused on its headers or body, or waits
                              * for ?min_revision= */
    CFS_HTTP_PHASE_DISPATCH, /* to the writer, or to its route's handler */
    CFS_HTTP_PHASE_WAIT,     /* for its commit, the node to catch up, the
                              * writer's answer or its batch: the
                              * connection sleeps, no thread waits */
    CFS_HTTP_PHASE_FINISH,   /* the wait is over: answer, or run again */
    CFS_HTTP_PHASE_ANSWER,   /* req->resp is the answer */
};

/* One request, made by daemon.c when its headers are in (or by
 * fwd-batch.c for a request of a forwarded batch) and freed when it is
 * over. Its life is the phases of daemon.c's run(): admitted (routed,
 * authorized, its body in), dispatched to its handler or forwarded, its
 * wait for a commit or catch-up, answered. The parts below the core
 * belong to one phase or one kind of request each. */
struct cfs_http_req {
    struct cfs_http_server *srv;
    struct MHD_Connection *conn; /* NULL in a batch */
    const struct cfs_http_io *io;
    enum cfs_http_phase phase;
    enum cfs_http_method method;
    const char *method_name;
    char *url; /* raw, still percent-encoded */
    /* The route of url (router.c), NULL for none; for a route that takes a
     * subtree, rest is the part of url after it (still encoded). */
    const struct cfs_http_route *rt;
    const char *rest;
    char *body;
    size_t body_len;
    bool body_too_big;
    uint64_t start_us;
    int status;        /* answered status, for the access log and metrics */
    size_t resp_len;   /* bytes of the answered body */
    const char *route; /* a route label for metrics */
    struct MHD_Response *resp;
    const char *principal; /* token name, or "anonymous" */
    /* The tokens table req->principal is borrowed from: a reference taken
     * by cfs_http_authorize(), dropped when the request completes; NULL
     * without tokens. */
    struct cfs_http_tokens *tokens;
    /* The subtrees its token is limited to (scope.h), borrowed from
     * tokens; NULL: the whole tree (no tokens, or a token without
     * paths). */
    const struct cfs_http_scope *scope;
    /* From its route (router.h): cluster mode, a GET or HEAD that first
     * waits for the read index (read_index); any request whose answer
     * says what the tree holds - a read, or a write refused on what it
     * found (412, 404, EEXIST...) - held until what it saw is committed
     * (!no_held_read). wait/held-read.c, "committed reads". */
    bool tree_read;
    bool tree_answer;
    int denied; /* 401, 403 or 429 decided from the headers, or 0 */
    unsigned int retry_after; /* 429: seconds */
    bool denied_invalid;      /* 401: a token was sent, and is not valid */
    enum cfs_http_role denied_need; /* 403: the role it needs */
    char *decoded[8];               /* decoded query values */
    const char *decoded_key[8];     /* their keys (literals) */
    size_t n_decoded;
    struct cfs_http_wait wait;
    struct cfs_http_fwd fwd;
    struct cfs_http_in_batch in;
};

/* The server's options (borrowed). */
static inline const struct cfs_http_options *
cfs_http_opts(const struct cfs_http_req *req)
{
    return &req->srv->opts;
}

/* Microseconds of the monotonic clock. */
static inline uint64_t cfs_http_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif /* CFS_HTTP_CONTEXT_H */
