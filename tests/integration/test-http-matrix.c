// SPDX-License-Identifier: MIT
/*
 * test-http-matrix.c - every route keeps every promise: a route x promise
 * matrix driven from the route table (server/router.c), so that a promise
 * dropped from one route, or a route added without its cases, fails here.
 * Each method a route answers needs at least one case in cases[] below (a
 * request that route answers, made fresh each time); the table says what
 * honours If-Match, reads a body and names a node, and a route that does
 * not keep a promise says why there (NO_HEAD, NO_IF_MATCH; NO_SCOPE for
 * one that names no config path).
 *
 * For every route of the table and every method, each promise that
 * applies:
 *  - authentication and the least role: with tokens, the role one below
 *    the one cfs_http_route_role() gives is refused (401 without a token,
 *    403 EACCES with a lower one) and changes nothing; that role itself is
 *    answered as the route answers;
 *  - If-Match (on every method that writes): a tag that does not
 *    match is 412 ESTALE and changes nothing; the current tag, the same
 *    tag weak (W/"N"), and a list holding it are accepted; a list of
 *    non-matching tags, weak and strong, is 412;
 *  - HEAD for every GET: the same status and headers, no body;
 *  - a method the route does not answer is 405 with Allow naming exactly
 *    the table's methods (and, under /api/v1/config/, the node kind's);
 *  - every error is problem+json with status, title and errno;
 *  - a body over --body-limit is 413 EFBIG and changes nothing, on every
 *    route and method (not only those the table says read a body);
 *  - every success that names a node (the table's etag methods) carries
 *    its ETag;
 *  - per-path access control (scoped tokens, docs/security.md): with the
 *    least role, a token limited to a subtree apart from every path the
 *    request names (in its URL, query or body), or to a subtree holding
 *    only part of them (one end of a link or a rename), is refused 403
 *    EACCES and changes nothing; limited to the subtree that holds them
 *    all, it gets the route's answer. A route that names no config path
 *    says so in the table (no_scope), a case that names none in the case
 *    list (.no_scope); a route with neither and no scoped case fails;
 *  - committed reads (docs/DESIGN.md §6): every GET of a route that reads
 *    the tree, sent while a change elsewhere is applied but its commit is
 *    held open by the fault VFS, is held (configfsd_reads_held) until that
 *    commit fails and the change is undone, then answered as the route
 *    answers, never with the undone value; a route that reads no tree
 *    state, or only durable state, says so in the table (no_held_read).
 * "Changes nothing" is the global revision: every committed change moves
 * it.
 */
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "../unit/fault-vfs.h"
#include "harness.h"
#include "http.h"
#include "router.h"

/* sha256sum of each token (as in test-http-auth.c). */
#define READER_TOKEN "reader-token-0123456789"
#define READER_HASH                                                            \
    "b3057e05d75e8cdca4bd6ddd527af736913e8464a7a3d47d7a09389eaa8e1eb4"
#define WRITER_TOKEN "writer-token-0123456789"
#define WRITER_HASH                                                            \
    "1caf5ddb6778770019772a6363b8cc194d1e3c145d8de3fc2570091710c3771e"
#define ADMIN_TOKEN "admin-token-01234567890"
#define ADMIN_HASH                                                             \
    "10212fafdd9f5d82accd96937285434f2272cbc39110addf2f20d284e9678dc0"

#define BODY_LIMIT 65536
#define NO_MATCH   "\"999999999\"" /* never a current revision here */

static const char tokens_text[] = "alice reader sha256:" READER_HASH "\n"
                                  "bob writer sha256:" WRITER_HASH "\n"
                                  "root admin sha256:" ADMIN_HASH "\n";

static const char *const token_of[] = {
    [CFS_ROLE_NONE] = NULL,
    [CFS_ROLE_READER] = READER_TOKEN,
    [CFS_ROLE_WRITER] = WRITER_TOKEN,
    [CFS_ROLE_ADMIN] = ADMIN_TOKEN,
};

static const struct {
    enum cfs_http_method m;
    const char *name;
} methods[] = {
    {CFS_M_GET, "GET"},
    {CFS_M_HEAD, "HEAD"},
    {CFS_M_POST, "POST"},
    {CFS_M_PUT, "PUT"},
    {CFS_M_DELETE, "DELETE"},
};
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

static char *dir;
static struct cfs_http_tokens *tokens;
static unsigned serial; /* fresh names for each prepared request */

/* ---- requests ---------------------------------------------------------- */

/* One request, as a case prepares it. */
struct spec {
    char url[512];
    char *body;        /* malloc'd, or NULL */
    const char *ctype; /* Content-Type, or NULL */
    char tag[64];      /* the current ETag If-Match is compared with */
};

static void spec_done(struct spec *s)
{
    free(s->body);
    memset(s, 0, sizeof(*s));
}

/* The errno of a problem answer ("" when there is none). */
static const char *errno_of(const struct http_resp *r)
{
    const char *e = json_string_value(json_object_get(r->json, "errno"));

    return e ? e : "";
}

/* Every error answer is problem+json with status, title and errno. */
static void expect_problem_shape(const struct http_resp *r,
                                 const char *method,
                                 const char *url)
{
    static regex_t errno_rx;
    static bool compiled;
    char *ct;
    const char *err;

    if (r->status < 400 || strcmp(method, "HEAD") == 0) {
        return;
    }
    if (!compiled) {
        assert_int_equal(
            regcomp(&errno_rx, "^E[A-Z0-9]+$", REG_EXTENDED | REG_NOSUB), 0);
        compiled = true;
    }
    ct = http_header(r, "Content-Type");
    if (!ct || strcmp(ct, "application/problem+json") != 0 || !r->json) {
        fail_msg("%s %s: %ld answered as %s, not problem+json: %s",
                 method,
                 url,
                 r->status,
                 ct ? ct : "(no type)",
                 r->body);
    }
    free(ct);
    err = json_string_value(json_object_get(r->json, "errno"));
    if (json_integer_value(json_object_get(r->json, "status")) != r->status ||
        !json_is_string(json_object_get(r->json, "title")) || !err ||
        regexec(&errno_rx, err, 0, NULL, 0) != 0) {
        fail_msg("%s %s: the problem lacks status, title or errno: %s",
                 method,
                 url,
                 r->body);
    }
}

/* @method @s->url with @token (NULL: none), with If-Match @im (NULL:
 * none). */
