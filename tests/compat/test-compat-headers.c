// SPDX-License-Identifier: MIT
/*
 * test-compat-headers.c - the kernel helpers of core/compat/include/linux
 * against the kernel's documented behaviour: kstrto* and simple_strto*,
 * the string and printf helpers show() and store() use (sysfs_emit never
 * writes past PAGE_SIZE), allocation through core's hook, errno values
 * that are libc's own, and the small atomic/kref/list/mutex pieces.
 * Compiled as built-in code (CFS_BUILTIN): THIS_MODULE is NULL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/atomic.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/configfs.h>

#include "util.h"

/* kstrto*: one trailing newline, optional '+', base 0 prefixes; EINVAL
 * for anything else; ERANGE for values that do not fit; *res untouched on
 * error. This is what a store() sees: raw bytes (WR5). */
static void test_headers_kstrtoint(void **state)
{
    int v = 99;

    (void)state;
    assert_int_equal(kstrtoint("42", 10, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(kstrtoint("-42\n", 10, &v), 0);
    assert_int_equal(v, -42);
    assert_int_equal(kstrtoint("+5", 10, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(kstrtoint("0x1f", 0, &v), 0);
    assert_int_equal(v, 31);
    assert_int_equal(kstrtoint("017", 0, &v), 0);
    assert_int_equal(v, 15);
    assert_int_equal(kstrtoint("ff", 16, &v), 0);
    assert_int_equal(v, 255);
    assert_int_equal(kstrtoint("0XFF", 16, &v), 0);
    assert_int_equal(v, 255);
    assert_int_equal(kstrtoint("-2147483648", 10, &v), 0);
    assert_int_equal(v, INT_MIN);

    v = 7;
    assert_int_equal(kstrtoint("", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("\n", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint(" 1", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("1 ", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("1\n\n", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("1\r\n", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("-+1", 10, &v), -EINVAL);
    assert_int_equal(kstrtoint("0x", 0, &v), -EINVAL);
    assert_int_equal(kstrtoint("9", 8, &v), -EINVAL);
    assert_int_equal(kstrtoint("2147483648", 10, &v), -ERANGE);
    assert_int_equal(kstrtoint("-2147483649", 10, &v), -ERANGE);
    assert_int_equal(v, 7);
}

static void test_headers_kstrto_widths(void **state)
{
    unsigned long long ull = 0;
    unsigned long ul = 0;
    unsigned int u = 0;
    long long ll = 0;
    bool b = false;
    u8 u8v = 0;
    s8 s8v = 0;
    u16 u16v = 0;
    u64 u64v = 0;

    (void)state;
    assert_int_equal(kstrtoull("18446744073709551615", 10, &ull), 0);
    assert_true(ull == ULLONG_MAX);
    assert_int_equal(kstrtoull("18446744073709551616", 10, &ull), -ERANGE);
    assert_int_equal(kstrtoull("-1", 10, &ull), -EINVAL);
    assert_int_equal(kstrtoll("-9223372036854775808", 10, &ll), 0);
    assert_true(ll == LLONG_MIN);
    assert_int_equal(kstrtoll("9223372036854775808", 10, &ll), -ERANGE);
    assert_int_equal(kstrtoll("-9223372036854775809", 10, &ll), -ERANGE);
    assert_int_equal(kstrtoul("4096\n", 0, &ul), 0);
    assert_int_equal(ul, 4096);
    assert_int_equal(kstrtouint("4294967295", 10, &u), 0);
    assert_int_equal(u, UINT_MAX);
    assert_int_equal(kstrtouint("4294967296", 10, &u), -ERANGE);
    assert_int_equal(kstrtouint("-1", 10, &u), -EINVAL);
    assert_int_equal(kstrtou8("255", 10, &u8v), 0);
    assert_int_equal(u8v, 255);
    assert_int_equal(kstrtou8("256", 10, &u8v), -ERANGE);
    assert_int_equal(kstrtos8("-128", 10, &s8v), 0);
    assert_int_equal(s8v, -128);
    assert_int_equal(kstrtos8("128", 10, &s8v), -ERANGE);
    assert_int_equal(kstrtou16("0xffff", 0, &u16v), 0);
    assert_int_equal(u16v, 0xffff);
    assert_int_equal(kstrtou64("0x8000000000000000", 0, &u64v), 0);
    assert_true(u64v == 0x8000000000000000ULL);

    assert_int_equal(kstrtobool("1", &b), 0);
    assert_true(b);
    assert_int_equal(kstrtobool("N\n", &b), 0);
    assert_false(b);
    assert_int_equal(kstrtobool("on", &b), 0);
    assert_true(b);
    assert_int_equal(kstrtobool("Off", &b), 0);
    assert_false(b);
    assert_int_equal(kstrtobool("yes please", &b), 0);
    assert_true(b);
    assert_int_equal(kstrtobool("o", &b), -EINVAL);
    assert_int_equal(kstrtobool("", &b), -EINVAL);
    assert_int_equal(kstrtobool(NULL, &b), -EINVAL);
}

/* simple_strto*: the lax parsers of the kernel's sample - stop at the
 * first non-digit, say where, accept an empty string as 0. */
static void test_headers_simple_strtoul(void **state)
{
    char *end = NULL;
    const char *s;

    (void)state;
    s = "123abc";
    assert_int_equal(simple_strtoul(s, &end, 10), 123);
    assert_ptr_equal(end, s + 3);
    s = "";
    assert_int_equal(simple_strtoul(s, &end, 10), 0);
    assert_ptr_equal(end, s);
    s = "0x1f\n";
    assert_int_equal(simple_strtoul(s, &end, 0), 31);
    assert_int_equal(*end, '\n');
    assert_int_equal(simple_strtol("-12", &end, 10), -12);
    assert_true(simple_strtoll("-9000000000", NULL, 10) == -9000000000LL);
    assert_true(simple_strtoull("0777", NULL, 0) == 0777);
}

static void test_headers_strings(void **state)
{
    static const char *const modes[] = {"none", "fast", "slow"};
    char small[8];
    char text[] = " \t padded words \n";
    char empty[] = "";
    char spaces[] = "   ";

    (void)state;
    assert_int_equal(strscpy(small, "hello", sizeof(small)), 5);
    assert_string_equal(small, "hello");
    assert_int_equal(strscpy(small, "helloworld", sizeof(small)), -E2BIG);
    assert_string_equal(small, "hellowo");
    assert_int_equal(strscpy(small, "x", 0), -E2BIG);

    assert_string_equal(strim(text), "padded words");
    assert_string_equal(strim(empty), "");
    assert_string_equal(strim(spaces), "");
    assert_string_equal(skip_spaces("  x "), "x ");
    assert_true(strstarts("config", "con"));
    assert_false(strstarts("con", "config"));

    assert_true(sysfs_streq("on", "on"));
    assert_true(sysfs_streq("on", "on\n"));
    assert_true(sysfs_streq("on\n", "on"));
    assert_false(sysfs_streq("on", "on\n\n"));
    assert_false(sysfs_streq("on", "o"));
    assert_int_equal(sysfs_match_string(modes, "slow\n"), 2);
    assert_int_equal(sysfs_match_string(modes, "Slow"), -EINVAL);
    assert_int_equal(match_string(modes, ARRAY_SIZE(modes), "fast"), 1);
    assert_int_equal(match_string(modes, ARRAY_SIZE(modes), "fast\n"), -EINVAL);
}

/* show() gets a PAGE_SIZE page: sysfs_emit and scnprintf stop there and
 * return what they wrote, never what they would have written. */
static void test_headers_emit(void **state)
{
    char *page = malloc(PAGE_SIZE + 16);
    char *big = malloc(2 * PAGE_SIZE);
    char small[8];
    char *s;

    (void)state;
    assert_int_equal(PAGE_SIZE, CONFIGFS_PAGE_SIZE);
    memset(big, 'a', 2 * PAGE_SIZE - 1);
    big[2 * PAGE_SIZE - 1] = '\0';
    memset(page, 'x', PAGE_SIZE + 16);

    assert_int_equal(sysfs_emit(page, "%d\n", 42), 3);
    assert_string_equal(page, "42\n");
    assert_int_equal(sysfs_emit_at(page, 3, "%s\n", "more"), 5);
    assert_string_equal(page, "42\nmore\n");
    assert_int_equal(sysfs_emit(page, "%s", big), PAGE_SIZE - 1);
    assert_int_equal(page[PAGE_SIZE - 1], '\0');
    assert_int_equal(page[PAGE_SIZE], 'x');
    assert_int_equal(sysfs_emit_at(page, PAGE_SIZE - 4, "%s", big), 3);
    assert_int_equal(sysfs_emit_at(page, PAGE_SIZE, "%s", big), 0);
    assert_int_equal(sysfs_emit_at(page, -1, "%s", big), 0);
    assert_int_equal(page[PAGE_SIZE], 'x');

    assert_int_equal(scnprintf(small, sizeof(small), "%s", "123456789"), 7);
    assert_string_equal(small, "1234567");
    assert_int_equal(scnprintf(small, 0, "%s", "1"), 0);
    assert_int_equal(sprintf(small, "%u", 7u), 1);

    s = kasprintf(GFP_KERNEL, "%s-%d", "item", 3);
    assert_string_equal(s, "item-3");
    kfree(s);
    free(big);
    free(page);
}

static size_t hook_allocs;
static size_t hook_frees;

static void *hook_malloc(size_t size)
{
    hook_allocs++;
    return malloc(size);
}

static void *hook_realloc(void *p, size_t size)
{
    hook_allocs += p == NULL;
    return realloc(p, size);
}

static void hook_free(void *p)
{
    hook_frees += p != NULL;
    free(p);
}

/* kzalloc and friends reach core's allocator hook, so tests see a
 * module's memory as they see core's. */
static void test_headers_alloc_through_hook(void **state)
{
    unsigned char *z;
    char *s;
    void *a;

    (void)state;
    cfs_set_alloc_funcs(hook_malloc, hook_realloc, hook_free);
    hook_allocs = 0;
    hook_frees = 0;

    z = kzalloc(64, GFP_KERNEL);
    assert_non_null(z);
    for (size_t i = 0; i < 64; i++) {
        assert_int_equal(z[i], 0);
    }
    s = kstrdup("name", GFP_KERNEL);
    assert_string_equal(s, "name");
    a = kcalloc(4, sizeof(int), GFP_KERNEL);
    assert_null(kmalloc_array(SIZE_MAX / 2, 4, GFP_KERNEL));
    kfree(z);
    kfree(s);
    kfree(a);
    kfree(NULL);
    s = kmemdup_nul("abcdef", 3, GFP_KERNEL);
    assert_string_equal(s, "abc");
    kfree(s);
    s = kstrndup("abcdef", 2, GFP_KERNEL);
    assert_string_equal(s, "ab");
    kfree(s);
    assert_true(hook_allocs >= 5);
    assert_int_equal(hook_allocs, hook_frees);
    cfs_set_alloc_funcs(NULL, NULL, NULL);
}

/* The compat headers add errno names, never change libc's values. */
static void test_headers_errno_is_libc(void **state)
{
    (void)state;
    assert_int_equal(ENOENT, 2);
    assert_int_equal(EPERM, 1);
    assert_int_equal(EEXIST, 17);
    assert_int_equal(EINVAL, 22);
    assert_int_equal(ERANGE, 34);
    assert_int_equal(ENOTEMPTY, 39);
    assert_true(ENOTSUPP > 511);
    assert_true(ENOTSUPP != EOPNOTSUPP);
    assert_int_equal(PTR_ERR_OR_ZERO(ERR_PTR(-ENOMEM)), -ENOMEM);
    assert_int_equal(PTR_ERR_OR_ZERO(&errno), 0);
    assert_true(IS_ERR(ERR_CAST(ERR_PTR(-EIO))));
}

static int builtin_init(void)
{
    return 0;
}

static void builtin_exit(void)
{
}

module_init(builtin_init);
module_exit(builtin_exit);
MODULE_LICENSE("MIT");
MODULE_AUTHOR("configfsd");

/* Built-in code: THIS_MODULE is NULL, module_init only checks its
 * function, try_module_get(NULL) succeeds. */
static void test_headers_builtin_module(void **state)
{
    (void)state;
    assert_null(THIS_MODULE);
    assert_true(try_module_get(THIS_MODULE));
    module_put(THIS_MODULE);
    assert_string_equal(module_name(THIS_MODULE), "kernel");
    assert_int_equal(builtin_init(), 0);
    builtin_exit();
}

struct node {
    struct list_head entry;
    int v;
};

static struct kref released_kref;
static int released;

static void kref_done(struct kref *kref)
{
    assert_ptr_equal(kref, &released_kref);
    released++;
}

static void test_headers_small_pieces(void **state)
{
    struct node nodes[3] = {{.v = 1}, {.v = 2}, {.v = 3}};
    struct node *pos;
    LIST_HEAD(head);
    atomic_t a = ATOMIC_INIT(5);
    DEFINE_MUTEX(lock);
    DEFINE_SPINLOCK(spin);
    unsigned long flags;
    int sum = 0;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
        list_add_tail(&nodes[i].entry, &head);
    }
    list_for_each_entry_reverse(pos, &head, entry)
    {
        sum = sum * 10 + pos->v;
    }
    assert_int_equal(sum, 321);
    assert_int_equal(list_last_entry(&head, struct node, entry)->v, 3);
    assert_int_equal(list_next_entry(&nodes[0], entry)->v, 2);
    assert_true(list_is_last(&nodes[2].entry, &head));
    list_del(&nodes[1].entry);
    list_del(&nodes[2].entry);
    assert_true(list_is_singular(&head));

    assert_int_equal(atomic_fetch_inc(&a), 5);
    assert_int_equal(atomic_inc_return(&a), 7);
    assert_false(atomic_dec_and_test(&a));
    assert_int_equal(atomic_cmpxchg(&a, 6, 1), 6);
    assert_true(atomic_dec_and_test(&a));

    kref_init(&released_kref);
    kref_get(&released_kref);
    assert_int_equal(kref_read(&released_kref), 2);
    assert_int_equal(kref_put(&released_kref, kref_done), 0);
    assert_int_equal(kref_put(&released_kref, kref_done), 1);
    assert_int_equal(released, 1);
    assert_int_equal(kref_get_unless_zero(&released_kref), 0);

    mutex_lock(&lock);
    assert_int_equal(mutex_trylock(&lock), 0);
    mutex_unlock(&lock);
    assert_int_equal(mutex_trylock(&lock), 1);
    mutex_unlock(&lock);
    mutex_destroy(&lock);
    spin_lock_irqsave(&spin, flags);
    spin_unlock_irqrestore(&spin, flags);

    assert_int_equal(min(3, 5), 3);
    assert_int_equal(max(min(3, 5), 4), 4);
    assert_int_equal(min_t(unsigned int, 7, 2u), 2);
    assert_int_equal(clamp(9, 0, 4), 4);
    assert_int_equal(DIV_ROUND_UP(9, 4), 3);
    assert_int_equal(BIT(3), 8);
    assert_int_equal(S_IRUGO, 0444);
    assert_int_equal(S_IWUSR | S_IRUGO, 0644);
    assert_int_equal(U8_MAX, 255);
    assert_false(WARN_ON(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_headers_kstrtoint, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_headers_kstrto_widths, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_headers_simple_strtoul, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_headers_strings, cu_setup, cu_teardown),
        cmocka_unit_test_setup_teardown(
            test_headers_emit, cu_setup, cu_teardown),
        cmocka_unit_test(test_headers_alloc_through_hook),
        cmocka_unit_test(test_headers_errno_is_libc),
        cmocka_unit_test(test_headers_builtin_module),
        cmocka_unit_test(test_headers_small_pieces),
    };

    cu_prime_core();
    return cmocka_run_group_tests_name("compat-headers", tests, NULL, NULL);
}
