/* SPDX-License-Identifier: MIT */
/*
 * ctl.h - configfsctl's shared parts: the connection to one configfsd (a
 * libcurl handle, the base URL, the token), responses, config paths and how
 * they become URLs, and the fixed mapping from a server's problem (or a
 * transport failure) to an exit code. configfsctl speaks only the HTTP API
 * of docs/API.md; it links nothing of core/ or store/.
 */
#ifndef CFS_CTL_H
#define CFS_CTL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>
#include <jansson.h>

/* Exit codes (configfsctl(1), EXIT STATUS). Fixed: scripts test them. */
enum {
    CTL_EX_OK = 0,
    CTL_EX_FAIL = 1,        /* any other error */
    CTL_EX_USAGE = 2,       /* bad command line */
    CTL_EX_NOENT = 3,       /* ENOENT, 404 */
    CTL_EX_EXIST = 4,       /* EEXIST */
    CTL_EX_INVAL = 5,       /* EINVAL, ERANGE, E2BIG, EFBIG ...: 400/413/422 */
    CTL_EX_ACCES = 6,       /* EACCES, EPERM: 401, 403 */
    CTL_EX_BUSY = 7,        /* EBUSY */
    CTL_EX_NOTEMPTY = 8,    /* ENOTEMPTY */
    CTL_EX_AGAIN = 9,       /* ESTALE (412), EAGAIN (503): re-read, retry */
    CTL_EX_UNREACHABLE = 10 /* no answer: connection, TLS, timeout */
};

struct ctl {
    char *server;   /* base URL, no trailing '/' (owned) */
    char **servers; /* --server's list, in order (endpoints.c; owned) */
    size_t n_servers;
    size_t at;          /* the one in use, servers[at] (a copy in server) */
    char *auth;         /* "Authorization: Bearer ..." or NULL (owned) */
    const char *cacert; /* CA file for https, or NULL */
    long timeout;       /* seconds for one request; 0: none */
    bool json;          /* --json: print the server's JSON */
    size_t max_answer;  /* --max-answer: bytes of all the answers of one
                           command, and the memory of their parsed form;
                           0: no cap */
    size_t answered;    /* bytes of answers this command read so far */
    CURL *curl;
    char *cwd;       /* --cwd, CONFIGFSCTL_CWD: the working directory
                        relative paths are taken from, absolute; NULL:
                        none (paths.c; owned) */
    json_t *schemas; /* shell: ls shows summaries (summary.c); the
                        descriptions asked so far, by subsystem (owned) */
};

/* The default of --max-answer: far above any answer of a tree configfsd
 * holds (CFS_EXPORT_MAX), far below a client's memory. */
#define CTL_MAX_ANSWER_DEFAULT ((size_t)256 * 1024 * 1024)

/*
 * One bound over the whole of a command's answers (configfsctl(1),
 * --max-answer): the bytes it reads, summed over every request and page,
 * and the memory jansson holds for what it parsed (counted through
 * json_set_alloc_funcs(): a parse of "[{},{},...]" takes some 80 times
 * its bytes), each at most c->max_answer. A server can so make configfsctl
 * hold no more than about twice --max-answer, however it pages.
 *
 * ctl_budget_init() installs the counting allocator (once, before any
 * JSON is made); ctl_budget_begin() starts a command's count (main(), and
 * each line of the shell); ctl_budget_end() says, once, that the parsed
 * memory went past the bound and @return CTL_EX_FAIL then, else @ex.
 * ctl_budget_over(): an allocation was refused since the command began.
 */
void ctl_budget_init(void);
void ctl_budget_begin(struct ctl *c);
int ctl_budget_end(const struct ctl *c, int ex);
bool ctl_budget_over(void);
/* JSON the user gave (batch's FILE), not a server: made outside the
 * bound, between ctl_budget_hold() and ctl_budget_release() of what hold
 * returned. What it holds is left out of the command's count. */
size_t ctl_budget_hold(void);
void ctl_budget_release(size_t held);
/* Parse a server's answer (@buf may be NULL): the one place the bound
 * refuses memory (a refusal fails the parse, and only it). */
json_t *ctl_json_parse(const char *buf, size_t len, json_error_t *err);