static void send_with(struct http_resp *r,
                      const char *token,
                      const char *method,
                      const struct spec *s,
                      const char *im)
{
    char auth[128], ct[128], ifm[256];
    const char *hdrs[4] = {NULL};
    size_t n = 0;

    if (token) {
        (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hdrs[n++] = auth;
    }
    if (s->ctype) {
        (void)snprintf(ct, sizeof(ct), "Content-Type: %s", s->ctype);
        hdrs[n++] = ct;
    }
    if (im) {
        (void)snprintf(ifm, sizeof(ifm), "If-Match: %s", im);
        hdrs[n++] = ifm;
    }
    http(r, method, s->url, s->body, s->body ? strlen(s->body) : 0, hdrs);
    expect_problem_shape(r, method, s->url);
}

/* The same as the holder of @role's token (unscoped). */
static void send_as(struct http_resp *r,
                    enum cfs_http_role role,
                    const char *method,
                    const struct spec *s,
                    const char *im)
{
    send_with(r, token_of[role], method, s, im);
}

/* An event stream: the status, headers and the first bytes, then hang up. */
static size_t stream_data(char *data, size_t size, size_t n, void *arg)
{
    struct http_resp *r = arg;
    size_t len = size * n;
    char *b = realloc(r->body, r->len + len + 1);

    assert_non_null(b);
    memcpy(b + r->len, data, len);
    r->body = b;
    r->len += len;
    r->body[r->len] = '\0';
    return r->status == 0 || r->status == 200 ? 0 : len; /* 0: hang up */
}

static size_t stream_header(char *data, size_t size, size_t n, void *arg)
{
    struct http_resp *r = arg;
    size_t len = size * n;
    size_t have = r->headers ? strlen(r->headers) : 0;
    char *h = realloc(r->headers, have + len + 1);

    assert_non_null(h);
    memcpy(h + have, data, len);
    h[have + len] = '\0';
    r->headers = h;
    if (strncmp(data, "HTTP/", 5) == 0) {
        r->status = strtol(strchr(data, ' ') + 1, NULL, 10);
    }
    return len;
}

static void
stream_with(struct http_resp *r, const char *token, const struct spec *s)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hl = NULL;
    char url[600];
    char *ct;

    memset(r, 0, sizeof(*r));
    (void)snprintf(
        url, sizeof(url), "http://127.0.0.1:%u%s", harness_port(), s->url);
    if (token) {
        char auth[128];

        (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hl = curl_slist_append(hl, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, stream_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    (void)curl_easy_perform(c); /* a stream ends by our hanging up */
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (!r->body) {
        r->body = strdup("");
    }
    if (!r->headers) {
        r->headers = strdup("");
    }
    ct = http_header(r, "Content-Type");
    if (r->status != 200 && ct && strstr(ct, "json")) {
        r->json = json_loadb(r->body, r->len, 0, NULL);
    }
    free(ct);
    expect_problem_shape(r, "GET", s->url);
}

static uint64_t revision_now(void)
{
    struct http_resp r;
    const struct spec s = {.url = "/api/v1"};
    uint64_t rev;

    send_as(&r, CFS_ROLE_ADMIN, "GET", &s, NULL);
    assert_int_equal(r.status, 200);
    rev = (uint64_t)json_integer_value(json_object_get(r.json, "revision"));
    http_resp_done(&r);
    return rev;
}

/* The ETag of GET @url (as admin) into @tag. */
static void etag_of(const char *url, char *tag, size_t cap)
{
    struct http_resp r;
    struct spec s = {0};
    char *e;

    (void)snprintf(s.url, sizeof(s.url), "%s", url);
    send_as(&r, CFS_ROLE_ADMIN, "GET", &s, NULL);
    e = http_header(&r, "ETag");
    if (r.status != 200 || !e) {
        fail_msg("GET %s: %ld, ETag %s", url, r.status, e ? e : "none");
    }
    (void)snprintf(tag, cap, "%s", e);
    free(e);
    http_resp_done(&r);
}

/* The tree's revision as a tag: what batch and import compare with. */
static void tree_tag(char *tag, size_t cap)
{
    (void)snprintf(tag, cap, "\"%llu\"", (unsigned long long)revision_now());
}

/* @method @url with @json as admin, which must answer @status. */
static void
admin(const char *method, const char *url, const char *json, long status)
{
    struct http_resp r;
    struct spec s = {.ctype = json ? "application/json" : NULL};

    (void)snprintf(s.url, sizeof(s.url), "%s", url);
    s.body = json ? strdup(json) : NULL;
    send_as(&r, CFS_ROLE_ADMIN, method, &s, NULL);
    if (r.status != status) {
        fail_msg(
            "%s %s: %ld, not %ld: %s", method, url, r.status, status, r.body);
    }
    http_resp_done(&r);
    spec_done(&s);
}

static void set_body(struct spec *s, const char *ctype, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_body(struct spec *s, const char *ctype, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    assert_true(vasprintf(&s->body, fmt, ap) >= 0);
    va_end(ap);
    s->ctype = ctype;
}

/* ---- the cases --------------------------------------------------------- */

#define CFG  "/api/v1/config"
#define KIDS CFG "/02-simple-children"
#define GADG CFG "/usb_gadget/gm"

static void p_node(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), KIDS);
}

static void p_attr(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), KIDS "/mx/storeme");
}

static void p_link(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), GADG "/configs/c.1/ncm.mx");
}

static void p_root(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), CFG);
    etag_of(CFG, s->tag, sizeof(s->tag));
}

static void p_mkdir(struct spec *s)
{
    p_node(s);
    serial++;
    set_body(s,
             "application/json",
             "{\"name\":\"m%u\",\"attributes\":{\"storeme\":\"%u\"}}",
             serial,
             serial);
    etag_of(KIDS, s->tag, sizeof(s->tag));
}

static void p_mkdir_root(struct spec *s)
{
    p_root(s);
    set_body(s, "application/json", "{\"name\":\"m%u\"}", ++serial);
}

static void p_store(struct spec *s)
{
    p_attr(s);
    set_body(s, "text/plain", "%u", ++serial);
    etag_of(s->url, s->tag, sizeof(s->tag));
}

static void p_store_json(struct spec *s)
{
    p_attr(s);
    set_body(s, "application/json", "{\"value\":\"%u\"}", ++serial);
    etag_of(s->url, s->tag, sizeof(s->tag));
}

static void p_symlink(struct spec *s)
{
    char fn[128];

    (void)snprintf(fn, sizeof(fn), "{\"name\":\"ncm.l%u\"}", ++serial);
    admin("POST", GADG "/functions", fn, 201);
    (void)snprintf(s->url, sizeof(s->url), GADG "/configs/c.1/ncm.l%u", serial);
    set_body(s,
             "application/json",
             "{\"target\":\"/usb_gadget/gm/functions/ncm.l%u\"}",
             serial);
    etag_of(GADG "/configs/c.1", s->tag, sizeof(s->tag));
}

static void p_rmdir(struct spec *s)
{
    char body[64];

    (void)snprintf(body, sizeof(body), "{\"name\":\"d%u\"}", ++serial);
    admin("POST", KIDS, body, 201);
    (void)snprintf(s->url, sizeof(s->url), KIDS "/d%u", serial);
    etag_of(s->url, s->tag, sizeof(s->tag));
}

static void p_unlink(struct spec *s)
{
    struct spec l = {0};

    p_symlink(&l);
    admin("PUT", l.url, l.body, 201);
    (void)snprintf(s->url, sizeof(s->url), "%s", l.url);
    etag_of(s->url, s->tag, sizeof(s->tag));
    spec_done(&l);
}

/* The typed forms of the tree: /api/v1/node/, value/ and link/. */
static void p_typed_node(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/node/02-simple-children");
}

static void p_typed_value(struct spec *s)
{
    (void)snprintf(
        s->url, sizeof(s->url), "/api/v1/value/02-simple-children/mx/storeme");
}

static void p_typed_put_value(struct spec *s)
{
    p_typed_value(s);
    set_body(s, "application/json", "{\"value\":\"%u\"}", ++serial);
    etag_of(KIDS "/mx/storeme", s->tag, sizeof(s->tag));
}

static void p_typed_link(struct spec *s)
{
    (void)snprintf(s->url,
                   sizeof(s->url),
                   "/api/v1/link/usb_gadget/gm/configs/c.1/ncm.mx");
}

static void p_typed_put_link(struct spec *s)
{
    char fn[128];

    (void)snprintf(fn, sizeof(fn), "{\"name\":\"ncm.t%u\"}", ++serial);
    admin("POST", GADG "/functions", fn, 201);
    (void)snprintf(s->url,
                   sizeof(s->url),
                   "/api/v1/link/usb_gadget/gm/configs/c.1/ncm.t%u",
                   serial);
    set_body(s,
             "application/json",
             "{\"target\":\"/usb_gadget/gm/functions/ncm.t%u\"}",
             serial);
    etag_of(GADG "/configs/c.1", s->tag, sizeof(s->tag));
}

static void p_schema(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/schema/fakenbd");
}

static void p_rename(struct spec *s)
{
    char body[64];

    (void)snprintf(body, sizeof(body), "{\"name\":\"r%u\"}", ++serial);
    admin("POST", CFG "/04-committable-children/pending", body, 201);
    set_body(s,
             "application/json",
             "{\"from\":\"/04-committable-children/pending/r%u\","
             "\"to\":\"/04-committable-children/live/r%u\"}",
             serial,
             serial);
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/rename");
    (void)snprintf(
        body, sizeof(body), CFG "/04-committable-children/pending/r%u", serial);
    etag_of(body, s->tag, sizeof(s->tag));
}

static void p_batch(struct spec *s)
{
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/batch");
    set_body(s,
             "application/json",
             "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/02-simple-children/"
             "b%u\"}]}",
             ++serial);
    tree_tag(s->tag, sizeof(s->tag));
}

/* A batch of forwarded writes (server/fwd-batch.h) holding one store;
 * the batch needs no token, its request carries none (it is answered 401
 * inside the batch's answer when the server has tokens). */
static void p_forward(struct spec *s)
{
    static const char path[] = KIDS "/mx/storeme";
    char value[16];

    (void)snprintf(value, sizeof(value), "f%u", ++serial);
    set_body(s,
             "application/x-configfsd-forward",
             "CFSF1\n3:PUT,%zu:%s,0:,1:0,%zu:%s,",
             strlen(path),
             path,
             strlen(value),
             value);
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/forward");
}

