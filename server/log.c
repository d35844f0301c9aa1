// SPDX-License-Identifier: MIT
/*
 * log.c - the log (server/include/http.h). Lines are logfmt: keys are fixed
 * words, values are quoted when they hold a space, '=', '"' or '\', and every
 * byte outside printable ASCII is written as \xNN, so that nothing a client
 * sends (a path, a method) can forge a line or smuggle terminal escapes.
 *
 * With cfs_log_set_format(CFS_LOG_FORMAT_JSON) the same keys make one JSON
 * object per line ("status", "bytes" and "us" as numbers), strings escaped
 * alike: control bytes and bytes outside ASCII as \u00NN.
 *
 * The file descriptor number never changes once a file is open: a reopen
 * dup3()s the new file onto it, so writers need no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

#define LINE_MAX_BYTES 4096

static atomic_int log_level = CFS_LOG_INFO;
static atomic_int log_format = CFS_LOG_FORMAT_LOGFMT;
static atomic_int log_fd = -1; /* -1: stderr */
static char *log_path;         /* under path_lock */
static pthread_mutex_t path_lock = PTHREAD_MUTEX_INITIALIZER;
/* Writers hold it shared; whoever replaces or closes log_fd holds it
 * exclusively, so no line goes to a descriptor closed (and perhaps
 * reused) under it. */
static pthread_rwlock_t fd_lock = PTHREAD_RWLOCK_INITIALIZER;

static const char *const level_names[] = {"error", "warning", "info", "debug"};
#define NOTICE_LEVEL_NAME "notice"

int cfs_log_level_parse(const char *name, enum cfs_log_level *ret)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *ret = (enum cfs_log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

int cfs_log_format_parse(const char *name, enum cfs_log_format *ret)
{
    if (strcmp(name, "logfmt") == 0) {
        *ret = CFS_LOG_FORMAT_LOGFMT;
    } else if (strcmp(name, "json") == 0) {
        *ret = CFS_LOG_FORMAT_JSON;
    } else {
        return -EINVAL;
    }
    return 0;
}

void cfs_log_set_format(enum cfs_log_format format)
{
    atomic_store(&log_format, (int)format);
}

void cfs_log_set_level(enum cfs_log_level level)
{
    atomic_store(&log_level, (int)level);
}

bool cfs_log_enabled(enum cfs_log_level level)
{
    return (int)level <= atomic_load(&log_level);
}

static int open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

    return fd < 0 ? -errno : fd;
}

int cfs_log_open_file(const char *path)
{
    char *copy = strdup(path);
    int fd, old;

    if (!copy) {
        return -ENOMEM;
    }
    fd = open_log(path);
    if (fd < 0) {
        free(copy);
        return fd;
    }
    pthread_mutex_lock(&path_lock);
    free(log_path);
    log_path = copy;
    pthread_rwlock_wrlock(&fd_lock);
    old = atomic_exchange(&log_fd, fd);
    if (old >= 0) {
        close(old);
    }
    pthread_rwlock_unlock(&fd_lock);
    pthread_mutex_unlock(&path_lock);
    return 0;
}

int cfs_log_reopen(void)
{
    int r = 0;

    pthread_mutex_lock(&path_lock);
    if (log_path) {
        int fd = open_log(log_path);

        if (fd < 0) {
            r = fd;
        } else {
            pthread_rwlock_wrlock(&fd_lock);
            if (dup3(fd, atomic_load(&log_fd), O_CLOEXEC) < 0) {
                r = -errno;
            }
            pthread_rwlock_unlock(&fd_lock);
            close(fd);
        }
    }
    pthread_mutex_unlock(&path_lock);
    return r;
}

void cfs_log_close(void)
{
    int old;

    pthread_mutex_lock(&path_lock);
    free(log_path);
    log_path = NULL;
    pthread_rwlock_wrlock(&fd_lock);
    old = atomic_exchange(&log_fd, -1);
    if (old >= 0) {
        close(old);
    }
    pthread_rwlock_unlock(&fd_lock);
    pthread_mutex_unlock(&path_lock);
}

/* ---- building a line --------------------------------------------------- */

/* What a JSON line keeps free for the '"' and '}' that close it. */
#define JSON_TAIL_ROOM 24

struct line {
    char buf[LINE_MAX_BYTES];
    size_t len;
    bool truncated;
    bool json;          /* the format, read once per line */
    bool json_string;   /* inside a string value */
    size_t field_start; /* JSON: where the last key began */
};

static void put(struct line *l, const char *s, size_t n)
{
    size_t room = sizeof(l->buf) - 1 - l->len; /* keep one for '\n' */

    if (l->json) {
        /* whole pieces only, never half an escape, and room to close */
        room = l->len + JSON_TAIL_ROOM < sizeof(l->buf)
                   ? sizeof(l->buf) - JSON_TAIL_ROOM - l->len
                   : 0;
        if (l->truncated || n > room) {
            l->truncated = true;
            return;
        }
    }
    if (n > room) {
        n = room;
        l->truncated = true;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void puts_(struct line *l, const char *s)
{
    put(l, s, strlen(s));
}

static bool needs_quotes(const char *v)
{
    if (!*v) {
        return true;
    }
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || *p == '=' || *p == '"' || *p == '\\') {
            return true;
        }
    }
    return false;
}

