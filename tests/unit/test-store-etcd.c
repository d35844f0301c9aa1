// SPDX-License-Identifier: MIT
/*
 * test-store-etcd.c - the etcd backend without etcd: a cluster node on the
 * fake etcd of fake-etcd.h (linked in place of the backend's HTTP client),
 * with the other nodes played by the test through the fake's keys. Each
 * test is a failure a real cluster has and the cluster suite (tests/cluster)
 * cannot bring about on purpose: a snapshot altered in etcd, an append
 * whose answer is lost on every member, the log trimmed below a node that
 * is live but behind, the watch stream cut while reads still answer; and
 * the paths every append and every follower take: an answer lost and the
 * request sent again, a CAS lost to another node (undone here, theirs
 * applied), the writer's role taken and handed on, entries that came while
 * the watch was cut and the history compacted, or out of order.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <nettle/sha2.h>
#include <sqlite3.h>

#include <configfs/store.h>

#include "fake-etcd.h"
#include "store-test-util.h"
#include "store-testsys.h"

#define URL    "etcd://127.0.0.1:1/t"
#define SYS    "etcdsys"
#define WAIT_S 20

struct env {
    struct tmpdb db;
    struct tsys *sys;
};

static int env_setup(void **state)
{
    struct env *v = calloc(1, sizeof(*v));
    void *db = NULL;

    if (!v || tmpdb_setup(&db) < 0) {
        free(v);
        return -1;
    }
    v->db = *(struct tmpdb *)db;
    *state = v;
    /* the directory stays; only the fixture's copy of its name goes */
    free(db);
    store_test_threaded(true); /* the backend's threads allocate */
    fake_etcd_reset();
    return 0;
}

static int env_teardown(void **state)
{
    struct env *v = *state;
    struct tmpdb *db = calloc(1, sizeof(*db));

    tsys_unregister(v->sys);
    fake_etcd_reset();
    store_test_threaded(false);
    *db = v->db;
    free(v);
    *state = db;
    return tmpdb_teardown(state);
}

