// SPDX-License-Identifier: MIT
/*
 * test-schema-examples.c - the schemas shipped in schemas/, each driven the
 * way the real tool's documentation drives the kernel's tree: mkdir, echo
 * into attributes, ln -s, mv between pending/ and live/, then the errors
 * the rules promise, then teardown in the documented order.
 *
 * Covers docs/configfs-rules.md U1 (LIO), U2 (USB gadget), U4 (netconsole) and
 * the FakeNBD example of the configfs documentation, with docs/DESIGN.md
 * §5 for what the schema format adds (EINVAL details, ENOSPC,
 * EPERM for links where none are allowed, EINVAL for a wrong link target).
 */
#include "schema-test.h"

static struct cfs_schema_set *set;

static void before(void)
{
    struct cfs_schema_error err;
    char line[2048];

    if (cfs_schema_load_dir(st_shipped_dir(), &set, &err) != 0) {
        fail_msg("%s", cfs_schema_error_format(&err, line, sizeof(line)));
    }
    if (cfs_schema_set_register(set, &err) != 0) {
        fail_msg("%s", cfs_schema_error_format(&err, line, sizeof(line)));
    }
}

static void after(void)
{
    cfs_schema_set_free(set);
    set = NULL;
}

static void mkdir_ok(const char *path)
{
    int r = cfs_mkdir(NULL, path);

    if (r != 0) {
        fail_msg("mkdir %s: %d (%s)", path, r, cfs_schema_last_detail());
    }
}

static void rmdir_ok(const char *path)
{
    int r = cfs_rmdir(NULL, path);

    if (r != 0) {
        fail_msg("rmdir %s: %d", path, r);
    }
}

/* echo VALUE > PATH: the shell adds the newline. */
static void echo(const char *value, const char *path)
{
    char buf[512];
    int r;

    st_fmt(buf, sizeof(buf), "%s\n", value);
    r = st_store(path, buf);
    if (r != 0) {
        fail_msg(
            "echo %s > %s: %d (%s)", value, path, r, cfs_schema_last_detail());
    }
}

static void
echo_fails(const char *value, const char *path, int err, const char *detail)
{
    char buf[512];

    st_fmt(buf, sizeof(buf), "%s\n", value);
    st_store_fails(path, buf, err, detail);
}

static void ln_s(const char *target, const char *link)
{
    int r = cfs_symlink(NULL, link, target);

    if (r != 0) {
        fail_msg(
            "ln -s %s %s: %d (%s)", target, link, r, cfs_schema_last_detail());
    }
}

static void
ln_s_fails(const char *target, const char *link, int err, const char *detail)
{
    int r;

    cfs_schema_clear_detail();
    r = cfs_symlink(NULL, link, target);
    if (r != err) {
        fail_msg("ln -s %s %s: %d, expected %d", target, link, r, err);
    }
    st_detail_has(detail);
}

static void readlink_eq(const char *link, const char *target)
{
    char *got = NULL;

    assert_ok(cfs_readlink(link, &got));
    assert_string_equal(got, target);
    cfs_free(got);
}

/* Every shipped file loads, and the set has the four documented ones. */
static void test_examples_loaded(void **state)
{
    (void)state;
    assert_int_equal(cfs_schema_set_count(set), 4);
    assert_non_null(cfs_schema_set_find(set, "fakenbd"));
    assert_non_null(cfs_schema_set_find(set, "target"));
    assert_non_null(cfs_schema_set_find(set, "usb_gadget"));
    assert_non_null(cfs_schema_set_find(set, "netconsole"));
    st_readdir_eq("/", "fakenbd target netconsole usb_gadget");
    for (size_t i = 0; i < cfs_schema_set_count(set); i++) {
        json_t *j = NULL;

        assert_ok(cfs_schema_describe(cfs_schema_set_get(set, i), &j));
        json_decref(j);
    }
}

/* FakeNBD (configfs documentation, "Configuring FakeNBD" and "Committable
 * Items"): mkdir in pending/, echo target, device and rw, mv into live/. */
