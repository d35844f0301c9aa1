// SPDX-License-Identifier: MIT
/*
 * test-schema-value.c - attribute kinds: what each accepts, refuses and
 * shows, at the boundaries and with non-ASCII input, through cfs_write()
 * and cfs_show() as every front end calls them.
 *
 * Covers docs/DESIGN.md §5 (kinds, one trailing newline stripped, EINVAL
 * with a detail naming the rule), and docs/configfs-rules.md WR5 (the raw bytes
 * reach store) and RD1 (modes are enforced by core).
 */
#include "schema-test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static const char kinds_json[] =
    "{\"subsystem\": \"kinds\", \"root\": \"root\", \"types\": {"
    " \"root\": {\"creates\": {\"kind\": \"item\", \"type\": \"k\"}},"
    " \"k\": {\"attributes\": {"
    "  \"s\": {\"kind\": \"string\"},"
    "  \"dev\": {\"kind\": \"string\", \"pattern\": \"^/dev/\","
    "           \"max_length\": 12},"
    "  \"digits\": {\"kind\": \"string\", \"pattern\": \"[0-9]+\"},"
    "  \"i\": {\"kind\": \"int\", \"min\": -10, \"max\": 65535},"
    "  \"i64\": {\"kind\": \"int\"},"
    "  \"u\": {\"kind\": \"uint\", \"max\": 65535},"
    "  \"u64\": {\"kind\": \"uint\"},"
    "  \"umin\": {\"kind\": \"uint\", \"min\": 1, \"default\": \"0x1\"},"
    "  \"hex\": {\"kind\": \"uint\", \"max\": 65535, \"format\": \"0x%04x\","
    "           \"default\": \"0\"},"
    "  \"hx8\": {\"kind\": \"uint\", \"format\": \"%X h\"},"
    "  \"pct\": {\"kind\": \"int\", \"format\": \"%03d%%\"},"
    "  \"hx\": {\"kind\": \"uint\", \"format\": \"%x\"},"
    "  \"dx\": {\"kind\": \"uint\", \"format\": \"0x%d\"},"
    "  \"w5\": {\"kind\": \"int\", \"format\": \"%5d\"},"
    "  \"idx\": {\"kind\": \"uint\", \"format\": \"id %x\"},"
    "  \"b\": {\"kind\": \"bool\", \"default\": \"yes\"},"
    "  \"e\": {\"kind\": \"enum\", \"values\": [\"a\", \"b\", \"c\"],"
    "         \"default\": \"b\"},"
    "  \"v4\": {\"kind\": \"ipv4\"},"
    "  \"v6\": {\"kind\": \"ipv6\"},"
    "  \"mac\": {\"kind\": \"mac\"},"
    "  \"id\": {\"kind\": \"uuid\"},"
    "  \"host\": {\"kind\": \"hostname\"},"
    "  \"ro\": {\"kind\": \"string\", \"mode\": \"0444\", \"default\": "
    "\"fixed\"},"
    "  \"wo\": {\"kind\": \"string\", \"mode\": \"0200\"}"
    " }}}}";

static struct cfs_schema *schema;

/* Whether @len bytes of @p are not all @c. */
static bool memspn_differs(const char *p, size_t len, char c)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != c) {
            return true;
        }
    }
    return false;
}

static void before(void)
{
    schema = st_load_register(kinds_json);
    assert_ok(cfs_mkdir(NULL, "/kinds/x"));
}

static void after(void)
{
    cfs_schema_free(schema);
    schema = NULL;
}

static void ok_shows(const char *attr, const char *value, const char *shown)
{
    char path[64];

    (void)snprintf(path, sizeof(path), "/kinds/x/%s", attr);
    cfs_schema_clear_detail();
    if (st_store(path, value) != 0) {
        fail_msg("store \"%s\" into %s refused: %s",
                 value,
                 attr,
                 cfs_schema_last_detail());
    }
    st_show_eq(path, shown);
    assert_string_equal(cfs_schema_last_detail(), "");
}

static void ok(const char *attr, const char *value)
{
    ok_shows(attr, value, value);
}