/* An import that changes something: mx's export with another value. */
static void p_import(struct spec *s)
{
    struct http_resp r;
    struct spec e = {.url = "/api/v1/export?path=/02-simple-children/mx"};
    json_t *values;
    size_t i;
    json_t *v;

    send_as(&r, CFS_ROLE_ADMIN, "GET", &e, NULL);
    assert_int_equal(r.status, 200);
    values = json_object_get(json_object_get(r.json, "root"), "values");
    json_array_foreach(values, i, v) {
        if (strcmp(json_string_value(json_object_get(v, "name")), "storeme") ==
            0) {
            char value[32];

            (void)snprintf(value, sizeof(value), "%u", ++serial);
            json_object_set_new(v, "value", json_string(value));
        }
    }
    s->body = json_dumps(r.json, JSON_COMPACT);
    s->ctype = "application/json";
    http_resp_done(&r);
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/import");
    tree_tag(s->tag, sizeof(s->tag));
}

/* A batch of one symlink: its path under configs, its target under
 * functions. */
static void p_batch_link(struct spec *s)
{
    char fn[128];

    (void)snprintf(fn, sizeof(fn), "{\"name\":\"ncm.b%u\"}", ++serial);
    admin("POST", GADG "/functions", fn, 201);
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/batch");
    set_body(s,
             "application/json",
             "{\"ops\":[{\"op\":\"symlink\",\"path\":\"/usb_gadget/gm/"
             "configs/c.1/ncm.b%u\",\"target\":\"/usb_gadget/gm/functions/"
             "ncm.b%u\"}]}",
             serial,
             serial);
    tree_tag(s->tag, sizeof(s->tag));
}

/* A batch of one rename: pending to live. */
static void p_batch_rename(struct spec *s)
{
    char body[64];

    (void)snprintf(body, sizeof(body), "{\"name\":\"q%u\"}", ++serial);
    admin("POST", CFG "/04-committable-children/pending", body, 201);
    (void)snprintf(s->url, sizeof(s->url), "/api/v1/batch");
    set_body(s,
             "application/json",
             "{\"ops\":[{\"op\":\"rename\",\"from\":\"/04-committable-"
             "children/pending/q%u\",\"to\":\"/04-committable-children/"
             "live/q%u\"}]}",
             serial,
             serial);
    tree_tag(s->tag, sizeof(s->tag));
}

#define P_URL(fn, u)                                                           \
    static void fn(struct spec *s)                                             \
    {                                                                          \
        (void)snprintf(s->url, sizeof(s->url), "%s", u);                       \
    }
P_URL(p_api, "/api/v1")
P_URL(p_api_slash, "/api/v1/")
P_URL(p_history, "/api/v1/history")
P_URL(p_whoami, "/api/v1/whoami")
P_URL(p_history_path, "/api/v1/history?path=/02-simple-children/mx")
P_URL(p_export, "/api/v1/export")
P_URL(p_export_path, "/api/v1/export?path=/02-simple-children/mx")
P_URL(p_events, "/api/v1/events")
P_URL(p_events_path, "/api/v1/events?path=/02-simple-children")
P_URL(p_openapi, "/api/v1/openapi.yaml")
P_URL(p_metrics, "/metrics")
P_URL(p_readyz, "/readyz")
P_URL(p_healthz, "/healthz")

/*
 * One request of a route: for @methods, @prepare makes it ready (fresh
 * each time: a request that succeeds uses up what it changes), @ok is the
 * route's own answer to the role it needs, with @ok_errno when that is an
 * error, and @allow the Allow of a 405 (for the routes whose methods depend
 * on the node).
 *
 * Per-path access control (scoped tokens, server/scope.h): @scope is a
 * subtree that holds every config path the request names, in its URL or
 * its body. A token of the role the route needs, scoped to it, gets the
 * route's own answer; the same token scoped to APART, or to one of @part
 * (each holds only some of the paths: one end of a link or a rename), is
 * refused 403 EACCES and changes nothing. A case without @scope says why
 * in @no_scope, unless the table says it for the whole route (its
 * no_scope: the route names no config path): BY_TABLE.
 */
struct mcase {
    const char *route; /* the table's path */
    const char *what;
    void (*prepare)(struct spec *s);
    long ok;
    const char *ok_errno;
    const char *allow;
    unsigned methods;
    bool stream; /* an event stream: it is read to its first bytes */
    const char *scope;
    const char *part[2];
    const char *no_scope;
    /* a subtree that holds the link the request names, not its target:
     * the link is hidden from a token scoped to it, 404 ENOENT */
    const char *hidden;
};

#define M_(m) CFS_M(CFS_M_##m)

/* A case the route answers with @st; one it refuses with @st, @err (and,
 * for a 405, @allow). */
#define OK(r, ms, w, p, st, ...)                                               \
    {                                                                          \
        .route = r, .methods = ms, .what = w, .prepare = p, .ok = st,          \
        __VA_ARGS__                                                            \
    }
#define NO(r, ms, w, p, st, err, al, ...)                                      \
    {                                                                          \
        .route = r, .methods = ms, .what = w, .prepare = p, .ok = st,          \
        .ok_errno = err, .allow = al, __VA_ARGS__                              \
    }

/* The scope column: the subtree that holds what the request names, and
 * the subtrees that hold part of it; or why there is none. */
#define IN(sub)          .scope = (sub)
#define IN2(sub, p1, p2) .scope = (sub), .part = {(p1), (p2)}
#define NO_SCOPE(why)    .no_scope = (why)
#define HIDDEN(sub)      .hidden = (sub)
#define BY_TABLE         .scope = NULL        /* the table's no_scope */
#define APART            "/03-group-children" /* apart from every case */
#define S_KIDS           "/02-simple-children"
#define S_GADG           "/usb_gadget/gm"
#define S_CONFIGS        S_GADG "/configs"
#define S_FUNCS          S_GADG "/functions"
#define S_COMMIT         "/04-committable-children"
#define UNFILTERED                                                             \
    "no path asked for: a scoped token gets what it "                          \
    "sees, filtered, never a refusal"

