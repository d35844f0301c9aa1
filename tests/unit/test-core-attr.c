// SPDX-License-Identifier: MIT
/*
 * test-core-attr.c - attributes: cfs_show and cfs_write on text and binary
 * attributes, modes and methods, sizes, raw bytes, short and failed stores.
 *
 * Covers docs/configfs-rules.md M10, M11, RD1-RD7, WR1-WR9 and BIN1-BIN7 as
 * docs/DESIGN.md §8 maps them onto whole-value reads and writes.
 */
#include "recorder.h"

#include <stdlib.h>

enum { RW, RO, WO, NOSHOW, NOSTORE };
enum { TYPED, OWN };
enum { BLOB, RBLOB, WBLOB, BIG };

static struct rec_type *S, *I, *T;

/*
 *   sub (S)  make_item -> I
 *   I        rw 0644 "init\n", ro 0444 "ro\n", wo 0200, noshow 0644 without
 *            show, nostore 0644 without store;
 *            binary: blob 0644 (max 16), rblob 0444, wblob 0200, big 0644
 *   seed (S) make_item -> T
 *   T        typed 0644 through the type's show_attribute/store_attribute,
 *            own 0644 with its own show/store
 *
 * cfs.h: the first store of an attribute records what show() returned as
 * the old value, so it is preceded by one show() (binary: the size probe
 * read, and a read when there is data); the traces below say so.
 */
static void tree(void)
{
    S = rec_type_new("s");
    I = rec_type_new("i");
    S->make = REC_MAKE_ITEM;
    S->child = I;
    rec_attr(I, "rw", 0644, 0);
    rec_attr(I, "ro", 0444, REC_NO_STORE);
    rec_attr(I, "wo", 0200, REC_NO_SHOW);
    rec_attr(I, "noshow", 0644, REC_NO_SHOW);
    rec_attr(I, "nostore", 0644, REC_NO_STORE);
    I->attrs[RW].init = "init\n";
    I->attrs[RO].init = "ro\n";
    T = rec_type_new("t");
    rec_attr(T, "typed", 0644, REC_TYPE_METHODS);
    rec_attr(T, "own", 0644, 0);
    T->attrs[TYPED].init = "t\n";
    T->attrs[OWN].init = "o\n";
    rec_bin(I, "blob", 0644, 16);
    rec_bin(I, "rblob", 0444, 0);
    I->bins[RBLOB].flags = REC_NO_STORE;
    rec_bin(I, "wblob", 0200, 0);
    I->bins[WBLOB].flags = REC_NO_SHOW;
    rec_bin(I, "big", 0644, 0);
    rec_register("sub", S);
    assert_ok(cfs_mkdir(NULL, "/sub/x"));
    rec_clear();
}

static void seed_tree(void)
{
    struct rec_type *s = rec_type_new("seed");

    tree();
    s->make = REC_MAKE_ITEM;
    s->child = T;
    rec_register("seed", s);
    assert_ok(cfs_mkdir(NULL, "/seed/y"));
    rec_clear();
}

static struct rec_obj *x(void)
{
    return rec_find("x");
}

static void expect_stat(const char *path,
                        enum cfs_kind kind,
                        unsigned int mode,
                        bool readable,
                        bool writable)
{
    struct cfs_entry e;

    assert_ok(cfs_stat(path, &e));
    assert_string_equal(e.name, strrchr(path, '/') + 1);
    assert_int_equal(e.kind, kind);
    assert_int_equal(e.mode, mode);
    assert_int_equal(e.readable, readable);
    assert_int_equal(e.writable, writable);
    cfs_entry_done(&e);
}

/* M10, RD1, BIN1, F4: mode bits and methods decide what can be read and
 * written; the type's show_attribute/store_attribute count as methods. */
static void test_attr_stat_modes(void **state)
{
    (void)state;
    tree();
    expect_stat("/sub/x/rw", CFS_KIND_ATTR, 0644, true, true);
    expect_stat("/sub/x/ro", CFS_KIND_ATTR, 0444, true, false);
    expect_stat("/sub/x/wo", CFS_KIND_ATTR, 0200, false, true);
    expect_stat("/sub/x/noshow", CFS_KIND_ATTR, 0644, false, true);
    expect_stat("/sub/x/nostore", CFS_KIND_ATTR, 0644, true, false);
    expect_stat("/sub/x/blob", CFS_KIND_BIN_ATTR, 0644, true, true);
    expect_stat("/sub/x/rblob", CFS_KIND_BIN_ATTR, 0444, true, false);
    expect_stat("/sub/x/wblob", CFS_KIND_BIN_ATTR, 0200, false, true);
    rec_assert_no_trace();
}

