// SPDX-License-Identifier: MIT
/*
 * notify.c - sd_notify(3) in a dozen lines: systemd's Type=notify protocol
 * is one datagram of "KEY=VALUE\n" lines sent to the AF_UNIX socket named
 * by $NOTIFY_SOCKET, so configfsd needs no libsystemd for it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe.h"

int cfs_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    socklen_t len;
    size_t n;
    ssize_t sent;
    int fd;

    if (!path || !*path) {
        return 0;
    }
    n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path)) {
        return -EAFNOSUPPORT; /* vsock addresses are not spoken here */
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@') {
        sa.sun_path[0] = '\0'; /* abstract: no terminating NUL counted */
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    sent = sendto(fd,
                  state,
                  strlen(state),
                  MSG_NOSIGNAL,
                  (const struct sockaddr *)&sa,
                  len);
    n = sent < 0 ? (size_t)errno : 0;
    close(fd);
    return sent < 0 ? -(int)n : 1;
}
