// SPDX-License-Identifier: MIT
/*
 * fuzz-request-auth.c - raw HTTP bytes through a server that has bearer
 * tokens (--tokens): the Authorization header, the token lookup, the roles
 * of the routes, the subtrees of scoped tokens on every handler, and the
 * rate limit of wrong tokens, which the request target (no tokens, so
 * everyone is trusted) never reaches.
 *
 * The tokens file holds tokens of each role, whole-tree and scoped (the
 * secrets are below, and in the dictionary). The input's first byte says
 * which client sends the rest, as it is, on a new connection:
 *   - below 0x80: a new address of 127.1.0.0/16 each time, which no wrong
 *     token has been counted against: the token is always looked at;
 *   - 0x80 and above: one of 16 addresses of 127.0.0.0/8, kept between
 *     inputs, that its wrong tokens get throttled (429) after 4 in 2 s.
 *
 * Besides crashes and sanitizer reports, it fails on answers it can tell
 * are wrong from the bytes alone:
 *   - any 5xx but libmicrohttpd's 505 (an HTTP version it does not speak)
 *     and a 504 to min_revision (a revision that never comes);
 *   - a 2xx to a request whose route needs a role that no token anywhere
 *     in the input has (a read of /api without a token, a write with
 *     reader tokens only, export or import without an admin one);
 *   - a 2xx to a config path (/api/v1/config, node, value, link) when
 *     every token in the input of the role needed is scoped, and none of
 *     their subtrees holds the path (a write), or holds it or lies below
 *     it (a read, a POST that makes an item in it).
 * A request whose method or target it cannot read plainly (a percent
 * escape, a control byte, a target that is no absolute path ...) is only
 * held to the first rule.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "http.h"

struct token {
    const char *name;
    enum cfs_http_role role;
    const char *secret;
    const char *subtrees; /* as in the file; "" the whole tree */
};

/* No secret holds another. */
static const struct token tokens[] = {
    {"r-all", CFS_ROLE_READER, "RdAllq7LmN9pVb4xKe2T", ""},
    {"r-usb", CFS_ROLE_READER, "RdUsbc4WqL9z7Ha1mJ3Y", "/usb_gadget"},
    {"w-all", CFS_ROLE_WRITER, "WrAllHs3Kd8Pw1Zc6nB5", ""},
    {"w-simple",
     CFS_ROLE_WRITER,
     "WrSmpBm6Tx2Jv8Qe3rF0",
     "/02-simple-children"},
    {"w-deep",
     CFS_ROLE_WRITER,
     "WrDepEh7Zr3Mu5Kc9sG4",
     "/03-group-children/g1 //target/core/"},
    {"w-root", CFS_ROLE_WRITER, "WrRotYp5Ns9Gw1Dk8tH6", "/"},
    {"a-all", CFS_ROLE_ADMIN, "AdAllFy5Rt0Gj2Ue8xL7", ""},
    {"a-nbd", CFS_ROLE_ADMIN, "AdNbdVc2Xs6Qo4Ii0wM9", "/fakenbd /netconsole"},
};
#define N_TOKENS (sizeof(tokens) / sizeof(tokens[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char file[4096];
    size_t o = 0;

    (void)argc;
    (void)argv;
    o += (size_t)snprintf(file, sizeof(file), "# NAME ROLE HASH SUBTREES\n");
    for (size_t i = 0; i < N_TOKENS; i++) {
        char hex[65];

        cfs_http_token_hash(tokens[i].secret, strlen(tokens[i].secret), hex);
        o += (size_t)snprintf(file + o,
                              sizeof(file) - o,
                              "%s %s sha256:%s %s\n",
                              tokens[i].name,
                              cfs_http_role_name(tokens[i].role),
                              hex,
                              tokens[i].subtrees);
        if (o >= sizeof(file)) {
            abort();
        }
    }
    fuzz_server_start_tokens(file, 4, 2);
    return 0;
}

/* ---- what the bytes ask ------------------------------------------------- */

/* Where @path lies from the subtree @sub, segment by segment, empty
 * segments ignored (docs/security.md, "Matching"). */
enum rel { APART, INSIDE, ABOVE };

static enum rel relate(const char *path, const char *sub, size_t sub_len)
{
    const char *p = path, *s = sub, *end = sub + sub_len;

    for (;;) {
        size_t np, ns;

        p += strspn(p, "/");
        while (s < end && *s == '/') {
            s++;
        }
        if (s == end) {
            return INSIDE;
        }
        if (*p == '\0') {
            return ABOVE;
        }
        np = strcspn(p, "/");
        for (ns = 0; s + ns < end && s[ns] != '/'; ns++) {
        }
        if (np != ns || memcmp(p, s, np) != 0) {
            return APART;
        }
        p += np;
        s += ns;
    }
}

/* Whether token @t may reach @path: inside one of its subtrees, or with
 * @above, inside or above one. */
static bool token_reaches(const struct token *t, const char *path, bool above)
{
    const char *s = t->subtrees;

    while (*s) {
        size_t n;
        enum rel r;

        s += strspn(s, " ");
        n = strcspn(s, " ");
        if (n == 0) {
            break;
        }
        r = relate(path, s, n);
        if (r == INSIDE || (above && r == ABOVE)) {
            return true;
        }
        s += n;
    }
    return false;
}

