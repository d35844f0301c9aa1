// SPDX-License-Identifier: MIT
/*
 * test-core-visible.c - committed reads at their granularity: a property
 * test over random interleavings of transactions (committed, undone, or
 * changing the tree while a read runs) and reads (an attribute, a
 * listing, a node, a link), checked against a model of which resources
 * each transaction changed (docs/DESIGN.md "Committed reads").
 *
 * Every answer (cfs_read_end() == 0) must name committed state: the value
 * read is the committed one at the time of the answer. A read of
 * resources no open transaction touched is never held (0 at once); a read
 * of something an open transaction changed is held (-EINPROGRESS), then
 * answered when it commits or read again (-EAGAIN) when it is undone; a
 * read that another thread's transaction changed while it read is read
 * again, whether it began before or during that transaction.
 *
 *   vis (S, su_show_item_local)   groups g0..g5 (type G: attribute a,
 *                                 links), made by mkdir
 *   mod (S2, not item-local)      groups m0, m1 (type G2: attribute a)
 */
#include <pthread.h>

#include "recorder.h"

/* visible.c's keys (internal; the test checks that the names it uses
 * fall into distinct stripes, so that "never held" is exact) */
enum cfs_vis_key { CFS_VIS_SUB, CFS_VIS_SELF, CFS_VIS_OWN };
uint32_t cfs__vis_stripe(uint64_t key, enum cfs_vis_key kind);
uint64_t cfs__vis_key_child(uint64_t parent, const char *name, size_t len);
#define KEY_ROOT 0xcbf29ce484222325ull

#define NG      6 /* groups of vis */
#define NX      3 /* names mkdir and rmdir use: x0..x2 */
#define ITER    3000
#define MAXOPEN 3

static struct rec_type *S, *G, *I, *S2, *G2, *I2;

/* The model: committed state, and what each open transaction changed. */
struct model {
    char val[NG][16];  /* committed value of g<i>/a */
    bool x_exists[NX]; /* committed: vis/x<i> exists */
};