/* A JSON string: '"' and '\' escaped, every other byte outside printable
 * ASCII as \u00NN, so that the line is ASCII and valid whatever was sent. */
static void put_json_string(struct line *l, const char *v)
{
    static const char hex[] = "0123456789abcdef";

    if (l->truncated) {
        return;
    }
    put(l, "\"", 1);
    l->json_string = !l->truncated;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};

            put(l, esc, 2);
        } else if (*p < ' ' || *p >= 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};

            put(l, esc, 6);
        } else {
            put(l, (const char *)p, 1);
        }
    }
    put(l, "\"", 1);
    l->json_string = l->json_string && l->truncated; /* open, cut short */
}

/* A value, quoted and escaped where needed. NULL is logged as "-". */
static void put_value(struct line *l, const char *v)
{
    static const char hex[] = "0123456789abcdef";
    bool quote;

    if (!v) {
        v = "-";
    }
    if (l->json) {
        put_json_string(l, v);
        return;
    }
    quote = needs_quotes(v);
    if (quote) {
        put(l, "\"", 1);
    }
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};

            put(l, esc, 2);
        } else if (*p < ' ' || *p >= 0x7f) {
            char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};

            put(l, esc, 4);
        } else {
            put(l, (const char *)p, 1);
        }
    }
    if (quote) {
        put(l, "\"", 1);
    }
}

static void put_key(struct line *l, const char *key)
{
    if (l->json) {
        char piece[64];

        if (l->truncated) {
            return;
        }
        l->field_start = l->len;
        (void)snprintf(piece, sizeof(piece), ",\"%s\":", key);
        puts_(l, piece); /* whole or not at all */
    } else {
        put(l, " ", 1);
        puts_(l, key);
        put(l, "=", 1);
    }
}

static void put_kv(struct line *l, const char *key, const char *value)
{
    put_key(l, key);
    put_value(l, value);
}

/* A number: bare in both formats. */
static void put_kv_num(struct line *l, const char *key, unsigned long long v)
{
    char num[32];

    (void)snprintf(num, sizeof(num), "%llu", v);
    put_key(l, key);
    puts_(l, num);
}

static void begin(struct line *l, const char *level, const char *event)
{
    struct timespec ts;
    struct tm tm;
    char stamp[96];

    l->len = 0;
    l->truncated = false;
    l->json = atomic_load(&log_format) == CFS_LOG_FORMAT_JSON;
    l->json_string = false;
    l->field_start = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    (void)snprintf(stamp,
                   sizeof(stamp),
                   l->json ? "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\""
                           : "ts=%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
                   tm.tm_year + 1900,
                   tm.tm_mon + 1,
                   tm.tm_mday,
                   tm.tm_hour,
                   tm.tm_min,
                   tm.tm_sec,
                   ts.tv_nsec / 1000);
    puts_(l, stamp);
    put_kv(l, "level", level);
    put_kv(l, "event", event);
}

static void emit(struct line *l)
{
    size_t off = 0;
    int fd;

    if (l->json) {
        /* put() kept JSON_TAIL_ROOM bytes for this */
        static const char more[] = ",\"truncated\":true}";

        if (l->truncated && l->json_string) {
            l->buf[l->len++] = '"'; /* a string cut short, closed */
        } else if (l->truncated) {
            l->len = l->field_start; /* a field half written, dropped */
        }
        if (l->truncated) {
            memcpy(l->buf + l->len, more, sizeof(more) - 1);
            l->len += sizeof(more) - 1;
        } else {
            l->buf[l->len++] = '}';
        }
    } else if (l->truncated) {
        l->len = sizeof(l->buf) - 5;
        memcpy(l->buf + l->len, " ...", 4);
        l->len += 4;
    }
    l->buf[l->len++] = '\n';
    pthread_rwlock_rdlock(&fd_lock);
    fd = atomic_load(&log_fd);
    if (fd < 0) {
        fd = STDERR_FILENO;
    }
    while (off < l->len) {
        ssize_t n = write(fd, l->buf + off, l->len - off);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* nowhere left to say so */
        }
        off += (size_t)n;
    }
    pthread_rwlock_unlock(&fd_lock);
}

void cfs_log(enum cfs_log_level level, const char *event, const char *fmt, ...)
{
    struct line l;
    char msg[2048];
    va_list ap;

    if (!cfs_log_enabled(level)) {
        return;
    }
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    begin(&l, level_names[level], event);
    put_kv(&l, "msg", msg);
    emit(&l);
}

void cfs_log_notice(const char *event, const char *fmt, ...)
{
    struct line l;
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    begin(&l, NOTICE_LEVEL_NAME, event);
    put_kv(&l, "msg", msg);
    emit(&l);
}

void cfs_log_access(const char *method,
                    const char *path,
                    int status,
                    size_t bytes,
                    uint64_t micros,
                    const char *principal)
{
    enum cfs_log_level level = status >= 500 ? CFS_LOG_ERROR : CFS_LOG_INFO;
    struct line l;

    if (!cfs_log_enabled(level)) {
        return;
    }
    begin(&l, level_names[level], "access");
    put_kv(&l, "method", method);
    put_kv(&l, "path", path);
    put_kv_num(&l, "status", status > 0 ? (unsigned long long)status : 0);
    put_kv_num(&l, "bytes", bytes);
    put_kv_num(&l, "us", micros);
    put_kv(&l, "principal", principal);
    emit(&l);
}