static void test_examples_fakenbd(void **state)
{
    (void)state;
    st_readdir_eq("/fakenbd", "pending live");
    assert_int_equal(cfs_mkdir(NULL, "/fakenbd/disk1"), -EPERM); /* C3 */
    mkdir_ok("/fakenbd/pending/disk1");
    st_readdir_eq("/fakenbd/pending/disk1", "target device rw");
    st_show_eq("/fakenbd/pending/disk1/rw", "0");

    st_store_fails("/fakenbd/pending/disk1/device",
                   "sda1\n",
                   -EINVAL,
                   "device: must match ^/dev/");
    echo_fails("10.0.0.256",
               "/fakenbd/pending/disk1/target",
               -EINVAL,
               "target: must be an IPv4 address");
    cfs_schema_clear_detail();
    assert_int_equal(
        cfs_rename(NULL, "/fakenbd/pending/disk1", "/fakenbd/live/disk1"),
        -EINVAL);
    st_detail_has("required before commit: target, device");

    echo("10.0.0.1", "/fakenbd/pending/disk1/target");
    echo("/dev/sda1", "/fakenbd/pending/disk1/device");
    echo("1", "/fakenbd/pending/disk1/rw");
    assert_ok(
        cfs_rename(NULL, "/fakenbd/pending/disk1", "/fakenbd/live/disk1"));
    st_readdir_eq("/fakenbd/live", "disk1");
    st_show_eq("/fakenbd/live/disk1/target", "10.0.0.1");
    st_show_eq("/fakenbd/live/disk1/device", "/dev/sda1");
    st_show_eq("/fakenbd/live/disk1/rw", "1");
    echo_fails("",
               "/fakenbd/live/disk1/device",
               -EINVAL,
               "device: required while committed");
    assert_int_equal(cfs_symlink(NULL, "/fakenbd/live/disk1/l", "/fakenbd"),
                     -EPERM);
    assert_int_equal(cfs_rmdir(NULL, "/fakenbd/live/disk1"), -EPERM); /* C6 */

    /* Shut down: uncommit, then remove. */
    assert_ok(
        cfs_rename(NULL, "/fakenbd/live/disk1", "/fakenbd/pending/disk1"));
    rmdir_ok("/fakenbd/pending/disk1");
    st_readdir_eq("/fakenbd/pending", "");
}

#define FILEIO  "/target/core/fileio_0"
#define DISK    FILEIO "/disk1"
#define IQN     "/target/iscsi/iqn.2003-01.org.linux-iscsi.host.x8664:sn.1"
#define TPG     IQN "/tpgt_1"
#define LUN0    TPG "/lun/lun_0"
#define ACL     TPG "/acls/iqn.1994-05.com.redhat:client"
#define MAPPED0 ACL "/lun_0"

/* LIO (U1): backstore first, configured and enabled; then the fabric
 * target, its portal group, LUN linked to the backstore, portal, ACL with
 * a mapped LUN linked to the group's LUN; enable. Teardown in reverse. */