static int open_node(uint64_t snapshot_every, struct cfs_store **ret)
{
    struct cfs_store_options o = {
        .etcd = URL,
        .snapshot_every = snapshot_every,
    };

    return cfs_store_open(&o, ret);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static struct cfs_store_cluster_info info_of(struct cfs_store *s)
{
    struct cfs_store_cluster_info i;

    assert_int_equal(cfs_store_cluster(s, &i), 0);
    return i;
}

static char *log_key(uint64_t rev)
{
    static char k[64];

    (void)snprintf(k, sizeof(k), "/t/log/%020llu", (unsigned long long)rev);
    return k;
}

static bool exists(const char *path)
{
    struct cfs_entry en;

    if (cfs_stat(path, &en) < 0) {
        return false;
    }
    cfs_entry_done(&en);
    return true;
}

/* Another node's batch at @rev: mkdir /SYS/items/@name (entry format 2,
 * plain JSON), and the head. */
static void foreign(uint64_t rev, const char *name)
{
    char v[256], h[24];

    (void)snprintf(v,
                   sizeof(v),
                   "{\"v\":2,\"first\":%llu,\"last\":%llu,\"t\":1,"
                   "\"u\":\"other\",\"sets\":[{\"c\":[{\"o\":%d,"
                   "\"p\":\"/" SYS "/items/%s\"}]}]}",
                   (unsigned long long)rev,
                   (unsigned long long)rev,
                   (int)CFS_OP_MKDIR,
                   name);
    fake_etcd_put(log_key(rev), v, strlen(v), 0);
    (void)snprintf(h, sizeof(h), "%llu", (unsigned long long)rev);
    fake_etcd_put("/t/head", h, strlen(h), 0);
}

static void wait_applied(struct cfs_store *s, uint64_t rev)
{
    double t0 = now_s();

    while (info_of(s).applied < rev && now_s() - t0 < WAIT_S) {
        pause_ms(10);
    }
    assert_int_equal(info_of(s).applied, rev);
}

/* (a) A published snapshot whose part was altered but kept its length
 * (an undeflated, version 1 snapshot: zlib's own check does not help) is
 * refused by a starting node: its SHA-256 does not match. The same
 * snapshot unaltered is loaded. */
static void publish_snapshot(const char *file, bool alter)
{
    FILE *f = fopen(file, "rb");
    char *buf = malloc(1 << 22), ptr[512], hex[2 * SHA256_DIGEST_SIZE + 1];
    uint8_t d[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    size_t n;
    char *hit;

    assert_non_null(f);
    n = fread(buf, 1, 1 << 22, f);
    fclose(f);
    sha256_init(&ctx);
    sha256_update(&ctx, n, (const uint8_t *)buf);
    sha256_digest(&ctx, sizeof(d), d);
    for (size_t i = 0; i < sizeof(d); i++) {
        (void)snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    hit = memmem(buf, n, "snapshot-value", 14);
    assert_non_null(hit);
    if (alter) {
        hit[13] = 'E'; /* same length, one byte else */
    }
    (void)snprintf(ptr,
                   sizeof(ptr),
                   "{\"v\":1,\"revision\":2,\"id\":\"s1\",\"parts\":1,"
                   "\"length\":%zu,\"sha256\":\"%s\"}",
                   n,
                   hex);
    fake_etcd_put("/t/snap/s1/000000", buf, n, 0);
    fake_etcd_put("/t/snapshot", ptr, strlen(ptr), 0);
    fake_etcd_put("/t/head", "2", 1, 0);
    free(buf);
}

static void make_snapshot_file(struct env *v, const char *file)
{
    struct cfs_store_options o = {.path = v->db.path};
    struct cfs_store *s = NULL;
    sqlite3 *db = NULL;
    char sql[PATH_MAX + 64];

    assert_int_equal(cfs_store_open(&o, &s), 0);
    RUN(s, "mkdir /" SYS "/items/x");
    RUN(s, "store /" SYS "/items/x/a snapshot-value");
    cfs_store_close(s);
    tsys_unregister(v->sys); /* the tree forgets; the file remembers */
    v->sys = NULL;
    assert_int_equal(sqlite3_open(v->db.path, &db), SQLITE_OK);
    (void)snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", file);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void test_snapshot_checked(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    char file[PATH_MAX + 32];

    (void)snprintf(file, sizeof(file), "%s/snap.db", v->db.dir);
    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    make_snapshot_file(v, file);

    publish_snapshot(file, true);
    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), -EUCLEAN);

    fake_etcd_reset();
    publish_snapshot(file, false);
    assert_int_equal(open_node(0, &s), 0);
    expect_written("/" SYS "/items/x/a", "snapshot-value");
    assert_int_equal(info_of(s).snapshots_loaded, 1);
    cfs_store_close(s);
    (void)remove(file);
}

/* (b) A batch too big for one request goes in chunks, then its entry; when
 * the txn that appends the entry times out on every member although etcd
 * carried it out, the chunks stay (the entry names them), and the node
 * applies its own batch from the log like any other. */
static void test_chunked_append_timeout(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    enum { ITEMS = 60 };
    static char vals[ITEMS * 3][61];
    uint64_t seed = 88172645463325252ull;
    struct cfs_txn *txn = NULL;
    double t0;
    int r;

    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    /* one change set of 11 KB of values that deflate does not shrink
     * much: over the 2 KiB of one request this test is built with */
    assert_int_equal(cfs_txn_begin(&txn), 0);
    for (size_t i = 0; i < ITEMS; i++) {
        char path[64];

        (void)snprintf(path, sizeof(path), "/" SYS "/items/i%zu", i);
        assert_int_equal(cfs_mkdir(txn, path), 0);
        for (size_t a = 0; a < 3; a++) {
            char *val = vals[i * 3 + a];

            for (size_t c = 0; c < 60; c++) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                val[c] = "abcdefghijklmnopqrstuvwxyz012345"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ6789+-"[seed % 64];
            }
            val[60] = '\0';
            (void)snprintf(path,
                           sizeof(path),
                           "/" SYS "/items/i%zu/%c",
                           i,
                           (int)("abc"[a]));
            assert_int_equal(cfs_write(txn, path, val, 60), 0);
        }
    }
    fake_etcd_lose_txn_answers("/t/log/", 1);
    r = cfs_store_commit_txn(s, txn, "tester", NULL);
    assert_int_equal(r, -ETIMEDOUT);
    assert_true(fake_etcd_has(log_key(1)));
    assert_true(fake_etcd_count("/t/chunk/") >= 2);
    /* the node takes its batch back from the log, chunks and all */
    t0 = now_s();
    while (info_of(s).applied < 1 && now_s() - t0 < WAIT_S) {
        pause_ms(20);
    }
    assert_int_equal(info_of(s).applied, 1);
    assert_int_equal(info_of(s).replay_errors, 0);
    expect_written("/" SYS "/items/i7/b", vals[7 * 3 + 1]);
    cfs_store_close(s);
}

