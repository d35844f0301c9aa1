// SPDX-License-Identifier: MIT
/*
 * probe.c - `configfsd probe [--timeout SECONDS] [URL]`: one HTTP GET over a
 * plain TCP socket, for a container's HEALTHCHECK where no curl is
 * installed. Exit 0 when the server answers 2xx, 1 when it answers anything
 * else or cannot be reached within the timeout, 2 on a usage error. The
 * status line goes to stdout (Docker keeps it in the health log), the
 * reason for a failure to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_DEFAULT_URL     "http://127.0.0.1:8080/readyz"
#define PROBE_DEFAULT_TIMEOUT 5
#define PROBE_HOST_MAX        256
#define PROBE_PATH_MAX        1024

struct probe_url {
    char host[PROBE_HOST_MAX];
    char port[8];
    char path[PROBE_PATH_MAX];
};

/* http://HOST[:PORT][/PATH], HOST a name, an IPv4 address or [IPv6].
 * A URL without a path probes /readyz. @return 0 or -EINVAL. */
static int parse_url(const char *url, struct probe_url *u)
{
    const char *p, *host_end, *path;
    size_t n;

    if (strncmp(url, "http://", 7) != 0) {
        return -EINVAL;
    }
    p = url + 7;
    path = p + strcspn(p, "/?#");
    if (*path && *path != '/') {
        return -EINVAL;
    }
    if (*p == '[') {
        host_end = memchr(p, ']', (size_t)(path - p));
        if (!host_end) {
            return -EINVAL;
        }
        n = (size_t)(host_end - p - 1);
        p++;
        host_end++;
    } else {
        host_end = memchr(p, ':', (size_t)(path - p));
        if (!host_end) {
            host_end = path;
        }
        n = (size_t)(host_end - p);
    }
    if (n == 0 || n >= sizeof(u->host)) {
        return -EINVAL;
    }
    memcpy(u->host, p, n);
    u->host[n] = '\0';
    if (*host_end == ':') {
        n = (size_t)(path - host_end - 1);
        if (n == 0 || n >= sizeof(u->port) ||
            strspn(host_end + 1, "0123456789") != n) {
            return -EINVAL;
        }
        memcpy(u->port, host_end + 1, n);
        u->port[n] = '\0';
    } else if (host_end != path) {
        return -EINVAL;
    } else {
        (void)snprintf(u->port, sizeof(u->port), "80");
    }
    if (!*path) {
        path = "/readyz";
    }
    if (strlen(path) >= sizeof(u->path) || strpbrk(path, " \r\n\t")) {
        return -EINVAL;
    }
    (void)snprintf(u->path, sizeof(u->path), "%s", path);
    return 0;
}

static long ms_left(const struct timespec *deadline)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (deadline->tv_sec - now.tv_sec) * 1000L +
           (deadline->tv_nsec - now.tv_nsec) / 1000000L;
}

/* Wait for @events on @fd until @deadline. @return 0 or -ETIMEDOUT/-errno */
static int wait_fd(int fd, short events, const struct timespec *deadline)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events};
        long left = ms_left(deadline);
        int r;

        if (left <= 0) {
            return -ETIMEDOUT;
        }
        r = poll(&pfd, 1, (int)left);
        if (r > 0) {
            return 0;
        }
        if (r == 0) {
            return -ETIMEDOUT;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

/* A connected, non-blocking socket to one of @ai's addresses. */
static int connect_any(const struct addrinfo *ai,
                       const struct timespec *deadline)
{
    int r = -EHOSTUNREACH;

    for (; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family,
                        ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        int err = 0;
        socklen_t len = sizeof(err);

        if (fd < 0) {
            r = -errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            return fd;
        }
        if (errno != EINPROGRESS) {
            r = -errno;
        } else if ((r = wait_fd(fd, POLLOUT, deadline)) == 0) {
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
                err = errno;
            }
            if (err == 0) {
                return fd;
            }
            r = -err;
        }
        close(fd);
    }
    return r;
}

static int
send_all(int fd, const char *buf, size_t len, const struct timespec *deadline)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

        if (n < 0) {
            int r;

            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN) {
                return -errno;
            }
            r = wait_fd(fd, POLLOUT, deadline);
            if (r < 0) {
                return r;
            }
            continue;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read until the end of the status line. @return its length or -errno. */
static int read_status_line(int fd,
                            char *buf,
                            size_t size,
                            const struct timespec *deadline)
{
    size_t len = 0;

    while (len + 1 < size) {
        ssize_t n = recv(fd, buf + len, size - 1 - len, 0);

        if (n > 0) {
            len += (size_t)n;
            buf[len] = '\0';
            if (strchr(buf, '\n')) {
                break;
            }
            continue;
        }
        if (n == 0) {
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN) {
            return -errno;
        }
        n = wait_fd(fd, POLLIN, deadline);
        if (n < 0) {
            return (int)n;
        }
    }
    buf[len] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    return (int)strlen(buf);
}

