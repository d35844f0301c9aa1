// SPDX-License-Identifier: MIT
/*
 * test-http-events-order.c - the event stream's promise when publications
 * do not come as they should: every revision once, in order, whole, each
 * record named by its operation, or a "reset" in place of what is missing
 * - never a silent gap, nor part of a revision. Change sets are handed to
 * the server as cluster mode's applier hands them
 * (cfs_http_server_changes()), out of order, twice, never, or big enough
 * that the ring (4096 records in server/events.c) lets go of the first
 * records of the revision right after a subscriber's cursor.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <configfs/cfs.h>

#include "harness.h"
#include "http.h"

#define RING_CAP 4096 /* records, server/events.c */
#define HOLD_CAP 1024 /* revisions waiting for an earlier one, the same */
#define BUF_CAP  ((size_t)8 << 20)

static char *buf;   /* what a stream sent */
static size_t have; /* of it */

static int setup(void **state)
{
    buf = malloc(BUF_CAP);
    return buf ? harness_start(state) : -1;
}

static int teardown(void **state)
{
    free(buf);
    return harness_stop(state);
}

/* Revision @rev as another node's change set: @n stores of "v" to
 * /ev/N, N its index. */
static void publish(long long rev, size_t n)
{
    struct cfs_change *ch = calloc(n, sizeof(*ch));
    char(*paths)[32] = calloc(n, sizeof(*paths));

    assert_non_null(ch);
    assert_non_null(paths);
    for (size_t i = 0; i < n; i++) {
        (void)snprintf(paths[i], sizeof(paths[i]), "/ev/%zu", i);
        ch[i].op = CFS_OP_STORE;
        ch[i].revision = (uint64_t)rev;
        ch[i].path = paths[i];
        ch[i].arg = "v";
        ch[i].arg_len = 1;
    }
    cfs_http_server_changes(harness_server(), ch, n);
    free(paths);
    free(ch);
}

/* Read @fd on into buf until it holds @needle (bounded: 20 s without
 * data, or the buffer full, fails the test). */
static void read_for(int fd, const char *needle)
{
    while (!strstr(buf, needle)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        assert_int_equal(poll(&p, 1, 20000), 1);
        n = recv(fd, buf + have, BUF_CAP - 1 - have, 0);
        assert_true(n > 0);
        have += (size_t)n;
        buf[have] = '\0';
    }
}

/* A stream (HTTP/1.0: no chunk framing), from @last_id when >= 0, once
 * the server has registered it (it said ": connected"). */
static int subscribe(long long last_id)
{
    char req[256];
    int fd = raw_connect();

    if (last_id >= 0) {
        (void)snprintf(req,
                       sizeof(req),
                       "GET /api/v1/events HTTP/1.0\r\nHost: x\r\n"
                       "Last-Event-ID: %lld\r\n\r\n",
                       last_id);
    } else {
        (void)snprintf(
            req, sizeof(req), "GET /api/v1/events HTTP/1.0\r\nHost: x\r\n\r\n");
    }
    raw_send(fd, req, strlen(req));
    have = 0;
    buf[0] = '\0';
    read_for(fd, ": connected");
    return fd;
}

/* Read @fd until its stream holds revision @rev's id. */
static void read_to(int fd, long long rev)
{
    char needle[48];

    (void)snprintf(needle, sizeof(needle), "\nid: %lld\n", rev);
    read_for(fd, needle);
    close(fd);
}

/* The decimal number @s begins with (up to a newline). */
static long long num(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);

    assert_true(end > s && (*end == '\n' || *end == '\0'));
    return v;
}

/* The last revision the server's streams went to: the id of the reset a
 * resume from a revision it never had gets (each test begins there,
 * whatever the one before left). */
static long long hub_last(void)
{
    int fd = subscribe(1000000000000000LL);
    const char *id = strstr(buf, "\nid: ");

    close(fd);
    assert_non_null(id);
    assert_non_null(strstr(buf, "\"reason\":\"future\""));
    return num(id + 5);
}

/* What a stream said, checked as a client relies on it. */
struct check {
    long long cursor;  /* the last revision it had whole, or a reset's */
    long long records; /* of revisions after the start */
    int resets;
};

/* Check every frame of @text (a stream followed from revision @since):
 * each record named by its operation; the records of a revision all
 * there, in order, the last one carrying the revision's id; every
 * revision the one after the one before, unless a reset came between,
 * which names where the stream goes on from and never cuts a revision. */
