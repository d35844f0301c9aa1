// SPDX-License-Identifier: MIT
/*
 * test-http-events.c - GET /api/v1/events: committed changes as
 * Server-Sent Events, resumable with ?since= and Last-Event-ID without gaps
 * or duplicates (also across a restart, from the journal), filtered by
 * ?path=, and an explicit reset for a revision this server never had.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "harness.h"

static char db[128];

static int setup(void **state)
{
    (void)state;
    if (harness_tmpdb("events", "t.db", db, sizeof(db)) < 0) {
        return -1;
    }
    return harness_start_db(db);
}

static int teardown(void **state)
{
    harness_stop(state);
    return harness_tmpdb_remove();
}

/* A stream read until it holds @want events (or a reset), or 10 s. */
struct stream {
    char url[256];
    const char *last_event_id;
    int want;
    char buf[65536];
    size_t len;
    int events;
    bool reset;
};

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    struct stream *s = arg;
    size_t len = size * n;

    if (s->len + len >= sizeof(s->buf)) {
        return 0;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    s->buf[s->len] = '\0';
    s->events = 0;
    for (const char *p = s->buf; (p = strstr(p, "\ndata: ")); p++) {
        s->events++;
    }
    if (strncmp(s->buf, "data: ", 6) == 0) {
        s->events++;
    }
    s->reset = strstr(s->buf, "event: reset") != NULL;
    return s->events >= s->want || s->reset ? 0 : len; /* 0 ends it */
}

