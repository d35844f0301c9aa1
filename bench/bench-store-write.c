// SPDX-License-Identifier: MIT
/*
 * bench-store-write.c - durable single-attribute writes from many threads:
 * group commit against one SQLite transaction per write, both with
 * synchronous=FULL, side by side in one run.
 *
 * Each of T threads owns one item and stores a new value (never the same
 * bytes twice: SQLite skips writing identical pages) into its attribute
 * through cfs_store_commit_txn() for S seconds. The baseline opens the
 * store with max_batch = 1, so every write is its own SQLite transaction
 * and fsync; the measured run uses the default group commit. A third run
 * has one writer committing inline, one transaction per write, which is
 * the better baseline where waking a sleeping thread is slow (the 64-thread
 * baseline then hands every commit to a sleeping thread): the ratio is
 * taken against the better of the two. The runs alternate for R rounds (so
 * a busy neighbour slows them alike) and medians are compared. With
 * --check, fails if group commit is not at least 8 times the baseline.
 *
 *   bench-store-write [--threads T] [--seconds S] [--rounds R] [--db PATH]
 *                     [--check]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <configfs/store.h>

#include "store-testsys.h"

static atomic_bool go, stop;
static atomic_long failures;

struct writer {
    struct cfs_store *store;
    int id;
    long writes;
};

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    char path[64], value[32];

    snprintf(path, sizeof(path), "/bench/items/w%d/a", w->id);
    while (!atomic_load(&go)) {
        sched_yield();
    }
    while (!atomic_load(&stop)) {
        struct cfs_txn *txn = NULL;
        int r = cfs_txn_begin(&txn);

        snprintf(value, sizeof(value), "%d-%ld", w->id, w->writes);
        if (r == 0) {
            r = cfs_write(txn, path, value, strlen(value));
            if (r == 0) {
                r = cfs_store_commit_txn(w->store, txn, "bench", NULL);
            } else {
                cfs_txn_abort(txn);
            }
        }
        if (r < 0) {
            atomic_fetch_add(&failures, 1);
            break;
        }
        w->writes++;
    }
    return NULL;
}

/* Writes per second with @threads writers on a fresh database. */
static double run(const char *db,
                  int threads,
                  double seconds,
                  unsigned max_batch,
                  double *ret_per_commit)
{
    struct cfs_store_options o = {.path = db, .max_batch = max_batch};
    struct cfs_store *s = NULL;
    struct tsys *sys = NULL;
    struct writer *w = calloc((size_t)threads, sizeof(*w));
    pthread_t *th = calloc((size_t)threads, sizeof(*th));
    struct cfs_store_info info0, info1;
    struct cfs_txn *txn = NULL;
    long total = 0;
    double t0, t;

    unlink(db);
    if (!w || !th || tsys_register("bench", &sys) < 0 ||
        cfs_store_open(&o, &s) < 0 || cfs_txn_begin(&txn) < 0) {
        fprintf(stderr, "setup failed\n");
        exit(1);
    }
    for (int i = 0; i < threads; i++) {
        char path[64];

        snprintf(path, sizeof(path), "/bench/items/w%d", i);
        if (cfs_mkdir(txn, path) < 0) {
            fprintf(stderr, "mkdir failed\n");
            exit(1);
        }
    }
    if (cfs_store_commit_txn(s, txn, "bench", NULL) < 0) {
        fprintf(stderr, "commit failed\n");
        exit(1);
    }
    cfs_store_info(s, &info0);
    atomic_store(&go, false);
    atomic_store(&stop, false);
    for (int i = 0; i < threads; i++) {
        w[i] = (struct writer){.store = s, .id = i};
        pthread_create(&th[i], NULL, writer_main, &w[i]);
    }
    t0 = now();
    atomic_store(&go, true);
    usleep((useconds_t)(seconds * 1e6));
    atomic_store(&stop, true);
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += w[i].writes;
    }
    t = now() - t0;
    cfs_store_info(s, &info1);
    *ret_per_commit = (double)(info1.txns - info0.txns) /
                      (double)(info1.commits - info0.commits);
    cfs_store_close(s);
    tsys_unregister(sys);
    unlink(db);
    free(w);
    free(th);
    if (atomic_load(&failures) > 0) {
        fprintf(stderr, "%ld writes failed\n", atomic_load(&failures));
        exit(1);
    }
    return (double)total / t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int threads = 64, rounds = 3;
    double seconds = 3;
    double bases[16], groups[16], singles[16];
    const char *db = "bench-write.db";
    bool check = false;
    double base, group, single, pc_base, pc_group, pc_single;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            fprintf(stderr,
                    "usage: %s [--threads T] [--seconds S] [--rounds R]"
                    " [--db PATH] [--check]\n",
                    argv[0]);
            return 2;
        }
    }
    if (threads < 1 || threads > 1024 || seconds <= 0 || rounds < 1 ||
        rounds > 16) {
        return 2;
    }
    for (int i = 0; i < rounds; i++) {
        bases[i] = run(db, threads, seconds, 1, &pc_base);
        groups[i] = run(db, threads, seconds, 0, &pc_group);
        singles[i] = run(db, 1, seconds, 0, &pc_single);
        printf("round %d: one transaction per write %.0f/s, group commit"
               " %.0f/s (%.1f per commit), one writer %.0f/s\n",
               i + 1,
               bases[i],
               groups[i],
               pc_group,
               singles[i]);
    }
    qsort(bases, (size_t)rounds, sizeof(double), cmp_double);
    qsort(groups, (size_t)rounds, sizeof(double), cmp_double);
    qsort(singles, (size_t)rounds, sizeof(double), cmp_double);
    base = bases[rounds / 2];
    group = groups[rounds / 2];
    single = singles[rounds / 2];
    printf("durable writes, synchronous=FULL, %d threads, medians of %d"
           " rounds of %.1f s:\n",
           threads,
           rounds,
           seconds);
    printf("  one transaction per write, %d threads: %9.0f writes/s\n",
           threads,
           base);
    printf("  one transaction per write, 1 thread:  %9.0f writes/s\n", single);
    printf("  group commit, %d threads:             %9.0f writes/s\n",
           threads,
           group);
    if (single > base) {
        base = single;
    }
    printf("group commit / best one transaction per write: %.1fx (limit"
           " 8.0x)\n",
           group / base);
    if (check && group < 8 * base) {
        printf("FAIL: group commit is less than 8 times the baseline\n");
        return 1;
    }
    (void)pc_base;
    (void)pc_single;
    return 0;
}