struct open_txn {
    struct cfs_txn *txn;
    bool wrote[NG];   /* g<i>/a */
    bool made[NX];    /* x<i> made or removed */
    bool mod;         /* something in mod */
    char val[NG][16]; /* what it wrote */
    bool x_after[NX];
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static uint64_t key_of(const char *path)
{
    uint64_t k = KEY_ROOT;
    const char *p = path;

    while (*p) {
        const char *e;

        while (*p == '/') {
            p++;
        }
        e = p;
        while (*e && *e != '/') {
            e++;
        }
        if (e > p) {
            k = cfs__vis_key_child(k, p, (size_t)(e - p));
        }
        p = e;
    }
    return k;
}

static void tree(void)
{
    char path[64];

    rec_tree(&S, &G, &I);
    rec_attr(G, "a", 0644, 0);
    G->attrs[0].init = "0";
    S->show_item_local = true;
    rec_register("vis", S);
    rec_tree(&S2, &G2, &I2);
    rec_attr(G2, "a", 0644, 0);
    G2->attrs[0].init = "0";
    rec_register("mod", S2);
    for (int i = 0; i < NG; i++) {
        (void)snprintf(path, sizeof(path), "/vis/g%d", i);
        assert_ok(cfs_mkdir(NULL, path));
    }
    assert_ok(cfs_mkdir(NULL, "/mod/m0"));
    assert_ok(cfs_mkdir(NULL, "/mod/m1"));
    rec_clear();
}

/* The stripes the test's names fall into are all different. */
static void check_stripes_distinct(void)
{
    const char *paths[NG + NX + 6];
    char buf[NG + NX][16];
    uint32_t seen[3 * (NG + NX + 6) + 8];
    size_t n = 0, k = 0;

    for (int i = 0; i < NG; i++) {
        (void)snprintf(buf[i], sizeof(buf[i]), "/vis/g%d", i);
        paths[n++] = buf[i];
    }
    for (int i = 0; i < NX; i++) {
        (void)snprintf(buf[NG + i], sizeof(buf[0]), "/vis/x%d", i);
        paths[n++] = buf[NG + i];
    }
    paths[n++] = "/vis";
    paths[n++] = "/mod";
    paths[n++] = "/mod/m0";
    paths[n++] = "/mod/m1";
    for (size_t i = 0; i < n; i++) {
        uint64_t key = key_of(paths[i]);

        seen[k++] = cfs__vis_stripe(key, CFS_VIS_SUB);
        seen[k++] = cfs__vis_stripe(key, CFS_VIS_SELF);
        seen[k++] = cfs__vis_stripe(key, CFS_VIS_OWN);
    }
    seen[k++] = cfs__vis_stripe(KEY_ROOT, CFS_VIS_SUB);
    seen[k++] = cfs__vis_stripe(KEY_ROOT, CFS_VIS_OWN);
    for (size_t i = 0; i < k; i++) {
        for (size_t j = i + 1; j < k; j++) {
            assert_int_not_equal(seen[i], seen[j]);
        }
    }
}

/* ---- reads -------------------------------------------------------------- */

enum read_kind { RD_ATTR, RD_LIST, RD_STAT, RD_MOD, RD_X, N_READS };

struct read {
    enum read_kind kind;
    int i;
    char got[64]; /* what it read */
    struct cfs_read_mark mark;
    int r;
};

static void do_read(struct read *rd)
{
    char path[64];
    struct cfs_entry e;

    switch (rd->kind) {
    case RD_ATTR: /* an attribute of one group */
        (void)snprintf(path, sizeof(path), "/vis/g%d/a", rd->i);
        (void)snprintf(rd->got, sizeof(rd->got), "%s", rec_cat(path));
        break;
    case RD_LIST: /* the listing of vis */
        (void)snprintf(rd->got, sizeof(rd->got), "%.63s", rec_ls("/vis"));
        break;
    case RD_STAT: /* a node of vis */
        (void)snprintf(path, sizeof(path), "/vis/g%d", rd->i);
        assert_ok(cfs_stat(path, &e));
        cfs_entry_done(&e);
        rd->got[0] = 0;
        break;
    case RD_MOD: /* an attribute of the module-wide subsystem */
        (void)snprintf(path, sizeof(path), "/mod/m%d/a", rd->i % 2);
        (void)snprintf(rd->got, sizeof(rd->got), "%s", rec_cat(path));
        break;
    case RD_X: /* a node that mkdir and rmdir make and take */
        (void)snprintf(path, sizeof(path), "/vis/x%d", rd->i % NX);
        rd->got[0] = cfs_stat(path, &e) == 0 ? 'y' : 'n';
        rd->got[1] = 0;
        if (rd->got[0] == 'y') {
            cfs_entry_done(&e);
        }
        break;
    default:
        fail();
    }
}

static void read_begin(struct read *rd, enum read_kind kind, int i)
{
    rd->kind = kind;
    rd->i = i;
    cfs_read_begin(&rd->mark);
    do_read(rd);
    rd->r = cfs_read_end(&rd->mark);
}

/* Did the open transaction @t change what @rd reads? */
static bool overlaps(const struct read *rd, const struct open_txn *t)
{
    switch (rd->kind) {
    case RD_ATTR:
    case RD_STAT:
        return t->wrote[rd->i];
    case RD_LIST:
        for (int i = 0; i < NG; i++) {
            if (t->wrote[i]) {
                return true;
            }
        }
        for (int i = 0; i < NX; i++) {
            if (t->made[i]) {
                return true;
            }
        }
        return false;
    case RD_MOD:
        return t->mod; /* module-wide: any change to mod */
    case RD_X:
        return t->made[rd->i % NX];
    default:
        return true;
    }
}

/* The committed answer the model gives for @rd. */
static bool matches_committed(const struct read *rd, const struct model *m)
{
    switch (rd->kind) {
    case RD_ATTR:
        return strcmp(rd->got, m->val[rd->i]) == 0;
    case RD_X:
        return (rd->got[0] == 'y') == m->x_exists[rd->i % NX];
    default:
        return true; /* checked through the others */
    }
}

/* ---- transactions ------------------------------------------------------- */

/* Begin @t, change 1-3 random things (as the model allows), seal. */
static void txn_run(struct open_txn *t, const struct model *m, bool *x_now)
{
    char path[64];
    int nops = 1 + (int)rnd(3);

    memset(t, 0, sizeof(*t));
    memcpy(t->x_after, x_now, sizeof(t->x_after));
    t->txn = rec_txn_begin();
    for (int k = 0; k < nops; k++) {
        unsigned what = rnd(10);

        if (what < 6) {
            int i = (int)rnd(NG);

            (void)snprintf(t->val[i], sizeof(t->val[i]), "v%u", rnd(1000));
            (void)snprintf(path, sizeof(path), "/vis/g%d/a", i);
            assert_ok(rec_txn_store_str(t->txn, path, t->val[i]));
            t->wrote[i] = true;
        } else if (what < 8) {
            int i = (int)rnd(NX);

            (void)snprintf(path, sizeof(path), "/vis/x%d", i);
            if (t->x_after[i]) {
                assert_ok(cfs_rmdir(t->txn, path));
            } else {
                assert_ok(cfs_mkdir(t->txn, path));
            }
            t->x_after[i] = !t->x_after[i];
            t->made[i] = true;
        } else {
            (void)snprintf(path, sizeof(path), "/mod/m%u/a", rnd(2));
            assert_ok(rec_txn_store_str(t->txn, path, "w"));
            t->mod = true;
        }
    }
    (void)m;
    memcpy(x_now, t->x_after, sizeof(t->x_after));
    cfs_txn_seal(t->txn); /* the lock goes; it stays open, as queued */
}

/* ---- the property ------------------------------------------------------- */

static void test_reads_wait_only_for_what_they_read(void **state)
{
    struct model m;
    struct open_txn open[MAXOPEN];
    struct read held[64];
    size_t n_held = 0, n_open = 0;
    bool x_now[NX] = {false};
    unsigned answered = 0, waited = 0, reread = 0;

    (void)state;
    tree();
    check_stripes_distinct();
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < NG; i++) {
        (void)snprintf(m.val[i], sizeof(m.val[i]), "0");
    }
    for (int it = 0; it < ITER; it++) {
        unsigned step = rnd(10);

        if (step < 3 && n_open < MAXOPEN) {
            txn_run(&open[n_open++], &m, x_now);
        } else if (step < 5 && n_open > 0) {
            /* the oldest ends, committed or undone (the store's order);
             * an undo undoes every later one too, as a failed commit does
             * (a queue fails from there on) */
            bool commit = rnd(4) != 0;

            if (commit) {
                struct open_txn *t = &open[0];

                rec_txn_commit(t->txn);
                for (int i = 0; i < NG; i++) {
                    if (t->wrote[i]) {
                        memcpy(m.val[i], t->val[i], sizeof(m.val[i]));
                    }
                }
                memcpy(m.x_exists, t->x_after, sizeof(m.x_exists));
                memmove(&open[0], &open[1], --n_open * sizeof(open[0]));
            } else {
                while (n_open > 0) {
                    assert_ok(rec_txn_abort(open[--n_open].txn));
                }
                memcpy(x_now, m.x_exists, sizeof(x_now));
            }
            /* every held read: answered with committed state, read again
             * after an undo, or still held only while a transaction that
             * changed what it read is open */
            for (size_t h = 0; h < n_held;) {
                struct read *rd = &held[h];
                bool still = false;

                rd->r = cfs_read_end(&rd->mark);
                for (size_t o = 0; o < n_open; o++) {
                    still = still || overlaps(rd, &open[o]);
                }
                if (rd->r == -EINPROGRESS) {
                    assert_true(still);
                    h++;
                    continue;
                }
                if (rd->r == 0) {
                    assert_true(matches_committed(rd, &m));
                    answered++;
                } else {
                    assert_int_equal(rd->r, -EAGAIN);
                    assert_false(commit); /* only an undo reads again */
                    reread++;
                }
                held[h] = held[--n_held];
            }
        } else if (n_held < 64) {
            struct read *rd = &held[n_held];
            bool touched = false;

            read_begin(rd, (enum read_kind)rnd(N_READS), (int)rnd(NG));
            for (size_t o = 0; o < n_open; o++) {
                touched = touched || overlaps(rd, &open[o]);
            }
            if (!touched) {
                /* nothing open changed it: never held, committed */
                assert_int_equal(rd->r, 0);
                assert_true(matches_committed(rd, &m));
                answered++;
            } else {
                assert_int_equal(rd->r, -EINPROGRESS);
                waited++;
                n_held++;
            }
        }
    }
    while (n_open > 0) {
        rec_txn_commit(open[0].txn);
        memmove(&open[0], &open[1], --n_open * sizeof(open[0]));
    }
    print_message(
        "# answered %u, held %u, read again %u\n", answered, waited, reread);
    assert_true(answered > 50 && waited > 20 && reread > 0);
}

