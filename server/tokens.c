// SPDX-License-Identifier: MIT
/*
 * tokens.c - bearer tokens: the --tokens file, the role of a presented
 * token, and the `configfsd hash-token` helper (the public API of http.h;
 * auth.c applies them to requests).
 *
 * The file holds SHA-256 hashes only (docs/security.md has the format); a
 * presented token is hashed and compared with every entry in constant time
 * (nettle's memeql_sec), so neither the file nor the timing of a refusal
 * tells anything about a valid token. SHA-256 comes from nettle, which
 * libmicrohttpd's GnuTLS already pulls in: no crypto of the project's own.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <nettle/memops.h>
#include <nettle/sha2.h>

#include <configfs/limits.h>

#include "http.h"
#include "request.h"
#include "scope.h"

#define NAME_MAX_BYTES 64
#define HASH_PREFIX    "sha256:"

struct token_entry {
    char name[NAME_MAX_BYTES + 1];
    enum cfs_http_role role;
    uint8_t hash[SHA256_DIGEST_SIZE];
    struct cfs_http_scope scope; /* n == 0: the whole tree */
};

static void scope_free(struct cfs_http_scope *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->paths[i]);
    }
    free(s->paths);
    s->paths = NULL;
    s->n = 0;
}

/* Shared between the server and every request authorized with it: the
 * principal of a request is an entry's name, borrowed until the request
 * completes, so a table replaced by a reload lives on until its last
 * request lets go of it. */
struct cfs_http_tokens {
    atomic_size_t refs;
    struct token_entry *entries;
    size_t n;
};

static const char *const role_names[] = {
    [CFS_ROLE_NONE] = "none",
    [CFS_ROLE_READER] = "reader",
    [CFS_ROLE_WRITER] = "writer",
    [CFS_ROLE_ADMIN] = "admin",
};

const char *cfs_http_role_name(enum cfs_http_role role)
{
    return role <= CFS_ROLE_ADMIN ? role_names[role] : "none";
}

static int role_parse(const char *s, enum cfs_http_role *ret)
{
    for (int r = CFS_ROLE_READER; r <= CFS_ROLE_ADMIN; r++) {
        if (strcmp(s, role_names[r]) == 0) {
            *ret = (enum cfs_http_role)r;
            return 0;
        }
    }
    return -EINVAL;
}

/* Names show up in the access log and the journal: keep them plain. */
static bool name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > NAME_MAX_BYTES) {
        return false;
    }
    return strspn(s,
                  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789._@-") == n;
}

/* RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" /
 * "/" ) *"=" */
