// SPDX-License-Identifier: MIT
/*
 * static.c - the web UI's files: GET and HEAD of anything outside /api/ and
 * the health routes, from the --static-dir folder and nothing else.
 *
 * This is the only place where a request path reaches the filesystem, so
 * it is walked by hand: the raw URL is split on '/', each segment decoded
 * once and refused if it is empty after decoding, holds '/', '\', a control
 * byte, or starts with '.' (so "..", "%2e%2e" and dotfiles are out); then
 * each directory is opened relative to the previous one with O_NOFOLLOW,
 * starting from a descriptor of the folder taken at start-up. A symlink
 * anywhere is not followed, a path cannot leave the folder, and only
 * regular files are served. There is no directory listing: a directory
 * answers with its index.html or 404.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <configfs/limits.h>

#include "reply.h"
#include "request.h"
#include "static.h"

/* The UI is plain ES modules and CSS files from this server: nothing
 * inline, nothing from elsewhere, no plugins, no framing. */
#define CSP                                                                    \
    "default-src 'self'; script-src 'self'; style-src 'self'; "                \
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; "              \
    "object-src 'none'; base-uri 'none'; form-action 'self'; "                 \
    "frame-ancestors 'none'"

static const struct {
    const char *ext;
    const char *type;
} mime_types[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"}, /* RFC 9239 */
    {"mjs", "text/javascript; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"ico", "image/vnd.microsoft.icon"},
    {"woff2", "font/woff2"},
    {"txt", "text/plain; charset=utf-8"},
};

/* By extension, case-insensitive; anything else is opaque bytes, which
 * nosniff keeps a browser from running. */
static const char *mime_type(const char *name)
{
    const char *dot = strrchr(name, '.');

    if (dot) {
        for (size_t i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]);
             i++) {
            if (strcasecmp(dot + 1, mime_types[i].ext) == 0) {
                return mime_types[i].type;
            }
        }
    }
    return "application/octet-stream";
}

/* A decoded segment that may name a file of the folder. */
static bool segment_ok(const char *seg, size_t len)
{
    if (len == 0 || len > CFS_NAME_MAX || seg[0] == '.' || strlen(seg) != len) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)seg[i];

        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\') {
            return false;
        }
    }
    return true;
}

static void free_segments(char **segs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(segs[i]);
    }
}

/* Split and decode @url into at most CFS_DEPTH_MAX segments; a URL ending
 * in '/' (or "/" itself) gets "index.html" appended.
 * @return 0, -EINVAL (a bad percent escape), -ENOENT (a segment no file of
 * the folder can have), -ENOMEM. */
static int split_url(const char *url, char **segs, size_t *ret_n)
{
    size_t n = 0;
    const char *p = url;
    bool dir = true;
    int r = 0;

    while (*p) {
        size_t len = strcspn(p, "/");

        if (len > 0) {
            size_t dlen;
            char *seg;

            if (n == CFS_DEPTH_MAX) {
                r = -ENOENT;
                goto fail;
            }
            seg = cfs_http_pct_decode(p, len, &dlen);
            if (!seg) {
                r = -EINVAL;
                goto fail;
            }
            segs[n++] = seg;
            if (!segment_ok(seg, dlen)) {
                r = -ENOENT;
                goto fail;
            }
        }
        p += len;
        dir = *p == '/';
        p += strspn(p, "/");
    }
    if (dir) {
        if (n == CFS_DEPTH_MAX) {
            r = -ENOENT;
            goto fail;
        }
        segs[n] = strdup("index.html");
        if (!segs[n]) {
            r = -ENOMEM;
            goto fail;
        }
        n++;
    }
    *ret_n = n;
    return 0;
fail:
    free_segments(segs, n);
    return r;
}

/* @name in @dir, not following a symlink, with its stat in *st.
 * O_NONBLOCK: opening a FIFO cannot hang a worker.
 * @return the descriptor or a negative errno. */