static void bad(const char *attr, const char *value, const char *detail)
{
    char path[64];
    char want[256];

    (void)snprintf(path, sizeof(path), "/kinds/x/%s", attr);
    (void)snprintf(want, sizeof(want), "%s: %s", attr, detail);
    st_store_fails(path, value, -EINVAL, want);
}

/* Defaults are the initial values; no default means empty. */
static void test_value_defaults(void **state)
{
    (void)state;
    st_show_eq("/kinds/x/s", "");
    st_show_eq("/kinds/x/i", "");
    st_show_eq("/kinds/x/umin", "1"); /* shown in decimal */
    st_show_eq("/kinds/x/b", "1");    /* "yes" shown as 1 */
    st_show_eq("/kinds/x/e", "b");
    st_show_eq("/kinds/x/ro", "fixed");
}

/* One trailing newline is stripped, exactly one (WR5 leaves it to us). */
static void test_value_newline(void **state)
{
    (void)state;
    ok_shows("s", "abc\n", "abc");
    ok_shows("s", "abc\n\n", "abc\n");
    ok_shows("s", "\n", "");
    ok_shows("i", "42\n", "42");
    bad("i", "42\n\n", "must be an integer");
    ok_shows("s", "two\nlines", "two\nlines");
    ok_shows("s", "", ""); /* an empty store empties a string */
}

static void test_value_string_utf8(void **state)
{
    (void)state;
    ok("s", "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9d\x84\x9e"); /* é ✓ 𝄞 */
    bad("s", "\xff", "must be valid UTF-8");
    bad("s", "\xc0\xaf", "must be valid UTF-8");         /* overlong '/' */
    bad("s", "\xed\xa0\x80", "must be valid UTF-8");     /* surrogate */
    bad("s", "\xf4\x90\x80\x80", "must be valid UTF-8"); /* > U+10FFFF */
    bad("s", "\xe2\x9c", "must be valid UTF-8");         /* cut short */
    cfs_schema_clear_detail();
    assert_int_equal(cfs_write(NULL, "/kinds/x/s", "a\0b", 3), -EINVAL);
    st_detail_has("s: must not contain NUL bytes");
    st_show_eq("/kinds/x/s", "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9d\x84\x9e");
}