static bool token_ok(const char *s, size_t n)
{
    size_t i = strspn(s,
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789-._~+/");

    if (i == 0 || n > CFS_TOKEN_MAX) {
        return false;
    }
    while (i < n && s[i] == '=') {
        i++;
    }
    return i == n;
}

static void sha256(const char *data, size_t len, uint8_t out[32])
{
    struct sha256_ctx ctx;

    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)data);
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void cfs_http_token_hash(const char *token, size_t len, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    uint8_t d[SHA256_DIGEST_SIZE];

    sha256(token, len, d);
    for (size_t i = 0; i < sizeof(d); i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}

static int hash_parse(const char *s, uint8_t out[32])
{
    if (strncmp(s, HASH_PREFIX, strlen(HASH_PREFIX)) != 0) {
        return -EINVAL;
    }
    s += strlen(HASH_PREFIX);
    if (strlen(s) != (size_t)2 * SHA256_DIGEST_SIZE) {
        return -EINVAL;
    }
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
        int hi = cfs_http_hexval(s[2 * i]);
        int lo = cfs_http_hexval(s[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            return -EINVAL;
        }
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    return 0;
}

/* ---- the tokens file --------------------------------------------------- */

static void tokens_free(struct cfs_http_tokens *tokens)
{
    for (size_t i = 0; i < tokens->n; i++) {
        scope_free(&tokens->entries[i].scope);
    }
    if (tokens->entries) {
        explicit_bzero(tokens->entries, tokens->n * sizeof(*tokens->entries));
    }
    free(tokens->entries);
    free(tokens);
}

struct cfs_http_tokens *cfs_http_tokens_ref(struct cfs_http_tokens *tokens)
{
    if (tokens) {
        atomic_fetch_add_explicit(&tokens->refs, 1, memory_order_relaxed);
    }
    return tokens;
}

void cfs_http_tokens_unref(struct cfs_http_tokens *tokens)
{
    /* acq_rel: every use of the table by the thread that let go of it
     * happens before the free in the thread that lets go last. */
    if (tokens && atomic_fetch_sub_explicit(
                      &tokens->refs, 1, memory_order_acq_rel) == 1) {
        tokens_free(tokens);
    }
}

size_t cfs_http_tokens_count(const struct cfs_http_tokens *tokens)
{
    return tokens ? tokens->n : 0;
}

/* The subtrees after a line's hash: @n paths at @fields into @e. */
static int
parse_scope(char **fields, size_t n, struct token_entry *e, const char **why)
{
    if (n > CFS_SCOPE_PATHS_MAX) {
        *why = "at most 64 subtrees per token";
        return -EINVAL;
    }
    e->scope.paths = calloc(n, sizeof(*e->scope.paths));
    if (!e->scope.paths) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        char *p = cfs_http_scope_path(fields[i], why);

        if (!p) {
            return -EINVAL;
        }
        e->scope.paths[e->scope.n++] = p;
        if (strcmp(p, "/") == 0) {
            scope_free(&e->scope); /* the root: the whole tree */
            return 0;
        }
    }
    return 0;
}

/* One non-comment line, split in place: NAME ROLE sha256:HEX [PATH...].
 * @return 0 or -EINVAL with a reason in @why. */
static int parse_line(char *line, struct token_entry *e, const char **why)
{
    char *fields[3 + CFS_SCOPE_PATHS_MAX + 1] = {NULL};
    const size_t cap = sizeof(fields) / sizeof(fields[0]);
    char *save = NULL;
    size_t n = 0;

    for (char *f = strtok_r(line, " \t", &save); f;
         f = strtok_r(NULL, " \t", &save)) {
        if (n == cap) {
            break;
        }
        fields[n++] = f;
    }
    if (n < 3) {
        *why = "expected NAME ROLE sha256:HEX [SUBTREE...]";
        return -EINVAL;
    }
    if (!name_ok(fields[0])) {
        *why = "a name is 1-64 of A-Z a-z 0-9 . _ @ -";
        return -EINVAL;
    }
    if (role_parse(fields[1], &e->role) < 0) {
        *why = "a role is reader, writer or admin";
        return -EINVAL;
    }
    if (hash_parse(fields[2], e->hash) < 0) {
        *why = "the third field is sha256: and 64 hex digits, never the "
               "token itself (configfsd hash-token makes the line)";
        return -EINVAL;
    }
    memcpy(e->name, fields[0], strlen(fields[0]) + 1);
    return n > 3 ? parse_scope(fields + 3, n - 3, e, why) : 0;
}

static int add_entry(struct cfs_http_tokens *t,
                     const struct token_entry *e,
                     const char **why)
{
    struct token_entry *grown;

    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->entries[i].name, e->name) == 0) {
            *why = "the name is given twice";
            return -EINVAL;
        }
        if (memcmp(t->entries[i].hash, e->hash, sizeof(e->hash)) == 0) {
            *why = "the same token is given twice";
            return -EINVAL;
        }
    }
    grown = realloc(t->entries, (t->n + 1) * sizeof(*grown));
    if (!grown) {
        return -ENOMEM;
    }
    t->entries = grown;
    t->entries[t->n++] = *e;
    return 0;
}

