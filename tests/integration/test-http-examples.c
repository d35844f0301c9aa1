// SPDX-License-Identifier: MIT
/*
 * test-http-examples.c - the shipped schemas over HTTP, each tree built in
 * the order its real tool's documentation uses (targetcli for LIO, the
 * gadget_configfs walk-through for USB, netconsole.rst), then torn down
 * in reverse (links first, rmdir bottom-up). Each step is stated with the
 * status (and errno) it must answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct step {
    const char *method;
    const char *path; /* under /api/v1/config */
    const char *body; /* JSON when it starts with '{', else raw */
    long status;
    const char *err; /* errno of a problem answer, or NULL */
};

static void run(const struct step *steps)
{
    static const char *const json[] = {"Content-Type: application/json", NULL};

    for (const struct step *s = steps; s->method; s++) {
        struct http_resp r;
        char url[512];

        (void)snprintf(url, sizeof(url), "/api/v1/config%s", s->path);
        http(&r,
             s->method,
             url,
             s->body,
             s->body ? strlen(s->body) : 0,
             s->body && s->body[0] == '{' ? json : NULL);
        if (r.status != s->status) {
            fprintf(stderr,
                    "%s %s: expected %ld, got %ld: %s\n",
                    s->method,
                    s->path,
                    s->status,
                    r.status,
                    r.body);
        }
        assert_int_equal(r.status, s->status);
        if (s->err) {
            expect_problem(&r, s->status, s->err);
        }
        http_resp_done(&r);
    }
}

/* targetcli: backstore, enable, target + tpg, lun linked to the device,
 * acl with a mapped lun linked to the lun, enable the tpg. */
static void test_example_lio(void **state)
{
    static const struct step steps[] = {
        {"POST", "/target/core", "{\"name\":\"fileio_0\"}", 201, NULL},
        {"POST", "/target/core/fileio_0", "{\"name\":\"disk1\"}", 201, NULL},
        {"PUT",
         "/target/core/fileio_0/disk1/control",
         "fd_dev_name=/tmp/disk1,fd_dev_size=1048576",
         200,
         NULL},
        {"PUT", "/target/core/fileio_0/disk1/enable", "1\n", 200, NULL},
        {"POST", "/target", "{\"name\":\"iscsi\"}", 201, NULL},
        {"POST",
         "/target/iscsi",
         "{\"name\":\"iqn.2003-01.org.example:t1\"}",
         201,
         NULL},
        {"POST",
         "/target/iscsi/iqn.2003-01.org.example:t1",
         "{\"name\":\"tpgt_1\"}",
         201,
         NULL},
        {"POST",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun",
         "{\"name\":\"lun_0\"}",
         201,
         NULL},
        /* a lun links only to a device: the hba is refused (H8) */
        {"PUT",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun/lun_0/x",
         "{\"target\":\"/target/core/fileio_0\"}",
         422,
         "EINVAL"},
        {"PUT",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun/lun_0/disk1",
         "{\"target\":\"/target/core/fileio_0/disk1\"}",
         201,
         NULL},
        /* the device is linked: it cannot go (RM6) */
        {"DELETE", "/target/core/fileio_0/disk1", NULL, 409, "EBUSY"},
        {"POST",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls",
         "{\"name\":\"iqn.1994-05.com.example:init\"}",
         201,
         NULL},
        {"POST",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls/"
         "iqn.1994-05.com.example:init",
         "{\"name\":\"lun_0\"}",
         201,
         NULL},
        {"PUT",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls/"
         "iqn.1994-05.com.example:init/lun_0/lun",
         "{\"target\":\"/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun/"
         "lun_0\"}",
         201,
         NULL},
        {"PUT",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/enable",
         "1",
         200,
         NULL},
        /* teardown: links first, then bottom-up (RM14) */
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls/"
         "iqn.1994-05.com.example:init/lun_0/lun",
         NULL,
         204,
         NULL},
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls/"
         "iqn.1994-05.com.example:init/lun_0",
         NULL,
         204,
         NULL},
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/acls/"
         "iqn.1994-05.com.example:init",
         NULL,
         204,
         NULL},
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun/lun_0/disk1",
         NULL,
         204,
         NULL},
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1/lun/lun_0",
         NULL,
         204,
         NULL},
        {"DELETE",
         "/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1",
         NULL,
         204,
         NULL},
        {"DELETE", "/target/iscsi/iqn.2003-01.org.example:t1", NULL, 204, NULL},
        {"DELETE", "/target/iscsi", NULL, 204, NULL},
        {"DELETE", "/target/core/fileio_0/disk1", NULL, 204, NULL},
        {"DELETE", "/target/core/fileio_0", NULL, 204, NULL},
        {NULL, NULL, NULL, 0, NULL},
    };

    (void)state;
    run(steps);
}