static void test_examples_lio(void **state)
{
    (void)state;
    st_readdir_eq("/target", "version dbroot core");
    st_show_eq("/target/dbroot", "/etc/target");
    st_readdir_eq("/target/core/alua/lu_gps", "default_lu_gp");

    mkdir_ok(FILEIO);
    mkdir_ok(DISK);
    st_readdir_eq(DISK,
                  "info control alias udev_path enable alua_lu_gp attrib pr "
                  "wwn alua statistics");
    echo("fd_dev_name=/tmp/disk1.img,fd_dev_size=1073741824", DISK "/control");
    echo("/tmp/disk1.img", DISK "/udev_path");
    echo("1", DISK "/enable");
    echo("4096", DISK "/attrib/block_size");
    echo_fails("1000",
               DISK "/attrib/block_size",
               -EINVAL,
               "block_size: must be one of: 512, 1024, 2048, 4096");
    echo_fails("tmp/x", DISK "/udev_path", -EINVAL, "must match ^/");
    st_show_eq(DISK "/wwn/vendor_id", "LIO-ORG");
    st_readdir_eq(DISK "/alua", "default_tg_pt_gp");

    mkdir_ok("/target/iscsi");
    st_readdir_eq("/target/iscsi", "discovery_auth");
    mkdir_ok(IQN);
    mkdir_ok(TPG);
    st_readdir_eq(TPG, "enable dynamic_sessions lun np acls attrib auth param");
    mkdir_ok(LUN0);
    ln_s(DISK, LUN0 "/7f3c9e1a2b");
    readlink_eq(LUN0 "/7f3c9e1a2b", DISK);
    ln_s_fails(FILEIO,
               LUN0 "/hba",
               -EINVAL,
               "links in lun may point only at: device (the target is a hba)");
    ln_s_fails("/usb_gadget",
               LUN0 "/other",
               -EINVAL,
               "the target is not part of target");
    assert_int_equal(cfs_symlink(NULL, TPG "/l", DISK), -EPERM); /* SL4 */
    mkdir_ok(TPG "/np/0.0.0.0:3260");
    mkdir_ok(ACL);
    st_readdir_eq(ACL, "cmdsn_depth tag attrib auth fabric_statistics");
    mkdir_ok(MAPPED0);
    ln_s(LUN0, MAPPED0 "/lun_0");
    ln_s_fails(DISK,
               MAPPED0 "/disk",
               -EINVAL,
               "links in mapped_lun may point only at: lun (the target is a "
               "device)");
    echo("0", TPG "/attrib/authentication");
    echo_fails("2", TPG "/attrib/login_timeout", -EINVAL, "at least 5");
    echo("1", TPG "/enable");
    st_show_eq(TPG "/enable", "1");

    assert_int_equal(cfs_rmdir(NULL, DISK), -EBUSY);    /* RM6 */
    assert_int_equal(cfs_rmdir(NULL, LUN0), -EBUSY);    /* RM6 */
    assert_int_equal(cfs_rmdir(NULL, TPG), -ENOTEMPTY); /* C10-like, RM7 */

    /* Teardown, links first (RM14). */
    echo("0", TPG "/enable");
    assert_ok(cfs_unlink(NULL, MAPPED0 "/lun_0"));
    rmdir_ok(MAPPED0);
    rmdir_ok(ACL);
    rmdir_ok(TPG "/np/0.0.0.0:3260");
    assert_ok(cfs_unlink(NULL, LUN0 "/7f3c9e1a2b"));
    rmdir_ok(LUN0);
    rmdir_ok(TPG);
    rmdir_ok(IQN);
    rmdir_ok("/target/iscsi");
    rmdir_ok(DISK);
    rmdir_ok(FILEIO);
}

#define G1 "/usb_gadget/g1"

/* USB gadget (U2, Documentation/usb/gadget_configfs.rst). */
static void test_examples_usb_gadget(void **state)
{
    (void)state;
    mkdir_ok(G1);
    st_readdir_eq(G1,
                  "bDeviceClass bDeviceSubClass bDeviceProtocol "
                  "bMaxPacketSize0 idVendor idProduct bcdDevice bcdUSB UDC "
                  "max_speed functions configs strings os_desc");
    echo("0x1d6b", G1 "/idVendor");
    echo("0x0104", G1 "/idProduct");
    st_show_eq(G1 "/idVendor", "0x1d6b"); /* as the kernel prints it */
    st_show_eq(G1 "/bcdUSB", "0x0200");   /* the default, formatted */
    echo_fails("0x10000", G1 "/idVendor", -EINVAL, "idVendor: at most 65535");

    mkdir_ok(G1 "/strings/0x409");
    echo("0123456789", G1 "/strings/0x409/serialnumber");
    echo("Foo Inc.", G1 "/strings/0x409/manufacturer");
    echo("Bar Gadget", G1 "/strings/0x409/product");
    echo("Caf\xc3\xa9 \xe2\x98\x95", G1 "/strings/0x409/product");
    st_show_eq(G1 "/strings/0x409/product", "Caf\xc3\xa9 \xe2\x98\x95");

    mkdir_ok(G1 "/configs/c.1");
    mkdir_ok(G1 "/configs/c.1/strings/0x409");
    echo("CDC NCM", G1 "/configs/c.1/strings/0x409/configuration");
    echo("120", G1 "/configs/c.1/MaxPower");
    echo_fails("0x40",
               G1 "/configs/c.1/bmAttributes",
               -EINVAL,
               "bmAttributes: at least 128");

    mkdir_ok(G1 "/functions/ncm.usb0");
    echo("aa:bb:cc:dd:ee:f1", G1 "/functions/ncm.usb0/host_addr");
    echo_fails("aa:bb:cc:dd:ee",
               G1 "/functions/ncm.usb0/dev_addr",
               -EINVAL,
               "dev_addr: must be a MAC address");
    ln_s(G1 "/functions/ncm.usb0", G1 "/configs/c.1/ncm.usb0");
    readlink_eq(G1 "/configs/c.1/ncm.usb0", G1 "/functions/ncm.usb0");
    ln_s_fails(G1 "/strings/0x409",
               G1 "/configs/c.1/s",
               -EINVAL,
               "links in config may point only at: function (the target is a "
               "gadget_lang)");
    assert_int_equal(
        cfs_symlink(NULL, G1 "/functions/l", G1 "/functions/ncm.usb0"), -EPERM);
    ln_s(G1 "/configs/c.1", G1 "/os_desc/c.1");
    echo("dummy_udc.0", G1 "/UDC");
    st_show_eq(G1 "/UDC", "dummy_udc.0");

    assert_int_equal(cfs_rmdir(NULL, G1 "/functions/ncm.usb0"), -EBUSY);

    /* Documented cleanup order. */
    echo("", G1 "/UDC");
    assert_ok(cfs_unlink(NULL, G1 "/os_desc/c.1"));
    assert_ok(cfs_unlink(NULL, G1 "/configs/c.1/ncm.usb0"));
    rmdir_ok(G1 "/configs/c.1/strings/0x409");
    rmdir_ok(G1 "/configs/c.1");
    rmdir_ok(G1 "/functions/ncm.usb0");
    rmdir_ok(G1 "/strings/0x409");
    rmdir_ok(G1);
}

