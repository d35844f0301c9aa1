// SPDX-License-Identifier: MIT
/*
 * ctl.c - configfsctl's HTTP client on libcurl: one request or one event
 * stream at a time on a reused handle, problem+json turned into a message
 * and an exit code, and config paths turned into URLs segment by segment
 * (docs/API.md, "Config paths in URLs").
 */
#include "ctl.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base64.h>

/* ---- memory ------------------------------------------------------------ */

static void oom(void)
{
    (void)fputs("configfsctl: out of memory\n", stderr);
    exit(CTL_EX_FAIL);
}

void *ctl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p) {
        oom();
    }
    return p;
}

void *ctl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q) {
        oom();
    }
    return q;
}

char *ctl_xstrdup(const char *s)
{
    char *d = strdup(s);

    if (!d) {
        oom();
    }
    return d;
}

/* vprintf into a new string. */
static char *vstrdup_printf(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));

static char *vstrdup_printf(const char *fmt, va_list ap)
{
    char *s = NULL;

    if (vasprintf(&s, fmt, ap) < 0) {
        oom();
    }
    return s;
}

char *ctl_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    s = vstrdup_printf(fmt, ap);
    va_end(ap);
    return s;
}

/* ---- the bound on a command's answers ---------------------------------- */

/* jansson's memory, counted by the allocator it is given (one thread
 * makes JSON: configfsctl's). malloc_usable_size() keeps the count right
 * for a block jansson made and the caller frees with free() (json_dumps()
 * texts): such a block stays counted until the command ends, never less. */
static struct {
    size_t live;  /* bytes jansson holds now */
    size_t base;  /* what it held when the command began */
    size_t max;   /* the bound on live - base; 0: none */
    bool over;    /* an allocation was refused */
    bool said;    /* and that was said */
    bool parsing; /* a server's answer is being parsed: only that is
                   * refused (configfsctl's own JSON never is: its code
                   * takes a NULL from jansson for out of memory) */
} jmem;

static void *budget_malloc(size_t n)
{
    size_t held = jmem.live > jmem.base ? jmem.live - jmem.base : 0;
    void *p;

    if (jmem.max && jmem.parsing && (n > jmem.max || held > jmem.max - n)) {
        /* Past the bound: the parse is stopped at its next read
         * (feed_chunk()), never by a NULL here - jansson's lexer does not
         * survive one (it drops the byte it saves and reads past its
         * buffer: fuzz.cli found it). */
        jmem.over = true;
    }
    p = malloc(n);
    if (p) {
        jmem.live += malloc_usable_size(p);
    }
    return p;
}

static void budget_free(void *p)
{
    if (p) {
        size_t n = malloc_usable_size(p);

        jmem.live = jmem.live > n ? jmem.live - n : 0;
        free(p);
    }
}

void ctl_budget_init(void)
{
    json_set_alloc_funcs(budget_malloc, budget_free);
}

/* What is left of an answer to parse, fed to jansson a little at a time
 * so that a parse past the bound stops within a few hundred bytes. */
struct feed {
    const char *p;
    size_t left;
};

#define FEED_CHUNK 256

static size_t feed_chunk(void *buf, size_t buflen, void *data)
{
    struct feed *f = data;
    size_t n = f->left < buflen ? f->left : buflen;

    if (jmem.over) {
        return (size_t)-1; /* a read error ends the parse */
    }
    n = n < FEED_CHUNK ? n : FEED_CHUNK;
    memcpy(buf, f->p, n);
    f->p += n;
    f->left -= n;
    return n;
}

json_t *ctl_json_parse(const char *buf, size_t len, json_error_t *err)
{
    struct feed f = {.p = buf ? buf : "", .left = buf ? len : 0};
    json_t *j;

    jmem.parsing = true;
    j = json_load_callback(feed_chunk, &f, 0, err);
    jmem.parsing = false;
    if (j && jmem.over) {
        json_decref(j); /* went past the bound in its last chunk */
        j = NULL;
    }
    return j;
}

void ctl_budget_begin(struct ctl *c)
{
    c->answered = 0;
    jmem.base = jmem.live;
    jmem.max = c->max_answer;
    jmem.over = false;
    jmem.said = false;
}

