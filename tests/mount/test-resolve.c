// SPDX-License-Identifier: MIT
/*
 * test-resolve.c - the mount's path texts without FUSE: what readlink(2)
 * shows for a link (docs/configfs-rules.md rule RL1) and how the text
 * given to symlink(2) names its target (SL5: from the caller's working
 * directory, one component at a time, following the tree's links, '..'
 * after them, EPERM outside the mount, ELOOP on a loop), against a small
 * tree of links given by a table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mount.h"

#define MP "/mnt/cfg"

/* The tree's links: config path -> absolute target. */
static const char *const links[][2] = {
    {"/usb_gadget/g1/configs/c.1/ncm.usb0",
     "/usb_gadget/g1/functions/ncm.usb0"},
    {"/loop/a", "/loop/b"},
    {"/loop/b", "/loop/a"},
    {"/top", "/"},
};

static char *follow(const char *path)
{
    unsigned long k;
    char *end;

    /* /chain/K is a link to /chain/K-1, /chain/0 a folder */
    if (strncmp(path, "/chain/", 7) == 0 &&
        (k = strtoul(path + 7, &end, 10)) > 0 && *end == '\0') {
        char *t = malloc(32);

        if (t) {
            (void)snprintf(t, 32, "/chain/%lu", k - 1);
        }
        return t;
    }
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        if (strcmp(path, links[i][0]) == 0) {
            return strdup(links[i][1]);
        }
    }
    return NULL;
}