/* clang-format off */
static const struct mcase cases[] = {
    OK("/api/v1/config/", M_(GET), "a group", p_node, 200, IN(S_KIDS)),
    OK("/api/v1/config/", M_(GET), "an attribute", p_attr, 200, IN(S_KIDS)),
    /* a link is read only when its target is inside too: else it is
     * hidden, as if it were not there */
    OK("/api/v1/config/", M_(GET), "a link", p_link, 200, IN(S_GADG), HIDDEN(S_CONFIGS)),
    OK("/api/v1/config/", M_(POST), "mkdir", p_mkdir, 201, IN(S_KIDS)),
    OK("/api/v1/config/", M_(PUT), "store", p_store, 200, IN(S_KIDS)),
    OK("/api/v1/config/", M_(PUT), "store JSON", p_store_json, 200, IN(S_KIDS)),
    OK("/api/v1/config/", M_(PUT), "symlink", p_symlink, 201, IN2(S_GADG, S_CONFIGS, S_FUNCS)),
    OK("/api/v1/config/", M_(DELETE), "rmdir", p_rmdir, 204, IN(S_KIDS)),
    OK("/api/v1/config/", M_(DELETE), "unlink", p_unlink, 204, IN(S_GADG), HIDDEN(S_CONFIGS)),
    /* what a node of another kind does not answer: the path decides
     * first, so a token scoped elsewhere learns not even the kind */
    NO("/api/v1/config/", M_(PUT), "PUT on a group", p_node, 405, "EOPNOTSUPP", "GET, HEAD, POST, DELETE", IN(S_KIDS)),
    NO("/api/v1/config/", M_(POST) | M_(DELETE), "POST, DELETE on an attribute", p_attr, 405, "EOPNOTSUPP", "GET, HEAD, PUT", IN(S_KIDS)),
    NO("/api/v1/config/", M_(POST) | M_(PUT), "POST, PUT on a link", p_link, 405, "EOPNOTSUPP", "GET, HEAD, DELETE", IN(S_GADG), HIDDEN(S_CONFIGS)),
    OK("/api/v1/config", M_(GET), "the root", p_root, 200, NO_SCOPE("the root is above every subtree: a scoped token reads it filtered, never refused")),
    /* the root is inside only "/", the whole tree */
    NO("/api/v1/config", M_(POST), "mkdir in the root", p_mkdir_root, 403, "EPERM", NULL, IN("/")),
    NO("/api/v1/config", M_(PUT), "PUT on the root", p_root, 405, "EOPNOTSUPP", "GET, HEAD, POST, DELETE", IN("/")),
    NO("/api/v1/config", M_(DELETE), "the root", p_root, 403, "EPERM", NULL, IN("/")),
    OK("/api/v1/node/", M_(GET), "a group", p_typed_node, 200, IN(S_KIDS)),
    OK("/api/v1/value/", M_(GET), "a value", p_typed_value, 200, IN(S_KIDS)),
    OK("/api/v1/value/", M_(PUT), "store", p_typed_put_value, 200, IN(S_KIDS)),
    OK("/api/v1/link/", M_(GET), "a link", p_typed_link, 200, IN(S_GADG), HIDDEN(S_CONFIGS)),
    OK("/api/v1/link/", M_(PUT), "symlink", p_typed_put_link, 201, IN2(S_GADG, S_CONFIGS, S_FUNCS)),
    OK("/api/v1/schema/", M_(GET), "a schema", p_schema, 200, IN("/fakenbd")),
    OK("/api/v1", M_(GET), "the API root", p_api, 200, BY_TABLE),
    OK("/api/v1/", M_(GET), "the API root", p_api_slash, 200, BY_TABLE),
    OK("/api/v1/rename", M_(POST), "commit an item", p_rename, 200, IN2(S_COMMIT, S_COMMIT "/pending", S_COMMIT "/live")),
    OK("/api/v1/batch", M_(POST), "a mkdir", p_batch, 200, IN(S_KIDS)),
    OK("/api/v1/batch", M_(POST), "a symlink", p_batch_link, 200, IN2(S_GADG, S_CONFIGS, S_FUNCS)),
    OK("/api/v1/batch", M_(POST), "a rename", p_batch_rename, 200, IN2(S_COMMIT, S_COMMIT "/pending", S_COMMIT "/live")),
    OK("/api/v1/forward", M_(POST), "a forwarded store", p_forward, 200, BY_TABLE),
    OK("/api/v1/history", M_(GET), "the journal", p_history, 200, NO_SCOPE(UNFILTERED)),
    OK("/api/v1/history", M_(GET), "a path's journal", p_history_path, 200, IN(S_KIDS)),
    OK("/api/v1/whoami", M_(GET), "who the token is", p_whoami, 200, BY_TABLE),
    OK("/api/v1/export", M_(GET), "the tree", p_export, 200, NO_SCOPE(UNFILTERED)),
    OK("/api/v1/export", M_(GET), "a subtree", p_export_path, 200, IN(S_KIDS)),
    /* above the document's root, the token sees it: its plan is refused */
    OK("/api/v1/import", M_(POST), "a changed value", p_import, 200, IN2(S_KIDS, S_KIDS "/mx/x", NULL)),
    {.route = "/api/v1/events", .methods = M_(GET), .what = "the stream", .prepare = p_events, .ok = 200, .stream = true, NO_SCOPE(UNFILTERED)},
    {.route = "/api/v1/events", .methods = M_(GET), .what = "a path's stream", .prepare = p_events_path, .ok = 200, .stream = true, IN(S_KIDS)},
    OK("/api/v1/openapi.yaml", M_(GET), "the contract", p_openapi, 200, BY_TABLE),
    OK("/metrics", M_(GET), "the metrics", p_metrics, 200, BY_TABLE),
    OK("/readyz", M_(GET), "readiness", p_readyz, 200, BY_TABLE),
    OK("/healthz", M_(GET), "health", p_healthz, 200, BY_TABLE),
};
/* clang-format on */

/* ---- the promises ------------------------------------------------------ */

static const char *method_name(enum cfs_http_method m)
{
    for (size_t k = 0; k < N_METHODS; k++) {
        if (methods[k].m == m) {
            return methods[k].name;
        }
    }
    return "?";
}

/* The Allow of a method set, in the server's order. */
static void allow_of(unsigned set, char *out, size_t cap)
{
    size_t o = 0;

    out[0] = '\0';
    for (size_t k = 0; k < N_METHODS; k++) {
        if (set & CFS_M(methods[k].m)) {
            o += (size_t)snprintf(
                out + o, cap - o, "%s%s", o ? ", " : "", methods[k].name);
        }
    }
}

/* One request of case @c with @m and @token (If-Match @im). */
static void do_case_with(struct http_resp *r,
                         const struct mcase *c,
                         enum cfs_http_method m,
                         const char *token,
                         const struct spec *s,
                         const char *im)
{
    if (c->stream && m == CFS_M_GET) {
        stream_with(r, token, s);
    } else {
        send_with(r, token, method_name(m), s, im);
    }
}

/* The same as @role (unscoped). */
static void do_case(struct http_resp *r,
                    const struct mcase *c,
                    enum cfs_http_method m,
                    enum cfs_http_role role,
                    const struct spec *s,
                    const char *im)
{
    do_case_with(r, c, m, token_of[role], s, im);
}

/* @r is the route's own answer to case @c. */
static void expect_ok(const struct http_resp *r,
                      const struct cfs_http_route *rt,
                      const struct mcase *c,
                      enum cfs_http_method m,
                      const struct spec *s,
                      const char *how)
{
    const char *name = method_name(m);

    if (r->status != c->ok) {
        fail_msg("%s %s (%s, %s): %ld, not %ld: %s",
                 name,
                 s->url,
                 c->what,
                 how,
                 r->status,
                 c->ok,
                 r->body);
    }
    if (c->ok_errno && m != CFS_M_HEAD &&
        strcmp(errno_of(r), c->ok_errno) != 0) {
        fail_msg("%s %s (%s): errno %s, not %s",
                 name,
                 s->url,
                 c->what,
                 errno_of(r),
                 c->ok_errno);
    }
    if (c->allow) {
        char *allow = http_header(r, "Allow");

        if (!allow || strcmp(allow, c->allow) != 0) {
            fail_msg("%s %s (%s): Allow %s, not %s",
                     name,
                     s->url,
                     c->what,
                     allow ? allow : "(none)",
                     c->allow);
        }
        free(allow);
    }
    /* ETag on every success that names a node */
    if (r->status < 300 && (rt->etag & CFS_M(m))) {
        char *etag = http_header(r, "ETag");
        regex_t rx;

        assert_int_equal(regcomp(&rx, "^\"[0-9]+\"$", REG_EXTENDED | REG_NOSUB),
                         0);
        if (!etag || regexec(&rx, etag, 0, NULL, 0) != 0) {
            fail_msg("%s %s (%s): a success that names a node without its "
                     "ETag (%s)",
                     name,
                     s->url,
                     c->what,
                     etag ? etag : "none");
        }
        regfree(&rx);
        free(etag);
    }
}

/* Authentication and the least role: one below is refused and changes
 * nothing; the role itself gets the route's answer. */
static void promise_role(const struct cfs_http_route *rt,
                         const struct mcase *c,
                         enum cfs_http_method m)
{
    struct spec s = {0};
    struct http_resp r;
    enum cfs_http_role need;

    c->prepare(&s);
    need = cfs_http_route_role(rt, s.url, m);
    if (need > CFS_ROLE_NONE) {
        uint64_t rev = revision_now();

        do_case(&r, c, m, need - 1, &s, NULL);
        if (r.status != (need - 1 == CFS_ROLE_NONE ? 401 : 403) ||
            (m != CFS_M_HEAD && strcmp(errno_of(&r), "EACCES") != 0)) {
            fail_msg("%s %s (%s) as %s: %ld, not refused: %s",
                     method_name(m),
                     s.url,
                     c->what,
                     cfs_http_role_name(need - 1),
                     r.status,
                     r.body);
        }
        http_resp_done(&r);
        if (revision_now() != rev) {
            fail_msg("%s %s (%s): refused for its role, and yet a change",
                     method_name(m),
                     s.url,
                     c->what);
        }
    }
    do_case(&r, c, m, need, &s, NULL);
    expect_ok(&r, rt, c, m, &s, cfs_http_role_name(need));
    http_resp_done(&r);
    spec_done(&s);
}

/* If-Match: not matching is 412 and changes nothing; current, weak and
 * listed are accepted. */