bool ctl_budget_over(void)
{
    return jmem.over;
}

static size_t held_at; /* jmem.live at ctl_budget_hold() */

size_t ctl_budget_hold(void)
{
    size_t max = jmem.max;

    held_at = jmem.live;
    jmem.max = 0;
    return max;
}

void ctl_budget_release(size_t max)
{
    if (jmem.live > held_at) {
        jmem.base += jmem.live - held_at; /* the user's, not counted */
    }
    jmem.max = max;
}

/* Say that the parsed answers went past the bound, once. */
static void say_over(const struct ctl *c)
{
    if (!jmem.said) {
        jmem.said = true;
        (void)fprintf(stderr,
                      "configfsctl: the answers from %s take more memory "
                      "parsed than --max-answer allows (%zu bytes): "
                      "refused\n",
                      c->server ? ctl_esc(c->server) : "the server",
                      c->max_answer);
    }
}

int ctl_budget_end(const struct ctl *c, int ex)
{
    if (!jmem.over) {
        return ex;
    }
    say_over(c);
    jmem.max = 0; /* what is left to do (a message ...) is not bounded */
    return CTL_EX_FAIL;
}

/* ---- responses --------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct ctl_resp *r = ud;
    size_t n = size * nmemb;

    if (n > r->max - r->len) { /* r->len <= r->max */
        r->too_big = true;
        return 0; /* ends the transfer */
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;

        while (cap < r->len + n + 1) {
            cap *= 2;
        }
        if (r->max != SIZE_MAX && cap > r->max + 1) {
            cap = r->max + 1; /* never more than the bound allows */
        }
        r->body = ctl_xrealloc(r->body, cap);
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

/* A header's value, trimmed, when @line is "@name: value". New string. */
static char *header_value(const char *line, size_t len, const char *name)
{
    size_t nlen = strlen(name);
    const char *v;
    const char *end = line + len;

    if (len <= nlen || strncasecmp(line, name, nlen) != 0 ||
        line[nlen] != ':') {
        return NULL;
    }
    v = line + nlen + 1;
    while (v < end && (*v == ' ' || *v == '\t')) {
        v++;
    }
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) {
        end--;
    }
    return strndup(v, (size_t)(end - v));
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct ctl_resp *r = ud;
    size_t n = size * nmemb;
    char *v;

    if ((v = header_value(data, n, "Content-Type"))) {
        free(r->ctype);
        r->ctype = v;
    } else if ((v = header_value(data, n, "ETag"))) {
        free(r->etag);
        r->etag = v;
    }
    return n;
}

void ctl_resp_done(struct ctl_resp *r)
{
    free(r->body);
    free(r->ctype);
    free(r->etag);
    memset(r, 0, sizeof(*r));
}

bool ctl_ok(const struct ctl_resp *r)
{
    return r->status >= 200 && r->status < 300;
}

json_t *ctl_resp_json(const struct ctl_resp *r)
{
    json_error_t err;
    json_t *j = ctl_json_parse(r->body, r->len, &err);

    if (!j && jmem.over && !jmem.said) {
        jmem.said = true;
        (void)fprintf(stderr,
                      "configfsctl: the answer from %s takes more memory "
                      "parsed than --max-answer allows (%zu bytes): "
                      "refused\n",
                      r->server ? ctl_esc(r->server) : "the server",
                      jmem.max);
    } else if (!j && !jmem.over) {
        (void)fprintf(stderr,
                      "configfsctl: malformed answer from %s: not JSON: %s\n",
                      r->server ? ctl_esc(r->server) : "the server",
                      ctl_esc(err.text));
    }
    return j;
}

/* ---- requests ---------------------------------------------------------- */

static struct curl_slist *build_headers(const struct ctl *c,
                                        const char *ctype,
                                        const char *const *headers)
{
    struct curl_slist *h = NULL;
    struct curl_slist *t;

    /* libcurl would add "Expect: 100-continue" to larger bodies. */
    h = curl_slist_append(h, "Expect:");
    if (h && c->auth) {
        h = (t = curl_slist_append(h, c->auth)) ? t : h;
    }
    if (h && ctype) {
        char *line = ctl_strdup_printf("Content-Type: %s", ctype);

        h = (t = curl_slist_append(h, line)) ? t : h;
        free(line);
    }
    for (size_t i = 0; h && headers && headers[i]; i++) {
        h = (t = curl_slist_append(h, headers[i])) ? t : h;
    }
    if (!h) {
        oom();
    }
    return h;
}