/* max_length counts bytes, not characters. */
static void test_value_string_max_length(void **state)
{
    (void)state;
    ok("dev", "/dev/sda1234"); /* 12 bytes */
    bad("dev", "/dev/sda12345", "at most 12 bytes");
    ok("dev", "/dev/\xc3\xa9"); /* 7 bytes */
    bad("dev", "/dev/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "at most 12 bytes");
    ok_shows("dev", "/dev/sda1234\n", "/dev/sda1234"); /* newline not counted */
}

/* A pattern is a POSIX ERE searched in the value; anchors are the
 * author's. */
static void test_value_string_pattern(void **state)
{
    (void)state;
    ok("dev", "/dev/sda1");
    bad("dev", "sda1", "must match ^/dev/");
    bad("dev", "x/dev/sda", "must match ^/dev/");
    ok("digits", "abc123def");
    bad("digits", "abc", "must match [0-9]+");
    st_show_eq("/kinds/x/dev", "/dev/sda1"); /* refusals changed nothing */
}

static void test_value_string_page(void **state)
{
    char *big = malloc(CONFIGFS_PAGE_SIZE + 1);

    (void)state;
    memset(big, 'x', CONFIGFS_PAGE_SIZE);
    big[CFS_STORE_MAX] = '\0';
    assert_ok(cfs_write(NULL, "/kinds/x/s", big, CFS_STORE_MAX));
    {
        char *buf = NULL;
        size_t len = 0;

        assert_ok(cfs_show("/kinds/x/s", &buf, &len));
        assert_int_equal(len, CONFIGFS_PAGE_SIZE); /* 4095 + "\n" */
        cfs_free(buf);
    }
    assert_int_equal(cfs_write(NULL, "/kinds/x/s", big, CONFIGFS_PAGE_SIZE),
                     -EFBIG);
    free(big);
}

static void test_value_int(void **state)
{
    (void)state;
    ok("i", "0");
    ok("i", "-10");
    bad("i", "-11", "at least -10");
    ok("i", "65535");
    bad("i", "65536", "at most 65535");
    ok_shows("i", "0x10", "16");
    ok_shows("i", "0XfF", "255");
    ok_shows("i", "+5", "5");
    ok_shows("i", "007", "7");
    ok_shows("i", "-0x0a", "-10");
    bad("i", " 5", "must be an integer");
    bad("i", "5 ", "must be an integer");
    bad("i", "1.5", "must be an integer");
    bad("i", "1e3", "must be an integer");
    bad("i", "0x", "must be an integer");
    bad("i", "abc", "must be an integer");
    bad("i", "\xd9\xa3", "must be an integer"); /* Arabic-Indic 3 */
    bad("i", "--1", "must be an integer");
    st_show_eq("/kinds/x/i", "-10");
}

static void test_value_int64_limits(void **state)
{
    (void)state;
    ok("i64", "9223372036854775807");
    ok("i64", "-9223372036854775808");
    st_store_fails("/kinds/x/i64",
                   "9223372036854775808",
                   -ERANGE,
                   "i64: must fit in a signed 64-bit integer");
    st_store_fails(
        "/kinds/x/i64", "-9223372036854775809", -ERANGE, "signed 64-bit");
    ok_shows("i64", "0x7fffffffffffffff", "9223372036854775807");
    st_show_eq("/kinds/x/i64", "9223372036854775807");
}

static void test_value_uint(void **state)
{
    (void)state;
    ok("u", "0");
    ok("u", "65535");
    ok_shows("u", "0xFFFF", "65535");
    bad("u", "0x10000", "at most 65535");
    bad("u", "-1", "must not be negative");
    bad("u", "-0", "must not be negative");
    bad("u", "x", "must be a non-negative integer");
    ok("u64", "18446744073709551615");
    st_store_fails("/kinds/x/u64",
                   "18446744073709551616",
                   -ERANGE,
                   "u64: must fit in an unsigned 64-bit integer");
    bad("umin", "0", "at least 1");
    ok("umin", "1");
}

/* "format": the value is kept and shown as the kernel's show() prints it
 * (USB's idVendor, "0x%04x"), whatever form the store took; a shown value
 * stored back is the same value. */
static void test_value_format(void **state)
{
    (void)state;
    st_show_eq("/kinds/x/hex", "0x0000"); /* the default, formatted */
    ok_shows("hex", "0x1d6b\n", "0x1d6b");
    ok_shows("hex", "7531", "0x1d6b");
    ok_shows("hex", "0X1D6B", "0x1d6b");
    ok_shows("hex", "0x0104", "0x0104");
    ok_shows("hex", "65535", "0xffff");
    bad("hex", "0x10000", "at most 65535");
    bad("hex", "1d6b", "must be a non-negative integer");
    ok_shows("hx8", "255", "FF h");
    ok_shows("hx8", "FF h", "FF h"); /* the shown text round-trips */
    ok_shows("hx8", "0x1F", "1F h");
    ok_shows("hx8", "18446744073709551615", "FFFFFFFFFFFFFFFF h");
    ok_shows("pct", "-5", "-05%");
    ok_shows("pct", "7%", "007%");
    ok_shows("pct", "-9223372036854775808", "-9223372036854775808%");
    bad("pct", "7%%", "must be an integer");
}

/* A shown value stored back is the same value (issue 37 (1)): the shown
 * form is read first (the format's text stripped, the digits in its base,
 * padding taken), then the plain forms; where one text is both, the shown
 * form wins ("10" of "%x" is 16), and a sign or 0x reaches the plain. */
static void test_value_format_shown_form_first(void **state)
{
    (void)state;
    ok_shows("hx", "0x10", "10");
    ok_shows("hx", "10", "10"); /* the shown "10" is 16, not ten */
    ok_shows("hx", "+16", "10");
    ok_shows("hx", "16", "16"); /* digits alone are the shown form: 22 */
    ok_shows("hx", "10\n", "10");
    ok_shows("hx", "+10", "a"); /* a sign: not the shown form, decimal */
    ok_shows("hx", "0xa", "a");
    ok_shows("hx", "FF", "ff");
    ok_shows("hx", "ffffffffffffffff", "ffffffffffffffff");
    st_store_fails("/kinds/x/hx",
                   "1ffffffffffffffff",
                   -ERANGE,
                   "hx: must fit in an unsigned 64-bit integer");
    bad("hx", " 10", "must be a non-negative integer");
    bad("hx", "-1", "must not be negative");
    ok_shows("dx", "42", "0x42");
    ok_shows("dx", "0x42", "0x42"); /* shown: 42, not 66 */
    ok_shows("dx", "0x2a", "0x42"); /* no shown form: hex */
    ok_shows("dx", "0X42", "0x66"); /* "0X" is not the format's text */
    ok_shows("w5", "9", "    9");
    ok_shows("w5", "    9", "    9");
    ok_shows("w5", " 9", "    9");
    ok_shows("w5", "   -9", "   -9");
    ok_shows("w5", "-123456", "-123456");
    ok_shows("w5", "+7", "    7");
    bad("w5", "9 ", "must be an integer");
    bad("w5", "  - 9", "must be an integer");
    ok_shows("idx", "255", "id ff");
    ok_shows("idx", "id ff", "id ff");
    ok_shows("idx", "id FF\n", "id ff");
    ok_shows("idx", "id 0x10", "id 10"); /* a plain number inside the text */
    ok_shows("idx", "id +16", "id 10");
    st_store_fails("/kinds/x/idx", "id ", -EINVAL, "or as shown by id %x");
    bad("idx", "ff", "must be a non-negative integer");
    bad("idx", "id  ff", "must be a non-negative integer"); /* no width */
}

static void test_value_bool(void **state)
{
    static const char *const yes[] = {"1", "true", "TRUE", "Yes", "on", "oN"};
    static const char *const no[] = {"0", "false", "False", "NO", "off"};

    (void)state;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        ok_shows("b", "0", "0");
        ok_shows("b", yes[i], "1");
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        ok_shows("b", "1", "1");
        ok_shows("b", no[i], "0");
    }
    ok_shows("b", "on\n", "1");
    bad("b", "2", "must be one of 0, 1, true, false, yes, no, on, off");
    bad("b", "y", "must be one of");
    bad("b", "", "must be one of");
    bad("b", "truee", "must be one of");
    bad("b", "\xc3\xbf", "must be one of");
}