struct ctl_resp {
    long status;
    char *body; /* NUL-terminated after len bytes (owned) */
    size_t len;
    size_t cap;
    char *ctype;        /* Content-Type, or NULL (owned) */
    char *etag;         /* ETag, or NULL (owned) */
    const char *server; /* whose answer it is (the ctl's) */
    size_t max;         /* the cap on len: what is left of the command's
                           --max-answer (SIZE_MAX: none) */
    bool too_big;       /* the answer went past max: cut, and refused */
    bool write;         /* a PUT, POST, DELETE ...: sent at most once */
    bool sent;          /* the request may have left (a connection was
                           made and the request begun): a write that gets
                           no answer then has an unknown outcome */
};

/* Send METHOD @url (a path and query, from '/') with an optional body of
 * @len bytes and its @ctype, plus NULL-terminated extra @headers. A
 * transport failure is printed. @return 0 (any HTTP status: look at
 * r->status) or CTL_EX_UNREACHABLE. @r is filled; ctl_resp_done() it.
 * ctl_request() is ctl_request_once() failing over to the next server of
 * the list on what it may safely retry (endpoints.c): a read always, a
 * write only when it surely reached no server (!r->sent). A write goes on
 * a connection of its own, so that libcurl never sends it again itself
 * (it does on a reused connection that dies unanswered). */
int ctl_request_once(struct ctl *c,
                     const char *method,
                     const char *url,
                     const char *ctype,
                     const void *body,
                     size_t len,
                     const char *const *headers,
                     struct ctl_resp *r);
int ctl_request(struct ctl *c,
                const char *method,
                const char *url,
                const char *ctype,
                const void *body,
                size_t len,
                const char *const *headers,
                struct ctl_resp *r);
void ctl_resp_done(struct ctl_resp *r);

/* A GET of @url streamed to @cb (bytes as they arrive; return false to
 * stop). @stop is polled about once a second; when it turns true the
 * transfer ends. Non-2xx answers are collected in @r instead.
 * @return 0 (stream ended, stopped, or a non-2xx in r->status) or
 * CTL_EX_UNREACHABLE. */
int ctl_stream_once(struct ctl *c,
                    const char *url,
                    const char *const *headers,
                    bool (*cb)(const char *data, size_t len, void *ud),
                    void *ud,
                    volatile const sig_atomic_t *stop,
                    struct ctl_resp *r);
int ctl_stream(struct ctl *c,
               const char *url,
               const char *const *headers,
               bool (*cb)(const char *data, size_t len, void *ud),
               void *ud,
               volatile const sig_atomic_t *stop,
               struct ctl_resp *r);

/* Progress of a long transfer, on stderr, when it is a terminal (or
 * CONFIGFSCTL_PROGRESS=1, which also drops the first second's wait, for
 * tests): bytes moved, then the wait for the answer. Nothing for the
 * first second, at most four lines a second, each overwriting the last;
 * ctl_progress_end() clears it. */
struct ctl_progress {
    bool on;
    bool forced;
    bool shown;
    const char *verb; /* "sent", "received" */
    long long total;  /* bytes, -1 if unknown */
    double start, last;
};
void ctl_progress_init(struct ctl_progress *p,
                       const char *verb,
                       long long total);
void ctl_progress_show(struct ctl_progress *p, long long done);
void ctl_progress_end(struct ctl_progress *p);

/* METHOD @url with the body read from @in as it is sent (no copy of it in
 * memory): @in_len bytes, or chunked when -1; progress as above. The
 * answer is collected in @r as by ctl_request(). @return as ctl_request();
 * a read error of @in is a transport failure. */
int ctl_upload(struct ctl *c,
               const char *method,
               const char *url,
               const char *ctype,
               FILE *in,
               long long in_len,
               const char *const *headers,
               struct ctl_resp *r);

/* A 2xx status. */
bool ctl_ok(const struct ctl_resp *r);

/* Print why @r failed to stderr (the problem's title, detail, errno and
 * op_index; with --json the problem document itself) and @return its exit
 * code. @what names the action for answers that carry no problem. */
int ctl_fail(const struct ctl *c, const char *what, const struct ctl_resp *r);