#define T1 "/netconsole/target1"

/* netconsole (U4, Documentation/networking/netconsole.rst). */
static void test_examples_netconsole(void **state)
{
    char name[64];
    char big[256];

    (void)state;
    mkdir_ok(T1);
    st_show_eq(T1 "/enabled", "0");
    st_show_eq(T1 "/dev_name", "eth0");
    st_show_eq(T1 "/local_port", "6665");
    st_show_eq(T1 "/remote_port", "6666");
    st_show_eq(T1 "/remote_mac", "ff:ff:ff:ff:ff:ff");
    echo("eth1", T1 "/dev_name");
    echo("192.168.0.2", T1 "/remote_ip");
    echo("00:11:22:33:44:55", T1 "/remote_mac");
    echo("1", T1 "/enabled");
    echo_fails("eth-with-a-long-name",
               T1 "/dev_name",
               -EINVAL,
               "dev_name: at most 15 bytes");
    echo_fails("70000", T1 "/remote_port", -EINVAL, "at most 65535");
    echo_fails(
        "::1", T1 "/remote_ip", -EINVAL, "remote_ip: must be an IPv4 address");
    assert_int_equal(st_store(T1 "/local_mac", "00:00:00:00:00:01\n"), -EACCES);
    assert_int_equal(st_store(T1 "/transmit_errors", "1\n"), -EACCES);
    assert_int_equal(cfs_symlink(NULL, T1 "/l", "/netconsole"), -EPERM);

    mkdir_ok(T1 "/userdata/foo");
    echo("bar", T1 "/userdata/foo/value");
    st_show_eq(T1 "/userdata/foo/value", "bar");
    echo("1", T1 "/userdata/taskname_enabled");
    memset(big, 'v', 201);
    big[201] = '\0';
    echo_fails(big, T1 "/userdata/foo/value", -EINVAL, "at most 200 bytes");
    for (int i = 1; i < 16; i++) {
        st_fmt(name, sizeof(name), T1 "/userdata/k%d", i);
        mkdir_ok(name);
    }
    cfs_schema_clear_detail();
    assert_int_equal(cfs_mkdir(NULL, T1 "/userdata/k16"), -ENOSPC);
    st_detail_has("at most 16 children in userdata");
    assert_int_equal(cfs_rmdir(NULL, T1), -ENOTEMPTY);

    for (int i = 1; i < 16; i++) {
        st_fmt(name, sizeof(name), T1 "/userdata/k%d", i);
        rmdir_ok(name);
    }
    rmdir_ok(T1 "/userdata/foo");
    rmdir_ok(T1); /* an enabled target may be removed (U4) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) ST_TEST(fn, before, after)
        T(test_examples_loaded),
        T(test_examples_fakenbd),
        T(test_examples_lio),
        T(test_examples_usb_gadget),
        T(test_examples_netconsole),
#undef T
    };

    return cmocka_run_group_tests(tests, st_group_setup, NULL);
}