/* ---- torn reads --------------------------------------------------------- */

struct writer {
    const char *path;
    const char *value, *value2; /* stored, then (told to go on) value2 */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stage; /* 1: its transaction changed the tree; 2: go on */
};

/* Another thread: a transaction that changes @w->path, holds the lock
 * until told, then commits. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct cfs_txn *txn = rec_txn_begin();

    assert_ok(rec_txn_store_str(txn, w->path, w->value));
    pthread_mutex_lock(&w->lock);
    w->stage = 1;
    pthread_cond_broadcast(&w->cond);
    while (w->stage != 2) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    if (w->value2) {
        assert_ok(rec_txn_store_str(txn, w->path, w->value2));
    }
    rec_txn_commit(txn);
    return NULL;
}

static void writer_start(struct writer *w, pthread_t *t)
{
    w->stage = 0;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    assert_int_equal(pthread_create(t, NULL, writer_main, w), 0);
    pthread_mutex_lock(&w->lock);
    while (w->stage != 1) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
}

static void writer_finish(struct writer *w, pthread_t t)
{
    pthread_mutex_lock(&w->lock);
    w->stage = 2;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

/* A read that began while another thread's transaction held the lock
 * and had changed what it reads, and that changes it once more before it
 * commits, is torn: busy, then read again, never answered with the first
 * change alone. A read of another group at the same time is not held. */
