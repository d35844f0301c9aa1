/* SPDX-License-Identifier: MIT */
/*
 * bench-used-by.c - cfs_links_to() ("used by", and the blockers of an
 * EBUSY rmdir) in a big tree against a small one.
 *
 * Each target keeps the links that point at it, so the lookup should cost
 * the links found, whatever the size of the tree. This builds a group of
 * --items N (default 100,000) items and one of --baseline M (default
 * 1,000), each with one target held by --links L (default 10) links from
 * other items, times --calls cfs_links_to() of each target over a few
 * passes (the fastest counts: on a shared machine the slow ones measure
 * the neighbours) and prints the ratio big / small: near 1 means used by
 * does not grow with the tree (a walk of the tree would make it ~N/M).
 * With small counts it is the unit suite's smoke test: every operation and
 * every answer must be right, nothing is asserted about time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

/* ---- a subsystem of items that may link to each other ------------------ */

static int allow(struct config_item *src, struct config_item *target)
{
    (void)src;
    (void)target;
    return 0;
}

static void release(struct config_item *item)
{
    cfs_free(item);
}

static const struct configfs_item_operations item_ops = {
    .release = release,
    .allow_link = allow,
};

static const struct config_item_type item_type = {
    .ct_item_ops = &item_ops,
    .ct_name = "used-by-item",
};

static struct config_item *make_item(struct config_group *group,
                                     const char *name)
{
    struct config_item *it = cfs_zalloc(sizeof(*it));

    (void)group;
    if (!it) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(it, name, &item_type);
    return it;
}

static const struct configfs_group_operations group_ops = {
    .make_item = make_item,
};

static const struct config_item_type sys_type = {
    .ct_group_ops = &group_ops,
    .ct_name = "used-by",
};

/* ---- measuring --------------------------------------------------------- */

static int failures;

static void check(int rc, const char *op, const char *path)
{
    if (rc != 0 && failures++ < 10) {
        (void)fprintf(stderr, "bench: %s %s: %s\n", op, path, strerror(-rc));
    }
}

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define PASSES 5

/* Make /@name with @n items, the links of item 1..@links to item 0; the
 * fastest of PASSES passes of @calls lookups, in seconds. */
static double run(const char *name,
                  long n,
                  long links,
                  long calls,
                  struct configfs_subsystem *sys)
{
    char path[96];
    char target[64];
    double best = 0;

    memset(sys, 0, sizeof(*sys));
    config_group_init_type_name(&sys->su_group, name, &sys_type);
    check(configfs_register_subsystem(sys), "register", name);
    for (long i = 0; i < n; i++) {
        (void)snprintf(path, sizeof(path), "/%s/i%07ld", name, i);
        check(cfs_mkdir(NULL, path), "mkdir", path);
    }
    (void)snprintf(target, sizeof(target), "/%s/i%07d", name, 0);
    for (long i = 1; i <= links; i++) {
        (void)snprintf(path, sizeof(path), "/%s/i%07ld/l", name, i);
        check(cfs_symlink(NULL, path, target), "symlink", path);
    }
    for (int p = 0; p < PASSES; p++) {
        double t0 = now();
        double t;

        for (long c = 0; c < calls; c++) {
            char **paths = NULL;
            size_t np = 0;
            int rc = cfs_links_to(target, &paths, &np);

            check(rc, "links_to", target);
            if (rc == 0 && np != (size_t)links) {
                check(-EPROTO, "links_to (count)", target);
            }
            if (rc == 0) {
                cfs_paths_free(paths, np);
            }
        }
        t = now() - t0;
        if (p == 0 || t < best) {
            best = t;
        }
    }
    return best;
}

static long arg(const char *s, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (!*s || *end || v < 1 || v > 9999999) {
        (void)fprintf(stderr, "bench: bad %s: %s (1..9999999)\n", what, s);
        exit(2);
    }
    return v;
}

/* static: the tree keeps pointing at them until the process ends */
static struct configfs_subsystem big, small;

int main(int argc, char **argv)
{
    long items = 100000, baseline = 1000, links = 10, calls = 2000;
    double tb, ts;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--items") == 0) {
            items = arg(argv[i + 1], "--items");
        } else if (strcmp(argv[i], "--baseline") == 0) {
            baseline = arg(argv[i + 1], "--baseline");
        } else if (strcmp(argv[i], "--links") == 0) {
            links = arg(argv[i + 1], "--links");
        } else if (strcmp(argv[i], "--calls") == 0) {
            calls = arg(argv[i + 1], "--calls");
        } else {
            (void)fprintf(stderr,
                          "usage: %s [--items N] [--baseline M] "
                          "[--links L] [--calls C]\n",
                          argv[0]);
            return 2;
        }
    }
    if (links >= baseline || links >= items) {
        (void)fprintf(stderr, "bench: --links must be below the item counts\n");
        return 2;
    }
    ts = run("used-by-small", baseline, links, calls, &small);
    tb = run("used-by-big", items, links, calls, &big);
    (void)printf("used by, %ld links: %ld items %.2f us/call, %ld items %.2f "
                 "us/call, ratio %.2f\n",
                 links,
                 baseline,
                 ts / (double)calls * 1e6,
                 items,
                 tb / (double)calls * 1e6,
                 ts > 0 ? tb / ts : 0.0);
    if (failures) {
        (void)fprintf(stderr, "bench: %d operations failed\n", failures);
        return 1;
    }
    return 0;
}
