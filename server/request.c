// SPDX-License-Identifier: MIT
/*
 * request.c - what a request says outside its body: the config path of its
 * URL, decoded segment by segment, its query values and headers, and the
 * If-Match precondition.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "request.h"

int cfs_http_hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

char *cfs_http_pct_decode(const char *s, size_t len, size_t *ret_len)
{
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < len ? cfs_http_hexval(s[i + 1]) : -1;
            int lo = i + 2 < len ? cfs_http_hexval(s[i + 2]) : -1;

            if (hi < 0 || lo < 0) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    if (ret_len) {
        *ret_len = o;
    }
    return out;
}

/* True when the string @s starts with "%2F" or "%2f" (each test stops at
 * its terminating NUL, so nothing past it is read). */
static bool pct_slash(const char *s)
{
    return s[0] == '%' && s[1] == '2' && (s[2] == 'F' || s[2] == 'f');
}

unsigned int cfs_http_path_depth(const char *raw)
{
    unsigned int depth = 0;
    bool in_name = false;

    for (const char *p = raw; *p;) {
        if (*p == '/' || pct_slash(p)) {
            in_name = false;
            p += *p == '/' ? 1 : 3;
            continue;
        }
        depth += !in_name;
        in_name = true;
        p++;
    }
    return depth;
}

/* Append the names of one decoded URL segment to @path (at *@o): "%2F" in
 * a segment has become '/', a separator like the literal one, so the
 * segment may hold several names. */
static int add_names(char *path, size_t *o, const char *seg, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n = 0;

        while (i + n < len && seg[i + n] != '/') {
            n++;
        }
        if (n > 0) {
            int r = cfs_name_check(seg + i, n); /* ".", "..", control bytes */

            if (r < 0) {
                return r;
            }
            if (*o > 1) {
                path[(*o)++] = '/';
            }
            memcpy(path + *o, seg + i, n);
            *o += n;
        }
        i += n + 1;
    }
    return 0;
}

int cfs_http_config_path(const char *raw, char **ret_path)
{
    size_t cap = strlen(raw) + 2;
    char *path = malloc(cap);
    size_t o = 0;
    const char *p = raw;

    if (!path) {
        return -ENOMEM;
    }
    path[o++] = '/';
    while (*p) {
        size_t seglen = strcspn(p, "/");

        if (seglen > 0) {
            size_t dlen;
            char *seg = cfs_http_pct_decode(p, seglen, &dlen);
            int r = seg ? add_names(path, &o, seg, dlen) : -EINVAL;

            free(seg);
            if (r < 0) {
                free(path);
                return r;
            }
        }
        p += seglen;
        while (*p == '/') {
            p++;
        }
    }
    path[o] = '\0';
    *ret_path = path;
    return 0;
}

const char *cfs_http_query_raw(struct cfs_http_req *req, const char *key)
{
    return req->io->value(req, MHD_GET_ARGUMENT_KIND, key);
}

void cfs_http_query_each(struct cfs_http_req *req,
                         MHD_KeyValueIterator it,
                         void *cls)
{
    req->io->each(req, MHD_GET_ARGUMENT_KIND, it, cls);
}

const char *cfs_http_query(struct cfs_http_req *req, const char *key)
{
    const char *raw = cfs_http_query_raw(req, key);
    char *v, *p;

    /* decoded once: admission (router.c) and the handler, or a handler
     * run again, read the same value without using up the slots */
    for (size_t i = 0; raw && i < req->n_decoded; i++) {
        if (strcmp(req->decoded_key[i], key) == 0) {
            return req->decoded[i];
        }
    }
    if (!raw ||
        req->n_decoded == sizeof(req->decoded) / sizeof(req->decoded[0])) {
        return raw;
    }
    v = strdup(raw);
    if (!v) {
        return NULL;
    }
    for (p = v; *p; p++) {
        if (*p == '+') {
            *p = ' '; /* form encoding */
        }
    }
    p = cfs_http_pct_decode(v, strlen(v), NULL);
    free(v);
    if (!p) {
        return NULL; /* a bad escape: treated as absent */
    }
    req->decoded_key[req->n_decoded] = key;
    req->decoded[req->n_decoded++] = p;
    return p;
}

const char *cfs_http_header_in(struct cfs_http_req *req, const char *key)
{
    return req->io->value(req, MHD_HEADER_KIND, key);
}

static bool if_match(struct cfs_http_req *req, uint64_t revision)
{
    const char *im = cfs_http_header_in(req, MHD_HTTP_HEADER_IF_MATCH);
    char etag[32];
    const char *p;

    if (!im) {
        return true;
    }
    (void)snprintf(
        etag, sizeof(etag), "\"%llu\"", (unsigned long long)revision);
    /* a list of entity tags, or "*" */
    p = im;
    while (*p) {
        size_t len;

        while (*p == ' ' || *p == ',' || *p == '\t') {
            p++;
        }
        len = strcspn(p, ", \t");
        if ((len == 1 && p[0] == '*') ||
            (len == strlen(etag) && memcmp(p, etag, len) == 0) ||
            (len > 2 && p[0] == 'W' && p[1] == '/' && len - 2 == strlen(etag) &&
             memcmp(p + 2, etag, len - 2) == 0)) {
            return true;
        }
        p += len;
    }
    return false;
}

bool cfs_http_if_match(struct cfs_http_req *req, uint64_t revision)
{
    if (if_match(req, revision)) {
        return true;
    }
    cfs_http_problem(req,
                     MHD_HTTP_PRECONDITION_FAILED,
                     -ESTALE,
                     NULL,
                     "If-Match does not match the current revision %llu",
                     (unsigned long long)revision);
    return false;
}

bool cfs_http_absolute(struct cfs_http_req *req,
                       const char *s,
                       size_t len,
                       const char *what)
{
    if (s && s[0] == '/' && strlen(s) == len) {
        return true;
    }
    cfs_http_bad_request(req, "%s must be an absolute config path", what);
    return false;
}