static struct check check_stream(const char *text, long long since)
{
    struct check k = {.cursor = since};
    long long rev = -1, next_index = 0, count = 0;
    const char *p = strstr(text, "\r\n\r\n");

    assert_non_null(p);
    for (p += 4; *p;) {
        const char *end = strstr(p, "\n\n");
        char event[32] = "";
        long long id = -1, r, index, cnt;
        const char *line, *d;
        json_t *data;

        assert_non_null(end); /* whole frames only */
        for (line = p; line < end; line = strchr(line, '\n') + 1) {
            if (strncmp(line, "id: ", 4) == 0) {
                id = num(line + 4);
            } else if (strncmp(line, "event: ", 7) == 0) {
                size_t n = strcspn(line + 7, "\n");

                assert_true(n < sizeof(event));
                memcpy(event, line + 7, n);
                event[n] = '\0';
            }
        }
        d = strstr(p, "\ndata: ");
        p = end + 2;
        if (!d || d > end) {
            continue; /* a comment: ": connected", ": heartbeat" */
        }
        if (strcmp(event, "reset") == 0) {
            assert_true(rev < 0); /* never in the middle of a revision */
            assert_true(id >= k.cursor);
            k.cursor = id;
            k.resets++;
            continue;
        }
        data = json_loadb(d + 7, strcspn(d + 7, "\n"), 0, NULL);
        assert_non_null(data);
        r = json_integer_value(json_object_get(data, "revision"));
        index = json_integer_value(json_object_get(data, "index"));
        cnt = json_integer_value(json_object_get(data, "count"));
        /* named, and by the operation it carries */
        assert_true(event[0] != '\0');
        assert_non_null(jstr(data, "op"));
        assert_string_equal(event, jstr(data, "op"));
        json_decref(data);
        if (index == 0) {
            assert_true(rev < 0);
            if (r != k.cursor + 1) {
                fail_msg(
                    "went from revision %lld to %lld, no reset", k.cursor, r);
            }
            rev = r;
            count = cnt;
            next_index = 0;
        }
        if (r != rev || index != next_index || cnt != count) {
            fail_msg("revision %lld record %lld of %lld where %lld "
                     "record %lld of %lld was due (a revision in part)",
                     r,
                     index,
                     cnt,
                     rev,
                     next_index,
                     count);
        }
        next_index++;
        k.records++;
        assert_int_equal(id >= 0, next_index == count);
        if (next_index == count) {
            assert_int_equal(id, rev);
            k.cursor = rev;
            rev = -1;
        }
    }
    assert_true(rev < 0);
    return k;
}

/* Read @fd's stream to revision @last and check it from @since: it ends
 * at @last, after @resets resets. */
static struct check
expect_stream(int fd, long long since, long long last, int resets)
{
    struct check k;

    read_to(fd, last);
    k = check_stream(buf, since);
    assert_int_equal(k.resets, resets);
    assert_int_equal(k.cursor, last);
    return k;
}

/* A stream begins at the revision the tree has when the server starts:
 * a change set applied after that is the next one it sends. */
static void test_order_starts_at_tree_revision(void **state)
{
    (void)state;
    assert_int_equal(hub_last(), http_revision());
}

/* Revisions published early wait for the one before them; one published
 * again is not sent twice. */
static void test_order_late_revision_waits(void **state)
{
    long long r0 = hub_last();
    int fd;
    struct check k;

    (void)state;
    fd = subscribe(-1);
    publish(r0 + 2, 2);
    publish(r0 + 3, 1);
    publish(r0 + 1, 3);
    publish(r0 + 2, 2); /* again */
    publish(r0 + 4, 1);
    k = expect_stream(fd, r0, r0 + 4, 0);
    assert_int_equal(k.records, 3 + 2 + 1 + 1);
}

/* A revision published twice while it waits for the one before it is
 * held once: the second is dropped, not kept to be given up later, which
 * would take the hub's last revision back below what the streams were
 * sent (and hold the next revision as early). The hold is then filled to
 * its record bound (RING_CAP) but for the one copy: a second copy would
 * overflow it and be pushed out at once, behind the revisions after it. */