/* libcurl is about to send the request on a connection it made or
 * reused: from here on the server may get it. */
static int on_prereq(void *ud,
                     char *primary_ip,
                     char *local_ip,
                     int primary_port,
                     int local_port)
{
    struct ctl_resp *r = ud;

    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    r->sent = true;
    return CURL_PREREQFUNC_OK;
}

static void setup(struct ctl *c,
                  const char *method,
                  const char *url,
                  struct curl_slist *h,
                  struct ctl_resp *r)
{
    char *full = ctl_strdup_printf("%s%s", c->server, url);

    curl_easy_reset(c->curl);
    curl_easy_setopt(c->curl, CURLOPT_URL, full);
    free(full); /* libcurl keeps its own copy */
    curl_easy_setopt(c->curl, CURLOPT_DEFAULT_PROTOCOL, "http");
    curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    /* The server refuses "." and ".." itself; libcurl must not squash
     * them into another path first. */
    curl_easy_setopt(c->curl, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "configfsctl/" CFS_VERSION);
    if (c->cacert) {
        curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->cacert);
    }
    if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
    }
    r->write = strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
    if (r->write) {
        /* on a reused connection that dies unanswered, libcurl sends the
         * request again on a new one: a write would reach the server
         * twice */
        curl_easy_setopt(c->curl, CURLOPT_FRESH_CONNECT, 1L);
    }
    curl_easy_setopt(c->curl, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(c->curl, CURLOPT_PREREQDATA, r);
    r->server = c->server;
    /* what is left of the bound on the command's answers */
    r->max = !c->max_answer                ? SIZE_MAX
             : c->answered < c->max_answer ? c->max_answer - c->answered
                                           : 0;
    if (r->max && r->max != SIZE_MAX) { /* refused on its Content-Length */
        curl_easy_setopt(
            c->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max);
    }
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, r);
}

/* The bytes of @r counted against the command's bound. */
static void count_answer(struct ctl *c, const struct ctl_resp *r)
{
    c->answered =
        r->len > SIZE_MAX - c->answered ? SIZE_MAX : c->answered + r->len;
}

static int transport_failed(const struct ctl *c,
                            CURLcode rc,
                            const char *eb,
                            const struct ctl_resp *r)
{
    size_t before = c->answered - r->len; /* this command's other answers */

    if ((r->too_big || rc == CURLE_FILESIZE_EXCEEDED) && before) {
        (void)fprintf(stderr,
                      "configfsctl: the answers from %s are larger than "
                      "--max-answer (%zu bytes) in all (%zu before this "
                      "one): refused\n",
                      ctl_esc(c->server),
                      c->max_answer,
                      before);
        return CTL_EX_FAIL;
    }
    if (r->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        (void)fprintf(stderr,
                      "configfsctl: the answer from %s is larger than "
                      "--max-answer (%zu bytes): refused\n",
                      ctl_esc(c->server),
                      c->max_answer);
        return CTL_EX_FAIL;
    }
    if (r->write && r->sent) {
        /* not sent again, here or to another server (endpoints.c) */
        (void)fprintf(stderr,
                      "configfsctl: no answer from %s (%s): the request was "
                      "sent, so whether it was applied is unknown; it is "
                      "not sent again: read the tree to see\n",
                      ctl_esc(c->server),
                      ctl_esc(eb[0] ? eb : curl_easy_strerror(rc)));
        return CTL_EX_UNREACHABLE;
    }
    (void)fprintf(stderr,
                  "configfsctl: cannot reach %s: %s\n",
                  ctl_esc(c->server),
                  ctl_esc(eb[0] ? eb : curl_easy_strerror(rc)));
    return CTL_EX_UNREACHABLE;
}

