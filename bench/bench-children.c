/* SPDX-License-Identifier: MIT */
/*
 * bench-children.c - one group with many children: mkdir, lookup, readdir,
 * rmdir.
 *
 * The kernel finds a child by walking its parent's list, so a lookup costs
 * O(children). This measures, in one run, the cost of a cfs_stat() of each
 * child of a group of --children N (default 1,000,000) against the same
 * lookups in a group of --baseline M (default 1,000) children, and prints
 * the ratio: near 1 means lookup does not grow with the group. It also
 * reports the time of each phase and the peak RSS per child. The lookups
 * are timed over several passes (--passes, default 3) and the fastest pass
 * counts, with the median beside it: on a shared machine the slow passes
 * measure the neighbours. With small counts it is the unit suite's smoke
 * test: every operation must succeed, nothing is asserted about time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

/* ---- a subsystem whose group makes plain items ------------------------- */

struct bitem {
    struct config_item item;
};

static long live_items;

static void bitem_release(struct config_item *item)
{
    cfs_free(container_of(item, struct bitem, item));
    live_items--;
}

static const struct configfs_item_operations bitem_ops = {
    .release = bitem_release,
};

static const struct config_item_type bitem_type = {
    .ct_item_ops = &bitem_ops,
    .ct_name = "bench-item",
};

static struct config_item *bench_make_item(struct config_group *group,
                                           const char *name)
{
    struct bitem *b = cfs_zalloc(sizeof(*b));

    (void)group;
    if (!b) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(&b->item, name, &bitem_type);
    live_items++;
    return &b->item;
}

static const struct configfs_group_operations bench_group_ops = {
    .make_item = bench_make_item,
};

static const struct config_item_type bench_type = {
    .ct_group_ops = &bench_group_ops,
    .ct_name = "bench",
};

/* ---- measuring --------------------------------------------------------- */

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Peak resident set size so far, in KiB (Linux reports ru_maxrss in KiB). */
static long peak_rss_kib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int failures;

static void check(int rc, const char *op, const char *path)
{
    if (rc != 0) {
        if (failures++ < 10) {
            (void)fprintf(
                stderr, "bench: %s %s: %s\n", op, path, strerror(-rc));
        }
    }
}

static void child_path(char *out, size_t size, const char *sys, long i)
{
    (void)snprintf(out, size, "/%s/c%07ld", sys, i);
}