static void test_order_revision_twice_while_waiting(void **state)
{
    long long r0 = hub_last();
    int fd;
    struct check k;

    (void)state;
    fd = subscribe(-1);
    publish(r0 + 2, 2);
    publish(r0 + 2, 2); /* again, while it waits */
    publish(r0 + 1, 3);
    publish(r0 + 3, 1);
    k = expect_stream(fd, r0, r0 + 3, 0);
    assert_int_equal(k.records, 3 + 2 + 1);
    assert_int_equal(hub_last(), r0 + 3);

    publish(r0 + 5, RING_CAP - 1); /* waits for r0 + 4 */
    assert_int_equal(hub_last(), r0 + 3);
    publish(r0 + 4, 1);
    fd = subscribe(r0 + 3); /* the ring holds r0 + 4 and r0 + 5 whole */
    k = expect_stream(fd, r0 + 3, r0 + 5, 0);
    assert_int_equal(k.records, 1 + RING_CAP - 1);
    assert_int_equal(hub_last(), r0 + 5);
}

/* A revision that never comes: once more than the hub holds wait for it,
 * a stream that needs it gets a reset in its place, then goes on in
 * order; the revision coming late is not sent after the later ones. */
static void test_order_missing_revision_resets(void **state)
{
    long long r0 = hub_last(), last = r0 + 2 + HOLD_CAP + 10;
    int fd;

    (void)state;
    fd = subscribe(-1);
    for (long long r = r0 + 2; r <= last; r++) {
        publish(r, 1); /* r0 + 1 never */
    }
    publish(r0 + 1, 1); /* too late */
    publish(last + 1, 1);
    (void)expect_stream(fd, r0, last + 1, 1);
}

/* A revision that never comes while no more changes come after it: the
 * stream is not held back for ever; within seconds it gets a reset in
 * place of the missing one, and then the ones that waited for it. */
static void test_order_missing_revision_given_up_in_time(void **state)
{
    long long r0 = hub_last();
    int fd;
    time_t t0 = time(NULL);

    (void)state;
    fd = subscribe(-1);
    publish(r0 + 2, 1); /* r0 + 1 never */
    publish(r0 + 3, 2);
    (void)expect_stream(fd, r0, r0 + 3, 1);
    assert_true(time(NULL) - t0 < 10);
}

/* A stream that resumes right before the revision the ring begins with,
 * the revision after that one given up (never published): it gets the
 * first, then a reset, never the ones after the gap as if they followed
 * (a restarted cluster node lost a change set this way and its stream
 * skipped 257 revisions). */
static void test_order_resume_before_gap(void **state)
{
    long long r0 = hub_last(), last = r0 + 3 + HOLD_CAP + 10;
    int fd;

    (void)state;
    publish(r0 + 1, 1);
    for (long long r = r0 + 3; r <= last; r++) {
        publish(r, 1); /* r0 + 2 never */
    }
    fd = subscribe(r0);
    publish(last + 1, 1);
    (void)expect_stream(fd, r0, last + 1, 1);
}

/* The ring lets go of the first records of the revision right after a
 * live subscriber's cursor before it reads them (the revision after it,
 * published early, is big): it gets a reset, never that revision's tail
 * as if it were all of it. */
static void test_order_ring_cuts_next_revision(void **state)
{
    long long r0 = hub_last();
    int fd;

    (void)state;
    fd = subscribe(-1);
    publish(r0 + 2, RING_CAP - 500); /* waits for r0 + 1 */
    publish(r0 + 1, 1000); /* both reach the ring at once: 500 of it stay */
    publish(r0 + 3, 1);
    (void)expect_stream(fd, r0, r0 + 3, 1);
}

/* The same revision cut in the ring, for a stream that resumes right
 * before it: the server has no journal here, so a reset. */
static void test_order_resume_at_cut_revision(void **state)
{
    long long r0 = hub_last();
    int fd;

    (void)state;
    publish(r0 + 1, 1000);
    publish(r0 + 2, RING_CAP - 500);
    fd = subscribe(r0);
    publish(r0 + 3, 1);
    (void)expect_stream(fd, r0, r0 + 3, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_starts_at_tree_revision),
        cmocka_unit_test(test_order_late_revision_waits),
        cmocka_unit_test(test_order_revision_twice_while_waiting),
        cmocka_unit_test(test_order_missing_revision_resets),
        cmocka_unit_test(test_order_missing_revision_given_up_in_time),
        cmocka_unit_test(test_order_resume_before_gap),
        cmocka_unit_test(test_order_ring_cuts_next_revision),
        cmocka_unit_test(test_order_resume_at_cut_revision),
    };

    return cmocka_run_group_tests_name(
        "http-events-order", tests, setup, teardown);
}
