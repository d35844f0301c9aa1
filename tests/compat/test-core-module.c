// SPDX-License-Identifier: MIT
/*
 * test-core-module.c - the module loader (core/src/module.c) with modules
 * written as kernel configfs clients and built against core/compat only:
 * load, the subsystem appears, items pin the module (M25), unload, and
 * the ways a load or an unload fails. Also loads the sample subsystems'
 * source built as a module: the kernel's sample shape, unchanged.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#include "util.h"

static long module_refs(struct module *mod)
{
    return atomic_load(&mod->refcnt);
}

/* M25: each item made by mkdir pins its type's module; unload is refused
 * (EBUSY) until the item is gone, then removes the subsystem. */
static void test_module_load_mkdir_unload(void **state)
{
    struct module *mod = NULL;
    char buf[64];

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &mod), 0);
    assert_non_null(mod);
    assert_string_equal(mod->name, "compat_demo");
    assert_true(cu_listed("/", "compat-demo"));
    /* THIS_MODULE inside the module is the struct the loader named. */
    assert_int_equal(cu_show("/compat-demo/owner", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "compat_demo\n");
    assert_int_equal(module_refs(mod), 0);

    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/w1"), 0);
    assert_int_equal(module_refs(mod), 1);
    assert_int_equal(cu_store("/compat-demo/w1/value", "42\n"), 0);
    assert_int_equal(cu_show("/compat-demo/w1/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "42\n");

    assert_int_equal(cfs_module_unload(mod), -EBUSY);
    assert_true(cu_listed("/", "compat-demo"));
    assert_int_equal(cu_show("/compat-demo/w1/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "42\n");

    assert_int_equal(cfs_rmdir(NULL, "/compat-demo/w1"), 0);
    assert_int_equal(module_refs(mod), 0);
    assert_int_equal(cfs_module_unload(mod), 0);
    assert_false(cu_listed("/", "compat-demo"));
    assert_int_equal(cfs_stat("/compat-demo", &(struct cfs_entry){0}), -ENOENT);
}

/* The compat helpers as a module sees them, through store and show:
 * kstrto* (one trailing newline, EINVAL, ERANGE; WR5: the store gets the
 * raw bytes), kstrtobool, strim/kstrndup, simple_strtoul, sysfs_emit,
 * sysfs_match_string, a write-only attribute (RD1). */
static void test_module_attributes(void **state)
{
    struct module *mod = NULL;
    char buf[128];

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &mod), 0);
    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/w"), 0);

    assert_int_equal(cu_store("/compat-demo/w/value", "0x10"), 0);
    assert_int_equal(cu_show("/compat-demo/w/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "16\n");
    assert_int_equal(cu_store("/compat-demo/w/value", "-7\n"), 0);
    assert_int_equal(cu_show("/compat-demo/w/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "-7\n");
    assert_int_equal(cu_store("/compat-demo/w/value", "abc"), -EINVAL);
    assert_int_equal(cu_store("/compat-demo/w/value", "1\n\n"), -EINVAL);
    assert_int_equal(cu_store("/compat-demo/w/value", " 1"), -EINVAL);
    assert_int_equal(cu_store("/compat-demo/w/value", "2147483648"), -ERANGE);
    assert_int_equal(cu_show("/compat-demo/w/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "-7\n");

    assert_int_equal(cu_show("/compat-demo/w/enabled", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(cu_store("/compat-demo/w/enabled", "on\n"), 0);
    assert_int_equal(cu_show("/compat-demo/w/enabled", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "1\n");
    assert_int_equal(cu_store("/compat-demo/w/enabled", "maybe"), -EINVAL);

    assert_int_equal(cu_show("/compat-demo/w/label", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "unnamed\n");
    assert_int_equal(cu_store("/compat-demo/w/label", "  front door \n"), 0);
    assert_int_equal(cu_show("/compat-demo/w/label", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "front door\n");
    assert_int_equal(
        cu_store("/compat-demo/w/label", "a label far longer than 31 bytes"),
        -EINVAL);

    assert_int_equal(cu_store("/compat-demo/w/limit", "500\n"), 0);
    assert_int_equal(cu_show("/compat-demo/w/limit", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "500\n");
    assert_int_equal(cu_store("/compat-demo/w/limit", "5000"), -ERANGE);
    assert_int_equal(cu_store("/compat-demo/w/limit", "5x"), -EINVAL);

    assert_int_equal(cu_store("/compat-demo/w/reset", "1"), 0);
    assert_int_equal(cu_show("/compat-demo/w/value", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(cu_show("/compat-demo/w/reset", buf, sizeof(buf)),
                     -EACCES);

    assert_int_equal(cu_show("/compat-demo/mode", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "off\n");
    assert_int_equal(cu_store("/compat-demo/mode", "auto\n"), 0);
    assert_int_equal(cu_show("/compat-demo/mode", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "auto\n");
    assert_int_equal(cu_store("/compat-demo/mode", "fast"), -EINVAL);

    assert_int_equal(cfs_rmdir(NULL, "/compat-demo/w"), 0);
    assert_int_equal(cfs_module_unload(mod), 0);
}

/* M23: the module walks cg_children under su_mutex from show();
 * MK6: an ERR_PTR from make_item is mkdir's errno and pins nothing. */
static void test_module_children_and_make_error(void **state)
{
    struct module *mod = NULL;
    char buf[128];

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &mod), 0);
    assert_int_equal(cu_show("/compat-demo/count", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "0\n");
    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/alpha"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/beta"), 0);
    assert_int_equal(module_refs(mod), 2);
    assert_int_equal(cu_show("/compat-demo/count", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "2\n");
    assert_int_equal(cu_show("/compat-demo/names", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "alpha\nbeta\n");

    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/bad1"), -EINVAL);
    assert_false(cu_listed("/compat-demo", "bad1"));
    assert_int_equal(module_refs(mod), 2);

    assert_int_equal(cfs_rmdir(NULL, "/compat-demo/alpha"), 0);
    assert_int_equal(cfs_module_unload(mod), -EBUSY);
    assert_int_equal(cfs_rmdir(NULL, "/compat-demo/beta"), 0);
    assert_int_equal(cfs_module_unload(mod), 0);
}

/* The same object twice - by its path, through a symbolic link, through
 * a hard link (another path, the same file) - is EEXIST. */
static void test_module_load_twice(void **state)
{
    const char *sym = CFS_TEST_DEMO_SO ".symlink";
    const char *hard = CFS_TEST_DEMO_SO ".hardlink";
    struct module *mod = NULL;
    struct module *again = NULL;

    (void)state;
    unlink(sym);
    unlink(hard);
    assert_int_equal(symlink(CFS_TEST_DEMO_SO, sym), 0);
    assert_int_equal(link(CFS_TEST_DEMO_SO, hard), 0);

    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &mod), 0);
    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &again), -EEXIST);
    assert_int_equal(cfs_module_load(sym, &again), -EEXIST);
    assert_int_equal(cfs_module_load(hard, &again), -EEXIST);
    assert_null(again);
    assert_true(cu_listed("/", "compat-demo"));
    assert_int_equal(cfs_module_unload(mod), 0);
    assert_int_equal(cfs_module_unload(mod), -ENOENT);

    /* Unloaded, it loads again, from the other name as well. */
    assert_int_equal(cfs_module_load(hard, &mod), 0);
    assert_string_equal(mod->name, "compat_demo.so.hardlink");
    assert_int_equal(cfs_module_unload(mod), 0);

    unlink(sym);
    unlink(hard);
}

/* Paths that are no module: missing, a directory, not a shared object, a
 * shared object without module_init. Nothing is left loaded. */
static void test_module_load_bad_path(void **state)
{
    struct module *mod = NULL;

    (void)state;
    assert_int_equal(cfs_module_load("/nonexistent/dir/x.so", &mod), -ENOENT);
    assert_int_equal(cfs_module_load(CFS_TEST_BUILD_DIR, &mod), -EISDIR);
    assert_int_equal(cfs_module_load(CFS_TEST_NOT_ELF, &mod), -ENOEXEC);
    assert_int_equal(cfs_module_load(CFS_TEST_NO_INIT_SO, &mod), -ENOEXEC);
    assert_int_equal(cfs_module_load("", &mod), -EINVAL);
    assert_int_equal(cfs_module_load(NULL, &mod), -EINVAL);
    assert_null(mod);
    assert_int_equal(cfs_module_unload(NULL), -EINVAL);
}

/* module_init's errno is the load's; the module is unloaded, so loading
 * it again runs init again rather than failing EEXIST. */
static void test_module_init_fails(void **state)
{
    struct module *mod = NULL;

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_BAD_INIT_SO, &mod), -ENODEV);
    assert_null(mod);
    assert_false(cu_listed("/", "bad-init"));
    assert_int_equal(cfs_module_load(CFS_TEST_BAD_INIT_SO, &mod), -ENODEV);
    assert_false(cu_listed("/", "bad-init"));
}

/* Shutdown runs every module's exit, newest first, even with items
 * present (module_exit unregisters the subsystems, T7); the items are
 * released, which cmocka's allocator checks. */
static void test_module_unload_all_busy(void **state)
{
    struct module *demo = NULL;
    struct module *sample = NULL;

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_DEMO_SO, &demo), 0);
    assert_int_equal(cfs_module_load(CFS_TEST_SAMPLE_SO, &sample), 0);
    assert_int_equal(cfs_mkdir(NULL, "/compat-demo/w"), 0);
    assert_int_equal(cu_store("/compat-demo/w/label", "kept\n"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g"), 0);
    assert_int_equal(cfs_mkdir(NULL, "/03-group-children/g/c"), 0);
    assert_int_equal(cfs_module_unload(demo), -EBUSY);
    assert_int_equal(cfs_module_unload(sample), -EBUSY);

    cfs_module_unload_all();
    assert_false(cu_listed("/", "compat-demo"));
    assert_false(cu_listed("/", "03-group-children"));
    assert_false(cu_listed("/", "01-childless"));
}

/* The kernel's sample shape (core/samples/configfs_sample.c, unchanged)
 * built as a module: its four subsystems, mkdir, store, show, commit. */
static void test_module_kernel_sample(void **state)
{
    struct module *mod = NULL;
    char first[32];
    char buf[64];
    int n;

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_SAMPLE_SO, &mod), 0);
    assert_true(cu_listed("/", "01-childless"));
    assert_true(cu_listed("/", "02-simple-children"));
    assert_true(cu_listed("/", "03-group-children"));
    assert_true(cu_listed("/", "04-committable-children"));

    assert_int_equal(cu_show("/01-childless/showme", first, sizeof(first)), 0);
    assert_int_equal(cu_show("/01-childless/showme", buf, sizeof(buf)), 0);
    n = (int)strtol(first, NULL, 10);
    (void)snprintf(first, sizeof(first), "%d\n", n + 1);
    assert_string_equal(buf, first);

    assert_int_equal(cfs_mkdir(NULL, "/02-simple-children/x"), 0);
    assert_int_equal(module_refs(mod), 1);
    assert_int_equal(cu_store("/02-simple-children/x/storeme", "7\n"), 0);
    assert_int_equal(cu_show("/02-simple-children/x/storeme", buf, sizeof(buf)),
                     0);
    assert_string_equal(buf, "7\n");

    assert_int_equal(cfs_mkdir(NULL, "/04-committable-children/pending/c"), 0);
    assert_int_equal(module_refs(mod), 2);
    assert_int_equal(cfs_rename(NULL,
                                "/04-committable-children/pending/c",
                                "/04-committable-children/live/c"),
                     0);
    assert_int_equal(
        cu_show("/04-committable-children/live/c/committed", buf, sizeof(buf)),
        0);
    assert_string_equal(buf, "1\n");
    assert_int_equal(cu_store("/04-committable-children/live/c/storeme", "1"),
                     -EBUSY);
    assert_int_equal(cfs_module_unload(mod), -EBUSY);

    assert_int_equal(cfs_rename(NULL,
                                "/04-committable-children/live/c",
                                "/04-committable-children/pending/c"),
                     0);
    assert_int_equal(cfs_rmdir(NULL, "/04-committable-children/pending/c"), 0);
    assert_int_equal(cfs_rmdir(NULL, "/02-simple-children/x"), 0);
    assert_int_equal(module_refs(mod), 0);
    assert_int_equal(cfs_module_unload(mod), 0);
    assert_false(cu_listed("/", "01-childless"));
    assert_false(cu_listed("/", "04-committable-children"));
}

/* A module without module_exit cannot be unloaded (EBUSY, as in the
 * kernel); shutdown leaves it mapped, and it stays loaded (EEXIST).
 * Runs on libc's allocator: the loader keeps that module's bookkeeping
 * for the rest of the process, which cmocka would count as a leak. */
static void test_module_without_exit(void **state)
{
    struct module *mod = NULL;
    struct module *again = NULL;

    (void)state;
    assert_int_equal(cfs_module_load(CFS_TEST_NO_EXIT_SO, &mod), 0);
    assert_string_equal(mod->name, "no_exit");
    assert_int_equal(cfs_module_unload(mod), -EBUSY);
    cfs_module_unload_all();
    assert_int_equal(cfs_module_load(CFS_TEST_NO_EXIT_SO, &again), -EEXIST);
    assert_null(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_module_load_mkdir_unload, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_attributes, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_children_and_make_error, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_load_twice, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_load_bad_path, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_init_fails, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_unload_all_busy, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_module_kernel_sample, cu_setup, cu_teardown),
        cmocka_unit_test(test_module_without_exit),
    };

    cu_prime_core();
    return cmocka_run_group_tests_name("core-module", tests, NULL, NULL);
}