static void test_value_enum(void **state)
{
    (void)state;
    ok("e", "a");
    ok_shows("e", "c\n", "c");
    bad("e", "A", "must be one of: a, b, c");
    bad("e", "", "must be one of: a, b, c");
    bad("e", "a ", "must be one of: a, b, c");
    st_show_eq("/kinds/x/e", "c");
}

static void test_value_ipv4(void **state)
{
    (void)state;
    ok("v4", "10.0.0.1");
    ok("v4", "255.255.255.255");
    ok("v4", "0.0.0.0");
    ok_shows("v4", "192.168.1.2\n", "192.168.1.2");
    bad("v4", "256.0.0.1", "must be an IPv4 address");
    bad("v4", "10.0.0", "must be an IPv4 address");
    bad("v4", "10.0.0.1.2", "must be an IPv4 address");
    bad("v4", "::1", "must be an IPv4 address");
    bad("v4", "10.0.0.1 ", "must be an IPv4 address");
    bad("v4", "\xef\xbc\x91.0.0.1", "must be an IPv4 address"); /* fullwidth */
    cfs_schema_clear_detail();
    assert_int_equal(cfs_write(NULL, "/kinds/x/v4", "1.2.3.4\0x", 9), -EINVAL);
}

static void test_value_ipv6(void **state)
{
    (void)state;
    ok("v6", "::1");
    ok("v6", "fe80::1");
    ok("v6", "2001:db8::ff00:42:8329");
    ok("v6", "::ffff:192.0.2.1");
    ok("v6", "2001:0db8:0000:0000:0000:0000:0000:0001"); /* kept as written */
    bad("v6", "1::2::3", "must be an IPv6 address");
    bad("v6", "10.0.0.1", "must be an IPv6 address");
    bad("v6", "fe80::1%eth0", "must be an IPv6 address");
    bad("v6", "12345::1", "must be an IPv6 address");
}