int ctl_request_once(struct ctl *c,
                     const char *method,
                     const char *url,
                     const char *ctype,
                     const void *body,
                     size_t len,
                     const char *const *headers,
                     struct ctl_resp *r)
{
    struct curl_slist *h = build_headers(c, ctype, headers);
    char eb[CURL_ERROR_SIZE] = "";
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    setup(c, method, url, h, r);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, eb);
    if (c->timeout > 0) {
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout);
    }
    if (body) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    rc = curl_easy_perform(c->curl);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl_slist_free_all(h);
    count_answer(c, r);
    if (rc != CURLE_OK) {
        return transport_failed(c, rc, eb, r);
    }
    return 0;
}

struct stream {
    struct ctl *c;
    struct ctl_resp *r;
    bool (*cb)(const char *data, size_t len, void *ud);
    void *ud;
    volatile const sig_atomic_t *stop;
    bool stopped;
};

static size_t on_stream(char *data, size_t size, size_t nmemb, void *ud)
{
    struct stream *s = ud;
    size_t n = size * nmemb;

    curl_easy_getinfo(s->c->curl, CURLINFO_RESPONSE_CODE, &s->r->status);
    if (!ctl_ok(s->r)) {
        return on_body(data, size, nmemb, s->r);
    }
    if (!s->cb(data, n, s->ud)) {
        s->stopped = true;
        return 0; /* ends the transfer */
    }
    return n;
}

static int on_progress(void *ud,
                       curl_off_t dltotal,
                       curl_off_t dlnow,
                       curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct stream *s = ud;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    if (*s->stop) {
        s->stopped = true;
        return 1;
    }
    return 0;
}

int ctl_stream_once(struct ctl *c,
                    const char *url,
                    const char *const *headers,
                    bool (*cb)(const char *data, size_t len, void *ud),
                    void *ud,
                    volatile const sig_atomic_t *stop,
                    struct ctl_resp *r)
{
    struct curl_slist *h = build_headers(c, NULL, headers);
    struct stream s = {.c = c, .r = r, .cb = cb, .ud = ud, .stop = stop};
    char eb[CURL_ERROR_SIZE] = "";
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    setup(c, "GET", url, h, r);
    /* a stream has no end: the cap is on each event (the caller's), and
     * on a refusal's body (on_body) */
    curl_easy_setopt(c->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)0);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, eb);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, &s);
    rc = curl_easy_perform(c->curl);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl_slist_free_all(h);
    count_answer(c, r); /* a refusal's body; the stream is not held */
    if (rc != CURLE_OK && !s.stopped) {
        return transport_failed(c, rc, eb, r);
    }
    return 0;
}

/* ---- long transfers ---------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ctl_progress_init(struct ctl_progress *p,
                       const char *verb,
                       long long total)
{
    const char *force = getenv("CONFIGFSCTL_PROGRESS");

    *p = (struct ctl_progress){
        .on = force ? strcmp(force, "1") == 0 : isatty(STDERR_FILENO) == 1,
        .forced = force && strcmp(force, "1") == 0,
        .verb = verb,
        .total = total,
        .start = now_s(),
    };
}

void ctl_progress_show(struct ctl_progress *p, long long done)
{
    double t = now_s();

    if (!p->on || (!p->forced && t - p->start < 1.0) || t - p->last < 0.25) {
        return;
    }
    p->last = t;
    p->shown = true;
    if (p->total > 0 && done >= p->total) {
        (void)fprintf(stderr,
                      "\r%s %lld bytes; waiting for the server: %.0f s\033[K",
                      p->verb,
                      done,
                      t - p->start);
    } else if (p->total > 0) {
        (void)fprintf(stderr,
                      "\r%s %lld of %lld bytes (%lld%%)\033[K",
                      p->verb,
                      done,
                      p->total,
                      done * 100 / p->total);
    } else {
        (void)fprintf(stderr,
                      "\r%s %lld bytes: %.0f s\033[K",
                      p->verb,
                      done,
                      t - p->start);
    }
}

void ctl_progress_end(struct ctl_progress *p)
{
    if (p->shown) {
        (void)fputs("\r\033[K", stderr);
    }
}

struct upload {
    FILE *in;
    struct ctl_progress progress;
};

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
    struct upload *u = ud;
    size_t n = fread(buf, size, nmemb, u->in);

    return n == 0 && ferror(u->in) ? CURL_READFUNC_ABORT : n;
}

static int on_upload_progress(void *ud,
                              curl_off_t dltotal,
                              curl_off_t dlnow,
                              curl_off_t ultotal,
                              curl_off_t ulnow)
{
    struct upload *u = ud;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    ctl_progress_show(&u->progress, (long long)ulnow);
    return 0;
}

int ctl_upload(struct ctl *c,
               const char *method,
               const char *url,
               const char *ctype,
               FILE *in,
               long long in_len,
               const char *const *headers,
               struct ctl_resp *r)
{
    struct curl_slist *h = build_headers(c, ctype, headers);
    struct upload u = {.in = in};
    char eb[CURL_ERROR_SIZE] = "";
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    ctl_progress_init(&u.progress, "sent", in_len);
    setup(c, method, url, h, r);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, eb);
    if (c->timeout > 0) {
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout);
    }
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c->curl, CURLOPT_READDATA, &u);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)in_len);
    curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_upload_progress);
    curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, &u);
    rc = curl_easy_perform(c->curl);
    ctl_progress_end(&u.progress);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl_slist_free_all(h);
    count_answer(c, r);
    if (rc != CURLE_OK) {
        return transport_failed(c, rc, eb, r);
    }
    return 0;
}

/* ---- errors and exit codes --------------------------------------------- */

