// SPDX-License-Identifier: MIT
/*
 * metrics.c - GET /metrics in the Prometheus text format: requests by
 * route and status class, a request latency histogram, durable commit
 * latency, the revision, the tree's size and the replay problems.
 * Counters are relaxed atomics: a scrape sees each one exactly, not a
 * snapshot across them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/store.h>

#include "http-internal.h"

static const char *const routes[] = {
    "config",
    "rename",
    "batch",
    "export",
    "import",
    "history",
    "schema",
    "api",
    "healthz",
    "readyz",
    "metrics",
    "other",
};
#define N_ROUTES  (sizeof(routes) / sizeof(routes[0]))
#define N_CLASSES 5 /* 1xx .. 5xx */

/* Upper bounds in microseconds; the last bucket is +Inf. */
static const uint64_t buckets_us[] = {100,
                                      250,
                                      500,
                                      1000,
                                      2500,
                                      5000,
                                      10000,
                                      25000,
                                      50000,
                                      100000,
                                      250000,
                                      500000,
                                      1000000};
#define N_BUCKETS (sizeof(buckets_us) / sizeof(buckets_us[0]))

struct histogram {
    atomic_uint_fast64_t count[N_BUCKETS + 1];
    atomic_uint_fast64_t sum_us;
};

static atomic_uint_fast64_t requests[N_ROUTES][N_CLASSES];
static struct histogram request_latency;
static struct histogram commit_latency;
static atomic_uint_fast64_t commit_failures;

static void observe(struct histogram *h, uint64_t us)
{
    size_t b = 0;

    while (b < N_BUCKETS && us > buckets_us[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&h->count[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
}

void cfs_http_metrics_request(const char *route, int status, uint64_t us)
{
    size_t r = N_ROUTES - 1;
    int cls = status / 100 - 1;

    for (size_t i = 0; route && i < N_ROUTES; i++) {
        if (strcmp(route, routes[i]) == 0) {
            r = i;
            break;
        }
    }
    if (cls < 0 || cls >= N_CLASSES) {
        cls = N_CLASSES - 1;
    }
    atomic_fetch_add_explicit(&requests[r][cls], 1, memory_order_relaxed);
    observe(&request_latency, us);
}

void cfs_http_metrics_commit(uint64_t us, bool ok)
{
    observe(&commit_latency, us);
    if (!ok) {
        atomic_fetch_add_explicit(&commit_failures, 1, memory_order_relaxed);
    }
}

static void put_histogram(FILE *f, const char *name, struct histogram *h)
{
    uint64_t cum = 0;

    for (size_t b = 0; b <= N_BUCKETS; b++) {
        cum += atomic_load_explicit(&h->count[b], memory_order_relaxed);
        if (b < N_BUCKETS) {
            fprintf(f,
                    "%s_bucket{le=\"%g\"} %llu\n",
                    name,
                    (double)buckets_us[b] / 1e6,
                    (unsigned long long)cum);
        } else {
            fprintf(f,
                    "%s_bucket{le=\"+Inf\"} %llu\n",
                    name,
                    (unsigned long long)cum);
        }
    }
    fprintf(f,
            "%s_sum %g\n%s_count %llu\n",
            name,
            (double)atomic_load(&h->sum_us) / 1e6,
            name,
            (unsigned long long)cum);
}

void cfs_http_handle_metrics(struct cfs_http_req *req)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    json_t *problems;

    if (!f) {
        cfs_http_problem(req, 0, -ENOMEM, NULL, "out of memory");
        return;
    }
    fprintf(f,
            "# HELP configfsd_requests_total HTTP requests by route and "
            "status class.\n# TYPE configfsd_requests_total counter\n");
    for (size_t r = 0; r < N_ROUTES; r++) {
        for (int c = 0; c < N_CLASSES; c++) {
            uint64_t v = atomic_load(&requests[r][c]);

            if (v) {
                fprintf(f,
                        "configfsd_requests_total{route=\"%s\",code=\"%dxx\"} "
                        "%llu\n",
                        routes[r],
                        c + 1,
                        (unsigned long long)v);
            }
        }
    }
    fprintf(f,
            "# HELP configfsd_request_duration_seconds Time to answer a "
            "request.\n# TYPE configfsd_request_duration_seconds "
            "histogram\n");
    put_histogram(f, "configfsd_request_duration_seconds", &request_latency);
    fprintf(f,
            "# HELP configfsd_commit_duration_seconds Time to make a "
            "change durable.\n# TYPE configfsd_commit_duration_seconds "
            "histogram\n");
    put_histogram(f, "configfsd_commit_duration_seconds", &commit_latency);
    fprintf(f,
            "# HELP configfsd_commit_failures_total Commits that failed and "
            "were undone.\n# TYPE configfsd_commit_failures_total counter\n"
            "configfsd_commit_failures_total %llu\n",
            (unsigned long long)atomic_load(&commit_failures));
    fprintf(f,
            "# HELP configfsd_revision The last revision.\n# TYPE "
            "configfsd_revision gauge\nconfigfsd_revision %llu\n",
            (unsigned long long)cfs_revision());
    fprintf(f,
            "# HELP configfsd_tree_nodes Directories and links in the "
            "tree.\n# TYPE configfsd_tree_nodes gauge\nconfigfsd_tree_nodes "
            "%llu\n",
            (unsigned long long)cfs_tree_nodes());
    problems = cfs_http_problems_json(req);
    fprintf(f,
            "# HELP configfsd_replay_problems Stored changes that could not "
            "be replayed.\n# TYPE configfsd_replay_problems gauge\n"
            "configfsd_replay_problems %zu\n",
            json_array_size(problems));
    json_decref(problems);
    if (fclose(f) != 0 || !text) {
        free(text);
        cfs_http_problem(req, 0, -ENOMEM, NULL, "out of memory");
        return;
    }
    cfs_http_reply_text(
        req, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
    free(text);
}
