/* SPDX-License-Identifier: MIT */
/*
 * http.h - the HTTP front end of configfsd: a libmicrohttpd daemon serving
 * the REST API of docs/DESIGN.md §4 over the core's operation layer. The
 * one public header of the library cfs-http: what the configfsd executable
 * (server/configfsd/) and an embedder use to start, reload and stop a
 * server, its request limits, and its log.
 */
#ifndef CFS_HTTP_H
#define CFS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The server's request limits. Those an operator may need to change are
 * defaults of a configfsd flag, named beside them.
 */
/* Request body in bytes (--body-limit); over it: 413 EFBIG. */
#define CFS_BODY_MAX ((size_t)1024 * 1024)
/* Memory of one connection in bytes: request line, headers and buffers
 * (--header-limit); a request line or headers over it: 414 or 431.
 * libmicrohttpd's own default; it zeroes this memory before each request
 * on a connection, so a larger value costs every request. */
#define CFS_HEADER_MAX ((size_t)32 * 1024)
/* Operations in one batch. */
#define CFS_BATCH_MAX 1000
/* Concurrent connections (--max-connections); beyond them new ones wait
 * in the listen backlog until one closes. */
#define CFS_CONN_MAX 1024
/* Seconds a connection may stay silent, inside a request or between two
 * (--timeout); then it is closed. */
#define CFS_CONN_TIMEOUT 30
/* Bytes of one bearer token, and of a --tokens file. */
#define CFS_TOKEN_MAX      512
#define CFS_TOKEN_FILE_MAX ((size_t)1024 * 1024)
/* Wrong bearer tokens one client address may send within
 * CFS_AUTH_FAIL_WINDOW seconds (--auth-fail-burst, --auth-fail-window);
 * then it is answered 429 until the window lets one more go. */
#define CFS_AUTH_FAIL_BURST  10
#define CFS_AUTH_FAIL_WINDOW 60
/* Bytes of a --tls-cert or --tls-key file. */
#define CFS_TLS_FILE_MAX ((size_t)1024 * 1024)

struct cfs_http_server;
struct cfs_http_tokens;
struct cfs_schema_set;
struct cfs_store;

/* What a bearer token allows, each role including the ones before it:
 * reader GET/HEAD, writer every mutation, admin export and import. */
enum cfs_http_role {
    CFS_ROLE_NONE = 0,
    CFS_ROLE_READER,
    CFS_ROLE_WRITER,
    CFS_ROLE_ADMIN,
};

/* Zero members take the defaults above (CFS_BODY_MAX ...). */
struct cfs_http_options {
    const char *listen;           /* "HOST:PORT"; port 0 picks one */
    unsigned int threads;         /* worker threads; 0: one per core */
    size_t body_limit;            /* bytes; 0: CFS_BODY_MAX */
    size_t header_limit;          /* bytes per connection; 0: CFS_HEADER_MAX */
    unsigned int max_connections; /* 0: CFS_CONN_MAX */
    unsigned int per_ip_connections; /* from one address; 0: no cap */
    unsigned int timeout_s;          /* idle seconds; 0: CFS_CONN_TIMEOUT */
    const char *static_dir;          /* web UI files; NULL: none */
    bool quiet;                      /* no access log */
    struct cfs_schema_set *schemas;  /* for GET /api/v1/schema/; borrowed */
    struct cfs_store *store; /* durable commits, history, export; borrowed */
    /* Bearer tokens; NULL: no authentication, loopback only. The server
     * takes a reference of its own (the caller keeps, and drops, its
     * one); cfs_http_server_set_tokens() replaces the table later. */
    struct cfs_http_tokens *tokens;
    /* Failed authentications (a wrong token) allowed from one address
     * within auth_fail_window_s seconds before its requests are answered
     * 429; 0: CFS_AUTH_FAIL_BURST, CFS_AUTH_FAIL_WINDOW. */
    unsigned int auth_fail_burst;
    unsigned int auth_fail_window_s;
    /* Serve beyond loopback without tokens (--insecure-listen). */
    bool insecure_listen;
    /* TLS: certificate chain and private key as PEM text, both or neither;
     * borrowed, read only during cfs_http_server_start(). */
    const char *tls_cert_pem;
    const char *tls_key_pem;
    /* Cluster mode: the CA that signed the other nodes' certificates,
     * for writes forwarded to a writer served over https; NULL: the
     * system's CAs. */
    const char *peer_cacert;
    /* Cluster mode: send writes to the writer node (forward.h); without
     * a cluster store there is never one to send to. */
    bool forward_writes;
};