/* (c) Trimming keeps what a live node still needs: another node is
 * registered (its lease alive) at revision 1, paused, while this one
 * writes a snapshot at 4 and trims. Entry 2 must stay. */
static void test_trim_keeps_live_node(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    int64_t lease = fake_etcd_lease();
    double t0;

    fake_etcd_put("/t/nodes/paused", "1", 1, lease);
    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(2, &s), 0);
    RUN(s, "mkdir /" SYS "/items/x");
    RUN(s, "store /" SYS "/items/x/a 1");
    RUN(s, "store /" SYS "/items/x/a 2");
    RUN(s, "store /" SYS "/items/x/a 3");
    t0 = now_s();
    while (info_of(s).trimmed < 1 && now_s() - t0 < WAIT_S) {
        pause_ms(20);
    }
    assert_true(info_of(s).snapshots_written >= 1);
    assert_int_equal(info_of(s).trimmed, 1);
    assert_false(fake_etcd_has(log_key(1)));
    assert_true(fake_etcd_has(log_key(2)));
    assert_true(fake_etcd_has(log_key(4)));
    cfs_store_close(s);
}

/* (d) The watch stream cut while range reads still answer: the node may
 * miss what others append, so its reads say they may be stale (the server
 * marks them X-Configfsd-Stale) until the watch is back. */
static void test_watch_cut_is_stale(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    double t0;

    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    t0 = now_s();
    while (cfs_store_stale(s) && now_s() - t0 < WAIT_S) {
        pause_ms(10);
    }
    assert_false(cfs_store_stale(s));

    fake_etcd_cut_watch(true);
    t0 = now_s();
    while (!cfs_store_stale(s) && now_s() - t0 < WAIT_S) {
        pause_ms(10);
    }
    assert_true(cfs_store_stale(s));
    RUN(s, "mkdir /" SYS "/items/y"); /* etcd still answers */
    assert_string_equal(info_of(s).error, "");
    assert_true(cfs_store_stale(s));

    fake_etcd_cut_watch(false);
    t0 = now_s();
    while (cfs_store_stale(s) && now_s() - t0 < WAIT_S) {
        pause_ms(10);
    }
    assert_false(cfs_store_stale(s));
    cfs_store_close(s);
}

/* An append whose answer was lost after etcd carried it out, sent again:
 * the second run loses the CAS to the first, and the entry found at the
 * revision (its nonce) says it is this node's own: a success, not a
 * conflict, and in the log once. */
static void test_append_answer_lost_resent(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;

    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    fake_etcd_resend_txns("/t/log/", 1);
    RUN(s, "mkdir /" SYS "/items/x");
    assert_int_equal(info_of(s).conflicts, 0);
    assert_int_equal(info_of(s).applied, 1);
    assert_int_equal(fake_etcd_count("/t/log/"), 1);
    RUN(s, "mkdir /" SYS "/items/y");
    assert_int_equal(info_of(s).applied, 2);
    assert_true(exists("/" SYS "/items/x"));
    cfs_store_close(s);
}

