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
static atomic_uint_fast64_t reads_again, reads_locked;

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

void cfs_http_metrics_read_again(bool locked)
{
    atomic_fetch_add_explicit(
        locked ? &reads_locked : &reads_again, 1, memory_order_relaxed);
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

/* One metric in Prometheus's text format: its HELP and TYPE lines, then
 * its sample (counters and gauges without labels). */
static void
put_head(FILE *f, const char *name, const char *type, const char *help)
{
    (void)fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_u64(
    FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
    put_head(f, name, type, help);
    (void)fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void
put_int(FILE *f, const char *name, const char *type, const char *help, int v)
{
    put_head(f, name, type, help);
    (void)fprintf(f, "%s %d\n", name, v);
}

#define COUNTER "counter"
#define GAUGE   "gauge"

/* Requests by route, method and status, and their latency by route. */
static void put_requests(FILE *f)
{
    put_head(
        f, "configfsd_http_requests_total", COUNTER, "HTTP requests answered.");
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
    put_head(f,
             "configfsd_http_request_duration_seconds",
             "histogram",
             "Time to answer a request.");
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
}

/* Commits and wrong tokens, counted by this file. */
static void put_commits_auth(FILE *f)
{
    put_head(f,
             "configfsd_commit_duration_seconds",
             "histogram",
             "Time to make a change durable.");
    put_histogram(f, "configfsd_commit_duration_seconds", "", &commit_latency);
    put_u64(f,
            "configfsd_commit_failures_total",
            COUNTER,
            "Commits that failed and were undone.",
            atomic_load(&commit_failures));
    put_u64(f,
            "configfsd_auth_failures_total",
            COUNTER,
            "Requests with a bearer token the server does not know.",
            atomic_load(&auth_failures));
    put_u64(f,
            "configfsd_auth_throttled_total",
            COUNTER,
            "Requests refused 429 because their address sent too many "
            "wrong tokens.",
            atomic_load(&auth_throttled));
}

static void put_store(FILE *f, const struct cfs_store_info *info)
{
    put_u64(f,
            "configfsd_store_transactions_total",
            COUNTER,
            "Changes made durable since start.",
            info->txns);
    put_u64(f,
            "configfsd_store_commits_total",
            COUNTER,
            "Database commits (one commit holds the changes waiting "
            "together).",
            info->commits);
    put_u64(f,
            "configfsd_store_pending",
            GAUGE,
            "Changes waiting to be made durable.",
            info->pending);
}

/* Cluster mode: following the log, racing or forwarding, etcd itself. */
static void put_cluster(FILE *f, const struct cfs_store_cluster_info *cl)
{
    put_u64(f,
            "configfsd_cluster_applied_revision",
            GAUGE,
            "The last revision of the shared log applied on this node.",
            cl->applied);
    put_u64(f,
            "configfsd_cluster_watch_lag",
            GAUGE,
            "Revisions in the shared log not yet applied on this node.",
            cl->head > cl->applied ? cl->head - cl->applied : 0);
    put_int(f,
            "configfsd_cluster_watching",
            GAUGE,
            "The watch on etcd is connected.",
            cl->watching ? 1 : 0);
    put_u64(f,
            "configfsd_cluster_catch_up_waiting",
            GAUGE,
            "Requests waiting for this node to catch up (?min_revision=, a "
            "lost race, a forwarded write), none holding a worker.",
            cl->catch_up_waiting);
    put_u64(f,
            "configfsd_cluster_cas_conflicts_total",
            COUNTER,
            "Appends that lost the race to another node.",
            cl->conflicts);
    put_u64(f,
            "configfsd_cluster_cas_retries_total",
            COUNTER,
            "Requests run again after losing a race.",
            atomic_load(&cas_retries));
    put_u64(f,
            "configfsd_cluster_forwarded_total",
            COUNTER,
            "Write requests sent to the writer node.",
            atomic_load(&forwarded));
    put_u64(f,
            "configfsd_cluster_forward_failures_total",
            COUNTER,
            "Of which the writer did not answer.",
            atomic_load(&forward_failures));
    put_int(f,
            "configfsd_cluster_writer",
            GAUGE,
            "This node appends for the others (1), another node does (0), "
            "none is known or this node does not forward (-1).",
            cl->writer_self ? 1
            : cl->writer[0] ? 0
                            : -1);
    put_u64(f,
            "configfsd_cluster_remote_changes_total",
            COUNTER,
            "Change sets of other nodes applied here.",
            cl->remote);
    put_u64(f,
            "configfsd_cluster_replay_errors_total",
            COUNTER,
            "Operations of other nodes refused here (a replay problem).",
            cl->replay_errors);
    put_u64(f,
            "configfsd_etcd_requests_total",
            COUNTER,
            "Requests to etcd.",
            cl->requests);
    put_u64(f,
            "configfsd_etcd_failures_total",
            COUNTER,
            "Requests to etcd that failed (unreachable, no quorum).",
            cl->failures);
    put_head(f,
             "configfsd_etcd_round_trip_seconds_total",
             COUNTER,
             "Time spent in requests to etcd (divide by the requests for the "
             "mean round trip).");
    (void)fprintf(f,
                  "configfsd_etcd_round_trip_seconds_total %.6f\n",
                  (double)cl->rtt_us / 1e6);
    put_u64(f,
            "configfsd_cluster_snapshot_revision",
            GAUGE,
            "Revision of the last snapshot in etcd known to this node (0: "
            "none).",
            cl->snapshot_revision);
    put_u64(f,
            "configfsd_cluster_snapshots_loaded_total",
            COUNTER,
            "Snapshots this node started from.",
            cl->snapshots_loaded);
    put_u64(f,
            "configfsd_cluster_snapshots_written_total",
            COUNTER,
            "Snapshots this node wrote and published.",
            cl->snapshots_written);
    put_u64(f,
            "configfsd_cluster_log_trimmed_total",
            COUNTER,
            "Log entries this node deleted below a snapshot.",
            cl->trimmed);
    put_int(f,
            "configfsd_cluster_fell_behind",
            GAUGE,
            "The log this node needs was trimmed; it restarts.",
            cl->fell_behind ? 1 : 0);
}

/* The tree: its revision, its size, what replay could not do. */
static void put_tree(FILE *f, struct cfs_http_req *req)
{
    json_t *problems = cfs_http_problems_json(req);

    put_u64(
        f, "configfsd_revision", GAUGE, "The last revision.", cfs_revision());
    put_head(
        f, "configfsd_tree_nodes", GAUGE, "Directories and links in the tree.");
    (void)fprintf(f,
                  "configfsd_tree_nodes{kind=\"all\"} %llu\n",
                  (unsigned long long)cfs_tree_nodes());
    put_u64(f,
            "configfsd_replay_problems",
            GAUGE,
            "Stored changes that could not be replayed.",
            json_array_size(problems));
    put_u64(f,
            "configfsd_reads_held",
            GAUGE,
            "Reads whose answer waits for the changes they may have seen "
            "to be committed, none holding a worker.",
            atomic_load(&req->srv->n_held));
    put_u64(f,
            "configfsd_reads_again_total",
            COUNTER,
            "Reads run again: torn by a change to what they read, or what "
            "they read was undone.",
            atomic_load(&reads_again));
    put_u64(f,
            "configfsd_reads_locked_total",
            COUNTER,
            "Reads run under the mutation lock after being torn again and "
            "again (they cannot be torn there).",
            atomic_load(&reads_locked));
    json_decref(problems);
}

void cfs_http_handle_metrics(struct cfs_http_req *req)
{
    struct cfs_store *store = cfs_http_opts(req)->store;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct cfs_store_info info;
    struct cfs_store_cluster_info cl;

    if (!f) {
        cfs_http_no_memory(req);
        return;
    }
    put_requests(f);
    put_commits_auth(f);
    if (store && cfs_store_info(store, &info) == 0) {
        put_store(f, &info);
    }
    if (store && cfs_store_cluster(store, &cl) == 0) {
        put_cluster(f, &cl);
    }
    put_tree(f, req);
    if (fclose(f) != 0 || !text) {
        free(text);
        cfs_http_no_memory(req);
        return;
    }
    cfs_http_reply_text(
        req, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
    free(text);
}