static int open_stat(int dir, const char *name, struct stat *st)
{
    int fd = openat(
        dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int r;

    memset(st, 0, sizeof(*st));
    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, st) < 0) {
        r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

/* Open a regular file below @dirfd, following no symlink; a directory
 * stands for its index.html.
 * @return 0 with *ret_fd, *ret_st and *ret_name (borrowed from @segs or
 * static), or -ENOENT and friends. */
static int open_beneath(int dirfd,
                        char **segs,
                        size_t n,
                        int *ret_fd,
                        struct stat *ret_st,
                        const char **ret_name)
{
    int cur = dirfd, fd;
    const char *name = segs[n - 1];

    for (size_t i = 0; i + 1 < n; i++) {
        int next =
            openat(cur, segs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;

        if (cur != dirfd) {
            close(cur);
        }
        if (next < 0) {
            return -err;
        }
        cur = next;
    }
    fd = open_stat(cur, name, ret_st);
    if (fd >= 0 && S_ISDIR(ret_st->st_mode)) {
        int index = open_stat(fd, "index.html", ret_st);

        close(fd);
        fd = index;
        name = "index.html";
    }
    if (cur != dirfd) {
        close(cur);
    }
    if (fd < 0) {
        return fd;
    }
    if (!S_ISREG(ret_st->st_mode)) {
        close(fd);
        return -ENOENT;
    }
    *ret_fd = fd;
    *ret_name = name;
    return 0;
}

/* ---- caching ----------------------------------------------------------- */

static const char *const days[] = {
    "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const months[] = {"Jan",
                                     "Feb",
                                     "Mar",
                                     "Apr",
                                     "May",
                                     "Jun",
                                     "Jul",
                                     "Aug",
                                     "Sep",
                                     "Oct",
                                     "Nov",
                                     "Dec"};

/* An IMF-fixdate, whatever the locale. */
static void http_date(time_t t, char *buf, size_t size)
{
    struct tm tm;

    gmtime_r(&t, &tm);
    (void)snprintf(buf,
                   size,
                   "%s, %02d %s %04d %02d:%02d:%02d GMT",
                   days[tm.tm_wday % 7],
                   tm.tm_mday,
                   months[tm.tm_mon % 12],
                   tm.tm_year + 1900,
                   tm.tm_hour,
                   tm.tm_min,
                   tm.tm_sec);
}

/* An IMF-fixdate; configfsd never calls setlocale(), so strptime() reads
 * English day and month names. */
static bool parse_http_date(const char *s, time_t *ret)
{
    struct tm tm;
    const char *end;

    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end != '\0') {
        return false;
    }
    *ret = timegm(&tm);
    return *ret != (time_t)-1;
}

/* If-None-Match: a list of entity tags or "*"; weak comparison (GET). */
static bool etag_matches(const char *header, const char *etag)
{
    size_t elen = strlen(etag);

    for (const char *p = header; *p;) {
        size_t len;

        p += strspn(p, " \t,");
        len = strcspn(p, " \t,");
        if (len == 1 && p[0] == '*') {
            return true;
        }
        if (len > 2 && p[0] == 'W' && p[1] == '/') {
            p += 2;
            len -= 2;
        }
        if (len == elen && memcmp(p, etag, len) == 0) {
            return true;
        }
        p += len;
    }
    return false;
}

static bool
not_modified(struct cfs_http_req *req, const char *etag, const struct stat *st)
{
    const char *inm = cfs_http_header_in(req, MHD_HTTP_HEADER_IF_NONE_MATCH);
    const char *ims;
    time_t since;

    if (inm) {
        return etag_matches(inm, etag); /* wins over If-Modified-Since */
    }
    ims = cfs_http_header_in(req, MHD_HTTP_HEADER_IF_MODIFIED_SINCE);
    return ims && parse_http_date(ims, &since) && st->st_mtime <= since;
}

/* ---- the handler ------------------------------------------------------- */

static void page_headers(struct cfs_http_req *req)
{
    cfs_http_header(req, "Content-Security-Policy", CSP);
    cfs_http_header(req, "Referrer-Policy", "no-referrer");
    cfs_http_header(req, "X-Frame-Options", "DENY");
}

void cfs_http_handle_static(struct cfs_http_req *req)
{
    int dirfd = req->srv->static_fd;
    char *segs[CFS_DEPTH_MAX + 1];
    char etag[80], date[40];
    const char *name = NULL;
    struct stat st;
    struct MHD_Response *resp;
    size_t n = 0;
    int fd = -1, r;

    if (req->method != CFS_M_GET && req->method != CFS_M_HEAD) {
        cfs_http_not_allowed(req, CFS_M_READ, NULL);
        page_headers(req);
        return;
    }
    memset(&st, 0, sizeof(st));
    r = dirfd < 0 ? -ENOENT : split_url(req->url, segs, &n);
    if (r == 0) {
        r = open_beneath(dirfd, segs, n, &fd, &st, &name);
    }
    if (r == -EINVAL) {
        cfs_http_bad_request(req, "the path has a bad percent escape");
    } else if (r < 0) {
        /* ELOOP (a symlink), ENOTDIR, EACCES ...: all just not here */
        cfs_http_problem(
            req, MHD_HTTP_NOT_FOUND, -ENOENT, NULL, "no such resource");
    }
    if (r < 0) {
        page_headers(req);
        free_segments(segs, n);
        return;
    }
    (void)snprintf(etag,
                   sizeof(etag),
                   "\"%llx-%llx-%llx\"",
                   (unsigned long long)st.st_ino,
                   (unsigned long long)st.st_size,
                   (unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
                       (unsigned long long)st.st_mtim.tv_nsec);
    http_date(st.st_mtime, date, sizeof(date));
    if (not_modified(req, etag, &st)) {
        close(fd);
        cfs_http_reply_empty(req, MHD_HTTP_NOT_MODIFIED);
    } else {
        resp = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
        if (!resp) {
            close(fd);
            cfs_http_problem(req,
                             MHD_HTTP_INTERNAL_SERVER_ERROR,
                             -ENOMEM,
                             NULL,
                             "cannot answer with the file");
            free_segments(segs, n);
            return;
        }
        MHD_add_response_header(
            resp, MHD_HTTP_HEADER_CONTENT_TYPE, mime_type(name));
        cfs_http_reply_response(req, MHD_HTTP_OK, resp);
        req->resp_len = req->method == CFS_M_HEAD ? 0 : (size_t)st.st_size;
    }
    cfs_http_header(req, MHD_HTTP_HEADER_ETAG, etag);
    cfs_http_header(req, MHD_HTTP_HEADER_LAST_MODIFIED, date);
    /* not fingerprinted: revalidate each time, which the ETag makes cheap */
    cfs_http_header(req, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    page_headers(req);
    free_segments(segs, n);
}