static void promise_if_match(const struct cfs_http_route *rt,
                             const struct mcase *c,
                             enum cfs_http_method m)
{
    static const char *const refused[] = {
        NO_MATCH, "W/" NO_MATCH, "\"999999998\", W/" NO_MATCH};
    /* before the current tag: nothing, weak, a list it ends */
    static const char *const forms[] = {"", "W/", NO_MATCH ", "};
    struct http_resp r;
    char im[160];

    for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
        struct spec s = {0};
        uint64_t rev;

        c->prepare(&s);
        rev = revision_now();
        do_case(&r, c, m, CFS_ROLE_ADMIN, &s, refused[k]);
        if (r.status != 412 || strcmp(errno_of(&r), "ESTALE") != 0) {
            fail_msg("%s %s (%s) with If-Match %s: %ld, not 412: %s",
                     method_name(m),
                     s.url,
                     c->what,
                     refused[k],
                     r.status,
                     r.body);
        }
        http_resp_done(&r);
        if (revision_now() != rev) {
            fail_msg("%s %s (%s): 412, and yet a change",
                     method_name(m),
                     s.url,
                     c->what);
        }
        spec_done(&s);
    }
    for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
        struct spec s = {0};
        uint64_t rev;

        c->prepare(&s);
        assert_true(s.tag[0] == '"'); /* the case knows the current tag */
        (void)snprintf(im, sizeof(im), "%s%s", forms[k], s.tag);
        rev = revision_now();
        do_case(&r, c, m, CFS_ROLE_ADMIN, &s, im);
        expect_ok(&r, rt, c, m, &s, im);
        http_resp_done(&r);
        /* what the 412 above kept from happening does happen: "nothing
         * changed" there was not for want of a change to make */
        if (c->ok < 300 && revision_now() == rev) {
            fail_msg("%s %s (%s) accepted, and yet no change",
                     method_name(m),
                     s.url,
                     c->what);
        }
        spec_done(&s);
    }
}

/* HEAD: GET's status and headers, no body. */
static void promise_head(const struct cfs_http_route *rt, const struct mcase *c)
{
    static const char *const same[] = {"Content-Type", "ETag", "Cache-Control"};
    struct spec s = {0};
    struct http_resp g, h;

    c->prepare(&s);
    do_case(&g, c, CFS_M_GET, CFS_ROLE_ADMIN, &s, NULL);
    send_as(&h, CFS_ROLE_ADMIN, "HEAD", &s, NULL);
    if (h.status != g.status || h.len != 0) {
        fail_msg("HEAD %s (%s): %ld with %zu bytes; GET: %ld",
                 s.url,
                 c->what,
                 h.status,
                 h.len,
                 g.status);
    }
    for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++) {
        char *a = http_header(&g, same[k]);
        char *b = http_header(&h, same[k]);

        if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0)) {
            fail_msg("HEAD %s (%s): %s %s, GET's %s",
                     s.url,
                     c->what,
                     same[k],
                     b ? b : "(none)",
                     a ? a : "(none)");
        }
        free(a);
        free(b);
    }
    (void)rt;
    http_resp_done(&g);
    http_resp_done(&h);
    spec_done(&s);
}

/* ---- committed reads -------------------------------------------------- */

#define UNDONE_VALUE "8675309" /* never committed: undone */

struct held {
    pthread_t t;
    const char *method, *url, *body, *token, *ctype;
    struct http_resp r;
    int rc;
};

static void *held_run(void *arg)
{
    struct held *h = arg;
    char auth[128];
    const char *hdrs[3] = {auth, h->ctype, NULL};

    (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", h->token);
    h->rc = http_try(
        &h->r, h->method, h->url, h->body, h->body ? strlen(h->body) : 0, hdrs);
    return NULL;
}

static long reads_held(void)
{
    struct spec s = {0};
    struct http_resp r;
    const char *p;
    long v = -1;

    (void)snprintf(s.url, sizeof(s.url), "/metrics");
    send_as(&r, CFS_ROLE_READER, "GET", &s, NULL);
    p = r.body ? strstr(r.body, "\nconfigfsd_reads_held ") : NULL;
    if (p) {
        v = strtol(p + strlen("\nconfigfsd_reads_held "), NULL, 10);
    }
    http_resp_done(&r);
    return v;
}

static void pause_10ms(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};

    nanosleep(&ts, NULL);
}

/* A change held open (its commit held by the fault VFS) in @h's thread;
 * returns once the commit is held. */
static void hold_commit(struct held *h)
{
    int hits = fault_vfs_hits();

    fault_vfs_fail_sync(0, SQLITE_IOERR_FSYNC, false, FAULT_VFS_HOLD);
    assert_int_equal(pthread_create(&h->t, NULL, held_run, h), 0);
    for (int i = 0; i < 3000 && fault_vfs_hits() == hits; i++) {
        pause_10ms();
    }
    if (fault_vfs_hits() != hits + 1) {
        fault_vfs_clear();
        assert_int_equal(pthread_join(h->t, NULL), 0);
        fail_msg("%s %s was not held: %ld %s",
                 h->method,
                 h->url,
                 h->r.status,
                 h->r.body ? h->r.body : "");
    }
}

/* Fail the held commit: 503, undone. */
static void fail_held_commit(struct held *h)
{
    fault_vfs_release();
    assert_int_equal(pthread_join(h->t, NULL), 0);
    fault_vfs_clear();
    assert_int_equal(h->rc, 0);
    assert_int_equal(h->r.status, 503);
    http_resp_done(&h->r);
}

/* Does the GET of @url read the whole tree (the root's listing)? */
static bool reads_root(const char *url)
{
    return strcmp(url, CFG) == 0 || strcmp(url, CFG "/") == 0;
}

/*
 * The GET of case @c, sent while a change to what it reads is applied and
 * its commit held open, then failed: held until then, answered as the
 * route answers, never with the undone value. The change (a batch) stores
 * the undone value into a module's attribute of 02-simple-children and
 * takes the gadget's link away and back, so that every GET case reads
 * part of it. And sent while a change elsewhere (01-childless) is held
 * open: answered at once, not held (a read waits only for what it reads).
 */
static void promise_committed_read(const struct cfs_http_route *rt,
                                   const struct mcase *c)
{
    struct spec s = {0};
    struct held put = {
        .method = "POST",
        .url = "/api/v1/batch",
        .body = "{\"ops\":[{\"op\":\"store\",\"path\":"
                "\"/02-simple-children/mx/storeme\",\"value\":\"" UNDONE_VALUE
                "\"},{\"op\":\"unlink\",\"path\":"
                "\"/usb_gadget/gm/configs/c.1/ncm.mx\"},{\"op\":\"symlink\","
                "\"path\":\"/usb_gadget/gm/configs/c.1/ncm.mx\",\"target\":"
                "\"/usb_gadget/gm/functions/ncm.mx\"}]}",
        .token = ADMIN_TOKEN,
        .ctype = "Content-Type: application/json"};
    struct held other = {.method = "PUT",
                         .url = "/api/v1/config/01-childless/storeme",
                         .body = UNDONE_VALUE,
                         .token = WRITER_TOKEN};
    struct held get = {.method = "GET", .token = ADMIN_TOKEN};

    c->prepare(&s);
    get.url = s.url;
    if (!reads_root(s.url)) {
        /* a change elsewhere holds nothing */
        hold_commit(&other);
        held_run(&get);
        if (get.rc != 0 || get.r.status != c->ok || reads_held() != 0) {
            fault_vfs_clear();
            fail_msg("GET %s (%s): held (or not %ld) while only a change "
                     "elsewhere was open: %ld (%s)",
                     s.url,
                     c->what,
                     c->ok,
                     get.r.status,
                     rt->path);
        }
        http_resp_done(&get.r);
        fail_held_commit(&other);
    }
    hold_commit(&put);
    assert_int_equal(pthread_create(&get.t, NULL, held_run, &get), 0);
    for (int i = 0; i < 3000 && reads_held() != 1; i++) {
        pause_10ms();
    }
    if (reads_held() != 1) {
        fault_vfs_clear();
        fail_msg("GET %s (%s): answered while a change it may see was not "
                 "committed (configfsd_reads_held is not 1): %s",
                 s.url,
                 c->what,
                 rt->path);
    }
    fail_held_commit(&put);
    assert_int_equal(pthread_join(get.t, NULL), 0);
    assert_int_equal(get.rc, 0);
    if (get.r.status != c->ok ||
        (get.r.body && strstr(get.r.body, UNDONE_VALUE))) {
        fail_msg("GET %s (%s), held: %ld (not %ld), %s",
                 s.url,
                 c->what,
                 get.r.status,
                 c->ok,
                 get.r.body ? get.r.body : "");
    }
    http_resp_done(&get.r);
    spec_done(&s);
}

