// SPDX-License-Identifier: MIT
/*
 * fuzz-server.c - see fuzz.h.
 *
 * The server is the real one (cfs_http_server_start()), with the samples
 * and the shipped schemas registered and a store, so that import, history
 * and the durable commit are reached too. What the inputs make stays
 * between inputs, as it would on a long-running server; the tree's own
 * limits bound it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>
#include <configfs/store.h>

#include "fuzz.h"
#include "http.h"
#include "samples.h"

static struct cfs_http_server *srv;
static struct cfs_store *store;
static struct cfs_schema_set *schemas;
static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static void stop(void)
{
    cfs_http_server_free(srv);
    srv = NULL;
    cfs_schema_set_free(schemas);
    cfs_samples_unregister();
    cfs_store_close(store);
    if (dir[0]) {
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

static void fail(const char *what, int r)
{
    fprintf(stderr, "fuzz-server: %s: %s\n", what, strerror(r < 0 ? -r : r));
    abort();
}

/* The tokens file @lines (NULL: none) in the temporary folder, loaded.
 * The caller drops its reference once the server has taken one. */
static struct cfs_http_tokens *load_tokens(const char *lines)
{
    struct cfs_http_tokens *t = NULL;
    char path[96], err[256] = "";
    FILE *f;
    int r;

    if (!lines) {
        return NULL;
    }
    (void)snprintf(path, sizeof(path), "%s/tokens", dir);
    f = fopen(path, "we");
    if (!f || fputs(lines, f) < 0 || fclose(f) != 0) {
        fail("tokens file", errno);
    }
    r = cfs_http_tokens_load(path, &t, err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "fuzz-server: %s\n", err);
        fail("cfs_http_tokens_load", r);
    }
    return t;
}

static void start(const char *tokens, unsigned int burst, unsigned int window_s)
{
    struct cfs_http_options o = {.listen = "127.0.0.1:0",
                                 .threads = 2,
                                 .quiet = true,
                                 .auth_fail_burst = burst,
                                 .auth_fail_window_s = window_s};
    struct cfs_store_options so = {.sync = CFS_STORE_SYNC_NORMAL};
    char db[96];
    int r;

    if (srv) {
        return;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    cfs_log_set_level(CFS_LOG_ERROR);
    (void)snprintf(dir, sizeof(dir), "/tmp/cfs-fuzz-XXXXXX");
    if (!mkdtemp(dir)) {
        fail("mkdtemp", errno);
    }
    (void)snprintf(db, sizeof(db), "%s/store.db", dir);
    so.path = db;
    r = cfs_store_open(&so, &store);
    if (r < 0) {
        fail("cfs_store_open", r);
    }
    r = cfs_samples_register();
    if (r < 0) {
        fail("cfs_samples_register", r);
    }
    r = cfs_schema_load_dir(CFS_SOURCE_ROOT "/schemas", &schemas, NULL);
    if (r < 0 || (r = cfs_schema_set_register(schemas, NULL)) < 0) {
        fail("schemas", r);
    }
    o.schemas = schemas;
    o.store = store;
    o.tokens = load_tokens(tokens);
    r = cfs_http_server_start(&o, &srv);
    cfs_http_tokens_unref(o.tokens); /* the server holds its own */
    if (r < 0) {
        fail("cfs_http_server_start", r);
    }
    (void)atexit(stop);
}

void fuzz_server_start(void)
{
    start(NULL, 0, 0);
}

void fuzz_server_start_tokens(const char *lines,
                              unsigned int burst,
                              unsigned int window_s)
{
    start(lines, burst, window_s);
}

/* @from: the loopback address (host order) to connect from; 0: any. */
static int connect_server(uint32_t from)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        fail("socket", errno);
    }
    if (from) {
        struct sockaddr_in me = {.sin_family = AF_INET};
        int one = 1;

        /* the port is picked by connect(), per destination: binding
         * thousands of addresses does not use the ports up */
        (void)setsockopt(
            fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
        me.sin_addr.s_addr = htonl(from);
        if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
            fail("bind", errno);
        }
    }
    sa.sin_port = htons(cfs_http_server_port(srv));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = errno;
        socklen_t len = sizeof(err);

        /* libFuzzer's timer signal can interrupt connect(), which then
         * goes on in the background: wait for it, then ask how it ended */
        if (err != EINTR) {
            fail("connect", err);
        }
        while (poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            fail("connect", err ? err : errno);
        }
    }
    return fd;
}

