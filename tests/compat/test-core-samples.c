// SPDX-License-Identifier: MIT
/*
 * test-core-samples.c - the built-in sample subsystems (core/samples,
 * docs/DESIGN.md §2) driven through the operation layer: registration
 * all or nothing, showme counting reads, storeme, mkdir of items and
 * groups, and commit/uncommit of 04-committable-children (C3-C9).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#include "samples.h"
#include "util.h"

/* cmocka counts what a test function leaves allocated as leaked, so each
 * test registers the samples itself and unregisters them before it
 * returns; teardown only cleans up after a failed test. */
static int samples_teardown(void **state)
{
    cfs_samples_unregister();
    return cu_teardown(state);
}

/* A subsystem that takes a sample's name. */
static const struct config_item_type squatter_type = {0};
static struct configfs_subsystem squatter = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "03-group-children",
                    .ci_type = &squatter_type,
                },
        },
};

/* M9: a taken name fails registration with EEXIST; the samples then
 * register none of the four. A second registration is EEXIST too. */
static void test_samples_register_all_or_nothing(void **state)
{
    (void)state;
    config_group_init(&squatter.su_group);
    assert_int_equal(configfs_register_subsystem(&squatter), 0);
    assert_int_equal(cfs_samples_register(), -EEXIST);
    assert_false(cu_listed("/", "01-childless"));
    assert_false(cu_listed("/", "02-simple-children"));
    assert_false(cu_listed("/", "04-committable-children"));
    configfs_unregister_subsystem(&squatter);

    assert_int_equal(cfs_samples_register(), 0);
    assert_true(cu_listed("/", "01-childless"));
    assert_true(cu_listed("/", "02-simple-children"));
    assert_true(cu_listed("/", "03-group-children"));
    assert_true(cu_listed("/", "04-committable-children"));
    assert_int_equal(cfs_samples_register(), -EEXIST);
    cfs_samples_unregister();
    assert_false(cu_listed("/", "01-childless"));
    cfs_samples_unregister();
}

/* 01-childless: showme counts its reads (RD3: one show per read),
 * storeme keeps an integer, description is text; no mkdir (MK4). */
