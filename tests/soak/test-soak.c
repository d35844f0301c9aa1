// SPDX-License-Identifier: MIT
/*
 * test-soak.c - configfsd under mixed load for a bounded time
 * (CFS_SOAK_SECONDS, the meson option soak_seconds): readers, writers,
 * batches, event subscribers (one of them slow), and clients that go away
 * in the middle of a request, against the real executable with a
 * database. Then:
 *   - every answer had a status its client expects;
 *   - the server's RSS and open fds stay flat after the warm-up (the
 *     first third), and the fds come back down once the clients are gone;
 *   - every subscriber got every revision in order, or an explicit
 *     `reset` event where it could not;
 * and the p50/p99 latency of each kind of request is reported (as TAP
 * comments: speed is the benchmarks' business, not an assertion here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <curl/curl.h>

#include "harness.h"

#define N_READERS 2
#define N_WRITERS 2
#define N_SUBS    3 /* the last one is slow */
/* The slow subscriber stops reading for 3/8 of the run, then
 * reads again: the server fills its socket buffer (up to tcp_wmem's 4
 * MiB) and then must keep, drop or reset what the client has not read. */
#define BATCH_ITEMS 40 /* each made, stored and removed: 120 records */
#define MAX_SAMPLE  4096
/* The server's --timeout: a client that vanishes in the middle of a
 * request holds its connection until then (libmicrohttpd does not see
 * the FIN that came with its last bytes). */
#define SERVER_TIMEOUT_S 10 /* longer than the slow subscriber's pause */
#define ABORTS_PER_S     20

enum kind { K_READ, K_WRITE, K_BATCH, K_ABORT, N_KINDS };
static const char *const kind_names[] = {"read", "write", "batch", "abort"};

struct lat {
    pthread_mutex_t lock;
    double *us; /* every request's latency */
    size_t n, cap;
};

static struct harness_proc proc;
static uint16_t port;
static atomic_bool stop;      /* the load ends */
static atomic_bool stop_subs; /* the subscribers end (after the load) */
static unsigned int seconds;
static struct lat lats[N_KINDS];
static atomic_size_t unexpected;
static char first_unexpected[256];
static pthread_mutex_t unexpected_lock = PTHREAD_MUTEX_INITIALIZER;

/* Server samples: one a second. */
static long rss_kb[MAX_SAMPLE], fds[MAX_SAMPLE];
static size_t n_samples;
static long fds_idle_before, fds_idle_after;
static uint64_t final_rev_seen; /* the revision the subscribers waited for */

struct sub {
    bool slow;
    double pause_at, resume_at; /* the slow one's pause */
    uint64_t last_rev;          /* last revision seen whole */
    uint64_t cur_rev;           /* revision being read */
    uint64_t next_index;        /* next record index of cur_rev */
    uint64_t count;             /* records of cur_rev */
    size_t revisions, resets, gaps, records, reconnects;
    char gap_note[160];
    char *buf; /* a partial line */
    size_t len;
};

static struct sub subs[N_SUBS];

/* ---- helpers ------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void lat_add(enum kind k, double us)
{
    struct lat *l = &lats[k];

    pthread_mutex_lock(&l->lock);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        double *g = realloc(l->us, cap * sizeof(*g));

        if (g) {
            l->us = g;
            l->cap = cap;
        }
    }
    if (l->n < l->cap) {
        l->us[l->n++] = us;
    }
    pthread_mutex_unlock(&l->lock);
}

static void note_unexpected(const char *what, long status)
{
    pthread_mutex_lock(&unexpected_lock);
    if (atomic_fetch_add(&unexpected, 1) == 0) {
        (void)snprintf(first_unexpected,
                       sizeof(first_unexpected),
                       "%s: %ld",
                       what,
                       status);
    }
    pthread_mutex_unlock(&unexpected_lock);
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* One request on @h (a handle kept per thread, so connections are
 * reused); its status, or 0 when the transfer failed. */