/* Whether @buf (@len bytes) ends with a whole response framed by its
 * Content-Length. */
static bool complete(const char *buf, size_t len)
{
    const char *end = strstr(buf, "\r\n\r\n");
    const char *cl = strcasestr(buf, "\r\ncontent-length:");

    if (!end || !cl || cl > end) {
        return false;
    }
    return (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10) <= len;
}

static int wait_ms(const char *buf, size_t have, bool half_close)
{
    if (!half_close) {
        return 20000; /* Connection: close: the server ends it */
    }
    if (complete(buf, have)) {
        return 1;
    }
    return strstr(buf, "\r\n\r\n") ? 20 : 2000;
}

/* Whether @fd has something to read within @ms. */
static bool readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;

    while ((r = poll(&p, 1, ms)) < 0 && errno == EINTR) {
    }
    return r > 0;
}

/* @half_close: end the stream after @data, as a client that has nothing
 * more to send; otherwise the request says Connection: close, and the
 * server ends the connection once it has answered. */
const char *last_end = "";

static int
send_request(uint32_t from, const void *data, size_t len, bool half_close)
{
    const char *p = data;
    char buf[16384] = "";
    size_t have = 0;
    int fd = connect_server(from);
    int status = 0;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue; /* a signal, not the server */
        }
        if (n <= 0) {
            break; /* the server closed: it answered already */
        }
        p += n;
        len -= (size_t)n;
    }
    /* The end of the request apart from its bytes: libmicrohttpd (epoll,
     * edge-triggered) misses an end of stream that arrives with the last
     * bytes of a request it then answers, and would keep the connection
     * until its idle timeout. An answer first, or 2 ms of silence. */
    if (half_close) {
        (void)readable(fd, 2);
        (void)shutdown(fd, SHUT_WR);
    }
    /* Until the server closes. Half-closed: or it is silent for 2 s
     * before an answer (a connection it keeps: what it did until then was
     * still fuzzed), or for 20 ms after one (it would keep the connection
     * for the next); a whole answer is waited for no longer. */
    for (;;) {
        ssize_t n;

        if (!readable(fd, wait_ms(buf, have, half_close))) {
            last_end = "silence";
            break;
        }
        n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
        if (n < 0 && errno == EINTR) {
            continue; /* a signal, not the server */
        }
        if (n <= 0) {
            last_end = n < 0 ? strerror(errno) : "closed";
            break;
        }
        have += (size_t)n;
        buf[have] = '\0';
        if (!status && have > 12 && strncmp(buf, "HTTP/1.", 7) == 0) {
            status = atoi(buf + 9);
        }
        if (strstr(buf, "text/event-stream")) {
            break; /* an event stream: it does not end by itself */
        }
        if (have == sizeof(buf) - 1) {
            memmove(buf, buf + have - 8, 8); /* the start is what counts */
            have = 8;
        }
    }
    close(fd);
    return status;
}

int fuzz_server_send(const void *data, size_t len)
{
    return send_request(0, data, len, true);
}

int fuzz_server_send_from(uint32_t from, const void *data, size_t len)
{
    if ((from >> 24) != 127) {
        abort(); /* loopback only */
    }
    return send_request(from, data, len, true);
}

int fuzz_server_request(const char *method,
                        const char *path,
                        const char *type,
                        const void *body,
                        size_t len)
{
    char head[1024];
    int n = snprintf(head,
                     sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\n%s%s%sContent-Length: %zu\r\n\r\n",
                     method,
                     path,
                     type ? "Content-Type: " : "",
                     type ? type : "",
                     type ? "\r\n" : "",
                     len);
    char *req;
    int status;

    if (n < 0 || (size_t)n >= sizeof(head)) {
        abort();
    }
    req = malloc((size_t)n + len);
    if (!req) {
        abort();
    }
    memcpy(req, head, (size_t)n);
    if (len) {
        memcpy(req + n, body, len);
    }
    status = send_request(0, req, (size_t)n + len, false);
    free(req);
    return status;
}