/* A body over --body-limit: 413 EFBIG, nothing changed (sent whole, also
 * to the stream: a 413 is answered before any stream opens). */
static void promise_body_limit(const struct mcase *c, enum cfs_http_method m)
{
    struct spec s = {0};
    struct http_resp r;
    uint64_t rev;
    size_t len = BODY_LIMIT + 1;

    c->prepare(&s);
    free(s.body);
    /* valid JSON, so that only its size can be what is refused */
    s.body = malloc(len + 1);
    assert_non_null(s.body);
    memset(s.body, ' ', len);
    memcpy(s.body, "{\"name\":\"big\"", 13);
    s.body[len - 1] = '}';
    s.body[len] = '\0';
    s.ctype = "application/json";
    rev = revision_now();
    send_as(&r, CFS_ROLE_ADMIN, method_name(m), &s, NULL);
    if (r.status != 413 || strcmp(errno_of(&r), "EFBIG") != 0) {
        fail_msg("%s %s (%s) with %zu bytes: %ld, not 413 EFBIG: %.200s",
                 method_name(m),
                 s.url,
                 c->what,
                 len,
                 r.status,
                 r.body);
    }
    http_resp_done(&r);
    if (revision_now() != rev) {
        fail_msg("%s %s (%s): 413, and yet a change",
                 method_name(m),
                 s.url,
                 c->what);
    }
    spec_done(&s);
}

/* ---- scoped tokens ----------------------------------------------------- */

/* The subtrees the cases name, APART first; each has a token per role. */
#define MAX_SUBTREES 32
static const char *subtrees[MAX_SUBTREES];
static size_t n_subtrees;

static void subtree_add(const char *sub)
{
    for (size_t i = 0; sub && i < n_subtrees; i++) {
        if (strcmp(subtrees[i], sub) == 0) {
            return;
        }
    }
    if (sub) {
        assert_true(n_subtrees < MAX_SUBTREES);
        subtrees[n_subtrees++] = sub;
    }
}

/* The token of @role limited to @sub, into @out. */
static void
scoped_token(enum cfs_http_role role, const char *sub, char *out, size_t cap)
{
    size_t i = 0;

    while (i < n_subtrees && strcmp(subtrees[i], sub) != 0) {
        i++;
    }
    assert_true(i < n_subtrees);
    (void)snprintf(out, cap, "scoped-%d-%02zu-0123456789", (int)role, i);
}

/* The tokens file: the unscoped tokens, then one line per role and
 * subtree (new string). */
static char *tokens_file(void)
{
    size_t cap = sizeof(tokens_text) + 3 * MAX_SUBTREES * 192;
    char *text = malloc(cap);
    size_t o;

    assert_non_null(text);
    o = (size_t)snprintf(text, cap, "%s", tokens_text);
    subtree_add(APART);
    for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
        subtree_add(cases[j].scope);
        subtree_add(cases[j].part[0]);
        subtree_add(cases[j].part[1]);
        subtree_add(cases[j].hidden);
    }
    for (int role = CFS_ROLE_READER; role <= CFS_ROLE_ADMIN; role++) {
        for (size_t i = 0; i < n_subtrees; i++) {
            char tok[64], hex[65];

            scoped_token(
                (enum cfs_http_role)role, subtrees[i], tok, sizeof(tok));
            cfs_http_token_hash(tok, strlen(tok), hex);
            o += (size_t)snprintf(text + o,
                                  cap - o,
                                  "s%d-%zu %s sha256:%s %s\n",
                                  role,
                                  i,
                                  cfs_http_role_name((enum cfs_http_role)role),
                                  hex,
                                  subtrees[i]);
            assert_true(o < cap);
        }
    }
    return text;
}

/* Per-path access control: with the role the route needs, a token scoped
 * apart from what the request names, or to part of it, is refused 403
 * EACCES, on the path alone, and changes nothing; scoped to the subtree
 * that holds it all, it gets the route's answer. */
static void promise_scope(const struct cfs_http_route *rt,
                          const struct mcase *c,
                          enum cfs_http_method m)
{
    const char *const refused[] = {APART, c->part[0], c->part[1]};
    struct spec s = {0};
    struct http_resp r;
    enum cfs_http_role need;
    char tok[64], how[160];

    c->prepare(&s);
    need = cfs_http_route_role(rt, s.url, m);
    if (need == CFS_ROLE_NONE) {
        fail_msg("%s %s (%s): public, and yet a scope case",
                 method_name(m),
                 s.url,
                 c->what);
    }
    for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
        const char *detail;
        uint64_t rev;

        if (!refused[k]) {
            continue;
        }
        scoped_token(need, refused[k], tok, sizeof(tok));
        rev = revision_now();
        do_case_with(&r, c, m, tok, &s, NULL);
        if (r.status != 403 ||
            (m != CFS_M_HEAD && strcmp(errno_of(&r), "EACCES") != 0)) {
            fail_msg("%s %s (%s) as %s scoped to %s: %ld, not refused: %s",
                     method_name(m),
                     s.url,
                     c->what,
                     cfs_http_role_name(need),
                     refused[k],
                     r.status,
                     r.body);
        }
        /* the refusal names neither the subtrees nor the path */
        detail = json_string_value(json_object_get(r.json, "detail"));
        if (detail && (strstr(detail, refused[k]) ||
                       (strlen(c->scope) > 1 && strstr(detail, c->scope)))) {
            fail_msg("%s %s (%s): the refusal names a path: %s",
                     method_name(m),
                     s.url,
                     c->what,
                     detail);
        }
        http_resp_done(&r);
        if (revision_now() != rev) {
            fail_msg("%s %s (%s): refused to a token scoped to %s, and yet a "
                     "change",
                     method_name(m),
                     s.url,
                     c->what,
                     refused[k]);
        }
    }
    if (c->hidden) {
        uint64_t rev = revision_now();
        const char *detail;

        /* a link hidden from the token: as a path that does not exist */
        scoped_token(need, c->hidden, tok, sizeof(tok));
        do_case_with(&r, c, m, tok, &s, NULL);
        detail = json_string_value(json_object_get(r.json, "detail"));
        if (r.status != 404 ||
            (m != CFS_M_HEAD && strcmp(errno_of(&r), "ENOENT") != 0) ||
            (detail && strstr(detail, "/functions"))) {
            fail_msg("%s %s (%s) as %s scoped to %s: %ld, not as missing: %s",
                     method_name(m),
                     s.url,
                     c->what,
                     cfs_http_role_name(need),
                     c->hidden,
                     r.status,
                     r.body);
        }
        http_resp_done(&r);
        if (revision_now() != rev) {
            fail_msg("%s %s (%s): a link hidden from a token scoped to %s, "
                     "and yet a change",
                     method_name(m),
                     s.url,
                     c->what,
                     c->hidden);
        }
    }
    scoped_token(need, c->scope, tok, sizeof(tok));
    do_case_with(&r, c, m, tok, &s, NULL);
    (void)snprintf(how,
                   sizeof(how),
                   "%s scoped to %s",
                   cfs_http_role_name(need),
                   c->scope);
    expect_ok(&r, rt, c, m, &s, how);
    http_resp_done(&r);
    spec_done(&s);
}

/*
 * The scope column's link cases: every route that takes a config path,
 * with that path through (or at) a link whose target is outside the
 * token's subtrees (docs/security.md, "Links and scopes"). The link
 * S_CONFIGS/c.1/ncm.mx leads to S_FUNCS; a token of the least role scoped
 * to S_CONFIGS sends each request twice, naming the link and a name that
 * does not exist (LINK_MISSING): the answers are the same (status, errno,
 * detail but for the name), nothing changes, and nothing outside is named.
 * %s in @url and @body is the name.
 */
struct lcase {
    const char *route;
    unsigned methods;
    const char *what;
    const char *url;
    const char *body;
};

#define LINK_AT      "/usb_gadget/gm/configs/c.1/%s"
#define LINK_NAME    "ncm.mx"
#define LINK_MISSING "ncm.nx"