/* Documentation/usb/gadget_configfs.rst, in its order. */
static void test_example_usb_gadget(void **state)
{
    static const struct step steps[] = {
        {"POST", "/usb_gadget", "{\"name\":\"g1\"}", 201, NULL},
        {"PUT", "/usb_gadget/g1/idVendor", "0x1d6b\n", 200, NULL},
        {"PUT", "/usb_gadget/g1/idProduct", "0x0104\n", 200, NULL},
        {"PUT", "/usb_gadget/g1/idVendor", "0x1d6b0\n", 422, "EINVAL"},
        {"POST", "/usb_gadget/g1/strings", "{\"name\":\"0x409\"}", 201, NULL},
        {"PUT",
         "/usb_gadget/g1/strings/0x409/serialnumber",
         "0123456789\n",
         200,
         NULL},
        {"PUT",
         "/usb_gadget/g1/strings/0x409/manufacturer",
         "Example\n",
         200,
         NULL},
        {"POST", "/usb_gadget/g1/configs", "{\"name\":\"c.1\"}", 201, NULL},
        {"POST",
         "/usb_gadget/g1/configs/c.1/strings",
         "{\"name\":\"0x409\"}",
         201,
         NULL},
        {"PUT",
         "/usb_gadget/g1/configs/c.1/strings/0x409/configuration",
         "ECM\n",
         200,
         NULL},
        {"PUT", "/usb_gadget/g1/configs/c.1/MaxPower", "120\n", 200, NULL},
        {"POST",
         "/usb_gadget/g1/functions",
         "{\"name\":\"ncm.usb0\"}",
         201,
         NULL},
        {"PUT",
         "/usb_gadget/g1/configs/c.1/ncm.usb0",
         "{\"target\":\"/usb_gadget/g1/functions/ncm.usb0\"}",
         201,
         NULL},
        /* a function cannot go while a config links it */
        {"DELETE", "/usb_gadget/g1/functions/ncm.usb0", NULL, 409, "EBUSY"},
        {"DELETE", "/usb_gadget/g1/configs/c.1/ncm.usb0", NULL, 204, NULL},
        {"DELETE", "/usb_gadget/g1/configs/c.1/strings/0x409", NULL, 204, NULL},
        {"DELETE", "/usb_gadget/g1/configs/c.1", NULL, 204, NULL},
        {"DELETE", "/usb_gadget/g1/functions/ncm.usb0", NULL, 204, NULL},
        {"DELETE", "/usb_gadget/g1/strings/0x409", NULL, 204, NULL},
        {"DELETE", "/usb_gadget/g1", NULL, 204, NULL},
        {NULL, NULL, NULL, 0, NULL},
    };

    (void)state;
    run(steps);
}

/* Documentation/networking/netconsole.rst: a dynamic target, then its
 * userdata (at most 16 entries). */
static void test_example_netconsole(void **state)
{
    static const struct step steps[] = {
        {"POST", "/netconsole", "{\"name\":\"target1\"}", 201, NULL},
        {"PUT", "/netconsole/target1/dev_name", "eth1\n", 200, NULL},
        {"PUT", "/netconsole/target1/remote_ip", "192.168.1.2\n", 200, NULL},
        {"PUT",
         "/netconsole/target1/remote_ip",
         "192.168.1.300\n",
         422,
         "EINVAL"},
        {"PUT", "/netconsole/target1/remote_port", "6666\n", 200, NULL},
        {"PUT",
         "/netconsole/target1/remote_mac",
         "00:01:02:03:04:05\n",
         200,
         NULL},
        {"PUT", "/netconsole/target1/enabled", "1\n", 200, NULL},
        {"POST",
         "/netconsole/target1/userdata",
         "{\"name\":\"release\"}",
         201,
         NULL},
        {"PUT",
         "/netconsole/target1/userdata/release/value",
         "6.13\n",
         200,
         NULL},
        {"DELETE", "/netconsole/target1/userdata", NULL, 403, "EPERM"},
        {"DELETE", "/netconsole/target1", NULL, 409, "ENOTEMPTY"},
        {"DELETE", "/netconsole/target1/userdata/release", NULL, 204, NULL},
        {"DELETE", "/netconsole/target1", NULL, 204, NULL},
        {NULL, NULL, NULL, 0, NULL},
    };
    struct http_resp r;
    char body[64];

    (void)state;
    run(steps);
    /* max_children: the 17th entry is ENOSPC */
    http_json(&r, "POST", "/api/v1/config/netconsole", "{\"name\":\"t2\"}");
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
    for (int i = 0; i < 17; i++) {
        (void)snprintf(body, sizeof(body), "{\"name\":\"k%d\"}", i);
        http_json(&r, "POST", "/api/v1/config/netconsole/t2/userdata", body);
        if (i < 16) {
            assert_int_equal(r.status, 201);
        } else {
            expect_problem(&r, 422, "ENOSPC");
        }
        http_resp_done(&r);
    }
    for (int i = 0; i < 16; i++) {
        char url[128];

        (void)snprintf(
            url, sizeof(url), "/api/v1/config/netconsole/t2/userdata/k%d", i);
        http(&r, "DELETE", url, NULL, 0, NULL);
        assert_int_equal(r.status, 204);
        http_resp_done(&r);
    }
    http(&r, "DELETE", "/api/v1/config/netconsole/t2", NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_lio),
        cmocka_unit_test(test_example_usb_gadget),
        cmocka_unit_test(test_example_netconsole),
    };

    return cmocka_run_group_tests_name(
        "http-examples", tests, harness_start, harness_stop);
}
