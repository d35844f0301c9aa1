// SPDX-License-Identifier: MIT
/*
 * blob_module.c - a configfsd module (kernel style, compat headers only)
 * with a binary attribute, so that the generated clients store and read
 * back bytes that are not UTF-8 (the shipped subsystems take text only):
 *
 *   blob/        data (rw binary, at most 64 bytes)
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/configfs.h>

#define BLOB_MAX 64

struct blob_state {
    struct configfs_subsystem subsys;
    struct mutex lock; /* data, len */
    unsigned char data[BLOB_MAX];
    size_t len;
};

static struct blob_state blob;

/* BIN3: called with no buffer for the size, then with one that big. */
static ssize_t blob_data_read(struct config_item *item, void *buf, size_t size)
{
    ssize_t len;

    (void)item;
    mutex_lock(&blob.lock);
    len = (ssize_t)blob.len;
    if (buf) {
        len = (ssize_t)(size < blob.len ? size : blob.len);
        memcpy(buf, blob.data, (size_t)len);
    }
    mutex_unlock(&blob.lock);
    return len;
}

static ssize_t
blob_data_write(struct config_item *item, const void *buf, size_t size)
{
    (void)item;
    if (size > BLOB_MAX) {
        return -EFBIG;
    }
    mutex_lock(&blob.lock);
    memcpy(blob.data, buf, size);
    blob.len = size;
    mutex_unlock(&blob.lock);
    return (ssize_t)size;
}

CONFIGFS_BIN_ATTR(blob_, data, NULL, BLOB_MAX);

static struct configfs_bin_attribute *blob_bin_attrs[] = {
    &blob_attr_data,
    NULL,
};

static const struct config_item_type blob_type = {
    .ct_bin_attrs = blob_bin_attrs,
    .ct_owner = THIS_MODULE,
};

static struct blob_state blob = {
    .subsys = {.su_group = {.cg_item = {.ci_namebuf = "blob",
                                        .ci_type = &blob_type}}},
};

static int __init blob_init(void)
{
    int ret;

    config_group_init(&blob.subsys.su_group);
    mutex_init(&blob.subsys.su_mutex);
    mutex_init(&blob.lock);
    ret = configfs_register_subsystem(&blob.subsys);
    if (ret) {
        mutex_destroy(&blob.lock);
        mutex_destroy(&blob.subsys.su_mutex);
    }
    return ret;
}

static void __exit blob_exit(void)
{
    configfs_unregister_subsystem(&blob.subsys);
    mutex_destroy(&blob.lock);
    mutex_destroy(&blob.subsys.su_mutex);
}

module_init(blob_init);
module_exit(blob_exit);
MODULE_LICENSE("MIT");
MODULE_AUTHOR("configfsd");
MODULE_DESCRIPTION("a binary attribute for the generated-client tests");