/* M11, BIN7: a binary attribute reports cb_max_size. */
static void test_attr_bin_stat_max_size(void **state)
{
    struct cfs_entry e;

    (void)state;
    tree();
    assert_ok(cfs_stat("/sub/x/blob", &e));
    assert_int_equal(e.max_size, 16);
    cfs_entry_done(&e);
    assert_ok(cfs_stat("/sub/x/big", &e));
    assert_int_equal(e.max_size, 0);
    cfs_entry_done(&e);
}

/* RD3, RD7, WR6, T9: each read is one show() into a zeroed page, without
 * su_mutex; a read after a store shows the new value. */
static void test_attr_show_once_per_read(void **state)
{
    (void)state;
    tree();
    assert_string_equal(rec_cat("/sub/x/rw"), "init\n");
    rec_assert_trace("show(x,rw)");
    rec_assert_locked("show(x,rw)", 0);
    assert_true(x()->last_show_page_zeroed);
    assert_string_equal(rec_cat("/sub/x/rw"), "init\n");
    assert_int_equal(rec_occurrences("show(x,rw)"), 2);
    assert_ok(rec_store_str("/sub/x/rw", "new\n"));
    assert_string_equal(rec_cat("/sub/x/rw"), "new\n");
    /* 3: the first store's old value; 4: the read. */
    assert_int_equal(rec_occurrences("show(x,rw)"), 4);
    assert_ok(rec_store_str("/sub/x/rw", "newer\n"));
    assert_int_equal(rec_occurrences("show(x,rw)"), 4);
    assert_string_equal(rec_cat("/sub/x/ro"), "ro\n");
}

/* RD1: no read bit, or no show, is EACCES without a callback. */
static void test_attr_show_eacces(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    assert_rc(cfs_show("/sub/x/wo", &buf, &len), -EACCES);
    assert_null(buf);
    assert_rc(cfs_show("/sub/x/noshow", &buf, &len), -EACCES);
    assert_null(buf);
    rec_assert_no_trace();
}

/* RD1: no write bit, or no store, is EACCES without a callback. */
static void test_attr_store_eacces(void **state)
{
    (void)state;
    tree();
    assert_rc(rec_store_str("/sub/x/ro", "1"), -EACCES);
    assert_rc(rec_store_str("/sub/x/nostore", "1"), -EACCES);
    rec_assert_no_trace();
    assert_string_equal(rec_cat("/sub/x/ro"), "ro\n");
}

/* WR1, WR5, RD7: store gets exactly the bytes given, newline and NULs
 * included, NUL-terminated after them; show returns them all. */
static void test_attr_store_raw_bytes(void **state)
{
    static const char value[] = {'a', '\n', 'b', '\0', 'c', '\n'};
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    assert_ok(cfs_write(NULL, "/sub/x/rw", value, sizeof(value)));
    rec_assert_trace("show(x,rw)", "store(x,rw,6)");
    assert_int_equal(x()->val_len[RW], sizeof(value));
    assert_memory_equal(x()->val[RW], value, sizeof(value));
    assert_true(x()->last_store_nul);
    assert_ok(cfs_show("/sub/x/rw", &buf, &len));
    assert_int_equal(len, sizeof(value));
    assert_memory_equal(buf, value, sizeof(value));
    assert_int_equal(buf[len], '\0');
    cfs_free(buf);
}

/* WR1, WR9: stores do not accumulate: "90" then "55" is "55". */
static void test_attr_store_no_accumulation(void **state)
{
    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/x/rw", "90"));
    assert_ok(rec_store_str("/sub/x/rw", "55"));
    rec_assert_trace("show(x,rw)", "store(x,rw,2)", "store(x,rw,2)");
    assert_string_equal(rec_cat("/sub/x/rw"), "55");
}

/* WR2, docs/DESIGN.md §8: a short count calls store() again with the rest, as a
 * write(2) loop would. */
static void test_attr_store_short_count_retried(void **state)
{
    (void)state;
    tree();
    I->attrs[RW].store_max = 4;
    assert_ok(rec_store_str("/sub/x/rw", "abcdefghij"));
    rec_assert_trace(
        "show(x,rw)", "store(x,rw,10)", "store(x,rw,6)", "store(x,rw,2)");
    assert_string_equal(rec_cat("/sub/x/rw"), "ij");
}

