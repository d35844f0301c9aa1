// SPDX-License-Identifier: MIT
/*
 * test-mount-read.c - committed reads on the mount (docs/mount.md,
 * "Committed reads"), in-process: the tree mounted with cfs_mount_start()
 * while the test holds a transaction open on core directly (sealed, as a
 * store holds it until durable).
 *  - read(2) of the attribute it changed waits in its FUSE thread
 *    (cfs_mount_reads_waiting()), and after the transaction is undone
 *    answers the old value, never the undone one;
 *  - read(2) of another item's attribute is answered at once.
 * Skipped without /dev/fuse or the right to mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount.h"
#include "recorder.h"

static struct rec_type *S, *G, *I;
static char dir[64];
static struct cfs_mount *mnt;

struct reader {
    pthread_t t;
    char path[128];
    char got[64];
    atomic_bool done;
};

static void *reader_main(void *arg)
{
    struct reader *rd = arg;
    int fd = open(rd->path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, rd->got, sizeof(rd->got) - 1) : -1;

    rd->got[n > 0 ? n : 0] = '\0';
    if (n < 0) {
        (void)snprintf(rd->got, sizeof(rd->got), "E%d", errno);
    }
    if (fd >= 0) {
        close(fd);
    }
    atomic_store(&rd->done, true);
    return NULL;
}

static void reader_start(struct reader *rd, const char *rel)
{
    (void)snprintf(rd->path, sizeof(rd->path), "%s/%s", dir, rel);
    atomic_init(&rd->done, false);
    assert_int_equal(pthread_create(&rd->t, NULL, reader_main, rd), 0);
}

/* Until @rd answered, or a FUSE thread waits for a commit (10 s at most). */
static void until_done_or_waiting(struct reader *rd)
{
    for (int i = 0; i < 10000; i++) {
        struct pollfd none = {.fd = -1};

        if (atomic_load(&rd->done) || cfs_mount_reads_waiting() > 0) {
            return;
        }
        (void)poll(&none, 1, 1);
    }
}

static bool mounted(void)
{
    struct cfs_mount_options o = {.dir = dir};
    char err[256];

    rec_tree(&S, &G, &I);
    rec_attr(G, "a", 0644, 0);
    G->attrs[0].init = "0\n";
    S->show_item_local = true;
    rec_register("vis", S);
    assert_ok(cfs_mkdir(NULL, "/vis/g0"));
    assert_ok(cfs_mkdir(NULL, "/vis/g1"));
    (void)snprintf(dir, sizeof(dir), "/tmp/cfs-mount-read-XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (access("/dev/fuse", R_OK | W_OK) != 0 ||
        cfs_mount_start(&o, &mnt, err, sizeof(err)) != 0) {
        rmdir(dir);
        return false;
    }
    return true;
}

static void unmounted(void)
{
    cfs_mount_stop(mnt);
    mnt = NULL;
    rmdir(dir);
}

static void test_mount_read_waits_for_what_it_reads(void **state)
{
    struct reader same, other;
    struct cfs_txn *txn;

    (void)state;
    if (!mounted()) {
        skip();
    }
    txn = rec_txn_begin();
    assert_ok(rec_txn_store_str(txn, "/vis/g0/a", "undone"));
    cfs_txn_seal(txn); /* open: not durable yet */

    /* another item: answered while the transaction is open */
    reader_start(&other, "vis/g1/a");
    assert_int_equal(pthread_join(other.t, NULL), 0);
    assert_string_equal(other.got, "0\n");

    /* the item it changed: held in its FUSE thread */
    reader_start(&same, "vis/g0/a");
    until_done_or_waiting(&same);
    if (atomic_load(&same.done)) {
        (void)rec_txn_abort(txn);
        unmounted();
        fail_msg("read(2) answered \"%s\" while the change to it was not "
                 "committed",
                 same.got);
    }
    assert_true(cfs_mount_reads_waiting() > 0);
    assert_ok(rec_txn_abort(txn)); /* the commit failed: undone */
    assert_int_equal(pthread_join(same.t, NULL), 0);
    assert_string_equal(same.got, "0\n"); /* never the undone value */
    unmounted();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_mount_read_waits_for_what_it_reads),
    };

    return rec_run("mount-read", tests);
}