int cfs_http_tokens_load(const char *path,
                         struct cfs_http_tokens **ret_tokens,
                         char *err,
                         size_t err_size)
{
    struct cfs_http_tokens *t = calloc(1, sizeof(*t));
    FILE *f = NULL;
    char *line = NULL;
    size_t cap = 0, total = 0;
    unsigned int lineno = 0;
    const char *why = NULL;
    struct stat st;
    ssize_t len;
    int r = 0;

    if (!t) {
        return -ENOMEM;
    }
    atomic_init(&t->refs, 1);
    f = fopen(path, "re");
    if (!f) {
        r = -errno;
        why = strerror(errno);
        goto out;
    }
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
        r = -EINVAL;
        why = "not a regular file";
        goto out;
    }
    while ((len = getline(&line, &cap, f)) >= 0) {
        struct token_entry e;
        char *p = line;

        lineno++;
        total += (size_t)len;
        if (total > CFS_TOKEN_FILE_MAX) {
            r = -EFBIG;
            why = "the file is too large";
            goto out;
        }
        if (memchr(line, '\0', (size_t)len)) {
            r = -EINVAL;
            why = "a NUL byte";
            goto out;
        }
        line[strcspn(line, "\r\n")] = '\0';
        p += strspn(p, " \t");
        if (*p == '\0' || *p == '#') {
            continue;
        }
        memset(&e, 0, sizeof(e));
        r = parse_line(p, &e, &why);
        if (r == 0) {
            r = add_entry(t, &e, &why);
        }
        if (r < 0) {
            scope_free(&e.scope); /* else the table owns it */
        }
        explicit_bzero(&e, sizeof(e));
        if (r < 0) {
            goto out;
        }
    }
    if (ferror(f)) {
        r = -EIO;
        why = "read error";
        goto out;
    }
    lineno = 0;
    if (t->n == 0) {
        r = -EINVAL;
        why = "no tokens: every request would be refused";
    }
out:
    if (r < 0 && err && err_size) {
        if (lineno) {
            (void)snprintf(err,
                           err_size,
                           "%s:%u: %s",
                           path,
                           lineno,
                           why ? why : strerror(-r));
        } else {
            (void)snprintf(
                err, err_size, "%s: %s", path, why ? why : strerror(-r));
        }
    }
    if (line) {
        explicit_bzero(line, cap);
    }
    free(line);
    if (f) {
        (void)fclose(f); /* read only */
    }
    if (r < 0) {
        tokens_free(t);
        return r;
    }
    *ret_tokens = t;
    return 0;
}

enum cfs_http_role cfs_http_tokens_find(const struct cfs_http_tokens *tokens,
                                        const char *token,
                                        size_t len,
                                        const char **ret_name)
{
    uint8_t d[SHA256_DIGEST_SIZE];
    size_t found = 0;
    int any = 0;

    if (!tokens || !token_ok(token, len)) {
        return CFS_ROLE_NONE;
    }
    sha256(token, len, d);
    /* Every entry is compared, whatever matched: the time does not depend
     * on which token (if any) this is. */
    for (size_t i = 0; i < tokens->n; i++) {
        int eq = memeql_sec(d, tokens->entries[i].hash, sizeof(d)) ? 1 : 0;
        size_t mask = (size_t)0 - (size_t)eq;

        found = (found & ~mask) | (i & mask);
        any |= eq;
    }
    explicit_bzero(d, sizeof(d));
    if (!any) {
        return CFS_ROLE_NONE;
    }
    if (ret_name) {
        *ret_name = tokens->entries[found].name;
    }
    return tokens->entries[found].role;
}