static long request(CURL *h,
                    enum kind k,
                    const char *method,
                    const char *path,
                    const char *body)
{
    struct curl_slist *hd = NULL;
    char url[512];
    long status = 0;
    double t0 = now_s();

    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        hd = curl_slist_append(hd, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    } else {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    if (curl_easy_perform(h) == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_slist_free_all(hd);
    lat_add(k, (now_s() - t0) * 1e6);
    return status;
}

static void expect_status(const char *what, long status, long a, long b)
{
    if (status != a && status != b) {
        note_unexpected(what, status);
    }
}

/* ---- the clients --------------------------------------------------------- */

static void *reader(void *arg)
{
    static const char *const paths[] = {
        "/api/v1/config/?depth=2",
        "/api/v1/config/02-simple-children?depth=1",
        "/api/v1/config/02-simple-children/w0/storeme",
        "/api/v1/config/usb_gadget",
        "/api/v1",
        "/api/v1/history?limit=50",
    };
    CURL *h = curl_easy_init();
    size_t i = (size_t)(uintptr_t)arg;

    while (!atomic_load(&stop)) {
        const char *p = paths[i++ % (sizeof(paths) / sizeof(paths[0]))];

        expect_status(p, request(h, K_READ, "GET", p, NULL), 200, 200);
    }
    curl_easy_cleanup(h);
    return NULL;
}

/* Each writer owns /02-simple-children/wN: stores, and items made and
 * removed under the subsystem. */
static void *writer(void *arg)
{
    unsigned int w = (unsigned int)(uintptr_t)arg;
    CURL *h = curl_easy_init();
    char path[128], body[128];

    for (unsigned long i = 0; !atomic_load(&stop); i++) {
        (void)snprintf(path,
                       sizeof(path),
                       "/api/v1/config/02-simple-children/w%u/storeme",
                       w);
        (void)snprintf(body, sizeof(body), "{\"value\":\"%lu\"}", i);
        expect_status("store", request(h, K_WRITE, "PUT", path, body), 200, 0);
        if (i % 8 == 0) {
            (void)snprintf(body, sizeof(body), "{\"name\":\"w%u-%lu\"}", w, i);
            expect_status("mkdir",
                          request(h,
                                  K_WRITE,
                                  "POST",
                                  "/api/v1/config/02-simple-children",
                                  body),
                          201,
                          0);
            (void)snprintf(path,
                           sizeof(path),
                           "/api/v1/config/02-simple-children/w%u-%lu",
                           w,
                           i);
            expect_status(
                "rmdir", request(h, K_WRITE, "DELETE", path, NULL), 204, 0);
        }
    }
    curl_easy_cleanup(h);
    return NULL;
}

static void *batcher(void *arg)
{
    CURL *h = curl_easy_init();
    char body[16384];

    (void)arg;
    for (unsigned long i = 0; !atomic_load(&stop); i++) {
        size_t o = (size_t)snprintf(body, sizeof(body), "{\"ops\":[");

        for (int k = 0; k < BATCH_ITEMS; k++) {
            o += (size_t)snprintf(
                body + o,
                sizeof(body) - o,
                "%s{\"op\":\"mkdir\",\"path\":\"/02-simple-children/b%d\"},"
                "{\"op\":\"store\",\"path\":\"/02-simple-children/b%d/"
                "storeme\",\"value\":\"%lu\"}",
                k ? "," : "",
                k,
                k,
                i);
        }
        for (int k = 0; k < BATCH_ITEMS; k++) {
            o += (size_t)snprintf(
                body + o,
                sizeof(body) - o,
                ",{\"op\":\"rmdir\",\"path\":\"/02-simple-children/b%d\"}",
                k);
        }
        (void)snprintf(body + o, sizeof(body) - o, "]}");
        expect_status("batch",
                      request(h, K_BATCH, "POST", "/api/v1/batch", body),
                      200,
                      0);
    }
    curl_easy_cleanup(h);
    return NULL;
}

/* Clients that go away mid-request: headers cut short, a body cut short,
 * a response never read. */
static void *aborter(void *arg)
{
    static const char *const shapes[] = {
        "GET /api/v1/config/?depth=3 HTTP/1.1\r\nHost: x\r\n",
        "PUT /api/v1/config/02-simple-children/w0/storeme HTTP/1.1\r\n"
        "Host: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{\"value\":",
        "GET /api/v1/config/?depth=8 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

    double start = now_s();

    (void)arg;
    for (size_t i = 0; !atomic_load(&stop); i++) {
        const char *s = shapes[i % (sizeof(shapes) / sizeof(shapes[0]))];
        double due = start + (double)i / ABORTS_PER_S;
        int fd;
        double t0;

        /* paced: each holds a connection for SERVER_TIMEOUT_S */
        while (now_s() < due && !atomic_load(&stop)) {
            struct timespec ts = {0, 2000000L};

            (void)nanosleep(&ts, NULL);
        }
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        t0 = now_s();

        if (fd < 0) {
            note_unexpected("socket", errno);
            break;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            (void)send(fd, s, strlen(s), MSG_NOSIGNAL);
        } else {
            note_unexpected("connect", errno);
        }
        close(fd);
        lat_add(K_ABORT, (now_s() - t0) * 1e6);
    }
    return NULL;
}

/* An event record's revision, index and count, from its data line. */
static void sub_record(struct sub *s, const char *data)
{
    const char *r = strstr(data, "\"revision\":");
    const char *i = strstr(data, "\"index\":");
    const char *c = strstr(data, "\"count\":");
    uint64_t rev, idx, cnt;

    if (!r || !i || !c) {
        return;
    }
    rev = strtoull(r + 11, NULL, 10);
    idx = strtoull(i + 8, NULL, 10);
    cnt = strtoull(c + 8, NULL, 10);
    s->records++;
    if (s->last_rev == 0 && s->cur_rev == 0) {
        /* the first one sets the start */
        __atomic_store_n(&s->last_rev, rev - 1, __ATOMIC_RELEASE);
    }
    if (rev == s->cur_rev && idx == s->next_index) {
        s->next_index++; /* the next record of the same revision */
    } else if (idx == 0 && rev == s->last_rev + 1 &&
               (s->cur_rev == 0 || s->next_index == s->count)) {
        s->cur_rev = rev; /* the next revision */
        s->next_index = 1;
        s->count = cnt;
    } else {
        if (s->gaps++ == 0) {
            (void)snprintf(s->gap_note,
                           sizeof(s->gap_note),
                           "after revision %llu (record %llu of %llu) came "
                           "revision %llu record %llu",
                           (unsigned long long)s->last_rev,
                           (unsigned long long)s->next_index,
                           (unsigned long long)s->count,
                           (unsigned long long)rev,
                           (unsigned long long)idx);
        }
        s->cur_rev = rev; /* go on from here */
        s->next_index = idx + 1;
        s->count = cnt;
    }
    if (s->next_index == s->count) {
        __atomic_store_n(&s->last_rev, s->cur_rev, __ATOMIC_RELEASE);
        s->revisions++;
    }
}

/* A reset says where the stream goes on from. */
static void sub_reset(struct sub *s, const char *data)
{
    const char *r = strstr(data, "\"revision\":");

    s->resets++;
    if (r) {
        __atomic_store_n(
            &s->last_rev, strtoull(r + 11, NULL, 10), __ATOMIC_RELEASE);
        s->cur_rev = s->last_rev;
        s->next_index = s->count = 0;
    }
}

static size_t sub_data(char *p, size_t size, size_t n, void *arg)
{
    struct sub *s = arg;
    size_t len = size * n;
    char *b;
    char *line, *nl;
    bool reset_next = false;

    b = realloc(s->buf, s->len + len + 1);
    if (!b) {
        return 0;
    }
    s->buf = b;
    memcpy(s->buf + s->len, p, len);
    s->len += len;
    s->buf[s->len] = '\0';
    /* whole events only: up to the last blank line */
    line = s->buf;
    while ((nl = strstr(line, "\n\n")) != NULL) {
        *nl = '\0';
        reset_next = strstr(line, "event: reset") != NULL;
        for (char *l = line; l && *l;) {
            char *end = strchr(l, '\n');

            if (end) {
                *end = '\0';
            }
            if (strncmp(l, "data: ", 6) == 0) {
                if (reset_next) {
                    sub_reset(s, l + 6);
                } else {
                    sub_record(s, l + 6);
                }
            }
            l = end ? end + 1 : NULL;
        }
        line = nl + 2;
    }
    s->len -= (size_t)(line - s->buf);
    memmove(s->buf, line, s->len + 1);
    return len;
}

static int sub_progress(
    void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)arg;
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return atomic_load(&stop_subs) ? 1 : 0; /* ends the transfer */
}

/* Connect and ask for the stream (after @last, when not 0). -1 when the
 * server cannot be reached. */
static int slow_connect(uint64_t last)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int size = 256 * 1024; /* fixed: autotuning would hold the pause */
    char req[160];
    int n;

    if (fd < 0) {
        return -1;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    n = last
            ? snprintf(req,
                       sizeof(req),
                       "GET /api/v1/events HTTP/1.0\r\nLast-Event-ID: "
                       "%llu\r\n\r\n",
                       (unsigned long long)last)
            : snprintf(req, sizeof(req), "GET /api/v1/events HTTP/1.0\r\n\r\n");
    raw_send(fd, req, (size_t)n);
    return fd;
}

/* The slow subscriber, on a socket of its own (HTTP/1.0: the stream
 * comes unchunked, and a pause is a pause: nothing reads the socket, as
 * libcurl's own pause does not promise). When the server ends the stream
 * it reconnects with Last-Event-ID, as an EventSource does. */
static void *slow_subscriber(void *arg)
{
    struct sub *s = arg;
    int fd = slow_connect(0);
    bool in_body = false;
    char head[4096];
    size_t head_len = 0;

    while (fd >= 0 && !atomic_load(&stop_subs)) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        char buf[65536];
        double t = now_s();
        ssize_t n;

        if (t >= s->pause_at && t < s->resume_at) {
            (void)poll(NULL, 0, 50); /* paused: the socket is not read */
            continue;
        }
        if (poll(&pfd, 1, 100) <= 0) {
            continue;
        }
        n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            /* ended: again from the last revision it has whole */
            close(fd);
            s->reconnects++;
            s->cur_rev = s->last_rev;
            s->next_index = s->count = 0;
            s->len = 0;
            in_body = false;
            head_len = 0;
            fd = slow_connect(s->last_rev);
            continue;
        }
        if (!in_body) {
            /* the status line and headers, then the stream */
            size_t room = sizeof(head) - 1 - head_len;
            size_t take = (size_t)n < room ? (size_t)n : room;
            char *end;

            memcpy(head + head_len, buf, take);
            head_len += take;
            head[head_len] = '\0';
            end = strstr(head, "\r\n\r\n");
            if (!end) {
                continue;
            }
            in_body = true;
            (void)sub_data(end + 4, 1, head_len - (size_t)(end + 4 - head), s);
            /* and what did not fit in head: the first read after a
             * reconnect can bring the headers with many events */
            (void)sub_data(buf + take, 1, (size_t)n - take, s);
            continue;
        }
        (void)sub_data(buf, 1, (size_t)n, s);
    }
    if (fd < 0) {
        note_unexpected("slow subscriber connect", errno);
    } else {
        close(fd);
    }
    return NULL;
}

