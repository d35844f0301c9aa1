// SPDX-License-Identifier: MIT
/*
 * test-store-crash.c - kill the writer, check what survived.
 *
 * The test runs itself as a child process (--child) that replays the
 * database, checks that replay reported no problem and that tree and
 * database agree, then writes from four threads: each transaction makes,
 * rewrites or removes one item with its three attributes set to one value.
 * Before each commit the child announces its intent on a pipe, after it the
 * acknowledgement. The parent SIGKILLs the child at a random moment and
 * then checks the database: PRAGMA integrity_check is ok; every item is
 * whole (a, b and c equal: no half transaction); every item is in its last
 * acknowledged state or in the state of its one unacknowledged intent.
 * Then the next child replays it. Bounded by CFS_CRASH_KILLS (50) and
 * CFS_CRASH_SECONDS (30).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include <configfs/store.h>

#include "store-test-util.h"
#include "store-testsys.h"

#define ITEMS   32
#define THREADS 4
#define VALLEN  40

/* ---- the child --------------------------------------------------------- */

struct child {
    struct cfs_store *store;
    int fd;
    unsigned run;
};

struct cthread {
    struct child *c;
    int tid;
    unsigned rnd;
};

__attribute__((format(printf, 2, 3))) static void
say(int fd, const char *fmt, ...)
{
    char line[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* below PIPE_BUF: one write is whole or absent when the child dies */
    if (write(fd, line, (size_t)n) != n) {
        _exit(5);
    }
}

static bool exists(const char *path)
{
    struct cfs_entry e;

    if (cfs_stat(path, &e) < 0) {
        return false;
    }
    cfs_entry_done(&e);
    return true;
}

static void *child_writer(void *arg)
{
    struct cthread *t = arg;
    unsigned seq = 0;

    for (;;) {
        int k = (int)(rand_r(&t->rnd) % (ITEMS / THREADS)) * THREADS + t->tid;
        char dir[64], path[80], value[VALLEN];
        struct cfs_txn *txn = NULL;
        bool remove;
        int r;

        snprintf(dir, sizeof(dir), "/c/items/i%d", k);
        snprintf(value, sizeof(value), "r%ut%dn%u", t->c->run, t->tid, ++seq);
        r = cfs_txn_begin(&txn);
        remove = exists(dir) && rand_r(&t->rnd) % 5 == 0;
        say(t->c->fd, "I %d %s\n", k, remove ? "-" : value);
        if (r == 0 && remove) {
            r = cfs_rmdir(txn, dir);
        } else if (r == 0) {
            if (!exists(dir)) {
                r = cfs_mkdir(txn, dir);
            }
            for (const char *a = "abc"; r == 0 && *a; a++) {
                snprintf(path, sizeof(path), "%s/%c", dir, *a);
                r = cfs_write(txn, path, value, strlen(value));
            }
        }
        if (r == 0) {
            r = cfs_store_commit_txn(t->c->store, txn, "crash", NULL);
        } else {
            cfs_txn_abort(txn);
        }
        if (r < 0) {
            say(t->c->fd, "F %d %d\n", k, r);
            _exit(4);
        }
        say(t->c->fd, "A %d %s\n", k, remove ? "-" : value);
    }
    return NULL;
}

static bool same_state(const struct cfs_store_node *a,
                       const struct cfs_store_node *b)
{
    if (strcmp(a->path, b->path) || a->n_values != b->n_values ||
        a->n_children != b->n_children || a->created != b->created) {
        return false;
    }
    for (size_t i = 0; i < a->n_values; i++) {
        if (strcmp(a->values[i].name, b->values[i].name) ||
            strcmp(a->values[i].data, b->values[i].data)) {
            return false;
        }
    }
    for (size_t i = 0; i < a->n_children; i++) {
        size_t k = 0;

        while (k < b->n_children &&
               strcmp(a->children[i].name, b->children[k].name)) {
            k++;
        }
        if (k == b->n_children ||
            !same_state(&a->children[i], &b->children[k])) {
            return false;
        }
    }
    return true;
}

static int child_main(const char *db, int fd, unsigned run)
{
    struct cfs_store_options o = {.path = db};
    struct child c = {.fd = fd, .run = run};
    struct cthread t[THREADS];
    pthread_t th[THREADS];
    struct cfs_store_problem *p = NULL;
    struct cfs_store_export *edb = NULL, *etree = NULL;
    struct tsys *sys = NULL;
    size_t np = 0;

    if (tsys_register("c", &sys) < 0 || cfs_store_open(&o, &c.store) < 0) {
        say(fd, "X open\n");
        return 2;
    }
    if (cfs_store_problems(c.store, &p, &np) < 0 || np > 0) {
        say(fd,
            "X %zu problems, first %s %d\n",
            np,
            np ? p[0].path : "",
            np ? p[0].error : 0);
        return 2;
    }
    if (cfs_store_export_tree("/c", &etree) < 0) {
        say(fd, "X export tree\n");
        return 2;
    }
    if (cfs_store_export(c.store, "/c", &edb) == 0 &&
        !same_state(&edb->root, &etree->root)) {
        say(fd, "X tree and database differ\n");
        return 2;
    }
    cfs_store_export_free(edb);
    cfs_store_export_free(etree);
    say(fd, "R\n");
    for (int i = 0; i < THREADS; i++) {
        t[i] = (struct cthread){.c = &c, .tid = i, .rnd = run * 131 + i};
        pthread_create(&th[i], NULL, child_writer, &t[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    return 0;
}

/* ---- the parent -------------------------------------------------------- */

struct istate {
    char acked[VALLEN];  /* "" absent */
    char intent[VALLEN]; /* "" none, "-" remove, else a value */
};

struct reader {
    int fd;
    char buf[8192];
    size_t len;
};

/* Apply the complete lines read so far. @return 'R' when the child said
 * ready, 'X' on a child error (message in @err), 0 otherwise. */
static int
consume(struct reader *rd, struct istate *items, char *err, size_t errlen)
{
    int said = 0;
    char *nl;

    while ((nl = memchr(rd->buf, '\n', rd->len)) != NULL) {
        char kind = 0, val[VALLEN] = "";
        int k = -1;

        *nl = '\0';
        if (rd->buf[0] == 'R') {
            said = 'R';
        } else if (rd->buf[0] == 'X' || rd->buf[0] == 'F') {
            snprintf(err, errlen, "%.100s", rd->buf);
            said = 'X';
        } else if (sscanf(rd->buf, "%c %d %39s", &kind, &k, val) == 3 &&
                   k >= 0 && k < ITEMS) {
            if (kind == 'I') {
                snprintf(items[k].intent, VALLEN, "%s", val);
            } else if (kind == 'A') {
                snprintf(
                    items[k].acked, VALLEN, "%s", strcmp(val, "-") ? val : "");
                items[k].intent[0] = '\0';
            }
        }
        rd->len -= (size_t)(nl + 1 - rd->buf);
        memmove(rd->buf, nl + 1, rd->len);
    }
    return said;
}

/* Read for at most @ms; @return as consume(), or 'E' at end of file. */
static int
pump(struct reader *rd, struct istate *items, int ms, char *err, size_t errlen)
{
    struct pollfd pfd = {.fd = rd->fd, .events = POLLIN};
    struct timespec start, now;
    int said = 0;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        long spent;
        ssize_t n;

        clock_gettime(CLOCK_MONOTONIC, &now);
        spent = (now.tv_sec - start.tv_sec) * 1000 +
                (now.tv_nsec - start.tv_nsec) / 1000000;
        if (spent >= ms || said) {
            return said;
        }
        if (poll(&pfd, 1, (int)(ms - spent)) <= 0) {
            continue;
        }
        n = read(rd->fd, rd->buf + rd->len, sizeof(rd->buf) - rd->len);
        if (n <= 0) {
            return 'E';
        }
        rd->len += (size_t)n;
        said = consume(rd, items, err, errlen);
    }
}

/* What the database holds for each item ("" absent; "?" torn). */
static void read_db(const char *path, char state[ITEMS][VALLEN])
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char abc[ITEMS][3][VALLEN];

    memset(abc, 0, sizeof(abc));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);

    for (int k = 0; k < ITEMS; k++) {
        state[k][0] = '\0';
    }
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT name FROM node WHERE created"
                                        " = 1 AND parent = (SELECT id FROM"
                                        " node WHERE path = '/c/items')",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int k = atoi((const char *)sqlite3_column_text(st, 0) + 1);

        assert_true(k >= 0 && k < ITEMS);
        snprintf(state[k], VALLEN, "?");
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT n.name, a.name, a.value FROM"
                                        " attr a JOIN node n ON n.id = a.node"
                                        " WHERE n.path > '/c/items/' AND"
                                        " n.path < '/c/items0'",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int k = atoi((const char *)sqlite3_column_text(st, 0) + 1);
        int a = sqlite3_column_text(st, 1)[0] - 'a';

        assert_true(k >= 0 && k < ITEMS && a >= 0 && a < 3);
        snprintf(abc[k][a],
                 VALLEN,
                 "%.39s",
                 (const char *)sqlite3_column_text(st, 2));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);

    for (int k = 0; k < ITEMS; k++) {
        if (state[k][0] == '?' && strcmp(abc[k][0], abc[k][1]) == 0 &&
            strcmp(abc[k][1], abc[k][2]) == 0 && abc[k][0][0]) {
            memcpy(state[k], abc[k][0], VALLEN);
        }
    }
}