static void test_value_mac(void **state)
{
    (void)state;
    ok("mac", "00:11:22:aa:BB:cc");
    ok("mac", "ff:ff:ff:ff:ff:ff");
    bad("mac", "00-11-22-33-44-55", "must be a MAC address");
    bad("mac", "0:11:22:33:44:55", "must be a MAC address");
    bad("mac", "00:11:22:33:44", "must be a MAC address");
    bad("mac", "00:11:22:33:44:5g", "must be a MAC address");
    bad("mac", "00:11:22:33:44:55:66", "must be a MAC address");
    bad("mac", "001122334455", "must be a MAC address");
}

static void test_value_uuid(void **state)
{
    (void)state;
    ok("id", "123e4567-e89b-12d3-a456-426614174000");
    ok("id", "123E4567-E89B-12D3-A456-426614174000");
    bad("id", "123e4567e89b12d3a456426614174000", "must be a UUID");
    bad("id", "123e4567-e89b-12d3-a456-42661417400", "must be a UUID");
    bad("id", "123e4567-e89b-12d3-a456-4266141740000", "must be a UUID");
    bad("id", "g23e4567-e89b-12d3-a456-426614174000", "must be a UUID");
    bad("id", "{123e4567-e89b-12d3-a456-426614174000}", "must be a UUID");
    bad("id", "123e4567-e89b-12d3-a456_426614174000", "must be a UUID");
}

static void test_value_hostname(void **state)
{
    char label63[64 + 8];
    char name253[260];
    char tmp[300];

    (void)state;
    ok("host", "example.com");
    ok("host", "a");
    ok("host", "xn--bcher-kva.example");
    ok("host", "1.2.3.4"); /* RFC 1123 allows a leading digit */
    ok("host", "a-b.c-d");
    memset(label63, 'a', 63);
    label63[63] = '\0';
    ok("host", label63);
    (void)snprintf(tmp, sizeof(tmp), "%sa", label63);
    bad("host", tmp, "must be a host name (RFC 1123");
    /* 253 bytes: 3 labels of 63, one of 61, dots between. */
    (void)snprintf(
        name253, sizeof(name253), "%s.%s.%s.", label63, label63, label63);
    memset(name253 + strlen(name253), 'b', 61);
    name253[253] = '\0';
    assert_int_equal(strlen(name253), 253);
    ok("host", name253);
    (void)snprintf(tmp, sizeof(tmp), "%sb", name253);
    bad("host", tmp, "must be a host name");
    bad("host", "-a.com", "must be a host name");
    bad("host", "a-.com", "must be a host name");
    bad("host", "a..b", "must be a host name");
    bad("host", ".a", "must be a host name");
    bad("host", "a.", "must be a host name");
    bad("host", "a_b", "must be a host name");
    bad("host", "\xc3\xbcni.com", "must be a host name"); /* IDN unencoded */
}

/* Without a default an attribute starts unset (empty) and an empty store
 * unsets it again, whatever its kind or pattern; with a default, empty is
 * a value like any other. */
static void test_value_unset(void **state)
{
    (void)state;
    ok("i", "5");
    ok_shows("i", "", "");
    ok("i", "5");
    ok_shows("i", "\n", "");
    ok("dev", "/dev/sda");
    ok_shows("dev", "\n", ""); /* the pattern does not apply */
    ok("v4", "10.0.0.1");
    ok_shows("v4", "", "");
    ok("host", "example.com");
    ok_shows("host", "", "");
    bad("b", "", "must be one of 0, 1"); /* bool with a default */
    bad("e", "\n", "must be one of: a, b, c");
    bad("umin", "", "must be a non-negative integer");
    st_show_eq("/kinds/x/umin", "1");
}

/* Undoing a transaction stores what show() printed before: a lone
 * newline for an unset attribute, the canonical text otherwise. */
static void test_value_txn_abort(void **state)
{
    struct cfs_txn *txn = NULL;

    (void)state;
    ok_shows("u", "0x20", "32");
    assert_ok(cfs_txn_begin(&txn));
    assert_ok(cfs_write(txn, "/kinds/x/i", "12", 2));
    assert_ok(cfs_write(txn, "/kinds/x/u", "7", 1));
    assert_ok(cfs_write(txn, "/kinds/x/b", "off", 3));
    assert_ok(cfs_write(txn, "/kinds/x/dev", "/dev/x", 6));
    st_show_eq("/kinds/x/i", "12");
    assert_ok(cfs_txn_abort(txn));
    st_show_eq("/kinds/x/i", "");
    st_show_eq("/kinds/x/u", "32");
    st_show_eq("/kinds/x/b", "1");
    st_show_eq("/kinds/x/dev", "");
}

