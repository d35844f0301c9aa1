// SPDX-License-Identifier: MIT
/*
 * bare-server.c - the baselines of bench/http/run.sh, measured in the same
 * run as configfsd: a libmicrohttpd server of the same configuration (epoll
 * thread pool, response queued on the second call) that answers a fixed
 * tiny body, and, with --sqlite DB, one that makes each PUT durable in its
 * own SQLite transaction (WAL, synchronous=FULL): the one-commit-per-request
 * ceiling group commit is measured against.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>
#include <sqlite3.h>

static sqlite3 *db;
static sqlite3_stmt *put;

struct ctx {
    char body[64];
    size_t len;
};

static enum MHD_Result handler(void *cls,
                               struct MHD_Connection *conn,
                               const char *url,
                               const char *method,
                               const char *version,
                               const char *data,
                               size_t *size,
                               void **req_cls)
{
    struct ctx *c = *req_cls;
    struct MHD_Response *resp;
    enum MHD_Result r;
    static const char ok[] = "42\n";

    (void)cls;
    (void)url;
    (void)version;
    if (!c) {
        *req_cls = calloc(1, sizeof(struct ctx));
        return *req_cls ? MHD_YES : MHD_NO;
    }
    if (*size) {
        size_t n = *size < sizeof(c->body) - 1 - c->len
                       ? *size
                       : sizeof(c->body) - 1 - c->len;

        memcpy(c->body + c->len, data, n);
        c->len += n;
        *size = 0;
        return MHD_YES;
    }
    if (db && strcmp(method, "PUT") == 0) {
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

        pthread_mutex_lock(&lock); /* one connection, one transaction each */
        sqlite3_bind_text(put, 1, c->body, (int)c->len, SQLITE_TRANSIENT);
        if (sqlite3_step(put) != SQLITE_DONE) {
            pthread_mutex_unlock(&lock);
            return MHD_NO;
        }
        sqlite3_reset(put);
        pthread_mutex_unlock(&lock);
    }
    resp = MHD_create_response_from_buffer(
        sizeof(ok) - 1, (void *)ok, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "text/plain");
    r = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return r;
}

static void done(void *cls,
                 struct MHD_Connection *conn,
                 void **req_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    free(*req_cls);
    *req_cls = NULL;
}

int main(int argc, char **argv)
{
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    struct MHD_Daemon *d;
    sigset_t set;
    int sig;

    if (argc < 2) {
        fprintf(stderr, "usage: bare-server PORT [THREADS] [--sqlite DB]\n");
        return 2;
    }
    if (argc > 4 && strcmp(argv[3], "--sqlite") == 0) {
        if (sqlite3_open(argv[4], &db) != SQLITE_OK ||
            sqlite3_exec(db,
                         "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                         "CREATE TABLE IF NOT EXISTS v(id INTEGER PRIMARY KEY,"
                         " value TEXT);"
                         "INSERT OR IGNORE INTO v VALUES (1, '');",
                         NULL,
                         NULL,
                         NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(
                db, "UPDATE v SET value = ?1 WHERE id = 1", -1, &put, NULL) !=
                SQLITE_OK) {
            fprintf(stderr, "bare-server: %s\n", sqlite3_errmsg(db));
            return 1;
        }
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD,
                         (uint16_t)atoi(argv[1]),
                         NULL,
                         NULL,
                         handler,
                         NULL,
                         MHD_OPTION_THREAD_POOL_SIZE,
                         threads,
                         MHD_OPTION_NOTIFY_COMPLETED,
                         done,
                         NULL,
                         MHD_OPTION_END);
    if (!d) {
        return 1;
    }
    fprintf(stderr, "bare-server: listening\n");
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    sqlite3_finalize(put);
    sqlite3_close(db);
    return 0;
}