static void *subscriber(void *arg)
{
    struct sub *s = arg;
    CURL *h = curl_easy_init();
    char url[128];

    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/events", port);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sub_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, sub_progress);

    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_perform(h); /* until stop: aborted by sub_progress */
    curl_easy_cleanup(h);
    return NULL;
}

/* ---- the server's side ----------------------------------------------------
 */

static long proc_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "re");
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
        }
    }
    (void)fclose(f);
    return kb;
}

static long proc_fds(pid_t pid)
{
    char path[64];
    long n = 0;
    DIR *d;
    struct dirent *e;

    (void)snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    if (!d) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n;
}

/* The server's fds once it has closed what the clients left (the last
 * of the aborted ones after SERVER_TIMEOUT_S): down to @want, or what
 * they are after a bounded wait. */
static long fds_down_to(long want)
{
    double t0 = now_s();
    long n = proc_fds(proc.pid);

    while (n > want && now_s() - t0 < 3 * SERVER_TIMEOUT_S + 15) {
        struct timespec ts = {0, 100000000L};

        (void)nanosleep(&ts, NULL); /* between two looks at the condition */
        n = proc_fds(proc.pid);
    }
    return n;
}

/* The tree's revision, from GET /api/v1. */
static uint64_t revision_now(void)
{
    struct http_resp r;
    uint64_t rev = 0;

    harness_target(port, NULL);
    http(&r, "GET", "/api/v1", NULL, 0, NULL);
    if (r.status == 200) {
        rev = (uint64_t)json_integer_value(json_object_get(r.json, "revision"));
    }
    http_resp_done(&r);
    harness_target(0, NULL);
    return rev;
}