/** Start serving. Ownership: *ret_srv is new; stop with
 *  cfs_http_server_free(). @return 0, or -EPERM (beyond loopback without
 *  tokens), -EINVAL (bad listen address, or only half of the TLS pair),
 *  -ENOTSUP (TLS asked of a libmicrohttpd without it), -EIO (the daemon
 *  did not start: a port in use, a certificate or key GnuTLS refuses ...;
 *  libmicrohttpd's reason is in the log), -ENOMEM. */
int cfs_http_server_start(const struct cfs_http_options *opts,
                          struct cfs_http_server **ret_srv);

/** Whether @listen ("HOST:PORT") may be served: anything beyond loopback
 *  (127.0.0.0/8) needs tokens. @return 0, -EPERM, or -EINVAL when it does
 *  not parse. cfs_http_server_start() checks it too. */
int cfs_http_listen_check(const char *listen, bool have_tokens);

/** Authorize new requests with @tokens from now on (a reload of the
 *  --tokens file); the server takes a reference of its own, the caller
 *  keeps its one. A request authorized before keeps the table it was
 *  authorized with (its principal is a name borrowed from it) until it
 *  completes; the old table is freed when its last such request, and
 *  every other holder, let go of it. Thread-safe.
 *  @return 0, or -EINVAL when @tokens is NULL or the server was started
 *  without tokens: whether requests need a token is fixed at start. */
int cfs_http_server_set_tokens(struct cfs_http_server *srv,
                               struct cfs_http_tokens *tokens);

/** The port it listens on (useful with port 0). */
uint16_t cfs_http_server_port(const struct cfs_http_server *srv);

/** Cluster mode: another node's change set @ch (@n records) was applied
 *  to the tree; tell the event stream. Any thread. */
struct cfs_change;
void cfs_http_server_changes(struct cfs_http_server *srv,
                             const struct cfs_change *ch,
                             size_t n);

/** The commit of another front end in this process (the mount, mount/):
 *  make @txn durable through the store's queue, journaled as @principal,
 *  and publish its events, as an HTTP write is; the calling thread waits.
 *  Consumes @txn. @return 0, or the errno of the failed commit (the change
 *  was undone): -ENOSPC, -EIO, -EAGAIN, -ENOMEM; -ESTALE in cluster mode
 *  when another node changed the tree first (this node has caught up
 *  when it returns: run the operation again). Any thread but a callback. */
struct cfs_txn;
int cfs_http_server_commit(struct cfs_http_server *srv,
                           struct cfs_txn *txn,
                           const char *principal);

/** Stop accepting, finish requests in flight, free. NULL-safe. */
void cfs_http_server_free(struct cfs_http_server *srv);

/* ---- tokens (tokens.c) ------------------------------------------------- */

/* A table is reference-counted (atomically): the loader's reference, the
 * server's, and one per request authorized with it. */

/** Load a --tokens file: lines "NAME ROLE sha256:HEX [SUBTREE...]", '#'
 *  comments; the subtrees (absolute config paths) limit a token to them
 *  (docs/security.md), none gives the whole tree.
 *  @err receives "FILE:LINE: reason" on failure (may be NULL).
 *  @return 0 and *ret_tokens (new, one reference: cfs_http_tokens_unref()),
 *  or -ENOENT, -EACCES ... when the file cannot be read, -EINVAL when a
 *  line is wrong or there is no token, -EFBIG over CFS_TOKEN_FILE_MAX,
 *  -ENOMEM. */
int cfs_http_tokens_load(const char *path,
                         struct cfs_http_tokens **ret_tokens,
                         char *err,
                         size_t err_size);
/** Take a reference; @return @tokens. NULL-safe. */
struct cfs_http_tokens *cfs_http_tokens_ref(struct cfs_http_tokens *tokens);
/** Drop a reference; the last one wipes the hashes and frees the table.
 *  NULL-safe. */