/* clang-format off */
static const struct lcase link_cases[] = {
    {"/api/v1/config/", M_(GET), "the link", "/api/v1/config" LINK_AT, NULL},
    {"/api/v1/config/", M_(GET), "a value through it", "/api/v1/config" LINK_AT "/qmult", NULL},
    {"/api/v1/config/", M_(GET), "a listing through it", "/api/v1/config" LINK_AT "?depth=2", NULL},
    {"/api/v1/config/", M_(POST), "mkdir through it", "/api/v1/config" LINK_AT, "{\"name\":\"x\"}"},
    {"/api/v1/config/", M_(PUT), "store through it", "/api/v1/config" LINK_AT "/qmult", "{\"value\":\"3\"}"},
    {"/api/v1/config/", M_(PUT), "a link to it", "/api/v1/config/usb_gadget/gm/configs/c.1/zl", "{\"target\":\"" LINK_AT "\"}"},
    {"/api/v1/config/", M_(DELETE), "unlink it", "/api/v1/config" LINK_AT, NULL},
    {"/api/v1/node/", M_(GET), "the link", "/api/v1/node" LINK_AT, NULL},
    {"/api/v1/node/", M_(GET), "through it", "/api/v1/node" LINK_AT "/", NULL},
    {"/api/v1/value/", M_(GET), "a value through it", "/api/v1/value" LINK_AT "/qmult", NULL},
    {"/api/v1/value/", M_(PUT), "store through it", "/api/v1/value" LINK_AT "/qmult", "{\"value\":\"3\"}"},
    {"/api/v1/link/", M_(GET), "the link", "/api/v1/link" LINK_AT, NULL},
    {"/api/v1/link/", M_(PUT), "a link to it", "/api/v1/link/usb_gadget/gm/configs/c.1/zl", "{\"target\":\"" LINK_AT "\"}"},
    {"/api/v1/rename", M_(POST), "from through it", "/api/v1/rename", "{\"from\":\"" LINK_AT "/x\",\"to\":\"/usb_gadget/gm/configs/c.1/y\"}"},
    {"/api/v1/batch", M_(POST), "store through it", "/api/v1/batch", "{\"ops\":[{\"op\":\"store\",\"path\":\"" LINK_AT "/qmult\",\"value\":\"3\"}]}"},
    {"/api/v1/batch", M_(POST), "unlink it", "/api/v1/batch", "{\"ops\":[{\"op\":\"unlink\",\"path\":\"" LINK_AT "\"}]}"},
    {"/api/v1/batch", M_(POST), "a link to it", "/api/v1/batch", "{\"ops\":[{\"op\":\"symlink\",\"path\":\"/usb_gadget/gm/configs/c.1/zl\",\"target\":\"" LINK_AT "\"}]}"},
    {"/api/v1/history", M_(GET), "a path through it", "/api/v1/history?path=" LINK_AT "/qmult", NULL},
    {"/api/v1/export", M_(GET), "a subtree through it", "/api/v1/export?path=" LINK_AT, NULL},
    {"/api/v1/import", M_(POST), "values through it", "/api/v1/import?mode=merge", "{\"format\":1,\"root\":{\"name\":\"%s\",\"path\":\"" LINK_AT "\",\"values\":[{\"name\":\"qmult\",\"value\":\"3\"}],\"links\":[],\"children\":[]}}"},
    {"/api/v1/events", M_(GET), "a path through it", "/api/v1/events?path=" LINK_AT, NULL},
};
/* clang-format on */

/* Routes that take a config path and still have no link case, and why. */
static const struct {
    const char *route, *why;
} no_link_case[] = {
    {"/api/v1/config", "the root: no link is above a subtree"},
    {"/api/v1/schema/", "names a subsystem, one segment: no link can be in it"},
};

