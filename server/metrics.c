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

#include "metrics.h"
#include "reply.h"

/* clang-format off */
static const char *const routes[] = {
    "config", "rename", "batch", "forward", "export", "import", "events",
    "history", "schema", "api", "openapi", "healthz", "readyz", "metrics",
    "ui", "other",
};
static const char *const methods[] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "OTHER",
};
/* The statuses configfsd answers; anything else counts as 599. */
static const int statuses[] = {
    200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 412, 413, 415, 422,
    429, 431, 500, 503, 599,
};
/* clang-format on */
#define N_METHODS  (sizeof(methods) / sizeof(methods[0]))
#define N_STATUSES (sizeof(statuses) / sizeof(statuses[0]))
#define N_ROUTES   (sizeof(routes) / sizeof(routes[0]))

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

static atomic_uint_fast64_t requests[N_ROUTES][N_METHODS][N_STATUSES];
static struct histogram request_latency[N_ROUTES];
static struct histogram commit_latency;
static atomic_uint_fast64_t commit_failures;
static atomic_uint_fast64_t auth_failures;
static atomic_uint_fast64_t auth_throttled;
static atomic_uint_fast64_t cas_retries;

static atomic_uint_fast64_t forwarded, forward_failures;

void cfs_http_metrics_forward(bool ok)
{
    atomic_fetch_add_explicit(&forwarded, 1, memory_order_relaxed);
    if (!ok) {
        atomic_fetch_add_explicit(&forward_failures, 1, memory_order_relaxed);
    }
}

void cfs_http_metrics_cas_retry(void)
{
    atomic_fetch_add_explicit(&cas_retries, 1, memory_order_relaxed);
}