static void test_read_begun_during_other_txn(void **state)
{
    struct writer w = {.path = "/vis/g1/a", .value = "t1", .value2 = "t2"};
    struct read same, other;
    pthread_t t;

    (void)state;
    tree();
    writer_start(&w, &t);
    read_begin(&same, RD_ATTR, 1);
    read_begin(&other, RD_ATTR, 2);
    assert_string_equal(same.got, "t1"); /* half of its change */
    assert_int_equal(same.r, -EINPROGRESS);
    assert_int_equal(other.r, 0); /* writes elsewhere hold nothing */
    writer_finish(&w, t);
    assert_int_equal(cfs_read_end(&same.mark), -EAGAIN);
    read_begin(&same, RD_ATTR, 1);
    assert_int_equal(same.r, 0);
    assert_string_equal(same.got, "t2");
}

/* A second transaction while the first is open (both queued): a read of
 * what only the first changed still waits for the first. */
static void test_second_txn_keeps_first_open(void **state)
{
    struct cfs_txn *t1, *t2;
    struct read rd;

    (void)state;
    tree();
    t1 = rec_txn_begin();
    assert_ok(rec_txn_store_str(t1, "/vis/g0/a", "one"));
    cfs_txn_seal(t1);
    t2 = rec_txn_begin();
    assert_ok(rec_txn_store_str(t2, "/vis/g3/a", "two"));
    cfs_txn_seal(t2);
    read_begin(&rd, RD_ATTR, 0);
    assert_int_equal(rd.r, -EINPROGRESS);
    assert_ok(rec_txn_abort(t2));
    assert_ok(rec_txn_abort(t1));
    assert_int_equal(cfs_read_end(&rd.mark), -EAGAIN);
    read_begin(&rd, RD_ATTR, 0);
    assert_int_equal(rd.r, 0);
    assert_string_equal(rd.got, "0"); /* the undone value never answered */
}

/* A read under the lock (the progress path) is never torn, and waits
 * only for what was queued before it. */
static void test_read_under_lock(void **state)
{
    struct cfs_txn *t1;
    struct read rd;

    (void)state;
    tree();
    t1 = rec_txn_begin();
    assert_ok(rec_txn_store_str(t1, "/vis/g4/a", "q"));
    cfs_txn_seal(t1);
    rd.kind = RD_LIST;
    rd.i = 0;
    cfs_read_begin(&rd.mark);
    cfs_read_lock();
    do_read(&rd);
    cfs_read_unlock();
    assert_int_equal(cfs_read_end(&rd.mark), -EINPROGRESS);
    rec_txn_commit(t1);
    assert_int_equal(cfs_read_end(&rd.mark), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_reads_wait_only_for_what_they_read),
        REC_TEST(test_read_begun_during_other_txn),
        REC_TEST(test_second_txn_keeps_first_open),
        REC_TEST(test_read_under_lock),
    };

    return rec_run("core-visible", tests);
}