int ctl_exit_code(const char *e, long status)
{
    static const struct {
        const char *name;
        int code;
    } map[] = {
        {"ENOENT", CTL_EX_NOENT},
        {"EEXIST", CTL_EX_EXIST},
        {"EINVAL", CTL_EX_INVAL},
        {"ERANGE", CTL_EX_INVAL},
        {"EDOM", CTL_EX_INVAL},
        {"ENAMETOOLONG", CTL_EX_INVAL},
        {"EFBIG", CTL_EX_INVAL},
        {"E2BIG", CTL_EX_INVAL},
        {"EOVERFLOW", CTL_EX_INVAL},
        {"EMSGSIZE", CTL_EX_INVAL},
        {"EACCES", CTL_EX_ACCES},
        {"EPERM", CTL_EX_ACCES},
        {"EBUSY", CTL_EX_BUSY},
        {"ENOTEMPTY", CTL_EX_NOTEMPTY},
        {"ESTALE", CTL_EX_AGAIN},
        {"EAGAIN", CTL_EX_AGAIN},
    };

    if (status == 412 || status == 503) {
        return CTL_EX_AGAIN; /* a condition, or storage undone: retry */
    }
    if (e) {
        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
            if (strcmp(e, map[i].name) == 0) {
                return map[i].code;
            }
        }
        return CTL_EX_FAIL;
    }
    switch (status) {
    case 404:
        return CTL_EX_NOENT;
    case 400:
    case 413:
    case 414:
    case 415:
    case 422:
    case 431:
        return CTL_EX_INVAL;
    case 401:
    case 403:
        return CTL_EX_ACCES;
    case 412:
    case 503:
        return CTL_EX_AGAIN;
    default:
        return CTL_EX_FAIL;
    }
}

int ctl_exit_errno(int err)
{
    switch (err) {
    case ENOENT:
        return CTL_EX_NOENT;
    case EEXIST:
        return CTL_EX_EXIST;
    case EINVAL:
    case EFBIG:
    case E2BIG:
        return CTL_EX_INVAL;
    case EACCES:
    case EPERM:
        return CTL_EX_ACCES;
    case EBUSY:
        return CTL_EX_BUSY;
    case ENOTEMPTY:
        return CTL_EX_NOTEMPTY;
    case EAGAIN:
        return CTL_EX_AGAIN;
    default:
        return CTL_EX_FAIL;
    }
}