static void other_appends_first(void)
{
    foreign(1, "theirs");
}

/* Another node appends first: this node's CAS fails (-ESTALE), its change
 * is undone in its tree, the other node's batch is applied, and the same
 * change made again lands after it. */
static void test_append_loses_race(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    static const char *const mine[] = {"mkdir /" SYS "/items/mine"};

    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    fake_etcd_before_txn("/t/log/", other_appends_first);
    assert_int_equal(store_test_run(s, NULL, mine, 1), -ESTALE);
    assert_int_equal(info_of(s).conflicts, 1);
    wait_applied(s, 1);
    assert_true(exists("/" SYS "/items/theirs"));
    assert_false(exists("/" SYS "/items/mine"));
    RUN(s, "mkdir /" SYS "/items/mine");
    assert_int_equal(info_of(s).applied, 2);
    assert_true(fake_etcd_has(log_key(2)));
    assert_int_equal(info_of(s).replay_errors, 0);
    cfs_store_close(s);
}

static void wait_writer(struct cfs_store *s, const char *url, bool self)
{
    double t0 = now_s();
    struct cfs_store_cluster_info i = info_of(s);

    while ((strcmp(i.writer, url) != 0 || i.writer_self != self) &&
           now_s() - t0 < WAIT_S) {
        pause_ms(10);
        i = info_of(s);
    }
    assert_string_equal(i.writer, url);
    assert_int_equal(i.writer_self, self);
}

/* The writer's role: held by another node, this node forwards to it; when
 * its lease goes, the first node that finds the role free takes it, and
 * forwards no more. */
static void test_writer_election(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;
    int64_t lease = fake_etcd_lease();
    const char *other = "other http://127.0.0.2:9";
    char url[64];

    fake_etcd_put("/t/writer", other, strlen(other), lease);
    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    assert_int_equal(cfs_store_writer(s, url, sizeof(url)), 0);
    assert_int_equal(cfs_store_advertise(s, "http://127.0.0.1:9"), 0);
    wait_writer(s, "http://127.0.0.2:9", false);
    assert_int_equal(cfs_store_writer(s, url, sizeof(url)), 1);
    assert_string_equal(url, "http://127.0.0.2:9");

    fake_etcd_revoke(lease); /* the other node is gone */
    wait_writer(s, "http://127.0.0.1:9", true);
    assert_int_equal(cfs_store_writer(s, url, sizeof(url)), 0);
    assert_true(fake_etcd_has("/t/writer"));
    cfs_store_close(s);
}

/* What other nodes appended while the watch was cut, and the history
 * compacted meanwhile, is applied from the log once the watch is back;
 * entries the watch brings out of order are applied in order. */
static void test_follow_cut_compacted_reordered(void **state)
{
    struct env *v = *state;
    struct cfs_store *s = NULL;

    assert_int_equal(tsys_register(SYS, &v->sys), 0);
    assert_int_equal(open_node(0, &s), 0);
    fake_etcd_cut_watch(true);
    foreign(1, "a");
    foreign(2, "b");
    fake_etcd_compact();
    fake_etcd_cut_watch(false);
    wait_applied(s, 2);

    fake_etcd_reorder(true);
    foreign(3, "c");
    foreign(4, "d");
    foreign(5, "e");
    wait_applied(s, 5);
    assert_true(exists("/" SYS "/items/a"));
    assert_true(exists("/" SYS "/items/e"));
    assert_int_equal(info_of(s).replay_errors, 0);
    cfs_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_snapshot_checked, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_chunked_append_timeout, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_trim_keeps_live_node, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_watch_cut_is_stale, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_append_answer_lost_resent, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_append_loses_race, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_writer_election, env_setup, env_teardown),
        cmocka_unit_test_setup_teardown(
            test_follow_cut_compacted_reordered, env_setup, env_teardown),
    };

    return cmocka_run_group_tests(
        tests, store_test_group_setup, store_test_group_teardown);
}