/* Every subscriber has revision @rev whole. */
static bool subs_at(uint64_t rev)
{
    for (int i = 0; i < N_SUBS; i++) {
        if (__atomic_load_n(&subs[i].last_rev, __ATOMIC_ACQUIRE) < rev) {
            return false;
        }
    }
    return true;
}

/* The sample the warm-up ends at: a third of the run, and at least the
 * time aborted connections take to be closed (SERVER_TIMEOUT_S). */
static size_t warm_index(void)
{
    size_t w = n_samples / 3;

    if (w < SERVER_TIMEOUT_S + 2) {
        w = SERVER_TIMEOUT_S + 2;
    }
    return w < n_samples ? w : n_samples - 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* ---- the run ---------------------------------------------------------------
 */

static int setup(void **state)
{
    const char *env = getenv("CFS_SOAK_SECONDS");
    static char db[256];
    static char timeout[16];
    static const char schema_dir[] = CFS_SOURCE_ROOT "/schemas";
    char *dir = harness_tmpdir();
    const char *args[] = {"--listen",
                          "127.0.0.1:0",
                          "--db",
                          db,
                          "--schema-dir",
                          schema_dir,
                          "--log-level",
                          "warning",
                          "--threads",
                          "4",
                          "--timeout",
                          timeout,
                          /* a bounded journal (in revisions): the database,
                           * and SQLite's page cache of it (up to 64 MiB),
                           * stop growing */
                          "--history-limit",
                          "500",
                          NULL};
    pthread_t th[N_READERS + N_WRITERS + 2 + N_SUBS];
    size_t n_th = 0;
    CURL *h;
    double t0, next;
    uint64_t final_rev;

    (void)state;
    seconds = env ? (unsigned int)strtoul(env, NULL, 10) : 20;
    if (seconds < 15) {
        seconds = 15; /* a warm-up longer than SERVER_TIMEOUT_S, then some */
    }
    (void)snprintf(db, sizeof(db), "%s/soak.db", dir);
    (void)snprintf(timeout, sizeof(timeout), "%d", SERVER_TIMEOUT_S);
    if (harness_spawn(args, NULL, NULL, &proc) < 0) {
        return -1;
    }
    port = proc.port;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (int k = 0; k < N_KINDS; k++) {
        pthread_mutex_init(&lats[k].lock, NULL);
    }
    h = curl_easy_init();
    for (unsigned int w = 0; w < N_WRITERS; w++) {
        char body[64];

        (void)snprintf(body, sizeof(body), "{\"name\":\"w%u\"}", w);
        if (request(h,
                    K_WRITE,
                    "POST",
                    "/api/v1/config/02-simple-children",
                    body) != 201) {
            return -1;
        }
    }
    curl_easy_cleanup(h);
    fds_idle_before = proc_fds(proc.pid);

    for (int i = 0; i < N_SUBS; i++) {
        subs[i].slow = i == N_SUBS - 1;
        subs[i].pause_at = now_s() + seconds / 8.0;
        subs[i].resume_at = now_s() + seconds / 2.0;
        pthread_create(&th[n_th++],
                       NULL,
                       subs[i].slow ? slow_subscriber : subscriber,
                       &subs[i]);
    }
    for (uintptr_t i = 0; i < N_READERS; i++) {
        pthread_create(&th[n_th++], NULL, reader, (void *)i);
    }
    for (uintptr_t i = 0; i < N_WRITERS; i++) {
        pthread_create(&th[n_th++], NULL, writer, (void *)i);
    }
    pthread_create(&th[n_th++], NULL, batcher, NULL);
    pthread_create(&th[n_th++], NULL, aborter, NULL);

    /* a sample a second, for the bounded time */
    t0 = now_s();
    next = t0;
    while (now_s() - t0 < seconds && n_samples < MAX_SAMPLE) {
        struct timespec ts = {0, 50000000L};

        if (now_s() >= next) {
            rss_kb[n_samples] = proc_rss_kb(proc.pid);
            fds[n_samples] = proc_fds(proc.pid);
            n_samples++;
            next += 1.0;
        }
        (void)nanosleep(&ts, NULL); /* the sampling clock */
    }
    atomic_store(&stop, true);
    for (size_t i = N_SUBS; i < n_th; i++) {
        pthread_join(th[i], NULL); /* the load */
    }
    /* the subscribers read on until they have the last revision: the slow
     * one catches up with what it could not read while paused */
    final_rev = revision_now();
    final_rev_seen = final_rev;
    t0 = now_s();
    while (now_s() - t0 < 30 && !subs_at(final_rev)) {
        struct timespec ts = {0, 100000000L};

        (void)nanosleep(&ts, NULL); /* between two looks at the condition */
    }
    atomic_store(&stop_subs, true);
    for (size_t i = 0; i < N_SUBS; i++) {
        pthread_join(th[i], NULL);
    }
    fds_idle_after = fds_down_to(fds_idle_before + 2);
    harness_rmtree(dir);
    free(dir);
    return 0;
}

static int teardown(void **state)
{
    int st;

    (void)state;
    st = harness_reap(&proc);
    for (int k = 0; k < N_KINDS; k++) {
        free(lats[k].us);
        pthread_mutex_destroy(&lats[k].lock);
    }
    for (int i = 0; i < N_SUBS; i++) {
        free(subs[i].buf);
    }
    curl_global_cleanup();
    return st == 0 ? 0 : -1;
}

/* Every request got a status its client expects. */
static void test_soak_statuses(void **state)
{
    (void)state;
    if (atomic_load(&unexpected)) {
        print_error("%zu unexpected; the first: %s\n",
                    atomic_load(&unexpected),
                    first_unexpected);
    }
    assert_int_equal(atomic_load(&unexpected), 0);
    assert_true(lats[K_WRITE].n > 0 && lats[K_BATCH].n > 0 &&
                lats[K_READ].n > 0);
}

/* After the warm-up (warm_index()), RSS grows by at most a quarter
 * or 6 MiB, whichever is more: a leak of some tens of bytes per record
 * over the hundreds of thousands of records of a run would not fit. (The
 * journal is bounded, --history-limit: with it unbounded, SQLite's page
 * cache grows with the database up to its 64 MiB.) */
static void test_soak_rss_flat(void **state)
{
    size_t warm = warm_index();
    long at_warm, peak = 0;

    (void)state;
    assert_true(n_samples >= 3);
    at_warm = rss_kb[warm];
    for (size_t i = warm; i < n_samples; i++) {
        peak = rss_kb[i] > peak ? rss_kb[i] : peak;
    }
    print_message("# rss (KiB, one a second):");
    for (size_t i = 0; i < n_samples; i++) {
        print_message(" %ld", rss_kb[i]);
    }
    print_message("\n# rss: %ld KiB at warm-up, %ld KiB peak after, %ld KiB "
                  "at the end\n",
                  at_warm,
                  peak,
                  rss_kb[n_samples - 1]);
    assert_true(peak - at_warm <= (at_warm / 4 > 6144 ? at_warm / 4 : 6144));
}

/* Open fds stay within the clients' own connections after the warm-up,
 * and come back to where they were once the clients are gone. */
static void test_soak_fds_flat(void **state)
{
    size_t warm = warm_index();
    long warm_max = 0, after_max = 0;

    (void)state;
    for (size_t i = 0; i < n_samples; i++) {
        if (i <= warm) {
            warm_max = fds[i] > warm_max ? fds[i] : warm_max;
        } else {
            after_max = fds[i] > after_max ? fds[i] : after_max;
        }
    }
    print_message("# fds: %ld idle before, %ld max in warm-up, %ld max "
                  "after, %ld idle after\n",
                  fds_idle_before,
                  warm_max,
                  after_max,
                  fds_idle_after);
    /* a dozen clients' connections, and aborted ones not yet reaped */
    assert_true(after_max <= warm_max + 32);
    assert_true(fds_idle_after <= fds_idle_before + 2);
}

static void report_sub(const struct sub *s, int i)
{
    print_message("# subscriber %d%s: %zu records, %zu revisions, %zu "
                  "resets, %zu reconnects, %zu gaps%s%s\n",
                  i,
                  s->slow ? " (slow)" : "",
                  s->records,
                  s->revisions,
                  s->resets,
                  s->reconnects,
                  s->gaps,
                  s->gaps ? ": first " : "",
                  s->gap_note);
}

/* The subscribers that read as fast as they can get every revision in
 * order, or a `reset` where they fell behind. */
static void test_soak_events_gap_free(void **state)
{
    size_t gaps = 0;

    (void)state;
    for (int i = 0; i < N_SUBS - 1; i++) {
        report_sub(&subs[i], i);
        assert_true(subs[i].revisions > 0);
        assert_true(subs[i].last_rev >= final_rev_seen); /* not stuck */
        gaps += subs[i].gaps;
    }
    assert_int_equal(gaps, 0);
}

/* The slow one gets every revision, or a `reset` where it cannot. */
static void test_soak_events_slow_reader(void **state)
{
    const struct sub *s = &subs[N_SUBS - 1];

    (void)state;
    report_sub(s, N_SUBS - 1);
    print_message("# the last revision %llu; the slow subscriber got to %llu\n",
                  (unsigned long long)final_rev_seen,
                  (unsigned long long)s->last_rev);
    assert_true(s->records > 0);
    assert_true(s->last_rev >= final_rev_seen); /* not stuck */
    assert_int_equal(s->gaps, 0);
}

/* p50 and p99 of each kind, for the log. */
static void test_soak_latencies(void **state)
{
    (void)state;
    for (int k = 0; k < N_KINDS; k++) {
        struct lat *l = &lats[k];

        if (l->n == 0) {
            continue;
        }
        qsort(l->us, l->n, sizeof(double), cmp_double);
        print_message("# %s: %zu requests, p50 %.0f us, p99 %.0f us, max "
                      "%.0f us\n",
                      kind_names[k],
                      l->n,
                      l->us[l->n / 2],
                      l->us[(l->n * 99) / 100],
                      l->us[l->n - 1]);
    }
    assert_true(lats[K_READ].n > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak_statuses),
        cmocka_unit_test(test_soak_rss_flat),
        cmocka_unit_test(test_soak_fds_flat),
        cmocka_unit_test(test_soak_events_gap_free),
        cmocka_unit_test(test_soak_events_slow_reader),
        cmocka_unit_test(test_soak_latencies),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