/* This program, to run again as the child (not /proc/self/exe: under
 * valgrind that is valgrind). */
static char self[PATH_MAX];

static pid_t spawn(const char *db, int *ret_fd, unsigned run)
{
    int p[2];
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char fd[16], runs[16];

        close(p[0]);
        snprintf(fd, sizeof(fd), "%d", p[1]);
        snprintf(runs, sizeof(runs), "%u", run);
        execl(self, "test-store-crash", "--child", db, fd, runs, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    *ret_fd = p[0];
    return pid;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);

    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void test_crash_kill_loop(void **state)
{
    struct tmpdb *t = *state;
    struct istate items[ITEMS];
    long kills = env_long("CFS_CRASH_KILLS", 50);
    long seconds = env_long("CFS_CRASH_SECONDS", 30);
    unsigned seed = (unsigned)env_long("CFS_CRASH_SEED", (long)time(NULL));
    struct timespec start, now;
    long done = 0, acks = 0;

    memset(items, 0, sizeof(items));
    srand(seed);
    print_message("# seed %u\n", seed);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct reader rd = {0};
        char err[128] = "", db[ITEMS][VALLEN];
        int status = 0, said;
        pid_t pid;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (done >= kills || now.tv_sec - start.tv_sec >= seconds) {
            break;
        }
        pid = spawn(t->path, &rd.fd, (unsigned)done + 1);
        said = pump(&rd, items, 20000, err, sizeof(err));
        if (said != 'R') {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("run %ld: child did not start: %s", done + 1, err);
        }
        /* Let it write for 5..150 ms, then kill it mid-flight. */
        said = pump(&rd, items, 5 + rand() % 146, err, sizeof(err));
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        while (said != 'E' && said != 'X') {
            said = pump(&rd, items, 1000, err, sizeof(err));
        }
        close(rd.fd);
        if (err[0]) {
            fail_msg("run %ld: %s", done + 1, err);
        }
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        read_db(t->path, db);
        for (int k = 0; k < ITEMS; k++) {
            const char *want = items[k].acked;
            const char *maybe =
                strcmp(items[k].intent, "-") == 0 ? "" : items[k].intent;

            if (strcmp(db[k], "?") == 0) {
                fail_msg("run %ld: item i%d is torn", done + 1, k);
            }
            if (strcmp(db[k], want) != 0 &&
                !(items[k].intent[0] && strcmp(db[k], maybe) == 0)) {
                fail_msg("run %ld: item i%d is '%s', acked '%s', intent '%s'",
                         done + 1,
                         k,
                         db[k],
                         want,
                         items[k].intent);
            }
            if (strcmp(db[k], want) != 0) {
                acks++; /* durable, the ack lost with the child */
            }
            memcpy(items[k].acked, db[k], VALLEN);
            items[k].intent[0] = '\0';
        }
        done++;
    }
    print_message(
        "# %ld kills, %ld commits durable but unacknowledged\n", done, acks);
    assert_true(done >= 5);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_crash_kill_loop, tmpdb_setup, tmpdb_teardown),
    };

    if (!realpath(argv[0], self)) {
        snprintf(self, sizeof(self), "/proc/self/exe");
    }
    if (argc == 5 && strcmp(argv[1], "--child") == 0) {
        return child_main(
            argv[2], atoi(argv[3]), (unsigned)strtoul(argv[4], NULL, 10));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