/* WR2, docs/DESIGN.md §8: a store that consumes nothing fails EIO (no endless
 * retry). */
static void test_attr_store_zero_eio(void **state)
{
    (void)state;
    tree();
    I->attrs[RW].store_zero = true;
    assert_rc(rec_store_str("/sub/x/rw", "abc"), -EIO);
    rec_assert_trace("show(x,rw)", "store(x,rw,3)");
}

/* WR2: a negative store return is the error. */
static void test_attr_store_error_passed_through(void **state)
{
    static const int errs[] = {-EINVAL, -EBUSY, -ERANGE, -EACCES, -ENOSPC};

    (void)state;
    tree();
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        I->attrs[RW].store_err = errs[i];
        rec_clear();
        assert_rc(rec_store_str("/sub/x/rw", "v"), errs[i]);
        assert_int_equal(rec_occurrences("store(x,rw,1)"), 1);
        assert_string_equal(rec_at(rec_count() - 1)->text, "store(x,rw,1)");
    }
    I->attrs[RW].store_err = 0;
    assert_string_equal(rec_cat("/sub/x/rw"), "init\n");
}

/* WR3, docs/DESIGN.md §8: 4095 bytes reach one store; 4096 or more is EFBIG
 * with no callback (never split). */
static void test_attr_store_size_limit(void **state)
{
    static char big[CONFIGFS_PAGE_SIZE + 8];

    (void)state;
    tree();
    memset(big, 'z', sizeof(big));
    assert_ok(cfs_write(NULL, "/sub/x/rw", big, CFS_STORE_MAX));
    rec_assert_trace("show(x,rw)", "store(x,rw,4095)");
    rec_clear();
    assert_rc(cfs_write(NULL, "/sub/x/rw", big, CONFIGFS_PAGE_SIZE), -EFBIG);
    assert_rc(cfs_write(NULL, "/sub/x/rw", big, sizeof(big)), -EFBIG);
    rec_assert_no_trace();
}

/* WR4 as docs/DESIGN.md §8 changes it: an empty value is one zero-length
 * store() (the kernel answers EFAULT without calling store). */
static void test_attr_store_empty_value(void **state)
{
    (void)state;
    tree();
    assert_ok(cfs_write(NULL, "/sub/x/rw", "", 0));
    rec_assert_trace("show(x,rw)", "store(x,rw,0)");
    assert_string_equal(rec_cat("/sub/x/rw"), "");
}

/* RD5: a failing show is the error, and the next read calls show again. */
static void test_attr_show_error_then_retry(void **state)
{
    (void)state;
    tree();
    I->attrs[RW].show_err = -ENODEV;
    assert_string_equal(rec_cat("/sub/x/rw"), "E-ENODEV");
    I->attrs[RW].show_err = 0;
    assert_string_equal(rec_cat("/sub/x/rw"), "init\n");
    rec_assert_trace("show(x,rw)", "show(x,rw)");
}

/* RD5: show may fill the whole 4096-byte page; claiming more is EIO. */
static void test_attr_show_page_limit(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    I->attrs[RW].show_fill = CONFIGFS_PAGE_SIZE;
    assert_ok(cfs_show("/sub/x/rw", &buf, &len));
    assert_int_equal(len, CONFIGFS_PAGE_SIZE);
    assert_int_equal(buf[0], 'v');
    assert_int_equal(buf[CONFIGFS_PAGE_SIZE - 1], 'v');
    cfs_free(buf);
    buf = NULL;
    I->attrs[RW].show_len = CONFIGFS_PAGE_SIZE + 1;
    assert_rc(cfs_show("/sub/x/rw", &buf, &len), -EIO);
    assert_null(buf);
}

/* docs/DESIGN.md §2, M10: an attribute without show/store of its own is served
 * by the type's show_attribute/store_attribute; one with its own methods is
 * not. */
static void test_attr_type_methods(void **state)
{
    (void)state;
    seed_tree();
    expect_stat("/seed/y/typed", CFS_KIND_ATTR, 0644, true, true);
    assert_string_equal(rec_cat("/seed/y/typed"), "t\n");
    assert_ok(rec_store_str("/seed/y/typed", "T2"));
    assert_string_equal(rec_cat("/seed/y/typed"), "T2");
    assert_string_equal(rec_cat("/seed/y/own"), "o\n");
    rec_assert_trace("show_attribute(y,typed)",
                     "show_attribute(y,typed)",
                     "store_attribute(y,typed,2)",
                     "show_attribute(y,typed)",
                     "show(y,own)");
}