/* The exit code of an answer: 412 and 503 are CTL_EX_AGAIN whatever the
 * errno; otherwise the errno name ("ENOENT") or, without one, the status. */
int ctl_exit_code(const char *errno_name, long status);
/* The exit code of a local errno (a file that cannot be read ...). */
int ctl_exit_errno(int err);

/* The absolute config path @arg names: a leading '/' added when missing,
 * empty segments dropped ("a//b/" -> "/a/b"). New string. */
char *ctl_abs_path(const char *arg);
/* "/api/v1/config/" plus each segment of the absolute @path percent-
 * encoded on its own. New string. */
char *ctl_config_url(const char *path);
/* @s percent-encoded for a query value. New string. */
char *ctl_query_escape(const char *s);
/* The last segment of an absolute path (borrowed, inside @path). */
const char *ctl_basename(const char *path);
/* The parent of an absolute path ("/" for a top-level name). New string. */
char *ctl_dirname(const char *path);

/* printf into a new string (aborts on out of memory, as all of
 * configfsctl's allocations do: a CLI has nothing to save). */
char *ctl_strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void *ctl_xmalloc(size_t n);
void *ctl_xrealloc(void *p, size_t n);
char *ctl_xstrdup(const char *s);

/*
 * Terminal safety (configfsctl(1), "SECURITY"): every string that came
 * from a server reaches a terminal through ctl_term_write(), so that no
 * answer can move the cursor, retitle or clear the window, or hide text
 * (the terminal-escape attack on CLIs). Printable ASCII and valid UTF-8
 * go as they are; control bytes (C0, DEL), C1 controls (U+0080-U+009F)
 * and the bidirectional overrides (U+202A-U+202E, U+2066-U+2069) as C
 * escapes: \n, \t, \r, \\, \xHH, \u{HHHH}. With @lines, a newline and
 * a tab stay as they are (a multi-line text such as a JSON document).
 */
void ctl_term_write(FILE *out, const char *s, size_t len, bool lines);

/* @s holds nothing ctl_term_write() would escape but '\\': printable
 * text and UTF-8 only (a name fit to offer for completion). */
bool ctl_term_safe(const char *s);

/* ctl_term_write() of one field of a line (newlines escaped too). */
void ctl_put_escaped(FILE *out, const char *s, size_t len);

/* @s as ctl_put_escaped() writes it, for a printf "%s": valid until
 * eight more calls (a ring of buffers); NULL for NULL. */
const char *ctl_esc(const char *s);

/* An answer's bytes as they are when @out is not a terminal (a pipe, a
 * file: scripts get exactly what the server sent), else through
 * ctl_term_write() keeping lines. A newline is added when missing. */
void ctl_put_text(FILE *out, const char *s, size_t len);

/* "configfsctl: malformed answer from SERVER: MESSAGE" on stderr (the
 * message escaped); @return CTL_EX_FAIL. */
int ctl_malformed(const struct ctl *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Decode base64 (as the API's "encoding": "base64" values) into a new
 * buffer. @return 0 or -EINVAL. */
int ctl_base64_decode(const char *in, char **ret, size_t *ret_len);

/* Parse the body of @r as JSON (NULL and a message on stderr when it is
 * not). New reference. */
json_t *ctl_resp_json(const struct ctl_resp *r);

/* ---- endpoints.c: the list of servers -------------------------------- */

/* Take @list, comma-separated base URLs ("http://a:8080,http://b:8080"),
 * as the servers to use, the first one first. @return 0 or a usage exit
 * code (printed). */
int ctl_endpoints_set(struct ctl *c, const char *list);
void ctl_endpoints_free(struct ctl *c);
/* watch lost its stream after revision @last_id (empty: none received):
 * wait, bounded, before the next attempt; @attempt counts from 0. @return
 * false when it is time to give up. */
bool ctl_endpoints_backoff(struct ctl *c,
                           unsigned attempt,
                           volatile const sig_atomic_t *stop);

/* Read a whole file ("-": stdin). @return 0 or a negative errno. */
int ctl_read_file(const char *path, char **ret_buf, size_t *ret_len);

#endif /* CFS_CTL_H */