static void link_text_is(const char *link, const char *target, const char *want)
{
    char *got = cfs_mount_link_text(link, target);

    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* RL1: one "../" per level of the link's directory, then the target from
 * the root. */
static void test_link_text(void **state)
{
    (void)state;
    link_text_is("/usb_gadget/g1/configs/c.1/ncm.usb0",
                 "/usb_gadget/g1/functions/ncm.usb0",
                 "../../../../usb_gadget/g1/functions/ncm.usb0");
    link_text_is("/s/l", "/s/x", "../s/x");
    link_text_is("/s/i/l", "/t/j", "../../t/j");
    link_text_is("/s/i/l", "/", "../..");
}

static void resolves(const char *cwd, const char *text, const char *want)
{
    char *got = NULL;
    int r = cfs_mount_resolve(MP, cwd, text, follow, &got);

    if (r != 0) {
        fail_msg("%s from %s: %s", text, cwd, strerror(-r));
    }
    assert_string_equal(got, want);
    free(got);
}

static void refused(const char *cwd, const char *text, int err)
{
    char *got = NULL;

    assert_int_equal(cfs_mount_resolve(MP, cwd, text, follow, &got), err);
    assert_null(got);
}

/* SL5: relative to the caller's cwd, not to the link's directory. */
static void test_resolve_relative(void **state)
{
    (void)state;
    /* cd g1; ln -s functions/ncm.usb0 configs/c.1/ */
    resolves(MP "/usb_gadget/g1",
             "functions/ncm.usb0",
             "/usb_gadget/g1/functions/ncm.usb0");
    /* cd configs/c.1; ln -s ../../functions/ncm.usb0 . */
    resolves(MP "/usb_gadget/g1/configs/c.1",
             "../../functions/ncm.usb0",
             "/usb_gadget/g1/functions/ncm.usb0");
    resolves(
        MP "/usb_gadget", "./g1//functions/./x/", "/usb_gadget/g1/functions/x");
    resolves(MP, "usb_gadget", "/usb_gadget");
    resolves(MP, ".", "/");
    /* from outside the mount, into it */
    resolves("/mnt", "cfg/usb_gadget/g1", "/usb_gadget/g1");
    resolves("/", "mnt/cfg/../cfg/s", "/s");
}

static void test_resolve_absolute(void **state)
{
    (void)state;
    resolves("/elsewhere", MP "/usb_gadget/g1", "/usb_gadget/g1");
    resolves("/elsewhere", MP "/", "/");
}

/* Links of the tree are followed, and '..' applies after them. */
static void test_resolve_links(void **state)
{
    (void)state;
    resolves(MP,
             "usb_gadget/g1/configs/c.1/ncm.usb0",
             "/usb_gadget/g1/functions/ncm.usb0");
    resolves(MP,
             "usb_gadget/g1/configs/c.1/ncm.usb0/../acm.GS0",
             "/usb_gadget/g1/functions/acm.GS0");
    resolves(MP, "top/usb_gadget", "/usb_gadget");
    refused(MP, "loop/a", -ELOOP);
    refused(MP, "loop/a/x", -ELOOP);
}

/* Outside configfs: EPERM; nothing: ENOENT; a component too long. */
static void test_resolve_refusals(void **state)
{
    char longname[300];

    (void)state;
    refused(MP, "", -ENOENT);
    refused(MP, "..", -EPERM);
    refused(MP "/usb_gadget", "../../etc", -EPERM);
    refused("/tmp", "x", -EPERM);
    refused("/tmp", "/mnt/cfgx/y", -EPERM); /* a prefix is not the mount */
    refused(MP, "usb_gadget/g1/configs/c.1/ncm.usb0/../../../../../..", -EPERM);
    memset(longname, 'n', 256);
    longname[256] = '\0';
    refused(MP, longname, -ENAMETOOLONG);
}

/* The views of a caller: the mount, a bind mount of it, a bind of its
 * folder usb_gadget. */
static const struct cfs_mount_view views[] = {
    {MP, "/"},
    {"/b", "/"},
    {"/sub/", "/usb_gadget"},
};
#define N_VIEWS (sizeof(views) / sizeof(views[0]))

static void
resolves_at(int cwd_view, const char *cwd, const char *text, const char *want)
{
    char *got = NULL;
    int r =
        cfs_mount_resolve_at(views, N_VIEWS, cwd_view, cwd, text, follow, &got);

    if (r != 0) {
        fail_msg("%s from %s (view %d): %s", text, cwd, cwd_view, strerror(-r));
    }
    assert_string_equal(got, want);
    free(got);
}

static void refused_at(int cwd_view, const char *cwd, const char *text, int err)
{
    char *got = NULL;

    assert_int_equal(
        cfs_mount_resolve_at(views, N_VIEWS, cwd_view, cwd, text, follow, &got),
        err);
    assert_null(got);
}

/* SL5 through any path to the mount: a working directory known to be in
 * the tree (by its identity) is a config path, whichever view it is
 * through; a text enters the tree at any view's mount point and leaves it
 * by '..' above that view's root. */
static void test_resolve_views(void **state)
{
    (void)state;
    /* cd B/usb_gadget/g1; ln -s functions/ncm.usb0 configs/c.1/ */
    resolves_at(1,
                "/usb_gadget/g1",
                "functions/ncm.usb0",
                "/usb_gadget/g1/functions/ncm.usb0");
    /* cd SUB/g1 (a bind of usb_gadget) */
    resolves_at(2,
                "/usb_gadget/g1",
                "functions/ncm.usb0",
                "/usb_gadget/g1/functions/ncm.usb0");
    resolves_at(-1, "/", "/b/usb_gadget/g1", "/usb_gadget/g1");
    resolves_at(-1, "/tmp", "/sub/g1/functions", "/usb_gadget/g1/functions");
    resolves_at(-1, "/", "b/./usb_gadget", "/usb_gadget");
    resolves_at(-1, "/sub", "g1", "/usb_gadget/g1");
    resolves_at(1, "/usb_gadget/g1", "../../../b/x", "/x");
    resolves_at(1,
                "/",
                "usb_gadget/g1/configs/c.1/ncm.usb0/../acm.GS0",
                "/usb_gadget/g1/functions/acm.GS0");
    /* above a view's root: the folder holding its mount point */
    refused_at(1, "/usb_gadget/g1", "../../..", -EPERM);
    refused_at(2, "/usb_gadget/g1", "../../x", -EPERM);
    resolves_at(2, "/usb_gadget/g1", "../../b/y", "/y");
    refused_at(-1, "/", "/bx/usb_gadget", -EPERM);
    refused_at(-1, "/tmp", "x", -EPERM);
}

/* SL5: the kernel follows 40 links in one path walk (MAXSYMLINKS) and
 * fails the 41st ELOOP, counted over the whole walk: a chain of exactly
 * 40 resolves. */
static void test_resolve_link_limit(void **state)
{
    (void)state;
    resolves(MP, "chain/1", "/chain/0");
    resolves(MP, "chain/40", "/chain/0");
    resolves(MP, "chain/40/x", "/chain/0/x");
    resolves(MP, "chain/20/../../chain/20", "/chain/0");
    refused(MP, "chain/41", -ELOOP);
    refused(MP, "chain/21/../../chain/20", -ELOOP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_text),
        cmocka_unit_test(test_resolve_relative),
        cmocka_unit_test(test_resolve_absolute),
        cmocka_unit_test(test_resolve_links),
        cmocka_unit_test(test_resolve_refusals),
        cmocka_unit_test(test_resolve_views),
        cmocka_unit_test(test_resolve_link_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