static bool whole_tree(const struct token *t)
{
    return t->subtrees[strspn(t->subtrees, "/ ")] == '\0';
}

/* @url is @prefix or below it (router.c's path_is()). */
static bool path_is(const char *url, const char *prefix)
{
    size_t n = strlen(prefix);

    return strncmp(url, prefix, n) == 0 && (url[n] == '\0' || url[n] == '/');
}

static bool has(const uint8_t *data, size_t size, const char *s)
{
    return memmem(data, size, s, strlen(s)) != NULL;
}

enum method { M_OTHER, M_READ, M_POST, M_PUT, M_DELETE };

/* The method and the path (the target up to '?', in @path) of the first
 * request of @data; false when either is not plain. */
static bool first_request(const uint8_t *data,
                          size_t size,
                          enum method *m,
                          char *path,
                          size_t path_size)
{
    static const struct {
        const char *name;
        enum method m;
    } methods[] = {{"GET ", M_READ},
                   {"HEAD ", M_READ},
                   {"POST ", M_POST},
                   {"PUT ", M_PUT},
                   {"DELETE ", M_DELETE}};
    size_t i = 0, n = 0;

    while (i < size && (data[i] == '\r' || data[i] == '\n')) {
        i++;
    }
    *m = M_OTHER;
    for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
        size_t len = strlen(methods[k].name);

        if (size - i >= len && memcmp(data + i, methods[k].name, len) == 0) {
            *m = methods[k].m;
            i += len;
            break;
        }
    }
    if (*m == M_OTHER || i >= size || data[i] != '/') {
        return false;
    }
    for (; i < size && data[i] != ' ' && data[i] != '?'; i++) {
        if (data[i] < 0x21 || data[i] > 0x7e || data[i] == '%' ||
            data[i] == '#' || n + 1 >= path_size) {
            return false;
        }
        path[n++] = (char)data[i];
    }
    path[n] = '\0';
    return i < size;
}

/* The config path of a typed or config route, or NULL. */
static const char *config_path(const char *url)
{
    static const char *const prefixes[] = {
        "/api/v1/config/", "/api/v1/node/", "/api/v1/value/", "/api/v1/link/"};

    if (strcmp(url, "/api/v1/config") == 0) {
        return "/";
    }
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);

        if (strncmp(url, prefixes[i], n) == 0) {
            return url + n - 1;
        }
    }
    return NULL;
}

static void bypass(const char *what, int status, const char *path)
{
    fprintf(stderr, "fuzz-request-auth: %d to %s (%s)\n", status, path, what);
    abort();
}

/* An answer @status to @data that no token in it allows. */
static void check_roles(const uint8_t *data, size_t size, int status)
{
    enum cfs_http_role have = CFS_ROLE_NONE, need;
    bool scoped_only = true, above;
    const char *cp;
    enum method m;
    char path[2048];

    if (status < 200 || status > 299 ||
        !first_request(data, size, &m, path, sizeof(path))) {
        return;
    }
    if (strcmp(path, "/api/v1/openapi.yaml") == 0 ||
        (!path_is(path, "/api") && !path_is(path, "/metrics"))) {
        return; /* public: the contract, the probes, the UI's files */
    }
    need = m == M_READ ? CFS_ROLE_READER : CFS_ROLE_WRITER;
    if (path_is(path, "/api/v1/export") || path_is(path, "/api/v1/import")) {
        need = CFS_ROLE_ADMIN;
    }
    for (size_t i = 0; i < N_TOKENS; i++) {
        if (tokens[i].role >= need && has(data, size, tokens[i].secret)) {
            have = tokens[i].role;
            scoped_only &= !whole_tree(&tokens[i]);
        }
    }
    if (have < need) {
        bypass(cfs_http_role_name(need), status, path);
    }
    cp = config_path(path);
    if (!cp || !scoped_only) {
        return;
    }
    /* only scoped tokens of the role: one of them must reach the path */
    above = m == M_READ || m == M_POST;
    for (size_t i = 0; i < N_TOKENS; i++) {
        if (tokens[i].role >= need && has(data, size, tokens[i].secret) &&
            token_reaches(&tokens[i], cp, above)) {
            return;
        }
    }
    bypass("outside the subtrees", status, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint32_t next;
    uint32_t from;
    int status;

    if (size < 1) {
        return 0;
    }
    if (data[0] < 0x80) {
        from = (127u << 24) | (1u << 16) | (next++ & 0xffff);
    } else {
        from = (127u << 24) | (2u + (data[0] & 15u));
    }
    status = fuzz_server_send_from(from, data + 1, size - 1);
    if (status >= 500 && status != 505 &&
        !(status == 504 && has(data, size, "min_revision"))) {
        fprintf(stderr, "fuzz-request-auth: answered %d\n", status);
        abort(); /* a bug of ours, whatever the bytes */
    }
    check_roles(data + 1, size - 1, status);
    return 0;
}