struct result {
    long children;
    double mkdir_s;
    double stat_s;        /* fastest pass */
    double stat_median_s; /* median pass */
    long stat_ops;        /* lookups per pass */
    double readdir_s;
    double rmdir_s;
    long rss_before_kib;
    long rss_after_kib;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/* One lookup pass: cfs_stat() every child @rounds times. */
static void lookup_pass(const char *name, long n, long rounds)
{
    char path[64];
    long i;
    long k;
    int rc;

    for (k = 0; k < rounds; k++) {
        for (i = 0; i < n; i++) {
            struct cfs_entry e;

            child_path(path, sizeof(path), name, i);
            rc = cfs_stat(path, &e);
            check(rc, "stat", path);
            if (rc == 0) {
                if (e.kind != CFS_KIND_ITEM) {
                    check(-EINVAL, "stat kind", path);
                }
                cfs_entry_done(&e);
            }
        }
    }
}

#define MAX_PASSES 15

/*
 * Register a subsystem named @name, mkdir @n children in it, make @passes
 * lookup passes of @rounds cfs_stat() of every child, list the group once,
 * rmdir every child, and unregister.
 */
static void
run(const char *name, long n, long rounds, long passes, struct result *r)
{
    double pass_s[MAX_PASSES];
    struct configfs_subsystem sys;
    struct cfs_entry *ents = NULL;
    size_t n_ents = 0;
    char path[64];
    double t0;
    long i;
    long k;
    int rc;

    memset(&sys, 0, sizeof(sys));
    memset(r, 0, sizeof(*r));
    r->children = n;
    config_group_init_type_name(&sys.su_group, name, &bench_type);
    rc = configfs_register_subsystem(&sys);
    check(rc, "register", name);
    if (rc != 0) {
        return;
    }

    r->rss_before_kib = peak_rss_kib();
    t0 = now();
    for (i = 0; i < n; i++) {
        child_path(path, sizeof(path), name, i);
        check(cfs_mkdir(NULL, path), "mkdir", path);
    }
    r->mkdir_s = now() - t0;
    r->rss_after_kib = peak_rss_kib();

    for (k = 0; k < passes; k++) {
        t0 = now();
        lookup_pass(name, n, rounds);
        pass_s[k] = now() - t0;
    }
    qsort(pass_s, (size_t)passes, sizeof(pass_s[0]), cmp_double);
    r->stat_s = pass_s[0];
    r->stat_median_s = pass_s[passes / 2];
    r->stat_ops = n * rounds;

    (void)snprintf(path, sizeof(path), "/%s", name);
    t0 = now();
    rc = cfs_readdir(path, &ents, &n_ents);
    r->readdir_s = now() - t0;
    check(rc, "readdir", path);
    if (rc == 0) {
        if ((long)n_ents != n) {
            (void)fprintf(stderr,
                          "bench: readdir %s: %zu entries, expected %ld\n",
                          path,
                          n_ents,
                          n);
            failures++;
        }
        cfs_entries_free(ents, n_ents);
    }

    t0 = now();
    for (i = 0; i < n; i++) {
        child_path(path, sizeof(path), name, i);
        check(cfs_rmdir(NULL, path), "rmdir", path);
    }
    r->rmdir_s = now() - t0;

    configfs_unregister_subsystem(&sys);
    config_item_put(&sys.su_group.cg_item);
    if (live_items != 0) {
        (void)fprintf(stderr, "bench: %ld items never released\n", live_items);
        failures++;
    }
}

static double ns_per(double seconds, long ops)
{
    return ops > 0 ? seconds * 1e9 / (double)ops : 0.0;
}

static void report(const char *label, const struct result *r)
{
    printf("%s: %ld children\n", label, r->children);
    printf("  mkdir    %10.3f s  %8.0f ns/child\n",
           r->mkdir_s,
           ns_per(r->mkdir_s, r->children));
    printf("  stat     %10.3f s  %8.0f ns/lookup (%ld lookups, fastest "
           "pass; median %.0f ns)\n",
           r->stat_s,
           ns_per(r->stat_s, r->stat_ops),
           r->stat_ops,
           ns_per(r->stat_median_s, r->stat_ops));
    printf("  readdir  %10.3f s  %8.0f ns/entry\n",
           r->readdir_s,
           ns_per(r->readdir_s, r->children));
    printf("  rmdir    %10.3f s  %8.0f ns/child\n",
           r->rmdir_s,
           ns_per(r->rmdir_s, r->children));
}

static long arg_long(const char *s, const char *what)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    if (!*s || *end != '\0' || v < 1 || v > 9999999) {
        (void)fprintf(stderr, "bench: bad %s: %s (1..9999999)\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long children = 1000000;
    long baseline = 1000;
    long rounds = 0;
    long passes = 3;
    struct result base;
    struct result big;
    double per_big;
    double per_base;
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--children") == 0 && i + 1 < argc) {
            children = arg_long(argv[++i], "--children");
        } else if (strcmp(argv[i], "--baseline") == 0 && i + 1 < argc) {
            baseline = arg_long(argv[++i], "--baseline");
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = arg_long(argv[++i], "--rounds");
        } else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc) {
            passes = arg_long(argv[++i], "--passes");
            if (passes > MAX_PASSES) {
                passes = MAX_PASSES;
            }
        } else {
            (void)fprintf(
                stderr,
                "usage: %s [--children N] [--baseline M] [--rounds R] "
                "[--passes P]\n"
                "  R: lookup passes over the baseline group (default: "
                "as many as make N lookups)\n",
                argv[0]);
            return 2;
        }
    }
    if (rounds == 0) {
        /* The same number of lookups in both groups, so both timings are
         * over the same span and neither is dominated by clock noise. */
        rounds = children / baseline > 0 ? children / baseline : 1;
    }

    /* The baseline first, so that the big group's peak RSS is its own. */
    run("bench-base", baseline, rounds, passes, &base);
    run("bench-big", children, 1, passes, &big);

    report("baseline", &base);
    report("big", &big);
    per_big = ns_per(big.stat_s, big.stat_ops);
    per_base = ns_per(base.stat_s, base.stat_ops);
    printf("lookup ratio (%ld children / %ld children): %.2f\n",
           children,
           baseline,
           per_base > 0 ? per_big / per_base : 0.0);
    printf("mkdir ratio  (%ld children / %ld children): %.2f\n",
           children,
           baseline,
           ns_per(base.mkdir_s, base.children) > 0
               ? ns_per(big.mkdir_s, big.children) /
                     ns_per(base.mkdir_s, base.children)
               : 0.0);
    printf("peak RSS: %ld KiB before the big group, %ld KiB after its "
           "mkdirs: %.0f bytes per child\n",
           big.rss_before_kib,
           big.rss_after_kib,
           (double)(big.rss_after_kib - big.rss_before_kib) * 1024.0 /
               (double)children);
    if (failures) {
        (void)fprintf(stderr, "bench: %d operations failed\n", failures);
        return 1;
    }
    return 0;
}