enum cfs_http_role cfs_http_tokens_role_now(const struct cfs_http_tokens *then,
                                            const char *name,
                                            const struct cfs_http_tokens *now)
{
    const struct token_entry *e = NULL;

    if (!then || !name || !now) {
        return CFS_ROLE_NONE;
    }
    for (size_t i = 0; i < then->n; i++) {
        if (then->entries[i].name == name) {
            e = &then->entries[i];
            break;
        }
    }
    if (!e) {
        return CFS_ROLE_NONE;
    }
    /* Hashes, not secrets: no timing to hide here. */
    for (size_t i = 0; i < now->n; i++) {
        if (memcmp(now->entries[i].hash, e->hash, sizeof(e->hash)) == 0) {
            return now->entries[i].role;
        }
    }
    return CFS_ROLE_NONE;
}

static const struct token_entry *entry_of(const struct cfs_http_tokens *t,
                                          const char *name)
{
    for (size_t i = 0; t && name && i < t->n; i++) {
        if (t->entries[i].name == name) {
            return &t->entries[i];
        }
    }
    return NULL;
}

const struct cfs_http_scope *
cfs_http_tokens_scope(const struct cfs_http_tokens *tokens, const char *name)
{
    const struct token_entry *e = entry_of(tokens, name);

    return e && e->scope.n > 0 ? &e->scope : NULL;
}

bool cfs_http_tokens_scope_same(const struct cfs_http_tokens *then,
                                const char *name,
                                const struct cfs_http_tokens *now)
{
    const struct token_entry *e = entry_of(then, name);

    if (!e || !now) {
        return false;
    }
    for (size_t i = 0; i < now->n; i++) {
        const struct token_entry *f = &now->entries[i];

        if (memcmp(f->hash, e->hash, sizeof(e->hash)) != 0) {
            continue;
        }
        if (f->scope.n != e->scope.n) {
            return false;
        }
        for (size_t k = 0; k < e->scope.n; k++) {
            if (strcmp(f->scope.paths[k], e->scope.paths[k]) != 0) {
                return false;
            }
        }
        return true;
    }
    return false;
}

/* ---- configfsd hash-token ---------------------------------------------- */

int cfs_http_hash_token_main(int argc, char **argv)
{
    char buf[CFS_TOKEN_MAX + 3];
    enum cfs_http_role role;
    char hex[65];
    size_t len;

    if (argc < 3 || argc > 3 + CFS_SCOPE_PATHS_MAX || !name_ok(argv[1]) ||
        role_parse(argv[2], &role) < 0) {
        (void)fprintf(stderr,
                      "Usage: configfsd hash-token NAME reader|writer|admin "
                      "[SUBTREE...] < TOKEN_FILE\n"
                      "Read a token on standard input; print its line for the"
                      " --tokens file.\n"
                      "NAME is 1-64 of A-Z a-z 0-9 . _ @ -\n"
                      "SUBTREEs (such as /usb_gadget) limit the token to "
                      "those subtrees; none: the whole tree\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        const char *why = NULL;
        char *p = cfs_http_scope_path(argv[i], &why);

        if (!p) {
            (void)fprintf(stderr, "configfsd: %s: %s\n", argv[i], why);
            return 2;
        }
        free(p);
    }
    if (!fgets(buf, sizeof(buf), stdin)) {
        (void)fprintf(stderr, "configfsd: no token on standard input\n");
        return 2;
    }
    len = strcspn(buf, "\r\n");
    buf[len] = '\0';
    if (!token_ok(buf, len) || len < 16) {
        explicit_bzero(buf, sizeof(buf));
        (void)fprintf(stderr,
                      "configfsd: a token is 16-%d characters of A-Z a-z 0-9 "
                      "- . _ ~ + / (then = padding); for example the output of "
                      "`openssl rand -hex 32`\n",
                      CFS_TOKEN_MAX);
        return 2;
    }
    cfs_http_token_hash(buf, len, hex);
    explicit_bzero(buf, sizeof(buf));
    printf("%s %s " HASH_PREFIX "%s", argv[1], argv[2], hex);
    for (int i = 3; i < argc; i++) {
        const char *why = NULL;
        char *p = cfs_http_scope_path(argv[i], &why);

        printf(" %s", p ? p : argv[i]);
        free(p);
    }
    printf("\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