static void test_samples_childless(void **state)
{
    char buf[512];
    char want[32];
    int first;

    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    assert_int_equal(cu_show("/01-childless/showme", buf, sizeof(buf)), 0);
    first = (int)strtol(buf, NULL, 10);
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(cu_show("/01-childless/showme", buf, sizeof(buf)), 0);
        (void)snprintf(want, sizeof(want), "%d\n", first + i);
        assert_string_equal(buf, want);
    }

    assert_int_equal(cu_store("/01-childless/storeme", "12\n"), 0);
    assert_int_equal(cu_show("/01-childless/storeme", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "12\n");
    assert_int_equal(cu_store("/01-childless/storeme", "-1"), -EINVAL);
    assert_int_equal(cu_store("/01-childless/storeme", "x"), -EINVAL);
    assert_int_equal(cu_store("/01-childless/storeme", "2147483648"), -ERANGE);
    assert_int_equal(cu_show("/01-childless/storeme", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "12\n");

    assert_int_equal(cu_show("/01-childless/description", buf, sizeof(buf)), 0);
    assert_true(strncmp(buf, "[01-childless]\n", 15) == 0);
    assert_int_equal(cu_store("/01-childless/description", "x"), -EACCES);
    assert_int_equal(cfs_mkdir(NULL, "/01-childless/x"), -EPERM);
    cfs_samples_unregister();
}

#define SHOW_THREADS 4
#define SHOW_READS   100

struct show_reader {
    pthread_t thread;
    int values[SHOW_READS];
    bool failed;
};

static void *show_reader_run(void *arg)
{
    struct show_reader *r = arg;
    char buf[32];

    for (int i = 0; i < SHOW_READS; i++) {
        if (cu_show("/01-childless/showme", buf, sizeof(buf)) < 0) {
            r->failed = true;
            break;
        }
        r->values[i] = (int)strtol(buf, NULL, 10);
    }
    return NULL;
}

static int int_cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* show() runs with no core lock (T9, RD7: concurrent shows of one
 * attribute are allowed), so readers in several threads race on showme;
 * each read still gets its own number: the numbers are consecutive. */
static void test_samples_showme_concurrent(void **state)
{
    static struct show_reader readers[SHOW_THREADS];
    static int all[SHOW_THREADS * SHOW_READS];
    size_t n = 0;

    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    for (int t = 0; t < SHOW_THREADS; t++) {
        readers[t].failed = false;
        assert_int_equal(
            pthread_create(
                &readers[t].thread, NULL, show_reader_run, &readers[t]),
            0);
    }
    for (int t = 0; t < SHOW_THREADS; t++) {
        assert_int_equal(pthread_join(readers[t].thread, NULL), 0);
        assert_false(readers[t].failed);
        for (int i = 0; i < SHOW_READS; i++) {
            all[n++] = readers[t].values[i];
        }
    }
    qsort(all, n, sizeof(all[0]), int_cmp);
    for (size_t i = 1; i < n; i++) {
        assert_int_equal(all[i], all[i - 1] + 1);
    }
    cfs_samples_unregister();
}

/* 02-simple-children: mkdir makes an item with storeme. */
static void test_samples_simple_children(void **state)
{
    char buf[512];

    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    assert_int_equal(cfs_mkdir(NULL, "/02-simple-children/c1"), 0);
    assert_true(cu_listed("/02-simple-children/c1", "storeme"));
    assert_int_equal(
        cu_show("/02-simple-children/c1/storeme", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(cu_store("/02-simple-children/c1/storeme", "42\n"), 0);
    assert_int_equal(
        cu_show("/02-simple-children/c1/storeme", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "42\n");
    assert_int_equal(cfs_mkdir(NULL, "/02-simple-children/c1/x"), -EPERM);
    assert_int_equal(
        cu_show("/02-simple-children/description", buf, sizeof(buf)), 0);
    assert_true(strncmp(buf, "[02-simple-children]\n", 21) == 0);
    assert_int_equal(cfs_rmdir(NULL, "/02-simple-children/c1"), 0);
    assert_false(cu_listed("/02-simple-children", "c1"));
    cfs_samples_unregister();
}

/* 03-group-children: mkdir makes a group in which mkdir makes items;
 * a group with a child is not removable (RM7). */
static void test_samples_group_children(void **state)
{
    char buf[512];

    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g"), 0);
    assert_true(cu_listed("/03-group-children/g", "description"));
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g/c"), 0);
    assert_int_equal(cu_store("/03-group-children/g/c/storeme", "5"), 0);
    assert_int_equal(
        cu_show("/03-group-children/g/c/storeme", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "5\n");
    assert_int_equal(cfs_rmdir(NULL, "/03-group-children/g"), -ENOTEMPTY);
    assert_int_equal(cfs_rmdir(NULL, "/03-group-children/g/c"), 0);
    assert_int_equal(cfs_rmdir(NULL, "/03-group-children/g"), 0);
    cfs_samples_unregister();
}

/* 04-committable-children: pending/ and live/ (C2); no mkdir in the group
 * itself (C3); rename commits and uncommits (C8), which the item shows in
 * committed; a committed item refuses storeme with EBUSY (C9, docs/DESIGN.md
 * §2); live/ items cannot be removed (C6), nor their names reused
 * in pending/ (C5). */
static void test_samples_committable(void **state)
{
    const char *pending = "/04-committable-children/pending/x";
    const char *live = "/04-committable-children/live/x";
    char buf[512];

    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    assert_true(cu_listed("/04-committable-children", "pending"));
    assert_true(cu_listed("/04-committable-children", "live"));
    assert_int_equal(cfs_mkdir(NULL, "/04-committable-children/x"), -EPERM);

    assert_int_equal(cfs_mkdir(NULL, pending), 0);
    assert_int_equal(cu_show("/04-committable-children/pending/x/committed",
                             buf,
                             sizeof(buf)),
                     0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(
        cu_store("/04-committable-children/pending/x/storeme", "5\n"), 0);

    assert_int_equal(cfs_rename(NULL, pending, live), 0);
    assert_false(cu_listed("/04-committable-children/pending", "x"));
    assert_true(cu_listed("/04-committable-children/live", "x"));
    assert_int_equal(
        cu_show("/04-committable-children/live/x/committed", buf, sizeof(buf)),
        0);
    assert_string_equal(buf, "1\n");
    assert_int_equal(cu_store("/04-committable-children/live/x/storeme", "6"),
                     -EBUSY);
    assert_int_equal(
        cu_show("/04-committable-children/live/x/storeme", buf, sizeof(buf)),
        0);
    assert_string_equal(buf, "5\n");
    assert_int_equal(cfs_rmdir(NULL, live), -EPERM);
    assert_int_equal(cfs_mkdir(NULL, pending), -EEXIST);

    assert_int_equal(cfs_rename(NULL, live, pending), 0);
    assert_int_equal(cu_show("/04-committable-children/pending/x/committed",
                             buf,
                             sizeof(buf)),
                     0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(
        cu_store("/04-committable-children/pending/x/storeme", "6"), 0);
    assert_int_equal(cfs_rmdir(NULL, pending), 0);
    cfs_samples_unregister();
}

/* T7: unregistering removes what users made, releasing it. */
static void test_samples_unregister_with_items(void **state)
{
    (void)state;
    assert_int_equal(cfs_samples_register(), 0);
    assert_int_equal(cfs_mkdir(NULL, "/02-simple-children/a"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g/b"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/04-committable-children/pending/p"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/04-committable-children/pending/l"), 0);
    assert_int_equal(cfs_rename(NULL,
                                "/04-committable-children/pending/l",
                                "/04-committable-children/live/l"),
                     0);
    cfs_samples_unregister();
    assert_false(cu_listed("/", "02-simple-children"));
    /* Registered again, the samples are empty. */
    assert_int_equal(cfs_samples_register(), 0);
    assert_false(cu_listed("/02-simple-children", "a"));
    assert_false(cu_listed("/04-committable-children/live", "l"));
    cfs_samples_unregister();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_samples_register_all_or_nothing, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_childless, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_showme_concurrent, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_simple_children, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_group_children, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_committable, cu_setup, samples_teardown),
        cmocka_unit_test_setup_teardown(
            test_samples_unregister_with_items, cu_setup, samples_teardown),
    };

    cu_prime_core();
    return cmocka_run_group_tests_name("core-samples", tests, NULL, NULL);
}
