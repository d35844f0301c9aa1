/* SPDX-License-Identifier: MIT */
/*
 * harness.h - integration tests: configfsd's HTTP server in-process on
 * 127.0.0.1 and a port it picks, the samples registered, and libcurl
 * helpers that state a request and return status, headers and body.
 */
#ifndef CFS_TEST_HARNESS_H
#define CFS_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

struct cfs_http_options;

struct http_resp {
    long status;
    char *body;
    size_t len;
    char *headers; /* raw header block */
    json_t *json;  /* parsed body when it is JSON, else NULL */
};

/* Start / stop the server (cmocka group setup and teardown). */
int harness_start(void **state);
/* The same with a store at @db (NULL: none); stop with harness_stop(). */
int harness_start_db(const char *db);
/* The SQLite VFS harness_start_db() opens the store with (NULL: the
 * default). */
extern const char *harness_store_vfs;
int harness_stop(void **state);
/* Only the server (as SIGTERM would); harness_stop() does the rest. */
void harness_stop_server(void);

/* Start with these options (tokens, TLS, limits, static files ...); the
 * samples and shipped schemas are registered as by harness_start(), and
 * opts->schemas is filled in when NULL. Stop with harness_stop().
 * @return 0 or the negative errno of cfs_http_server_start(). */
int harness_start_with(const struct cfs_http_options *opts);
/* Replace the running server by one with these options; the tree stays.
 * @return as harness_start_with(). */
int harness_restart_with(const struct cfs_http_options *opts);

/* The in-process server (NULL when there is none). */
struct cfs_http_server *harness_server(void);

/* Where http() goes: @port 0 is the in-process server, anything else a
 * configfsd started by harness_spawn(); @cafile non-NULL means HTTPS
 * verified against that certificate. */
void harness_target(uint16_t port, const char *cafile);

/* Perform METHOD PATH (relative to the server) with an optional body and a
 * NULL-terminated list of extra header lines. */
void http(struct http_resp *r,
          const char *method,
          const char *path,
          const char *body,
          size_t body_len,
          const char *const *headers);
void http_resp_done(struct http_resp *r);
/* The same, without asserting that the transfer worked: the CURLcode. */
int http_try(struct http_resp *r,
             const char *method,
             const char *path,
             const char *body,
             size_t body_len,
             const char *const *headers);

/* The value of a response header (case-insensitive), new string or NULL. */
char *http_header(const struct http_resp *r, const char *name);
/* The response has header @name, with exactly @value. */
void expect_header(const struct http_resp *r,
                   const char *name,
                   const char *value);
/* The string member @key of the JSON object @o, or NULL. */
const char *jstr(const json_t *o, const char *key);

/* Shorthands: JSON bodies and expected statuses. */
void http_json(struct http_resp *r,
               const char *method,
               const char *path,
               const char *json_body);
void expect_problem(const struct http_resp *r, long status, const char *err);

uint16_t harness_port(void);

/* PUT @body to the full @url on a libcurl handle of its own (for writer
 * threads: the harness's globals are not theirs), waiting at most
 * @timeout_s; the answer's body is dropped. @return the CURLcode; the
 * status in *ret_status (0 without an answer). */
int http_put_own(const char *url,
                 const char *body,
                 long timeout_s,
                 long *ret_status);

/* GET /healthz answers 200 (on a new connection). */
void expect_healthy(void);
/* The global revision, from GET /api/v1 (which must answer 200). */
long long http_revision(void);
/* The strong ETag a GET of @path answers (which must answer 200); new
 * string. */
char *http_etag(const char *path);

/* ---- raw sockets: requests libcurl would not send ---------------------- */

/* A TCP connection to the target (never TLS). */
int raw_connect(void);
/* Send what can be sent; the server may close before it has it all. */
void raw_send(int fd, const void *data, size_t len);
/* The status of the response that comes within @timeout_ms: 100-599, or
 * 0 when the server closed without a response, -1 on timeout. */
long raw_status(int fd, int timeout_ms);
/* The server closes @fd within @timeout_ms (what it sends is dropped). */
bool raw_closed_within(int fd, int timeout_ms);
/* Read from @fd into @buf (NUL-terminated, from its start) until it holds
 * @needle, the peer closes (*ret_eof) or @timeout_ms pass. @return the
 * bytes read, or -1 on timeout. */
ssize_t raw_read_for(int fd,
                     char *buf,
                     size_t cap,
                     const char *needle,
                     int timeout_ms,
                     bool *ret_eof);

/* ---- files and the configfsd executable -------------------------------- */

/* A new temporary folder (new string); harness_rmtree() removes it. */
char *harness_tmpdir(void);
void harness_rmtree(const char *path);
/* Write a file whole; fails the test when it cannot. */
void harness_write_file(const char *path, const char *data, size_t len);
/* A file's contents, new string (NUL-terminated), or NULL. */
char *harness_read_file(const char *path);

/* Run the built configfsd with @args (NULL-terminated, without argv[0])
 * and extra environment @env ("NAME=value", NULL-terminated, or NULL);
 * @input is its stdin (or NULL for none). Waits at most @timeout_s.
 * @return its exit status (128+N after signal N); *ret_out and *ret_err
 * (each may be NULL) get what it wrote, new strings. */
int harness_run(const char *const *args,
                const char *const *env,
                const char *input,
                char **ret_out,
                char **ret_err,
                int timeout_s);

/* A configfsd running in the background. */
struct harness_proc {
    pid_t pid;
    uint16_t port;
    char *dir; /* a temporary folder of its own (removed by reap) */
    char *err; /* its stderr, a file in dir */
    char *log; /* where it logs: err, or the --log-file given */
};
/* Start configfsd with @args and @env; its stderr goes to a file. When
 * @log_file is non-NULL it is the --log-file among @args. Waits (bounded)
 * for the line that tells its port. @return 0, or -1 when it exited. */
int harness_spawn(const char *const *args,
                  const char *const *env,
                  const char *log_file,
                  struct harness_proc *ret);
/* SIGTERM, wait (bounded), remove its folder; @return the exit status
 * (its stderr is printed when that is not 0). */
int harness_reap(struct harness_proc *p);

/* A fresh folder /tmp/cfs-http-@tag-XXXXXX for a test's database; its
 * path + "/" + @file comes back in @ret_db (@size bytes). One at a time;
 * harness_tmpdb_remove() removes it. @return 0 or -1. */
int harness_tmpdb(const char *tag, const char *file, char *ret_db, size_t size);
int harness_tmpdb_remove(void);

#endif /* CFS_TEST_HARNESS_H */
