// SPDX-License-Identifier: MIT
/*
 * test-http-starve.c - reads that writers cannot starve (docs/DESIGN.md
 * "Committed reads"): a read waits only for the transactions that changed
 * what it reads, and never fails for contention.
 *
 * A group of 10,000 children is listed (?depth=1) while 8 clients write:
 *  - an attribute elsewhere (01-childless): every listing 200, none held,
 *    none run again (configfsd_reads_again_total and _locked_total stay);
 *  - attributes inside the listed group: every listing 200 (never 503), run
 *    again at most CFS_HTTP_READ_LOCK_AFTER - 1 times before it runs under
 *    the mutation lock, and under the lock once (no undo happens here).
 * Counts, not times: the bound is how often a read runs, which a slow
 * machine does not change.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CHILDREN 10000
#define WRITERS  8
#define LISTINGS 8

static const char *const json_ct[] = {"Content-Type: application/json", NULL};

struct writer {
    pthread_t t;
    int n;
    bool inside; /* write inside the listed group */
    atomic_bool *stop;
    unsigned ok, failed;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    char url[256], body[32];

    for (int i = 0; i < 100000 && !atomic_load(w->stop); i++) {
        long status = 0;

        if (w->inside) {
            (void)snprintf(url,
                           sizeof(url),
                           "http://127.0.0.1:%u/api/v1/config/"
                           "02-simple-children/c%d/storeme",
                           (unsigned)harness_port(),
                           (w->n * 997 + i * 31) % CHILDREN);
        } else {
            (void)snprintf(url,
                           sizeof(url),
                           "http://127.0.0.1:%u/api/v1/config/01-childless/"
                           "storeme",
                           (unsigned)harness_port());
        }
        (void)snprintf(body, sizeof(body), "%d", i);
        if (http_put_own(url, body, 30, &status) == 0 && status == 200) {
            w->ok++;
        } else {
            w->failed++;
        }
    }
    return NULL;
}

/* A counter of /metrics. */
static long long metric(const char *name)
{
    struct http_resp r;
    char key[128];
    const char *p;
    long long v = -1;

    http(&r, "GET", "/metrics", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    (void)snprintf(key, sizeof(key), "\n%s ", name);
    p = r.body ? strstr(r.body, key) : NULL;
    assert_non_null(p);
    v = strtoll(p + strlen(key), NULL, 10);
    http_resp_done(&r);
    return v;
}

static void make_children(void)
{
    for (int b = 0; b < CHILDREN / 1000; b++) {
        struct http_resp r;
        size_t cap = 64 * 1000 + 64, len = 0;
        char *body = malloc(cap);

        assert_non_null(body);
        len += (size_t)snprintf(body + len, cap - len, "{\"ops\":[");
        for (int i = 0; i < 1000; i++) {
            len += (size_t)snprintf(body + len,
                                    cap - len,
                                    "%s{\"op\":\"mkdir\",\"path\":"
                                    "\"/02-simple-children/c%d\"}",
                                    i ? "," : "",
                                    b * 1000 + i);
        }
        (void)snprintf(body + len, cap - len, "]}");
        http(&r, "POST", "/api/v1/batch", body, strlen(body), json_ct);
        assert_int_equal(r.status, 200);
        http_resp_done(&r);
        free(body);
    }
}

/* List the group LISTINGS times while WRITERS write (inside it or not);
 * the deltas of the two read counters. */
static void
list_under_writers(bool inside, long long *ret_again, long long *ret_locked)
{
    struct writer w[WRITERS];
    atomic_bool stop = false;
    long long again = metric("configfsd_reads_again_total");
    long long locked = metric("configfsd_reads_locked_total");
    unsigned ok = 0;

    for (int i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){.n = i, .inside = inside, .stop = &stop};
        assert_int_equal(pthread_create(&w[i].t, NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < LISTINGS; i++) {
        struct http_resp r;

        http(&r,
             "GET",
             "/api/v1/config/02-simple-children?depth=1",
             NULL,
             0,
             NULL);
        if (r.status != 200) {
            atomic_store(&stop, true);
            fail_msg("listing %d under writers %s: %ld %s",
                     i,
                     inside ? "inside" : "elsewhere",
                     r.status,
                     r.body ? r.body : "");
        }
        http_resp_done(&r);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < WRITERS; i++) {
        assert_int_equal(pthread_join(w[i].t, NULL), 0);
        assert_int_equal(w[i].failed, 0);
        ok += w[i].ok;
    }
    assert_true(ok > 0); /* the writers wrote meanwhile */
    *ret_again = metric("configfsd_reads_again_total") - again;
    *ret_locked = metric("configfsd_reads_locked_total") - locked;
    print_message("# writers %s: %u writes, %lld reads again, %lld under the "
                  "lock\n",
                  inside ? "inside" : "elsewhere",
                  ok,
                  *ret_again,
                  *ret_locked);
}

static void test_writes_elsewhere_hold_nothing(void **state)
{
    long long again, locked;

    (void)state;
    list_under_writers(false, &again, &locked);
    assert_int_equal(again, 0);
    assert_int_equal(locked, 0);
}

static void test_writes_inside_never_starve(void **state)
{
    long long again, locked;

    (void)state;
    list_under_writers(true, &again, &locked);
    /* at most LOCK_AFTER - 1 runs again per listing, then one under the
     * lock (no undo here) */
    assert_true(again <= (long long)LISTINGS * 2);
    assert_true(locked <= LISTINGS);
}

static int setup(void **state)
{
    static char db[128];

    (void)state;
    if (harness_tmpdb("starve", "db", db, sizeof(db)) < 0 ||
        harness_start_db(db) != 0) {
        return -1;
    }
    make_children();
    return 0;
}

static int teardown(void **state)
{
    harness_stop(state);
    return harness_tmpdb_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_elsewhere_hold_nothing),
        cmocka_unit_test(test_writes_inside_never_starve),
    };

    return cmocka_run_group_tests_name("http-starve", tests, setup, teardown);
}