void cfs_http_tokens_unref(struct cfs_http_tokens *tokens);
size_t cfs_http_tokens_count(const struct cfs_http_tokens *tokens);

/** The role of a presented token, compared with every entry in constant
 *  time; CFS_ROLE_NONE when unknown or not a valid bearer token.
 *  *ret_name (may be NULL) is borrowed from @tokens. */
enum cfs_http_role cfs_http_tokens_find(const struct cfs_http_tokens *tokens,
                                        const char *token,
                                        size_t len,
                                        const char **ret_name);

/** The role that @now gives the token a request was authorized with:
 *  @name is the principal cfs_http_tokens_find() returned from @then (the
 *  table the request still holds). The same secret must be in @now;
 *  CFS_ROLE_NONE when it is not (removed, or its secret changed). */
enum cfs_http_role cfs_http_tokens_role_now(const struct cfs_http_tokens *then,
                                            const char *name,
                                            const struct cfs_http_tokens *now);

/** SHA-256 of @token as 64 lowercase hex digits and a NUL. */
void cfs_http_token_hash(const char *token, size_t len, char hex[65]);

/** "reader", "writer", "admin" ("none" otherwise); static. */
const char *cfs_http_role_name(enum cfs_http_role role);

/** `configfsd hash-token NAME ROLE`: a token on stdin, its tokens-file
 *  line on stdout. @argv[0] is "hash-token". @return the exit status. */
int cfs_http_hash_token_main(int argc, char **argv);

/* ---- the log ------------------------------------------------------------ */

/*
 * The log (log.c): configfsd's log: one logfmt line per event (ts=, level=,
 * event=, then key=value pairs), or one JSON object with the same keys,
 * filtered by level, written with one write(2) so that lines from worker
 * threads never interleave.
 *
 * Logs go to stderr, or to a file given with cfs_log_open_file(); a file is
 * reopened in place by cfs_log_reopen() (SIGHUP, for log rotation).
 */

enum cfs_log_level {
    CFS_LOG_ERROR = 0,
    CFS_LOG_WARNING,
    CFS_LOG_INFO,
    CFS_LOG_DEBUG,
};

/** "error", "warning", "info" or "debug" into *ret.
 *  @return 0 or -EINVAL (ret untouched). */
int cfs_log_level_parse(const char *name, enum cfs_log_level *ret);

enum cfs_log_format {
    CFS_LOG_FORMAT_LOGFMT = 0, /* ts=... level=... event=... msg="..." */
    CFS_LOG_FORMAT_JSON,       /* {"ts":"...","level":"...",...} */
};

/** "logfmt" or "json" into *ret. @return 0 or -EINVAL (ret untouched). */
int cfs_log_format_parse(const char *name, enum cfs_log_format *ret);

/** The format of the lines written from now on. Default logfmt. */
void cfs_log_set_format(enum cfs_log_format format);

/** Lines above @level are dropped. Default CFS_LOG_INFO. Thread-safe. */
void cfs_log_set_level(enum cfs_log_level level);
bool cfs_log_enabled(enum cfs_log_level level);

/** Send the log to @path (appended to, created 0640) instead of stderr.
 *  @return 0 or a negative errno; the log is unchanged on failure. */
int cfs_log_open_file(const char *path);

/** Reopen the file given to cfs_log_open_file() under its name, so that a
 *  rotated file is let go; lines being written meanwhile go to either file.
 *  A no-op returning 0 when the log is stderr.
 *  @return 0 or a negative errno (the old file stays in use). */
int cfs_log_reopen(void);

/** Back to stderr; closes the file. Call when no other thread logs. */
void cfs_log_close(void);

/** One line: ts=... level=... event=@event msg="<formatted>". */
void cfs_log(enum cfs_log_level level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** A line at level "notice", written whatever the level: where the server
 *  listens and that it stops, which scripts and operators wait for. */
void cfs_log_notice(const char *event, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The access-log line of one request, at info (error for a 5xx status).
 *  @path is logged as sent, with bytes outside printable ASCII escaped. */
void cfs_log_access(const char *method,
                    const char *path,
                    int status,
                    size_t bytes,
                    uint64_t micros,
                    const char *principal);

#endif /* CFS_HTTP_H */
