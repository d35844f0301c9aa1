// SPDX-License-Identifier: MIT
/*
 * fuzz-cli.c - configfsctl's reading of answers, fed by a fake server
 * (configfsctl(1), "Terminal safety"). The input's first byte picks a
 * command (ls -l, tree, ls -R, history, import, watch, health, rm -r,
 * and the exact outputs cat and --json), the rest is the body every
 * request of the run is answered with: 200 with JSON, or an event stream
 * for watch. Every page is so the same page: a next_after in the input
 * is a cursor that never advances (seed pages-repeated-cursor). The
 * client runs in this process (its main() compiled as configfsctl_main()),
 * its stdout and stderr captured: it must end with one of its exit codes
 * (never a crash: the sanitizers and libFuzzer see those) and, but for
 * the exact outputs, print no byte a terminal acts on (ESC, BEL, DEL, the
 * C1 controls, the bidi overrides and isolates).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"

int configfsctl_main(int argc, char **argv);

static char server_url[64];
static char import_doc[] = "/tmp/cfs-fuzz-cli-XXXXXX";
static pthread_mutex_t answer_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *answer; /* a copy: a late request may outlive the run */
static size_t answer_len;
static const char *answer_type;

/* Read a request's head and body (Content-Length), then answer it with
 * the current answer and close. */
static void serve(int fd)
{
    char buf[8192];
    size_t n = 0;
    char *end = NULL;
    char head[256];
    int hl;

    while (!end && n < sizeof(buf) - 1) {
        ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);

        if (r <= 0) {
            return;
        }
        n += (size_t)r;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (end) {
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        size_t want = cl ? strtoul(cl + 17, NULL, 10) : 0;
        size_t have = n - (size_t)(end + 4 - buf);

        while (have < want) {
            ssize_t r = recv(fd, buf, sizeof(buf), 0);

            if (r <= 0) {
                return;
            }
            have += (size_t)r;
        }
    }
    pthread_mutex_lock(&answer_lock);
    hl = snprintf(head,
                  sizeof(head),
                  "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
                  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                  answer_type,
                  answer_len);
    (void)send(fd, head, (size_t)hl, MSG_NOSIGNAL);
    for (size_t off = 0; off < answer_len;) {
        ssize_t w = send(fd, answer + off, answer_len - off, MSG_NOSIGNAL);

        if (w <= 0) {
            break;
        }
        off += (size_t)w;
    }
    pthread_mutex_unlock(&answer_lock);
}

static void *server_thread(void *arg)
{
    int lfd = *(int *)arg;

    for (;;) {
        int fd = accept(lfd, NULL, NULL);

        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            abort();
        }
        serve(fd);
        close(fd);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static int lfd;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    pthread_t t;
    int fd;

    (void)argc;
    (void)argv;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(lfd, 16) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0 ||
        pthread_create(&t, NULL, server_thread, &lfd) != 0) {
        abort();
    }
    pthread_detach(t);
    (void)snprintf(server_url,
                   sizeof(server_url),
                   "http://127.0.0.1:%u",
                   (unsigned)ntohs(sa.sin_port));
    fd = mkstemp(import_doc);
    if (fd < 0 || write(fd, "{}", 2) != 2) {
        abort();
    }
    close(fd);
    return 0;
}

/* The commands, by the input's first byte; exact ones print the answer's
 * bytes as they are (not to a terminal). */
static const struct {
    const char *args[6];
    const char *type;
    bool exact;
} cmds[] = {
    {{"ls", "-l", "/s/g"}, "application/json", false},
    {{"tree", "/s/g"}, "application/json", false},
    {{"ls", "-R", "/s/g"}, "application/json", false},
    {{"history"}, "application/json", false},
    {{"import", import_doc}, "application/json", false},
    {{"watch", "--count", "3", "--since", "5"}, "text/event-stream", false},
    {{"health"}, "application/json", false},
    {{"rm", "-r", "/s/g"}, "application/json", false},
    {{"cat", "/s/g/a"}, "text/plain", true},
    {{"--json", "ls", "/s/g"}, "application/json", true},
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* A byte a terminal acts on, at @p (@n bytes left): its length, or 0. */
static size_t control_at(const uint8_t *p, size_t n)
{
    if (p[0] == 0x1b || p[0] == 0x07 || p[0] == 0x7f ||
        (p[0] < 0x20 && p[0] != '\n' && p[0] != '\t')) {
        return 1;
    }
    if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
        return 2; /* C1 */
    }
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa &&
        p[2] <= 0xae) {
        return 3; /* U+202A-U+202E */
    }
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 &&
        p[2] <= 0xa9) {
        return 3; /* U+2066-U+2069 */
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[16];
    int argc = 0, ex, out, saved1, saved2;
    size_t c;
    off_t len;
    uint8_t *text;

    if (size < 1) {
        return 0;
    }
    c = data[0] % N_CMDS;
    pthread_mutex_lock(&answer_lock);
    free(answer);
    answer = malloc(size);
    if (!answer) {
        abort();
    }
    memcpy(answer, data + 1, size - 1);
    answer_len = size - 1;
    answer_type = cmds[c].type;
    pthread_mutex_unlock(&answer_lock);

    argv[argc++] = (char *)"configfsctl";
    argv[argc++] = (char *)"--server";
    argv[argc++] = server_url;
    argv[argc++] = (char *)"--timeout"; /* a watch resumes for this long */
    argv[argc++] = (char *)"1";
    /* small, so that inputs under -max_len reach the bound: the bytes of
     * a command's pages in all, and the memory of their parsed form
     * (seeds pages-bytes-in-all, parsed-memory-flat) */
    argv[argc++] = (char *)"--max-answer";
    argv[argc++] = (char *)"32K";
    for (size_t i = 0; i < 6 && cmds[c].args[i]; i++) {
        argv[argc++] = (char *)cmds[c].args[i];
    }
    argv[argc] = NULL;

    out = memfd_create("configfsctl-out", MFD_CLOEXEC);
    if (out < 0) {
        abort();
    }
    (void)fflush(stdout);
    (void)fflush(stderr);
    saved1 = dup(1);
    saved2 = dup(2);
    dup2(out, 1);
    dup2(out, 2);
    optind = 0; /* getopt starts over */
    ex = configfsctl_main(argc, argv);
    (void)fflush(stdout);
    (void)fflush(stderr);
    dup2(saved1, 1);
    dup2(saved2, 2);
    close(saved1);
    close(saved2);
    if (ex < 0 || ex > 10) {
        (void)fprintf(stderr, "configfsctl %s: exit %d\n", argv[7], ex);
        abort();
    }
    len = lseek(out, 0, SEEK_END);
    text = len > 0 ? mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, out, 0)
                   : NULL;
    for (off_t i = 0; text != MAP_FAILED && text && !cmds[c].exact && i < len;
         i++) {
        if (control_at(text + i, (size_t)(len - i))) {
            (void)fprintf(stderr,
                          "configfsctl %s: a control byte at %lld of its "
                          "output\n",
                          argv[7],
                          (long long)i);
            abort();
        }
    }
    if (text && text != MAP_FAILED) {
        munmap(text, (size_t)len);
    }
    close(out);
    return 0;
}