int ctl_fail(const struct ctl *c, const char *what, const struct ctl_resp *r)
{
    json_t *p = NULL;
    const char *title = NULL;
    const char *detail = NULL;
    const char *e = NULL;
    json_t *op = NULL;
    int code;

    if (r->ctype && r->len &&
        (strncasecmp(r->ctype, "application/problem+json", 24) == 0 ||
         strncasecmp(r->ctype, "application/json", 16) == 0)) {
        p = ctl_json_parse(r->body, r->len, NULL);
    }
    if (json_is_object(p)) {
        title = json_string_value(json_object_get(p, "title"));
        detail = json_string_value(json_object_get(p, "detail"));
        e = json_string_value(json_object_get(p, "errno"));
        op = json_object_get(p, "op_index");
    }
    if (c->json && p) {
        /* Programs get the problem document as the server sent it. */
        ctl_put_text(stderr, r->body, r->len);
    } else {
        if (detail) {
            (void)fprintf(
                stderr, "configfsctl: %s [%ld", ctl_esc(detail), r->status);
        } else {
            (void)fprintf(stderr,
                          "configfsctl: %s: failed [%ld",
                          ctl_esc(what),
                          r->status);
        }
        if (title) {
            (void)fprintf(stderr, " %s", ctl_esc(title));
        }
        if (e) {
            (void)fprintf(stderr, ", %s", ctl_esc(e));
        }
        if (json_is_integer(op)) {
            (void)fprintf(
                stderr, ", op_index %lld", (long long)json_integer_value(op));
        }
        (void)fputs("]\n", stderr);
        if (!p && r->len) { /* not a problem: show what came */
            (void)fputs("configfsctl: ", stderr);
            ctl_put_escaped(stderr, r->body, r->len > 300 ? 300 : r->len);
            (void)fputc('\n', stderr);
        }
    }
    code = ctl_exit_code(e, r->status); /* before @e goes with @p */
    json_decref(p);
    return code;
}

/* ---- paths ------------------------------------------------------------- */

char *ctl_abs_path(const char *arg)
{
    size_t n = strlen(arg);
    char *out = ctl_xmalloc(n + 2);
    size_t o = 0;
    const char *s = arg;

    while (*s) {
        const char *seg;

        while (*s == '/') {
            s++;
        }
        if (!*s) {
            break;
        }
        seg = s;
        while (*s && *s != '/') {
            s++;
        }
        out[o++] = '/';
        memcpy(out + o, seg, (size_t)(s - seg));
        o += (size_t)(s - seg);
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = '\0';
    return out;
}

static bool unreserved(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
           (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
           ch == '~';
}

char *ctl_config_url(const char *path)
{
    static const char prefix[] = "/api/v1/config/";
    size_t n = strlen(path);
    char *out = ctl_xmalloc(sizeof(prefix) + 3 * n);
    size_t o = sizeof(prefix) - 1;
    const char *s = path;

    memcpy(out, prefix, o);
    while (*s == '/') {
        s++;
    }
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '/' || unreserved(ch)) {
            out[o++] = (char)ch; /* '/' separates; a name never holds it */
        } else {
            o += (size_t)sprintf(out + o, "%%%02X", ch);
        }
    }
    out[o] = '\0';
    return out;
}

char *ctl_query_escape(const char *s)
{
    size_t n = strlen(s);
    char *out = ctl_xmalloc(3 * n + 1);
    size_t o = 0;

    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if (unreserved(ch) || ch == '/') {
            out[o++] = (char)ch;
        } else {
            o += (size_t)sprintf(out + o, "%%%02X", ch);
        }
    }
    out[o] = '\0';
    return out;
}

const char *ctl_basename(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

char *ctl_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash || slash == path) {
        return ctl_xstrdup("/");
    }
    return strndup(path, (size_t)(slash - path));
}

/* ---- output ------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence of 2-4 bytes at @s (0: none). */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
    size_t n;
    unsigned int cp;

    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        n = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        return 0;
    }
    return n;
}

/* The code point of the valid UTF-8 sequence of @n bytes at @s. */
static unsigned int utf8_cp(const unsigned char *s, size_t n)
{
    unsigned int cp = s[0] & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);

    for (size_t i = 1; i < n; i++) {
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    return cp;
}

/* A code point a terminal acts on rather than shows: the C1 controls
 * (CSI, OSC ... as 8-bit codes) and the bidirectional overrides. */