static void observe(struct histogram *h, uint64_t us)
{
    size_t b = 0;

    while (b < N_BUCKETS && us > buckets_us[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&h->count[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
}

void cfs_http_metrics_request(const char *route,
                              int method,
                              int status,
                              uint64_t us)
{
    size_t r = N_ROUTES - 1;
    size_t m = (size_t)method - 1;
    size_t st = N_STATUSES - 1;

    for (size_t i = 0; route && i < N_ROUTES; i++) {
        if (strcmp(route, routes[i]) == 0) {
            r = i;
            break;
        }
    }
    if (method < 1 || m >= N_METHODS) {
        m = N_METHODS - 1;
    }
    for (size_t i = 0; i < N_STATUSES; i++) {
        if (statuses[i] == status) {
            st = i;
            break;
        }
    }
    atomic_fetch_add_explicit(&requests[r][m][st], 1, memory_order_relaxed);
    observe(&request_latency[r], us);
}

void cfs_http_metrics_commit(uint64_t us, bool ok)
{
    observe(&commit_latency, us);
    if (!ok) {
        atomic_fetch_add_explicit(&commit_failures, 1, memory_order_relaxed);
    }
}

void cfs_http_metrics_auth(bool failed)
{
    atomic_fetch_add_explicit(
        failed ? &auth_failures : &auth_throttled, 1, memory_order_relaxed);
}

/* @label: "" or 'route="config",' (with its trailing comma). */
static void
put_histogram(FILE *f, const char *name, const char *label, struct histogram *h)
{
    int ll = (int)strlen(label);
    uint64_t cum = 0;

    for (size_t b = 0; b <= N_BUCKETS; b++) {
        cum += atomic_load_explicit(&h->count[b], memory_order_relaxed);
        if (b < N_BUCKETS) {
            (void)fprintf(f,
                          "%s_bucket{%sle=\"%g\"} %llu\n",
                          name,
                          label,
                          (double)buckets_us[b] / 1e6,
                          (unsigned long long)cum);
        } else {
            (void)fprintf(f,
                          "%s_bucket{%sle=\"+Inf\"} %llu\n",
                          name,
                          label,
                          (unsigned long long)cum);
        }
    }
    (void)fprintf(f,
                  "%s_sum%s%.*s%s %g\n",
                  name,
                  ll ? "{" : "",
                  ll ? ll - 1 : 0,
                  label,
                  ll ? "}" : "",
                  (double)atomic_load(&h->sum_us) / 1e6);
    (void)fprintf(f,
                  "%s_count%s%.*s%s %llu\n",
                  name,
                  ll ? "{" : "",
                  ll ? ll - 1 : 0,
                  label,
                  ll ? "}" : "",
                  (unsigned long long)cum);
}

void cfs_http_handle_metrics(struct cfs_http_req *req)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    json_t *problems;
    struct cfs_store_info info;
    struct cfs_store_cluster_info cl;

    if (!f) {
        cfs_http_no_memory(req);
        return;
    }
    (void)fprintf(
        f,
        "# HELP configfsd_http_requests_total HTTP requests answered.\n"
        "# TYPE configfsd_http_requests_total counter\n");
    for (size_t r = 0; r < N_ROUTES; r++) {
        for (size_t m = 0; m < N_METHODS; m++) {
            for (size_t s = 0; s < N_STATUSES; s++) {
                uint64_t v = atomic_load(&requests[r][m][s]);

                if (v) {
                    (void)fprintf(f,
                                  "configfsd_http_requests_total{route=\"%s\","
                                  "method=\"%s\",status=\"%d\"} %llu\n",
                                  routes[r],
                                  methods[m],
                                  statuses[s],
                                  (unsigned long long)v);
                }
            }
        }
    }
    (void)fprintf(f,
                  "# HELP configfsd_http_request_duration_seconds Time to "
                  "answer a request.\n# TYPE "
                  "configfsd_http_request_duration_seconds histogram\n");
    for (size_t r = 0; r < N_ROUTES; r++) {
        char label[48];

        if (atomic_load(&request_latency[r].sum_us) == 0) {
            continue;
        }
        (void)snprintf(label, sizeof(label), "route=\"%s\",", routes[r]);
        put_histogram(f,
                      "configfsd_http_request_duration_seconds",
                      label,
                      &request_latency[r]);
    }
    (void)fprintf(f,
                  "# HELP configfsd_commit_duration_seconds Time to make a "
                  "change durable.\n# TYPE configfsd_commit_duration_seconds "
                  "histogram\n");
    put_histogram(f, "configfsd_commit_duration_seconds", "", &commit_latency);
    (void)fprintf(
        f,
        "# HELP configfsd_commit_failures_total Commits that failed and "
        "were undone.\n# TYPE configfsd_commit_failures_total counter\n"
        "configfsd_commit_failures_total %llu\n",
        (unsigned long long)atomic_load(&commit_failures));
    (void)fprintf(
        f,
        "# HELP configfsd_auth_failures_total Requests with a bearer token "
        "the server does not know.\n"
        "# TYPE configfsd_auth_failures_total counter\n"
        "configfsd_auth_failures_total %llu\n"
        "# HELP configfsd_auth_throttled_total Requests refused 429 because "
        "their address sent too many wrong tokens.\n"
        "# TYPE configfsd_auth_throttled_total counter\n"
        "configfsd_auth_throttled_total %llu\n",
        (unsigned long long)atomic_load(&auth_failures),
        (unsigned long long)atomic_load(&auth_throttled));
    if (cfs_http_opts(req)->store &&
        cfs_store_info(cfs_http_opts(req)->store, &info) == 0) {
        (void)fprintf(
            f,
            "# HELP configfsd_store_transactions_total Changes made durable "
            "since start.\n# TYPE configfsd_store_transactions_total "
            "counter\nconfigfsd_store_transactions_total %llu\n"
            "# HELP configfsd_store_commits_total Database commits (one "
            "commit holds the changes waiting together).\n# TYPE "
            "configfsd_store_commits_total counter\n"
            "configfsd_store_commits_total %llu\n"
            "# HELP configfsd_store_pending Changes waiting to be made "
            "durable.\n# TYPE configfsd_store_pending gauge\n"
            "configfsd_store_pending %llu\n",
            (unsigned long long)info.txns,
            (unsigned long long)info.commits,
            (unsigned long long)info.pending);
    }
    if (cfs_http_opts(req)->store &&
        cfs_store_cluster(cfs_http_opts(req)->store, &cl) == 0) {
        (void)fprintf(
            f,
            "# HELP configfsd_cluster_applied_revision The last revision "
            "of the shared log applied on this node.\n# TYPE "
            "configfsd_cluster_applied_revision gauge\n"
            "configfsd_cluster_applied_revision %llu\n"
            "# HELP configfsd_cluster_watch_lag Revisions in the shared log "
            "not yet applied on this node.\n# TYPE "
            "configfsd_cluster_watch_lag gauge\n"
            "configfsd_cluster_watch_lag %llu\n"
            "# HELP configfsd_cluster_watching The watch on etcd is "
            "connected.\n# TYPE configfsd_cluster_watching gauge\n"
            "configfsd_cluster_watching %d\n"
            "# HELP configfsd_cluster_catch_up_waiting Requests waiting "
            "for this node to catch up (?min_revision=, a lost race, a "
            "forwarded write), none holding a worker.\n# TYPE "
            "configfsd_cluster_catch_up_waiting gauge\n"
            "configfsd_cluster_catch_up_waiting %llu\n"
            "# HELP configfsd_cluster_cas_conflicts_total Appends that "
            "lost the race to another node.\n# TYPE "
            "configfsd_cluster_cas_conflicts_total counter\n"
            "configfsd_cluster_cas_conflicts_total %llu\n"
            "# HELP configfsd_cluster_cas_retries_total Requests run again "
            "after losing a race.\n# TYPE "
            "configfsd_cluster_cas_retries_total counter\n"
            "configfsd_cluster_cas_retries_total %llu\n"
            "# HELP configfsd_cluster_forwarded_total Write requests sent "
            "to the writer node.\n# TYPE configfsd_cluster_forwarded_total "
            "counter\nconfigfsd_cluster_forwarded_total %llu\n"
            "# HELP configfsd_cluster_forward_failures_total Of which the "
            "writer did not answer.\n# TYPE "
            "configfsd_cluster_forward_failures_total counter\n"
            "configfsd_cluster_forward_failures_total %llu\n"
            "# HELP configfsd_cluster_writer This node appends for the "
            "others (1), another node does (0), none is known or this "
            "node does not forward (-1).\n"
            "# TYPE configfsd_cluster_writer gauge\n"
            "configfsd_cluster_writer %d\n"
            "# HELP configfsd_cluster_remote_changes_total Change sets of "
            "other nodes applied here.\n# TYPE "
            "configfsd_cluster_remote_changes_total counter\n"
            "configfsd_cluster_remote_changes_total %llu\n"
            "# HELP configfsd_cluster_replay_errors_total Operations of "
            "other nodes refused here (a replay problem).\n# TYPE "
            "configfsd_cluster_replay_errors_total counter\n"
            "configfsd_cluster_replay_errors_total %llu\n"
            "# HELP configfsd_etcd_requests_total Requests to etcd.\n"
            "# TYPE configfsd_etcd_requests_total counter\n"
            "configfsd_etcd_requests_total %llu\n"
            "# HELP configfsd_etcd_failures_total Requests to etcd that "
            "failed (unreachable, no quorum).\n# TYPE "
            "configfsd_etcd_failures_total counter\n"
            "configfsd_etcd_failures_total %llu\n"
            "# HELP configfsd_etcd_round_trip_seconds_total Time spent in "
            "requests to etcd (divide by the requests for the mean round "
            "trip).\n# TYPE configfsd_etcd_round_trip_seconds_total "
            "counter\nconfigfsd_etcd_round_trip_seconds_total %.6f\n",
            (unsigned long long)cl.applied,
            (unsigned long long)(cl.head > cl.applied ? cl.head - cl.applied
                                                      : 0),
            cl.watching ? 1 : 0,
            (unsigned long long)cl.catch_up_waiting,
            (unsigned long long)cl.conflicts,
            (unsigned long long)atomic_load(&cas_retries),
            (unsigned long long)atomic_load(&forwarded),
            (unsigned long long)atomic_load(&forward_failures),
            cl.writer_self ? 1
            : cl.writer[0] ? 0
                           : -1,
            (unsigned long long)cl.remote,
            (unsigned long long)cl.replay_errors,
            (unsigned long long)cl.requests,
            (unsigned long long)cl.failures,
            (double)cl.rtt_us / 1e6);
        (void)fprintf(
            f,
            "# HELP configfsd_cluster_snapshot_revision Revision of the last "
            "snapshot in etcd known to this node (0: none).\n# TYPE "
            "configfsd_cluster_snapshot_revision gauge\n"
            "configfsd_cluster_snapshot_revision %llu\n"
            "# HELP configfsd_cluster_snapshots_loaded_total Snapshots this "
            "node started from.\n# TYPE "
            "configfsd_cluster_snapshots_loaded_total counter\n"
            "configfsd_cluster_snapshots_loaded_total %llu\n"
            "# HELP configfsd_cluster_snapshots_written_total Snapshots this "
            "node wrote and published.\n# TYPE "
            "configfsd_cluster_snapshots_written_total counter\n"
            "configfsd_cluster_snapshots_written_total %llu\n"
            "# HELP configfsd_cluster_log_trimmed_total Log entries this node "
            "deleted below a snapshot.\n# TYPE "
            "configfsd_cluster_log_trimmed_total counter\n"
            "configfsd_cluster_log_trimmed_total %llu\n"
            "# HELP configfsd_cluster_fell_behind The log this node needs "
            "was trimmed; it restarts.\n# TYPE "
            "configfsd_cluster_fell_behind gauge\n"
            "configfsd_cluster_fell_behind %d\n",
            (unsigned long long)cl.snapshot_revision,
            (unsigned long long)cl.snapshots_loaded,
            (unsigned long long)cl.snapshots_written,
            (unsigned long long)cl.trimmed,
            cl.fell_behind ? 1 : 0);
    }
    (void)fprintf(f,
                  "# HELP configfsd_revision The last revision.\n# TYPE "
                  "configfsd_revision gauge\nconfigfsd_revision %llu\n",
                  (unsigned long long)cfs_revision());
    (void)fprintf(f,
                  "# HELP configfsd_tree_nodes Directories and links in the "
                  "tree.\n# TYPE configfsd_tree_nodes gauge\n"
                  "configfsd_tree_nodes{kind=\"all\"} %llu\n",
                  (unsigned long long)cfs_tree_nodes());
    problems = cfs_http_problems_json(req);
    (void)fprintf(
        f,
        "# HELP configfsd_replay_problems Stored changes that could not "
        "be replayed.\n# TYPE configfsd_replay_problems gauge\n"
        "configfsd_replay_problems %zu\n",
        json_array_size(problems));
    json_decref(problems);
    if (fclose(f) != 0 || !text) {
        free(text);
        cfs_http_no_memory(req);
        return;
    }
    cfs_http_reply_text(
        req, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
    free(text);
}