/* T9, M22: show and store run without su_mutex. */
static void test_attr_callbacks_without_su_mutex(void **state)
{
    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/x/rw", "1"));
    assert_string_equal(rec_cat("/sub/x/rw"), "1");
    assert_ok(rec_store_str("/sub/x/blob", "b"));
    assert_string_equal(rec_cat("/sub/x/blob"), "b");
    rec_assert_locked("store(x,rw,1)", 0);
    rec_assert_locked("show(x,rw)", 0);
    rec_assert_locked("write(x,blob,1)", 0);
    rec_assert_locked("read(x,blob,0,NULL)", 0);
}

/* Paths: a missing attribute is ENOENT, a store to a directory is refused. */
static void test_attr_missing_enoent(void **state)
{
    (void)state;
    tree();
    assert_string_equal(rec_cat("/sub/x/nope"), "E-ENOENT");
    assert_rc(rec_store_str("/sub/x/nope", "1"), -ENOENT);
    assert_rc(rec_store_str("/sub/y/rw", "1"), -ENOENT);
    assert_true(rec_store_str("/sub/x", "1") < 0);
    rec_assert_no_trace();
}

/* BIN3: read asks the size with a NULL buffer, then fills. */
static void test_attr_bin_read_probe_then_fill(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    assert_ok(cfs_write(NULL, "/sub/x/blob", "hello", 5));
    rec_clear();
    assert_ok(cfs_show("/sub/x/blob", &buf, &len));
    rec_assert_trace("read(x,blob,0,NULL)", "read(x,blob,5)");
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "hello", 5);
    cfs_free(buf);
}

/* BIN3: a size of 0 is an empty value, with no second call. */
static void test_attr_bin_read_empty(void **state)
{
    char *buf = NULL;
    size_t len = 99;

    (void)state;
    tree();
    assert_ok(cfs_show("/sub/x/blob", &buf, &len));
    assert_int_equal(len, 0);
    rec_assert_trace("read(x,blob,0,NULL)");
    cfs_free(buf);
}

/* BIN3: a size over cb_max_size is EFBIG; a read error is returned. */
static void test_attr_bin_read_errors(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    I->bins[BLOB].size_set = true;
    I->bins[BLOB].size = 17;
    assert_rc(cfs_show("/sub/x/blob", &buf, &len), -EFBIG);
    rec_assert_trace("read(x,blob,0,NULL)");
    I->bins[BLOB].size_set = false;
    I->bins[BLOB].read_err = -ENODEV;
    rec_clear();
    assert_rc(cfs_show("/sub/x/blob", &buf, &len), -ENODEV);
    rec_assert_trace("read(x,blob,0,NULL)");
    assert_null(buf);
}

/* BIN4, BIN5 as docs/DESIGN.md §8 changes them: one write() of the whole value,
 * within cb_max_size (else EFBIG, no call); its error is returned. */
static void test_attr_bin_write(void **state)
{
    char data[17];

    (void)state;
    tree();
    memset(data, 'd', sizeof(data));
    assert_ok(cfs_write(NULL, "/sub/x/blob", data, 16));
    rec_assert_trace("read(x,blob,0,NULL)", "write(x,blob,16)");
    rec_clear();
    assert_rc(cfs_write(NULL, "/sub/x/blob", data, 17), -EFBIG);
    rec_assert_no_trace();
    I->bins[BLOB].write_err = -EINVAL;
    assert_rc(cfs_write(NULL, "/sub/x/blob", data, 3), -EINVAL);
    rec_assert_trace("write(x,blob,3)");
    assert_int_equal(x()->blob_len[BLOB], 16);
}

/* BIN4, BIN5: binary values are not bound by the text page; without
 * cb_max_size the hard cap of limits.h still applies. */