static void *read_stream(void *arg)
{
    struct stream *s = arg;
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char hdr[64];

    curl_easy_setopt(c, CURLOPT_URL, s->url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    if (s->last_event_id) {
        (void)snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", s->last_event_id);
        h = curl_slist_append(h, hdr);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    }
    (void)curl_easy_perform(c); /* ends by our write callback */
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

static void stream(struct stream *s, const char *query, int want)
{
    (void)snprintf(s->url,
                   sizeof(s->url),
                   "http://127.0.0.1:%u/api/v1/events%s",
                   harness_port(),
                   query);
    s->want = want;
    read_stream(s);
}

static void mutate(void)
{
    struct http_resp r;

    http_json(&r,
              "POST",
              "/api/v1/config/02-simple-children",
              "{\"name\":\"ev\",\"attributes\":{\"storeme\":\"5\"}}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/ev/storeme",
         "6",
         1,
         NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
}

static json_int_t start;

/* since=N delivers every record after N, in order, ids on each revision's
 * last record; Last-Event-ID resumes without a gap or a duplicate. */
static void test_events_since_and_resume(void **state)
{
    struct stream *all = calloc(1, sizeof(*all));
    struct stream *rest = calloc(1, sizeof(*rest));
    char q[64], id[32];
    const char *p;

    (void)state;
    start = http_revision();
    mutate(); /* revision start+1: mkdir + store; start+2: store */
    (void)snprintf(q, sizeof(q), "?since=%lld", (long long)start);
    stream(all, q, 3);
    assert_int_equal(all->events, 3);
    p = strstr(all->buf, "\"op\":\"mkdir\"");
    assert_non_null(p);
    assert_non_null(strstr(p, "\"value\":\"5\""));
    assert_non_null(strstr(strstr(p, "\"value\":\"5\""), "\"value\":\"6\""));
    (void)snprintf(id, sizeof(id), "id: %lld\n", (long long)start + 1);
    assert_non_null(strstr(all->buf, id));

    (void)snprintf(id, sizeof(id), "%lld", (long long)start + 1);
    rest->last_event_id = id;
    stream(rest, "", 1);
    assert_int_equal(rest->events, 1);
    assert_non_null(strstr(rest->buf, "\"value\":\"6\""));
    assert_null(strstr(rest->buf, "\"value\":\"5\"")); /* no duplicate */
    free(all);
    free(rest);
}

/* Both given: Last-Event-ID wins over ?since= (api/openapi.yaml), in
 * either direction. An EventSource opened on ?since=N reconnects with the
 * same URL and Last-Event-ID: the last revision it received; answering
 * from N again would repeat everything since N. */
static void test_events_last_event_id_wins_over_since(void **state)
{
    struct stream *later = calloc(1, sizeof(*later));
    struct stream *earlier = calloc(1, sizeof(*earlier));
    char q[64], id[32];

    (void)state;
    /* the reconnect: ?since=start, Last-Event-ID start+1 -> start+2 only */
    (void)snprintf(q, sizeof(q), "?since=%lld", (long long)start);
    (void)snprintf(id, sizeof(id), "%lld", (long long)start + 1);
    later->last_event_id = id;
    stream(later, q, 1);
    assert_int_equal(later->events, 1);
    assert_null(strstr(later->buf, "\"op\":\"mkdir\""));
    assert_null(strstr(later->buf, "\"value\":\"5\""));
    assert_non_null(strstr(later->buf, "\"value\":\"6\""));
    (void)snprintf(q, sizeof(q), "id: %lld\n", (long long)start + 2);
    assert_non_null(strstr(later->buf, q));

    /* an older Last-Event-ID than ?since= wins too: it is not the larger
     * of the two that counts */
    (void)snprintf(q, sizeof(q), "?since=%lld", (long long)start + 1);
    (void)snprintf(id, sizeof(id), "%lld", (long long)start);
    earlier->last_event_id = id;
    stream(earlier, q, 3);
    assert_int_equal(earlier->events, 3);
    assert_non_null(strstr(earlier->buf, "\"op\":\"mkdir\""));
    assert_non_null(strstr(earlier->buf, "\"value\":\"6\""));
    free(later);
    free(earlier);
}

/* ?path= keeps only that subtree; a live subscriber is woken by commits. */
static void test_events_path_filter_live(void **state)
{
    struct stream *s = calloc(1, sizeof(*s));
    struct http_resp r;
    pthread_t t;
    char q[128];

    (void)state;
    (void)snprintf(q,
                   sizeof(q),
                   "?since=%lld&path=/01-childless",
                   (long long)http_revision());
    (void)snprintf(s->url,
                   sizeof(s->url),
                   "http://127.0.0.1:%u/api/v1/events%s",
                   harness_port(),
                   q);
    s->want = 1;
    assert_int_equal(pthread_create(&t, NULL, read_stream, s), 0);
    http(&r,
         "PUT",
         "/api/v1/config/02-simple-children/ev/storeme",
         "7",
         1,
         NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    http(&r, "PUT", "/api/v1/config/01-childless/storeme", "3", 1, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    pthread_join(t, NULL);
    assert_int_equal(s->events, 1);
    assert_non_null(strstr(s->buf, "/01-childless/storeme"));
    assert_null(strstr(s->buf, "/02-simple-children"));
    free(s);
}

/* A rename matches ?path= by its destination too: an item committed into
 * live/ shows up in a stream of live/ although it came from pending/. */
static void test_events_path_filter_rename_destination(void **state)
{
    struct stream *s = calloc(1, sizeof(*s));
    json_int_t since = http_revision();
    struct http_resp r;
    char q[128];

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/config/04-committable-children/pending",
              "{\"name\":\"moved\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/rename",
              "{\"from\":\"/04-committable-children/pending/moved\","
              "\"to\":\"/04-committable-children/live/moved\"}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    (void)snprintf(q,
                   sizeof(q),
                   "?since=%lld&path=/04-committable-children/live",
                   (long long)since);
    stream(s, q, 1);
    assert_int_equal(s->events, 1);
    assert_non_null(strstr(s->buf, "event: rename"));
    assert_non_null(
        strstr(s->buf, "\"to\":\"/04-committable-children/live/moved\""));
    assert_null(strstr(s->buf, "event: mkdir"));
    free(s);
}

/* A link matches ?path= by its target too: linking a function into a USB
 * configuration shows up in a stream of the functions. */
static void test_events_path_filter_link_target(void **state)
{
    static const char *const json_ct[] = {"Content-Type: application/json",
                                          NULL};
    static const char target[] =
        "{\"target\":\"/usb_gadget/g9/functions/ncm.ev\"}";
    struct stream *s = calloc(1, sizeof(*s));
    json_int_t since = http_revision();
    struct http_resp r;
    char q[128];

    (void)state;
    http_json(&r, "POST", "/api/v1/config/usb_gadget", "{\"name\":\"g9\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/g9/functions",
              "{\"name\":\"ncm.ev\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/g9/configs",
              "{\"name\":\"c.1\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    http(&r,
         "PUT",
         "/api/v1/config/usb_gadget/g9/configs/c.1/ncm.ev",
         target,
         strlen(target),
         json_ct);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    (void)snprintf(q,
                   sizeof(q),
                   "?since=%lld&path=/usb_gadget/g9/functions",
                   (long long)since);
    stream(s, q, 2); /* the function's mkdir, and the link */
    assert_int_equal(s->events, 2);
    assert_non_null(strstr(s->buf, "event: symlink"));
    assert_non_null(
        strstr(s->buf, "\"target\":\"/usb_gadget/g9/functions/ncm.ev\""));
    assert_null(strstr(s->buf, "\"path\":\"/usb_gadget/g9/configs/c.1\""));
    free(s);
}

/* The stream's headers, as the API describes them: an event stream that
 * no cache keeps, sent in chunks as changes come. */
static void test_events_headers(void **state)
{
    static const char head[] = "GET /api/v1/events HTTP/1.1\r\n"
                               "Host: 127.0.0.1\r\n\r\n";
    char buf[4096];
    bool eof = false;
    int fd = raw_connect();

    (void)state;
    raw_send(fd, head, strlen(head));
    assert_true(raw_read_for(fd, buf, sizeof(buf), ": connected", 5000, &eof) >
                0);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    assert_non_null(strstr(buf, "\r\nContent-Type: text/event-stream\r\n"));
    assert_non_null(strstr(buf, "\r\nCache-Control: no-store\r\n"));
    assert_non_null(strstr(buf, "\r\nTransfer-Encoding: chunked\r\n"));
    close(fd);
}

/* After a restart the ring is empty: since= is served from the journal,
 * every revision up to the last one, and no reset (which on_data() would
 * count as one more event). */
static void test_events_resume_after_restart(void **state)
{
    struct stream *s = calloc(1, sizeof(*s));
    long long last;
    char q[64];

    assert_int_equal(harness_stop(state), 0);
    assert_int_equal(harness_start_db(db), 0);
    last = http_revision();
    (void)snprintf(q, sizeof(q), "?since=%lld", (long long)start);
    stream(s, q, 5);
    assert_false(s->reset);
    assert_int_equal(s->events, 5); /* 3 + the two stores above */
    assert_non_null(strstr(s->buf, "\"value\":\"7\""));
    (void)snprintf(q, sizeof(q), "\nid: %lld\n", last);
    assert_non_null(strstr(s->buf, q));
    free(s);

    /* from the revision before the last: the last one alone */
    s = calloc(1, sizeof(*s));
    (void)snprintf(q, sizeof(q), "?since=%lld", last - 1);
    stream(s, q, 1);
    assert_false(s->reset);
    assert_int_equal(s->events, 1);
    (void)snprintf(q, sizeof(q), "id: %lld\n", last);
    assert_int_equal(strncmp(s->buf, q, strlen(q)), 0); /* its first line */
    free(s);
}

static void test_events_future_revision_resets(void **state)
{
    struct stream *s = calloc(1, sizeof(*s));
    char id[64];

    (void)state;
    stream(s, "?since=999999", 1);
    assert_true(s->reset);
    assert_non_null(strstr(s->buf, "\"reason\":\"future\""));
    /* with the current revision as its id: an EventSource that reconnects
     * after it resumes from there, not from the revision refused */
    (void)snprintf(
        id, sizeof(id), "id: %lld\nevent: reset\n", (long long)http_revision());
    assert_non_null(strstr(s->buf, id));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_since_and_resume),
        cmocka_unit_test(test_events_last_event_id_wins_over_since),
        cmocka_unit_test(test_events_path_filter_live),
        cmocka_unit_test(test_events_resume_after_restart),
        cmocka_unit_test(test_events_future_revision_resets),
        /* last: test_events_resume_after_restart counts from start */
        cmocka_unit_test(test_events_path_filter_rename_destination),
        cmocka_unit_test(test_events_path_filter_link_target),
        cmocka_unit_test(test_events_headers),
    };

    return cmocka_run_group_tests_name("http-events", tests, setup, teardown);
}