/* No URL given: /readyz where $CONFIGFSD_LISTEN says the server listens
 * (as the server reads it), 0.0.0.0 being reached on 127.0.0.1. */
static const char *default_url(char *buf, size_t size)
{
    const char *listen = getenv("CONFIGFSD_LISTEN");
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    size_t host_len;

    if (!colon || !colon[1]) {
        return PROBE_DEFAULT_URL;
    }
    host_len = (size_t)(colon - listen);
    if (host_len == 0 ||
        (host_len == 7 && strncmp(listen, "0.0.0.0", 7) == 0)) {
        listen = "127.0.0.1";
        host_len = 9;
    }
    (void)snprintf(
        buf, size, "http://%.*s:%s/readyz", (int)host_len, listen, colon + 1);
    return buf;
}

/* "HTTP/1.x NNN ..." -> NNN, or -1 */
static int parse_status(const char *line)
{
    if (strncmp(line, "HTTP/1.", 7) != 0 ||
        (line[7] != '0' && line[7] != '1') || line[8] != ' ') {
        return -1;
    }
    for (int i = 9; i < 12; i++) {
        if (line[i] < '0' || line[i] > '9') {
            return -1;
        }
    }
    if (line[12] != '\0' && line[12] != ' ') {
        return -1;
    }
    return (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
}

static int usage(void)
{
    (void)fprintf(
        stderr,
        "Usage: configfsd probe [--timeout SECONDS] [URL]\n"
        "GET URL (plain http only) and exit 0 when the answer is"
        " 2xx, 1 when it\n"
        "is not or none comes within the timeout (default %d s)."
        " The default URL\n"
        "is /readyz at the port of $CONFIGFSD_LISTEN, else " PROBE_DEFAULT_URL
        ".\n"
        "For a container's HEALTHCHECK.\n",
        PROBE_DEFAULT_TIMEOUT);
    return 2;
}

int cfs_probe_main(int argc, char **argv)
{
    char url_buf[PROBE_HOST_MAX + 64];
    const char *url = default_url(url_buf, sizeof(url_buf));
    long timeout = PROBE_DEFAULT_TIMEOUT;
    struct addrinfo hints, *ai = NULL;
    struct timespec deadline;
    struct probe_url u;
    char req[PROBE_PATH_MAX + PROBE_HOST_MAX + 128];
    char line[256] = "";
    int fd, r, status;
    int i = 1;

    if (i < argc && strcmp(argv[i], "--timeout") == 0) {
        char *end;

        if (i + 1 >= argc) {
            return usage();
        }
        errno = 0;
        timeout = strtol(argv[i + 1], &end, 10);
        if (errno || !*argv[i + 1] || *end || timeout < 1 || timeout > 3600) {
            return usage();
        }
        i += 2;
    }
    if (i < argc) {
        url = argv[i++];
    }
    if (i < argc || parse_url(url, &u) < 0) {
        if (i >= argc) {
            (void)fprintf(stderr,
                          "configfsd probe: not an http://HOST[:PORT][/PATH] "
                          "URL: %s\n",
                          url);
        }
        return usage();
    }
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    r = getaddrinfo(u.host, u.port, &hints, &ai);
    if (r != 0) {
        (void)fprintf(
            stderr, "configfsd probe: %s: %s\n", u.host, gai_strerror(r));
        return 1;
    }
    fd = connect_any(ai, &deadline);
    freeaddrinfo(ai);
    if (fd < 0) {
        (void)fprintf(stderr,
                      "configfsd probe: cannot connect to %s port %s: %s\n",
                      u.host,
                      u.port,
                      strerror(-fd));
        return 1;
    }
    (void)snprintf(req,
                   sizeof(req),
                   "GET %s HTTP/1.1\r\nHost: %s%s%s:%s\r\n"
                   "User-Agent: configfsd-probe/" CFS_VERSION "\r\n"
                   "Accept: */*\r\nConnection: close\r\n\r\n",
                   u.path,
                   strchr(u.host, ':') ? "[" : "",
                   u.host,
                   strchr(u.host, ':') ? "]" : "",
                   u.port);
    r = send_all(fd, req, strlen(req), &deadline);
    if (r == 0) {
        r = read_status_line(fd, line, sizeof(line), &deadline);
    }
    close(fd);
    if (r < 0) {
        (void)fprintf(stderr, "configfsd probe: %s: %s\n", url, strerror(-r));
        return 1;
    }
    status = parse_status(line);
    if (status < 0) {
        (void)fprintf(stderr,
                      "configfsd probe: %s: not an HTTP answer: \"%.64s\"\n",
                      url,
                      line);
        return 1;
    }
    printf("%s %s\n", url, line);
    (void)fflush(stdout);
    return status >= 200 && status < 300 ? 0 : 1;
}
