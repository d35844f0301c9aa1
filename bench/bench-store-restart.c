// SPDX-License-Identifier: MIT
/*
 * bench-store-restart.c - how long a restart takes against how long it
 * takes just to read the same rows.
 *
 * Builds (once, kept next to the build) a database of N items with three
 * written attributes each, then alternates, three times: a bare SELECT scan
 * of every node and attribute row on a plain SQLite connection, and a
 * restart (cfs_store_open() with the subsystem registered, which replays
 * every mkdir and store through core and the subsystem's callbacks).
 * Reports the medians and their ratio; with --check, fails if the restart
 * takes more than twice the scan.
 *
 *   bench-store-restart [--items N] [--db PATH] [--check] [--rounds R]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include <configfs/store.h>

#include "store-testsys.h"

#define BATCH 20000 /* records per cfs_store_apply() while building */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long stored_items(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long n = -1;

    if (access(path, F_OK) != 0) {
        return -1;
    }
    /* A file of another schema counts as empty: it is built again. */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM node WHERE created = 1 AND"
                           " (SELECT count(*) FROM pragma_table_info('journal')"
                           "  WHERE name = 'idx') = 1",
                           -1,
                           &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* Fill the database through the store's own write path, in big batches. */
static int build(const char *path, long items)
{
    struct cfs_store_options o = {
        .path = path,
        .sync = CFS_STORE_SYNC_NORMAL,
        .no_replay = true,
    };
    struct cfs_store *s = NULL;
    struct cfs_change *c = calloc(BATCH, sizeof(*c));
    char(*paths)[48] = calloc(BATCH, sizeof(*paths));
    char(*vals)[24] = calloc(BATCH, sizeof(*vals));
    uint64_t rev = 0;
    double t0 = now();
    int r;

    unlink(path);
    r = cfs_store_open(&o, &s);
    if (r < 0 || !c || !paths || !vals) {
        fprintf(stderr, "build: %s\n", strerror(-r));
        return 1;
    }
    for (long i = 0; i < items;) {
        size_t n = 0;
        struct cfs_store_changeset set = {.principal = "bench"};

        rev++;
        for (; i < items && n + 4 <= BATCH; i++) {
            snprintf(paths[n], sizeof(paths[n]), "/bench/items/i%07ld", i);
            c[n] = (struct cfs_change){
                .op = CFS_OP_MKDIR, .revision = rev, .path = paths[n]};
            n++;
            for (int a = 0; a < 3; a++) {
                snprintf(paths[n],
                         sizeof(paths[n]),
                         "/bench/items/i%07ld/%c",
                         i,
                         "abc"[a]);
                snprintf(vals[n], sizeof(vals[n]), "%ld%c", i, "xyz"[a]);
                c[n] = (struct cfs_change){
                    .op = CFS_OP_STORE,
                    .revision = rev,
                    .path = paths[n],
                    .arg = vals[n],
                    .arg_len = strlen(vals[n]),
                };
                n++;
            }
        }
        set.changes = c;
        set.n = n;
        r = cfs_store_apply(s, &set, 1);
        if (r < 0) {
            fprintf(stderr, "build: apply: %s\n", strerror(-r));
            return 1;
        }
    }
    cfs_store_close(s);
    free(c);
    free(paths);
    free(vals);
    printf("built %ld items x 3 attributes in %.1f s\n", items, now() - t0);
    return 0;
}

/* The floor: every row replay reads, read and nothing else done, on a
 * connection set up as the store's (no per-call mutex). */
static double scan(const char *path, long *ret_rows)
{
    static const char *const sql[] = {
        "SELECT id, parent, name, path, created, committed, revision FROM node",
        "SELECT node, name, seq, revision, binary, value FROM attr",
    };
    /* which columns are text or blobs; the others are integers */
    static const char *const textual[] = {"0011000", "010001"};
    sqlite3 *db = NULL;
    double t0 = now();
    long rows = 0;
    size_t sum = 0;

    sqlite3_open_v2(
        path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
    for (size_t q = 0; q < 2; q++) {
        sqlite3_stmt *st = NULL;
        int ncol = (int)strlen(textual[q]);

        sqlite3_prepare_v2(db, sql[q], -1, &st, NULL);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int i = 0; i < ncol; i++) {
                if (textual[q][i] == '1') {
                    const unsigned char *p = sqlite3_column_blob(st, i);

                    sum += (size_t)sqlite3_column_bytes(st, i) + (p ? *p : 0);
                } else {
                    sum += (size_t)sqlite3_column_int64(st, i);
                }
            }
            rows++;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    *ret_rows = rows + (long)(sum & 0); /* the reads are used */
    return now() - t0;
}

static int count_step(void *data, const struct cfs_store_step *step)
{
    (*(long *)data) += (long)step->arg_len + 1;
    return 0;
}

/* The store's read side alone: every replay step made, none run. */
static double load_only(const char *path)
{
    struct cfs_store_options o = {.path = path, .no_replay = true};
    struct cfs_store *s = NULL;
    long n = 0;
    double t0 = now();

    if (cfs_store_open(&o, &s) < 0 ||
        cfs_store_load(s, NULL, 0, count_step, &n) < 0) {
        fprintf(stderr, "load failed\n");
        exit(1);
    }
    cfs_store_close(s);
    return now() - t0;
}

static double restart(const char *path, long items)
{
    struct cfs_store_options o = {.path = path};
    struct cfs_store *s = NULL;
    struct cfs_store_problem *p = NULL;
    struct tsys *sys = NULL;
    size_t np = 0;
    double t0, t;
    int r;

    r = tsys_register("bench", &sys);
    if (r < 0) {
        fprintf(stderr, "register: %s\n", strerror(-r));
        exit(1);
    }
    t0 = now();
    r = cfs_store_open(&o, &s);
    t = now() - t0;
    if (r < 0) {
        fprintf(stderr, "open: %s\n", strerror(-r));
        exit(1);
    }
    cfs_store_problems(s, &p, &np);
    if (np > 0 || tsys_items_alive() != items) {
        fprintf(stderr,
                "replay: %zu problems, %ld items\n",
                np,
                tsys_items_alive());
        exit(1);
    }
    cfs_store_problems_free(p, np);
    cfs_store_close(s);
    tsys_unregister(sys);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long items = 1000000;
    const char *db = "bench-restart.db";
    bool check = false;
    int rounds = 3;
    double ts[16], tl[16], tr[16], ms, ml, mr;
    long rows = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--items") == 0 && i + 1 < argc) {
            items = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            fprintf(stderr,
                    "usage: %s [--items N] [--db PATH] [--rounds R]"
                    " [--check]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > 16) {
        rounds = 3;
    }
    if (stored_items(db) != items && build(db, items) != 0) {
        return 1;
    }
    scan(db, &rows); /* warm the page cache */
    for (int i = 0; i < rounds; i++) {
        ts[i] = scan(db, &rows);
        tl[i] = load_only(db);
        tr[i] = restart(db, items);
        printf("round %d: scan %.3f s, load %.3f s, restart %.3f s\n",
               i + 1,
               ts[i],
               tl[i],
               tr[i]);
    }
    qsort(ts, (size_t)rounds, sizeof(double), cmp_double);
    qsort(tr, (size_t)rounds, sizeof(double), cmp_double);
    qsort(tl, (size_t)rounds, sizeof(double), cmp_double);
    ms = ts[rounds / 2];
    ml = tl[rounds / 2];
    mr = tr[rounds / 2];
    printf("restart of %ld items x 3 attributes (%ld rows): scan %.3f s,"
           " load without replay %.3f s, restart %.3f s, ratio %.2f"
           " (limit 2.00)\n",
           items,
           rows,
           ms,
           ml,
           mr,
           mr / ms);
    if (check && mr > 2 * ms) {
        printf("FAIL: restart takes more than twice the scan\n");
        return 1;
    }
    return 0;
}
