// SPDX-License-Identifier: MIT
/*
 * cli_raw.c - a configfsd module for the configfsctl tests: attributes
 * that keep exactly the bytes stored, so that odd values (NUL bytes,
 * invalid UTF-8, 4095 bytes) can be written and read back unchanged.
 *
 *   cli-raw/
 *     <item>/   text (rw: any bytes, shown as stored, nothing added),
 *               blob (binary rw, up to 64 KiB)
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/configfs.h>

#define RAW_BLOB_MAX 65536

struct raw_item {
    struct config_item item;
    struct mutex lock; /* everything below */
    char text[CONFIGFS_PAGE_SIZE];
    size_t text_len;
    char *blob;
    size_t blob_len;
};

static inline struct raw_item *to_raw(struct config_item *item)
{
    return container_of(item, struct raw_item, item);
}

static ssize_t raw_text_show(struct config_item *item, char *page)
{
    struct raw_item *r = to_raw(item);
    size_t len;

    mutex_lock(&r->lock);
    len = r->text_len;
    memcpy(page, r->text, len);
    mutex_unlock(&r->lock);
    return (ssize_t)len;
}

static ssize_t
raw_text_store(struct config_item *item, const char *page, size_t count)
{
    struct raw_item *r = to_raw(item);

    if (count > sizeof(r->text)) {
        return -EINVAL;
    }
    mutex_lock(&r->lock);
    memcpy(r->text, page, count);
    r->text_len = count;
    mutex_unlock(&r->lock);
    return (ssize_t)count;
}

/* BIN3: called with NULL first for the size. */
static ssize_t raw_blob_read(struct config_item *item, void *buf, size_t size)
{
    struct raw_item *r = to_raw(item);
    ssize_t len;

    mutex_lock(&r->lock);
    len = (ssize_t)r->blob_len;
    if (buf) {
        if (size < r->blob_len) {
            len = -EINVAL;
        } else if (r->blob_len) {
            memcpy(buf, r->blob, r->blob_len);
        }
    }
    mutex_unlock(&r->lock);
    return len;
}

static ssize_t
raw_blob_write(struct config_item *item, const void *buf, size_t size)
{
    struct raw_item *r = to_raw(item);
    char *copy = NULL;

    if (size) {
        copy = kmalloc(size, GFP_KERNEL);
        if (!copy) {
            return -ENOMEM;
        }
        memcpy(copy, buf, size);
    }
    mutex_lock(&r->lock);
    kfree(r->blob);
    r->blob = copy;
    r->blob_len = size;
    mutex_unlock(&r->lock);
    return (ssize_t)size;
}

CONFIGFS_ATTR(raw_, text);
CONFIGFS_BIN_ATTR(raw_, blob, NULL, RAW_BLOB_MAX);

static struct configfs_attribute *raw_attrs[] = {
    &raw_attr_text,
    NULL,
};

static struct configfs_bin_attribute *raw_bin_attrs[] = {
    &raw_attr_blob,
    NULL,
};

static void raw_release(struct config_item *item)
{
    struct raw_item *r = to_raw(item);

    mutex_destroy(&r->lock);
    kfree(r->blob);
    kfree(r);
}

static struct configfs_item_operations raw_item_ops = {
    .release = raw_release,
};

static const struct config_item_type raw_item_type = {
    .ct_item_ops = &raw_item_ops,
    .ct_attrs = raw_attrs,
    .ct_bin_attrs = raw_bin_attrs,
    .ct_owner = THIS_MODULE,
};

static struct config_item *raw_make_item(struct config_group *group,
                                         const char *name)
{
    struct raw_item *r;

    (void)group;
    r = kzalloc(sizeof(*r), GFP_KERNEL);
    if (!r) {
        return ERR_PTR(-ENOMEM);
    }
    mutex_init(&r->lock);
    config_item_init_type_name(&r->item, name, &raw_item_type);
    return &r->item;
}

static void raw_drop_item(struct config_group *group, struct config_item *item)
{
    (void)group;
    config_item_put(item);
}

static struct configfs_group_operations raw_group_ops = {
    .make_item = raw_make_item,
    .drop_item = raw_drop_item,
};

static const struct config_item_type raw_subsys_type = {
    .ct_group_ops = &raw_group_ops,
    .ct_owner = THIS_MODULE,
};

static struct configfs_subsystem raw_subsys = {
    .su_group =
        {
            .cg_item =
                {
                    .ci_namebuf = "cli-raw",
                    .ci_type = &raw_subsys_type,
                },
        },
};

static int __init raw_init(void)
{
    int ret;

    config_group_init(&raw_subsys.su_group);
    mutex_init(&raw_subsys.su_mutex);
    ret = configfs_register_subsystem(&raw_subsys);
    if (ret) {
        mutex_destroy(&raw_subsys.su_mutex);
    }
    return ret;
}

static void __exit raw_exit(void)
{
    configfs_unregister_subsystem(&raw_subsys);
    mutex_destroy(&raw_subsys.su_mutex);
}

module_init(raw_init);
module_exit(raw_exit);
MODULE_LICENSE("MIT");
MODULE_AUTHOR("configfsd");
MODULE_DESCRIPTION("byte-exact attributes for the configfsctl tests");