static bool cp_control(unsigned int cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

void ctl_term_write(FILE *out, const char *str, size_t len, bool lines)
{
    const unsigned char *s = (const unsigned char *)str;

    for (size_t i = 0; i < len;) {
        unsigned char ch = s[i];
        size_t n;

        if ((lines && (ch == '\n' || ch == '\t' || ch == '\\')) ||
            (ch >= 0x20 && ch < 0x7F && ch != '\\')) {
            (void)fputc(ch, out); /* as it is */
        } else if (ch == '\\') {
            (void)fputs("\\\\", out);
        } else if (ch == '\n') {
            (void)fputs("\\n", out);
        } else if (ch == '\t') {
            (void)fputs("\\t", out);
        } else if (ch == '\r') {
            (void)fputs("\\r", out);
        } else if (ch >= 0x80 && (n = utf8_seq(s + i, len - i)) > 0) {
            unsigned int cp = utf8_cp(s + i, n);

            if (cp_control(cp)) {
                (void)fprintf(out, "\\u{%04X}", cp);
            } else {
                (void)fwrite(s + i, 1, n, out);
            }
            i += n;
            continue;
        } else {
            (void)fprintf(out, "\\x%02x", ch);
        }
        i++;
    }
}

bool ctl_term_safe(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str);

    for (size_t i = 0; i < len;) {
        size_t n;

        if (s[i] >= 0x20 && s[i] < 0x7F) {
            i++;
        } else if (s[i] >= 0x80 && (n = utf8_seq(s + i, len - i)) > 0 &&
                   !cp_control(utf8_cp(s + i, n))) {
            i += n;
        } else {
            return false;
        }
    }
    return true;
}

void ctl_put_escaped(FILE *out, const char *str, size_t len)
{
    ctl_term_write(out, str, len, false);
}

const char *ctl_esc(const char *s)
{
    static char *ring[8];
    static size_t next;
    char *buf = NULL;
    size_t size = 0;
    FILE *f;

    if (!s) {
        return NULL;
    }
    f = open_memstream(&buf, &size);
    if (!f) {
        oom();
    }
    ctl_put_escaped(f, s, strlen(s));
    if (fclose(f) != 0 || !buf) {
        oom();
    }
    free(ring[next]);
    ring[next] = buf;
    next = (next + 1) % (sizeof(ring) / sizeof(ring[0]));
    return buf;
}

void ctl_put_text(FILE *out, const char *s, size_t len)
{
    if (!len) {
        return;
    }
    if (isatty(fileno(out))) {
        ctl_term_write(out, s, len, true);
    } else {
        (void)fwrite(s, 1, len, out);
    }
    if (s[len - 1] != '\n') {
        (void)fputc('\n', out);
    }
}

int ctl_malformed(const struct ctl *c, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = vstrdup_printf(fmt, ap);
    va_end(ap);
    (void)fprintf(stderr,
                  "configfsctl: malformed answer from %s: %s\n",
                  ctl_esc(c->server),
                  ctl_esc(msg));
    free(msg);
    return CTL_EX_FAIL;
}

int ctl_base64_decode(const char *in, char **ret, size_t *ret_len)
{
    struct base64_decode_ctx ctx;
    size_t n = strlen(in);
    size_t len = BASE64_DECODE_LENGTH(n);
    char *out = ctl_xmalloc(len + 1);

    base64_decode_init(&ctx);
    if (!base64_decode_update(&ctx, &len, (uint8_t *)out, n, in) ||
        !base64_decode_final(&ctx)) {
        free(out);
        return -EINVAL;
    }
    out[len] = '\0';
    *ret = out;
    *ret_len = len;
    return 0;
}

/* ---- files ------------------------------------------------------------- */

int ctl_read_file(const char *path, char **ret_buf, size_t *ret_len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    size_t cap = 0;
    int err = 0;

    if (!f) {
        return -errno;
    }
    for (;;) {
        size_t n;

        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 8192;
            buf = ctl_xrealloc(buf, cap + 1);
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                err = errno ? errno : EIO;
            }
            break;
        }
    }
    if (f != stdin) {
        (void)fclose(f);
    }
    if (err) {
        free(buf);
        return -err;
    }
    buf[len] = '\0';
    *ret_buf = buf;
    *ret_len = len;
    return 0;
}