/* @fmt with every %s made @name. */
static void fill(char *out, size_t cap, const char *fmt, const char *name)
{
    size_t o = 0;

    for (const char *p = fmt; *p && o + strlen(name) + 1 < cap;) {
        if (strncmp(p, "%s", 2) == 0) {
            memcpy(out + o, name, strlen(name));
            o += strlen(name);
            p += 2;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

/* The detail of @r with @from made @to. */
static void detail_swapped(const struct http_resp *r,
                           const char *from,
                           const char *to,
                           char *out,
                           size_t cap)
{
    const char *d = json_string_value(json_object_get(r->json, "detail"));
    size_t o = 0, lf = strlen(from);

    out[0] = '\0';
    for (const char *p = d; p && *p && o + 1 < cap;) {
        if (strncmp(p, from, lf) == 0 && o + strlen(to) + 1 < cap) {
            o += (size_t)snprintf(out + o, cap - o, "%s", to);
            p += lf;
        } else {
            out[o++] = *p++;
            out[o] = '\0';
        }
    }
}

static void promise_link(const struct cfs_http_route *rt,
                         const struct lcase *c,
                         enum cfs_http_method m)
{
    struct spec hid = {0}, mis = {0};
    struct http_resp a, b;
    struct mcase mc = {.stream = strcmp(rt->path, "/api/v1/events") == 0};
    enum cfs_http_role need;
    char tok[64], da[1024], dm[1024];
    uint64_t rev;

    fill(hid.url, sizeof(hid.url), c->url, LINK_NAME);
    fill(mis.url, sizeof(mis.url), c->url, LINK_MISSING);
    if (c->body) {
        char body[1024];

        fill(body, sizeof(body), c->body, LINK_NAME);
        hid.body = strdup(body);
        fill(body, sizeof(body), c->body, LINK_MISSING);
        mis.body = strdup(body);
        hid.ctype = mis.ctype = "application/json";
    }
    need = cfs_http_route_role(rt, hid.url, m);
    scoped_token(need, S_CONFIGS, tok, sizeof(tok));
    rev = revision_now();
    do_case_with(&a, &mc, m, tok, &hid, NULL);
    do_case_with(&b, &mc, m, tok, &mis, NULL);
    detail_swapped(&a, LINK_NAME, LINK_MISSING, da, sizeof(da));
    detail_swapped(&b, LINK_NAME, LINK_MISSING, dm, sizeof(dm));
    if (a.status != b.status || strcmp(errno_of(&a), errno_of(&b)) != 0 ||
        strcmp(da, dm) != 0 || strstr(a.body, "/functions") ||
        (a.headers && strstr(a.headers, "/functions"))) {
        fail_msg("%s %s (%s) as %s scoped to %s, through a link whose target "
                 "is outside: %ld %s; with a missing name instead: %ld %s",
                 method_name(m),
                 hid.url,
                 c->what,
                 cfs_http_role_name(need),
                 S_CONFIGS,
                 a.status,
                 a.body,
                 b.status,
                 b.body);
    }
    if (revision_now() != rev) {
        fail_msg("%s %s (%s): through a link hidden from the token, and yet "
                 "a change",
                 method_name(m),
                 hid.url,
                 c->what);
    }
    http_resp_done(&a);
    http_resp_done(&b);
    spec_done(&hid);
    spec_done(&mis);
}

/* The link column: every route that takes a config path, every method,
 * through a link whose target is outside the token's subtrees. */
static void test_matrix_through_links(void **state)
{
    size_t n_routes = 0;
    const struct cfs_http_route *routes = cfs_http_routes(&n_routes);

    (void)state;
    for (size_t i = 0; i < n_routes; i++) {
        const struct cfs_http_route *rt = &routes[i];
        unsigned covered = 0;
        bool excused = false;

        for (size_t j = 0; j < sizeof(link_cases) / sizeof(link_cases[0]);
             j++) {
            const struct lcase *c = &link_cases[j];

            if (strcmp(c->route, rt->path) != 0) {
                continue;
            }
            for (size_t k = 0; k < N_METHODS; k++) {
                if (c->methods & CFS_M(methods[k].m)) {
                    promise_link(rt, c, methods[k].m);
                    if (methods[k].m == CFS_M_GET &&
                        (rt->methods & CFS_M(CFS_M_HEAD))) {
                        promise_link(rt, c, CFS_M_HEAD);
                        covered |= CFS_M(CFS_M_HEAD);
                    }
                }
            }
            covered |= c->methods;
        }
        for (size_t j = 0; j < sizeof(no_link_case) / sizeof(no_link_case[0]);
             j++) {
            excused |= strcmp(no_link_case[j].route, rt->path) == 0;
        }
        unsigned asked = 0;

        for (size_t k = 0; k < N_METHODS; k++) {
            asked |= CFS_M(methods[k].m);
        }
        if (!rt->no_scope && !excused && (rt->methods & asked & ~covered)) {
            fail_msg("%s takes a config path, and yet not every method has a "
                     "case through a link whose target is outside: add one "
                     "to link_cases[] in %s, or say why none applies "
                     "(no_link_case)",
                     rt->path,
                     __FILE__);
        }
    }
}

/* A method the route does not answer: 405, Allow from the table. */
static void promise_405(const struct cfs_http_route *rt, enum cfs_http_method m)
{
    struct spec s = {0};
    struct http_resp r;
    char allow[64];
    char *got;

    (void)snprintf(
        s.url, sizeof(s.url), "%s%s", rt->path, rt->prefix ? "x" : "");
    allow_of(rt->methods, allow, sizeof(allow));
    send_as(&r, CFS_ROLE_ADMIN, method_name(m), &s, NULL);
    got = http_header(&r, "Allow");
    if (r.status != 405 || !got || strcmp(got, allow) != 0 ||
        (m != CFS_M_HEAD && strcmp(errno_of(&r), "EOPNOTSUPP") != 0)) {
        fail_msg("%s %s: %ld, Allow %s; the table says 405, Allow %s",
                 method_name(m),
                 s.url,
                 r.status,
                 got ? got : "(none)",
                 allow);
    }
    free(got);
    http_resp_done(&r);
}

/* ---- the matrix -------------------------------------------------------- */

static bool is_write(enum cfs_http_method m)
{
    return m == CFS_M_POST || m == CFS_M_PUT || m == CFS_M_DELETE;
}

/* Every route of the table, every method, every promise that applies. */
static void test_matrix(void **state)
{
    size_t n_routes = 0;
    const struct cfs_http_route *routes = cfs_http_routes(&n_routes);
    unsigned checked = 0;

    (void)state;
    for (size_t i = 0; i < n_routes; i++) {
        const struct cfs_http_route *rt = &routes[i];
        unsigned covered = 0;
        bool scoped = false;

        /* the table is complete: every write honours If-Match or says
         * why not, and what honours it or takes a body is answered */
        for (size_t k = 0; k < N_METHODS; k++) {
            enum cfs_http_method m = methods[k].m;

            if ((rt->if_match | rt->body | rt->etag) & ~rt->methods &
                CFS_M(m)) {
                fail_msg("%s: %s honours If-Match, reads a body or names a "
                         "node, but is not answered",
                         rt->path,
                         methods[k].name);
            }
            if ((rt->methods & CFS_M(m)) && is_write(m) &&
                !(rt->if_match & CFS_M(m)) && !rt->no_if_match) {
                fail_msg("%s: %s writes, but neither honours If-Match nor "
                         "says why not (no_if_match)",
                         rt->path,
                         methods[k].name);
            }
        }
        for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
            const struct mcase *c = &cases[j];

            if (strcmp(c->route, rt->path) != 0) {
                continue;
            }
            if (c->methods & ~rt->methods) {
                fail_msg("a case of %s (%s) for a method the table does not "
                         "list",
                         rt->path,
                         c->what);
            }
            /* the scope column: a subtree, or why there is none */
            if (rt->no_scope && (c->scope || c->no_scope)) {
                fail_msg("%s (%s): the table says no scope applies (%s), "
                         "and yet the case has its own",
                         rt->path,
                         c->what,
                         rt->no_scope);
            }
            if (!rt->no_scope && !c->scope && !c->no_scope) {
                fail_msg("%s (%s) has no scope case: name the subtree that "
                         "holds what it names (.scope), or say why there is "
                         "none (.no_scope here, no_scope in the table)",
                         rt->path,
                         c->what);
            }
            scoped |= c->scope != NULL;
            for (size_t k = 0; k < N_METHODS; k++) {
                enum cfs_http_method m = methods[k].m;

                if (!(c->methods & CFS_M(m))) {
                    continue;
                }
                covered |= CFS_M(m);
                promise_role(rt, c, m);
                if (c->scope) {
                    promise_scope(rt, c, m);
                }
                if ((rt->if_match & CFS_M(m)) && c->ok != 405) {
                    promise_if_match(rt, c, m);
                }
                /* 413 on any path (api/openapi.yaml), for the methods
                 * that read a body and the others alike */
                promise_body_limit(c, m);
                if (m == CFS_M_GET && !rt->no_held_read && !c->stream) {
                    promise_committed_read(rt, c);
                }
                if (m == CFS_M_GET && (rt->methods & CFS_M(CFS_M_HEAD))) {
                    promise_role(rt, c, CFS_M_HEAD);
                    if (c->scope) {
                        promise_scope(rt, c, CFS_M_HEAD);
                    }
                    promise_head(rt, c);
                    covered |= CFS_M(CFS_M_HEAD);
                }
                checked++;
            }
        }
        if (!rt->no_scope && !scoped) {
            fail_msg("%s names a config path, and yet no case scopes a "
                     "token: add one, or say in the table why none applies "
                     "(no_scope)",
                     rt->path);
        }
        if ((rt->methods & CFS_M(CFS_M_GET)) &&
            !(rt->methods & CFS_M(CFS_M_HEAD)) && !rt->no_head) {
            fail_msg("%s: GET without HEAD, and no reason (no_head)", rt->path);
        }
        for (size_t k = 0; k < N_METHODS; k++) {
            enum cfs_http_method m = methods[k].m;

            if (!(rt->methods & CFS_M(m))) {
                promise_405(rt, m);
            } else if (!(covered & CFS_M(m))) {
                fail_msg("%s %s has no case in the matrix: add one to "
                         "cases[] in %s",
                         methods[k].name,
                         rt->path,
                         __FILE__);
            }
        }
    }
    assert_true(checked > 30);
}

/* Each case names a route of the table: a route removed or renamed is
 * noticed here, not skipped. */
static void test_matrix_cases_name_routes(void **state)
{
    size_t n = 0;
    const struct cfs_http_route *routes = cfs_http_routes(&n);

    (void)state;
    for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
        bool found = false;

        for (size_t i = 0; i < n && !found; i++) {
            found = strcmp(cases[j].route, routes[i].path) == 0;
        }
        if (!found) {
            fail_msg("case %s (%s) names no route of the table",
                     cases[j].route,
                     cases[j].what);
        }
    }
}

/* ---- fixture ----------------------------------------------------------- */

static int setup(void **state)
{
    struct cfs_http_options o = {.listen = "127.0.0.1:0",
                                 .threads = 2,
                                 .quiet = true,
                                 .body_limit = BODY_LIMIT};
    char *path = NULL, *db = NULL, *text;

    (void)state;
    dir = harness_tmpdir();
    if (asprintf(&path, "%s/tokens", dir) < 0 ||
        asprintf(&db, "%s/matrix.db", dir) < 0) {
        return -1;
    }
    text = tokens_file();
    harness_write_file(path, text, strlen(text));
    free(text);
    fault_vfs_register(); /* the committed-read column holds commits */
    fault_vfs_clear();
    harness_store_vfs = FAULT_VFS_NAME;
    if (cfs_http_tokens_load(path, &tokens, NULL, 0) < 0 ||
        harness_start_db(db) < 0) {
        return -1;
    }
    free(path);
    free(db);
    o.tokens = tokens;
    if (harness_restart_with(&o) < 0) {
        return -1;
    }
    /* what the cases read: an item with a value, a gadget with a link */
    admin("POST",
          KIDS,
          "{\"name\":\"mx\",\"attributes\":{\"storeme\":\"1\"}}",
          201);
    admin("POST", CFG "/usb_gadget", "{\"name\":\"gm\"}", 201);
    admin("POST", GADG "/functions", "{\"name\":\"ncm.mx\"}", 201);
    admin("POST", GADG "/configs", "{\"name\":\"c.1\"}", 201);
    admin("PUT",
          GADG "/configs/c.1/ncm.mx",
          "{\"target\":\"/usb_gadget/gm/functions/ncm.mx\"}",
          201);
    return 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    cfs_http_tokens_unref(tokens);
    harness_rmtree(dir);
    free(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_cases_name_routes),
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_matrix_through_links),
    };

    return cmocka_run_group_tests_name("http-matrix", tests, setup, teardown);
}
