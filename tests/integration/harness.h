/* SPDX-License-Identifier: MIT */
/*
 * harness.h - integration tests: configfsd's HTTP server in-process on
 * 127.0.0.1 and a port it picks, the samples registered, and libcurl
 * helpers that state a request and return status, headers and body.
 */
#ifndef CFS_TEST_HARNESS_H
#define CFS_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>

struct http_resp {
    long status;
    char *body;
    size_t len;
    char *headers; /* raw header block */
    json_t *json;  /* parsed body when it is JSON, else NULL */
};

/* Start / stop the server (cmocka group setup and teardown). */
int harness_start(void **state);
/* The same with a store at @db (NULL: none); stop with harness_stop(). */
int harness_start_db(const char *db);
int harness_stop(void **state);

/* Perform METHOD PATH (relative to the server) with an optional body and a
 * NULL-terminated list of extra header lines. */
void http(struct http_resp *r,
          const char *method,
          const char *path,
          const char *body,
          size_t body_len,
          const char *const *headers);
void http_resp_done(struct http_resp *r);

/* The value of a response header (case-insensitive), new string or NULL. */
char *http_header(const struct http_resp *r, const char *name);

/* Shorthands: JSON bodies and expected statuses. */
void http_json(struct http_resp *r,
               const char *method,
               const char *path,
               const char *json_body);
void expect_problem(const struct http_resp *r, long status, const char *err);

uint16_t harness_port(void);

#endif /* CFS_TEST_HARNESS_H */