/* Modes are core's business (RD1): no write bit, no store. */
static void test_value_modes(void **state)
{
    char *buf = NULL;
    size_t len;

    (void)state;
    assert_int_equal(st_store("/kinds/x/ro", "x"), -EACCES);
    st_show_eq("/kinds/x/ro", "fixed");
    assert_ok(st_store("/kinds/x/wo", "secret"));
    assert_int_equal(cfs_show("/kinds/x/wo", &buf, &len), -EACCES);
}

/* The detail belongs to the calling thread's last schema callback. */
static void test_value_detail_lifecycle(void **state)
{
    (void)state;
    assert_string_equal(cfs_schema_last_detail(), "");
    bad("i", "65536", "at most 65535");
    assert_string_equal(cfs_schema_last_detail(), "i: at most 65535");
    assert_ok(st_store("/kinds/x/i", "1"));
    assert_string_equal(cfs_schema_last_detail(), "");
    bad("i", "x", "must be an integer");
    cfs_schema_clear_detail();
    assert_string_equal(cfs_schema_last_detail(), "");
    /* A refusal from core (a missing attribute) leaves it alone. */
    assert_int_equal(st_store("/kinds/x/nope", "1"), -ENOENT);
    assert_string_equal(cfs_schema_last_detail(), "");
}

/* show() runs under no core lock while stores replace the value: a
 * reader sees one whole value or the other, never a mix (T9). */
static atomic_bool reader_stop;
static atomic_int reader_bad;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&reader_stop)) {
        char *buf = NULL;
        size_t len = 0;

        if (cfs_show("/kinds/x/s", &buf, &len) != 0) {
            atomic_fetch_add(&reader_bad, 1);
            continue;
        }
        if (len != 201 || buf[200] != '\n' ||
            (memspn_differs(buf, 200, 'a') && memspn_differs(buf, 200, 'b'))) {
            atomic_fetch_add(&reader_bad, 1);
        }
        cfs_free(buf);
    }
    return NULL;
}

static void test_value_show_while_storing(void **state)
{
    char a[201];
    char b[201];
    pthread_t t;

    (void)state;
    memset(a, 'a', 200);
    memset(b, 'b', 200);
    a[200] = b[200] = '\0';
    ok("s", a);
    atomic_store(&reader_stop, false);
    atomic_store(&reader_bad, 0);
    assert_int_equal(pthread_create(&t, NULL, reader, NULL), 0);
    for (int i = 0; i < 2000; i++) {
        assert_ok(st_store("/kinds/x/s", i % 2 ? a : b));
    }
    atomic_store(&reader_stop, true);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&reader_bad), 0);
}

/* Each item holds its own values. */
static void test_value_per_item(void **state)
{
    (void)state;
    assert_ok(cfs_mkdir(NULL, "/kinds/y"));
    ok("i", "7");
    st_show_eq("/kinds/y/i", "");
    assert_ok(st_store("/kinds/y/i", "8"));
    st_show_eq("/kinds/x/i", "7");
    st_show_eq("/kinds/y/i", "8");
    assert_ok(cfs_rmdir(NULL, "/kinds/y"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) ST_TEST(fn, before, after)
        T(test_value_defaults),
        T(test_value_newline),
        T(test_value_string_utf8),
        T(test_value_string_max_length),
        T(test_value_string_pattern),
        T(test_value_string_page),
        T(test_value_int),
        T(test_value_int64_limits),
        T(test_value_uint),
        T(test_value_format),
        T(test_value_format_shown_form_first),
        T(test_value_bool),
        T(test_value_enum),
        T(test_value_ipv4),
        T(test_value_ipv6),
        T(test_value_mac),
        T(test_value_uuid),
        T(test_value_hostname),
        T(test_value_unset),
        T(test_value_txn_abort),
        T(test_value_modes),
        T(test_value_detail_lifecycle),
        T(test_value_per_item),
        T(test_value_show_while_storing),
#undef T
    };

    return cmocka_run_group_tests(tests, st_group_setup, NULL);
}
