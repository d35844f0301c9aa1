// SPDX-License-Identifier: MIT
/*
 * bare-server.c - the baselines of bench/http/run.sh, measured in the same
 * run as configfsd: a libmicrohttpd server (thread pool, response queued
 * on the second call; epoll, where configfsd now polls: server/daemon.c)
 * that answers a fixed tiny body, and, with --sqlite DB, one that makes
 * each PUT durable in its own SQLite transaction (WAL, synchronous=FULL):
 * the one-commit-per-request ceiling group commit is measured against.
 * With --sqlite DB --group, PUTs are made durable by group commit, as
 * configfsd does: the request's connection is suspended (no worker waits),
 * one thread commits every PUT queued meanwhile in one transaction and
 * resumes their connections, which then answer. That is the bare cost of
 * a durable PUT that configfsd's durable PUT is compared with.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
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
    struct MHD_Connection *conn;
    struct ctx *next; /* in the commit queue */
    int state;        /* 0 new, 1 queued, 2 committed, -1 failed */
};

/* The group commit of --group: PUTs waiting for the next transaction. */
static bool group;
static bool stopping;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct ctx *q_head;
static struct ctx **q_tail = &q_head;

static bool exec_ok(const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* Commit everything queued in one transaction, then resume the waiting
 * connections (their handler answers on the next call). */
static void *committer(void *arg)
{
    (void)arg;
    for (;;) {
        struct ctx *batch;
        bool ok;

        pthread_mutex_lock(&q_lock);
        while (!q_head && !stopping) {
            pthread_cond_wait(&q_cond, &q_lock);
        }
        if (!q_head) {
            pthread_mutex_unlock(&q_lock);
            return NULL;
        }
        batch = q_head;
        q_head = NULL;
        q_tail = &q_head;
        pthread_mutex_unlock(&q_lock);

        ok = exec_ok("BEGIN");
        for (struct ctx *c = batch; ok && c; c = c->next) {
            sqlite3_bind_text(put, 1, c->body, (int)c->len, SQLITE_TRANSIENT);
            ok = sqlite3_step(put) == SQLITE_DONE;
            sqlite3_reset(put);
        }
        ok = ok && exec_ok("COMMIT");
        if (!ok) {
            exec_ok("ROLLBACK");
        }
        pthread_mutex_lock(&q_lock);
        for (struct ctx *c = batch; c; c = c->next) {
            c->state = ok ? 2 : -1;
        }
        pthread_mutex_unlock(&q_lock);
        while (batch) {
            struct ctx *next =
                batch->next; /* batch may be freed once resumed */

            MHD_resume_connection(batch->conn);
            batch = next;
        }
    }
}

/* --group: MHD_YES with the connection suspended until its PUT is
 * committed; then (state 2) false, and the caller answers. */
static bool group_wait(struct ctx *c, struct MHD_Connection *conn, int *failed)
{
    int state;

    pthread_mutex_lock(&q_lock);
    state = c->state;
    if (state == 0) {
        c->state = 1;
        c->conn = conn;
        *q_tail = c;
        q_tail = &c->next;
        MHD_suspend_connection(conn);
        pthread_cond_signal(&q_cond);
    }
    pthread_mutex_unlock(&q_lock);
    *failed = state < 0;
    return state == 0;
}

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
    if (db && group && strcmp(method, "PUT") == 0) {
        int failed;

        if (group_wait(c, conn, &failed)) {
            return MHD_YES; /* suspended until committed */
        }
        if (failed) {
            return MHD_NO;
        }
    } else if (db && strcmp(method, "PUT") == 0) {
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
    pthread_t ct;
    sigset_t set;
    int sig;

    if (argc < 2) {
        fprintf(stderr,
                "usage: bare-server PORT [THREADS] [--sqlite DB [--group]]\n");
        return 2;
    }
    group = argc > 5 && strcmp(argv[5], "--group") == 0;
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
    if (group && pthread_create(&ct, NULL, committer, NULL) != 0) {
        return 1;
    }
    d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD |
                             (group ? MHD_ALLOW_SUSPEND_RESUME : 0),
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
    if (group) { /* the queue is drained and every connection resumed */
        pthread_mutex_lock(&q_lock);
        stopping = true;
        pthread_cond_signal(&q_cond);
        pthread_mutex_unlock(&q_lock);
        pthread_join(ct, NULL);
    }
    MHD_stop_daemon(d);
    sqlite3_finalize(put);
    sqlite3_close(db);
    return 0;
}
