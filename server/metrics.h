/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - request and commit counters, and GET /metrics that shows them.
 */
#ifndef CFS_HTTP_METRICS_H
#define CFS_HTTP_METRICS_H

#include "context.h"

/* Count a completed request under its route label (router.c) and method. */
void cfs_http_metrics_request(const char *route,
                              int method,
                              int status,
                              uint64_t us);
/* Count a commit: its time, and whether it was made durable. */
void cfs_http_metrics_commit(uint64_t us, bool ok);
/* Count a wrong token (@failed) or a request refused 429 for them. */
void cfs_http_metrics_auth(bool failed);
/* Cluster mode: a request runs again after losing a race. */
void cfs_http_metrics_cas_retry(void);
/* A committed read runs again (@locked: under the mutation lock). */
void cfs_http_metrics_read_again(bool locked);
/* A write sent to the writer node; @ok: it answered. */
void cfs_http_metrics_forward(bool ok);
/* GET /metrics: Prometheus text. */
void cfs_http_handle_metrics(struct cfs_http_req *req);

#endif /* CFS_HTTP_METRICS_H */