static void test_attr_bin_large_values(void **state)
{
    size_t big = 3 * CONFIGFS_PAGE_SIZE + 5;
    char *data = calloc(1, CFS_BIN_MAX + 1);
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    assert_non_null(data);
    tree();
    memset(data, 'q', big);
    assert_ok(cfs_write(NULL, "/sub/x/big", data, big));
    rec_assert_trace("read(x,big,0,NULL)", "write(x,big,12293)");
    assert_ok(cfs_show("/sub/x/big", &buf, &len));
    assert_int_equal(len, big);
    assert_memory_equal(buf, data, big);
    cfs_free(buf);
    rec_clear();
    assert_rc(cfs_write(NULL, "/sub/x/big", data, CFS_BIN_MAX + 1), -EFBIG);
    rec_assert_no_trace();
    free(data);
}

/* BIN1: binary attributes follow the same mode and method rules. */
static void test_attr_bin_eacces(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    tree();
    assert_rc(cfs_show("/sub/x/wblob", &buf, &len), -EACCES);
    assert_rc(cfs_write(NULL, "/sub/x/rblob", "r", 1), -EACCES);
    rec_assert_no_trace();
    assert_ok(cfs_write(NULL, "/sub/x/wblob", "w", 1));
    rec_assert_trace("write(x,wblob,1)");
}

/* L4: configfsd refuses duplicate attribute names when the subsystem
 * registers (the kernel would show both). */
static void test_attr_duplicate_names_refused(void **state)
{
    struct rec_type *dup = rec_type_new("dup");

    (void)state;
    rec_attr(dup, "a", 0644, 0);
    rec_attr(dup, "a", 0444, REC_NO_STORE);
    assert_true(rec_register_rc("dup", dup, NULL) < 0);
    assert_string_equal(rec_ls("/"), "");
}

/* L4, MK9: a default group named like an attribute is EEXIST at
 * registration. */
static void test_attr_default_group_named_like_attr(void **state)
{
    struct rec_type *clash = rec_type_new("clash");
    struct rec_type *d = rec_type_new("d");

    (void)state;
    rec_attr(clash, "d", 0644, 0);
    rec_default(clash, "d", d);
    assert_rc(rec_register_rc("clash", clash, NULL), -EEXIST);
    assert_string_equal(rec_ls("/"), "");
}

/* docs/STYLE.md §12: a store under allocation failure either stands or fails
 * ENOMEM with the old value back. */
static void test_attr_store_oom_loop(void **state)
{
    long n;
    int rc;

    (void)state;
    tree();
    assert_ok(rec_store_str("/sub/x/rw", "old"));
    for (n = 1; n < 10000; n++) {
        rec_alloc_fail_nth(n);
        rc = rec_store_str("/sub/x/rw", "new");
        rec_alloc_fail_nth(0);
        if (rc == 0) {
            assert_string_equal(rec_cat("/sub/x/rw"), "new");
            assert_ok(rec_store_str("/sub/x/rw", "old"));
            if (!rec_alloc_failed()) {
                break;
            }
            continue;
        }
        assert_rc(rc, -ENOMEM);
        assert_string_equal(rec_cat("/sub/x/rw"), "old");
        assert_string_equal(rec_values("/sub/x"), "rw=old");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        REC_TEST(test_attr_stat_modes),
        REC_TEST(test_attr_bin_stat_max_size),
        REC_TEST(test_attr_show_once_per_read),
        REC_TEST(test_attr_show_eacces),
        REC_TEST(test_attr_store_eacces),
        REC_TEST(test_attr_store_raw_bytes),
        REC_TEST(test_attr_store_no_accumulation),
        REC_TEST(test_attr_store_short_count_retried),
        REC_TEST(test_attr_store_zero_eio),
        REC_TEST(test_attr_store_error_passed_through),
        REC_TEST(test_attr_store_size_limit),
        REC_TEST(test_attr_store_empty_value),
        REC_TEST(test_attr_show_error_then_retry),
        REC_TEST(test_attr_show_page_limit),
        REC_TEST(test_attr_type_methods),
        REC_TEST(test_attr_callbacks_without_su_mutex),
        REC_TEST(test_attr_missing_enoent),
        REC_TEST(test_attr_bin_read_probe_then_fill),
        REC_TEST(test_attr_bin_read_empty),
        REC_TEST(test_attr_bin_read_errors),
        REC_TEST(test_attr_bin_write),
        REC_TEST(test_attr_bin_large_values),
        REC_TEST(test_attr_bin_eacces),
        REC_TEST(test_attr_duplicate_names_refused),
        REC_TEST(test_attr_default_group_named_like_attr),
        REC_TEST(test_attr_store_oom_loop),
    };

    return rec_run("core-attr", tests);
}
