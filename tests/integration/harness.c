// SPDX-License-Identifier: MIT
/*
 * harness.c - see harness.h.
 *
 * With CFS_RESPONSE_LOG=FILE in the environment, every exchange is also
 * appended to FILE as one JSON line (request method, path and headers;
 * response status, headers and body), which scripts/validate-responses.mjs
 * checks against api/openapi.yaml.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>
#include <configfs/store.h>

#include "harness.h"
#include "http.h"
#include "samples.h"

static struct cfs_http_server *srv;
static struct cfs_schema_set *schemas;
static struct cfs_store *store;

uint16_t harness_port(void)
{
    return cfs_http_server_port(srv);
}

int harness_start_db(const char *db)
{
    struct cfs_http_options o = {
        .listen = "127.0.0.1:0", .threads = 2, .quiet = true};

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        return -1;
    }
    if (db) {
        struct cfs_store_options so = {.path = db};

        if (cfs_store_open(&so, &store) < 0) {
            return -1;
        }
    }
    if (cfs_samples_register() < 0 ||
        cfs_schema_load_dir(CFS_SOURCE_ROOT "/schemas", &schemas, NULL) < 0 ||
        cfs_schema_set_register(schemas, NULL) < 0) {
        return -1;
    }
    o.schemas = schemas;
    o.store = store;
    if (cfs_http_server_start(&o, &srv) < 0) {
        return -1;
    }
    return 0;
}

int harness_start(void **state)
{
    (void)state;
    return harness_start_db(NULL);
}

int harness_stop(void **state)
{
    (void)state;
    cfs_http_server_free(srv);
    srv = NULL;
    cfs_schema_set_free(schemas);
    schemas = NULL;
    cfs_samples_unregister();
    cfs_store_close(store);
    store = NULL;
    curl_global_cleanup();
    return 0;
}

struct buf {
    char *p;
    size_t len;
};

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    char *np = realloc(b->p, b->len + size * n + 1);

    if (!np) {
        return 0;
    }
    memcpy(np + b->len, data, size * n);
    b->p = np;
    b->len += size * n;
    b->p[b->len] = '\0';
    return size * n;
}

/* "Name: value" -> obj["name"] = "value" (names lower-cased; a header
 * sent twice keeps its last value). */
static void header_line(json_t *obj, const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    char name[128];
    size_t n;
    const char *v;

    if (!colon || (size_t)(colon - line) >= sizeof(name)) {
        return;
    }
    n = (size_t)(colon - line);
    for (size_t i = 0; i < n; i++) {
        char c = line[i];

        name[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    name[n] = '\0';
    v = colon + 1;
    while (v < line + len && (*v == ' ' || *v == '\t')) {
        v++;
    }
    json_object_set_new(obj, name, json_stringn(v, (size_t)(line + len - v)));
}

static void log_response(const char *method,
                         const char *path,
                         const char *const *headers,
                         const struct http_resp *r)
{
    const char *file = getenv("CFS_RESPONSE_LOG");
    json_t *line, *reqh, *resph, *body;
    char *text;
    FILE *f;

    if (!file || !*file) {
        return;
    }
    line = json_object();
    reqh = json_object();
    resph = json_object();
    for (size_t i = 0; headers && headers[i]; i++) {
        header_line(reqh, headers[i], strlen(headers[i]));
    }
    /* The last header block: the final response, after any 1xx. */
    for (const char *p = r->headers; *p;) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);

        if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
            json_object_clear(resph);
        } else {
            header_line(resph, p, len);
        }
        p += len + (eol ? 2 : 0);
    }
    body = json_stringn(r->body, r->len); /* NULL if not UTF-8 */
    json_object_set_new(
        line, "test", json_string(program_invocation_short_name));
    json_object_set_new(line, "method", json_string(method));
    json_object_set_new(line, "path", json_stringn(path, strlen(path)));
    json_object_set_new(line, "request_headers", reqh);
    json_object_set_new(line, "status", json_integer(r->status));
    json_object_set_new(line, "headers", resph);
    json_object_set_new(line, "body", body ? body : json_null());
    json_object_set_new(line, "body_bytes", json_integer((json_int_t)r->len));
    text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    assert_non_null(text);
    f = fopen(file, "a");
    if (!f) {
        (void)fprintf(
            stderr, "CFS_RESPONSE_LOG %s: %s\n", file, strerror(errno));
    }
    assert_non_null(f);
    /* One write per line (the buffer holds it): O_APPEND keeps lines whole
     * even if two processes share the file. */
    assert_true(fprintf(f, "%s\n", text) > 0);
    assert_int_equal(fclose(f), 0);
    free(text);
}

void http(struct http_resp *r,
          const char *method,
          const char *path,
          const char *body,
          size_t body_len,
          const char *const *headers)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hl = NULL;
    struct buf bb = {0}, hb = {0};
    char url[4096];
    const char *ct;

    assert_non_null(c);
    memset(r, 0, sizeof(*r));
    (void)snprintf(
        url, sizeof(url), "http://127.0.0.1:%u%s", harness_port(), path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    }
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
    }
    hl = curl_slist_append(hl, "Expect:");
    for (size_t i = 0; headers && headers[i]; i++) {
        hl = curl_slist_append(hl, headers[i]);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &bb);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = bb.p ? bb.p : strdup("");
    r->len = bb.len;
    r->headers = hb.p ? hb.p : strdup("");
    ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    if (ct && strstr(ct, "json") && strcmp(method, "HEAD") != 0) {
        r->json = json_loadb(r->body, r->len, 0, NULL);
        assert_non_null(r->json); /* a JSON content type carries JSON */
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    log_response(method, path, headers, r);
}

void http_resp_done(struct http_resp *r)
{
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

char *http_header(const struct http_resp *r, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = r->headers; p && *p;) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);

        if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;

            while (*v == ' ') {
                v++;
            }
            return strndup(v, len - (size_t)(v - p));
        }
        p += len + (eol ? 2 : 0);
    }
    return NULL;
}

void http_json(struct http_resp *r,
               const char *method,
               const char *path,
               const char *json_body)
{
    static const char *const hdrs[] = {"Content-Type: application/json", NULL};

    http(r, method, path, json_body, json_body ? strlen(json_body) : 0, hdrs);
}

void expect_problem(const struct http_resp *r, long status, const char *err)
{
    char *ct = http_header(r, "Content-Type");

    if (r->status != status) {
        fprintf(
            stderr, "expected %ld, got %ld: %s\n", status, r->status, r->body);
    }
    assert_int_equal(r->status, status);
    assert_non_null(ct);
    assert_string_equal(ct, "application/problem+json");
    free(ct);
    assert_non_null(r->json);
    assert_int_equal(json_integer_value(json_object_get(r->json, "status")),
                     status);
    assert_string_equal(json_string_value(json_object_get(r->json, "errno")),
                        err);
    assert_non_null(json_object_get(r->json, "title"));
    assert_non_null(json_object_get(r->json, "instance"));
}
