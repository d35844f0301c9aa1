// SPDX-License-Identifier: MIT
/*
 * test-http-browse.c - what a tree browser needs of GET and of refusals:
 * paged children (?limit=, ?after=, ?name_contains=), stable while the
 * group changes between pages; the last page (?from=end), pages back
 * (?before=) and a page from a name on (?name_from=, type-to-find); the links
 * that point at a node
 * (?used_by=1); refusals that name what blocks them (ENOTEMPTY and
 * EBUSY with "blockers", a missing link target by its path), for single
 * requests and for batches; and the schema's hints for forms (x-display,
 * name_pattern, name_examples), the pattern enforced by mkdir.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/configfs.h>

#include "harness.h"

#define G "/api/v1/config/03-group-children/pg"

static void mkdir_in(const char *dir, const char *name)
{
    struct http_resp r;
    char body[128];

    (void)snprintf(body, sizeof(body), "{\"name\":\"%s\"}", name);
    http_json(&r, "POST", dir, body);
    assert_int_equal(r.status, 201);
    http_resp_done(&r);
}

static void delete_path(const char *url, long status)
{
    struct http_resp r;

    http(&r, "DELETE", url, NULL, 0, NULL);
    assert_int_equal(r.status, status);
    http_resp_done(&r);
}

/* GET @url; the names of its children, appended to @seen ("a,b,"). */
static char *page(const char *url, char *seen, size_t size, long *ret_total)
{
    struct http_resp r;
    json_t *c;
    size_t i;
    const char *next;
    char *cursor = NULL;

    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    json_array_foreach(json_object_get(r.json, "children"), i, c) {
        strncat(seen, jstr(c, "name"), size - strlen(seen) - 1);
        strncat(seen, ",", size - strlen(seen) - 1);
    }
    *ret_total =
        (long)json_integer_value(json_object_get(r.json, "children_total"));
    next = jstr(r.json, "next_after");
    if (next) {
        cursor = strdup(next);
    } else {
        assert_true(json_is_null(json_object_get(r.json, "next_after")));
    }
    http_resp_done(&r);
    return cursor;
}

/* Pages come sorted by name with a total and a cursor; a child that
 * exists throughout the walk is listed once, whatever is made or removed
 * between pages; an unpaged listing keeps creation order and no totals. */
static void test_children_pages(void **state)
{
    static const char *const made[] = {
        "k5", "k3", "k9", "k1", "k7", "k2", "k8"};
    char seen[512] = "";
    char url[512];
    char *cursor;
    long total = 0;
    struct http_resp r;

    (void)state;
    mkdir_in("/api/v1/config/03-group-children", "pg");
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
        mkdir_in(G, made[i]);
    }
    cursor = page(G "?values=0&limit=3", seen, sizeof(seen), &total);
    assert_string_equal(seen, "k1,k2,k3,");
    assert_int_equal(total, 7);
    assert_non_null(cursor);

    /* meanwhile: one made before the cursor, one after, one removed */
    mkdir_in(G, "k0");
    mkdir_in(G, "k6");
    delete_path(G "/k7", 204);

    (void)snprintf(url, sizeof(url), G "?values=0&limit=3&after=%s", cursor);
    free(cursor);
    cursor = page(url, seen, sizeof(seen), &total);
    assert_string_equal(seen, "k1,k2,k3,k5,k6,k8,");
    assert_int_equal(total, 8);
    (void)snprintf(url, sizeof(url), G "?values=0&limit=3&after=%s", cursor);
    free(cursor);
    cursor = page(url, seen, sizeof(seen), &total);
    assert_null(cursor); /* the last page */
    assert_string_equal(seen, "k1,k2,k3,k5,k6,k8,k9,");

    /* the filter: the matching names only, the total counts them */
    seen[0] = 0;
    cursor = page(G "?values=0&name_contains=k8", seen, sizeof(seen), &total);
    assert_null(cursor);
    assert_string_equal(seen, "k8,");
    assert_int_equal(total, 1);

    /* the typed route pages the same way */
    seen[0] = 0;
    cursor = page("/api/v1/node/03-group-children/pg?values=0&limit=2",
                  seen,
                  sizeof(seen),
                  &total);
    assert_string_equal(seen, "k0,k1,");
    assert_int_equal(total, 8);
    assert_non_null(cursor);
    free(cursor);

    /* no paging asked: creation order, as before, and no page members */
    http(&r, "GET", G "?values=0", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "children"), 0), "name"),
        "k5");
    assert_null(json_object_get(r.json, "children_total"));
    assert_null(json_object_get(r.json, "next_after"));
    http_resp_done(&r);

    /* bad values are 400 and name the rule */
    http(&r, "GET", G "?limit=0", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    assert_non_null(strstr(jstr(r.json, "detail"), "limit"));
    http_resp_done(&r);
    http(&r, "GET", G "?limit=10001", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
    http(&r, "GET", G "?after=k1", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    assert_non_null(strstr(jstr(r.json, "detail"), "cursor"));
    http_resp_done(&r);
    http(&r, "GET", G "?used_by=2", NULL, 0, NULL);
    expect_problem(&r, 400, "EINVAL");
    http_resp_done(&r);
}

#define BIG   "/03-group-children/big"
#define BIG_N 10001 /* one over the cap of an answer (10000) */

/* Make (or remove) @dir/c00000.. @dir/c<@to - 1> from @from on, newest
 * name first (so that creation order is not name order), in one
 * transaction: the tree directly, as 10,000 POSTs would take long. */
static void items(const char *dir, int from, int to, bool make)
{
    struct cfs_txn *t = NULL;
    char p[128];

    assert_int_equal(cfs_txn_begin(&t), 0);
    for (int i = to - 1; i >= from; i--) {
        (void)snprintf(p, sizeof(p), "%s/c%05d", dir, i);
        assert_int_equal(make ? cfs_mkdir(t, p) : cfs_rmdir(t, p), 0);
    }
    cfs_txn_commit(t);
}

/* Walk @url's pages by next_after (no limit: the default page); each
 * child once, in name order; @return how many. */
static size_t walk_pages(const char *url, size_t *ret_pages)
{
    char last[256] = "";
    char *cursor = NULL;
    size_t n = 0;

    *ret_pages = 0;
    do {
        char u[512];
        struct http_resp r;
        json_t *c;
        size_t i;

        (void)snprintf(u,
                       sizeof(u),
                       "%s%s%s",
                       url,
                       cursor ? "&after=" : "",
                       cursor ? cursor : "");
        free(cursor);
        cursor = NULL;
        http(&r, "GET", u, NULL, 0, NULL);
        assert_int_equal(r.status, 200);
        assert_true(json_array_size(json_object_get(r.json, "children")) <=
                    1000);
        json_array_foreach(json_object_get(r.json, "children"), i, c) {
            assert_true(strcmp(last, jstr(c, "name")) < 0);
            (void)snprintf(last, sizeof(last), "%s", jstr(c, "name"));
            n++;
        }
        if (jstr(r.json, "next_after")) {
            cursor = strdup(jstr(r.json, "next_after"));
        }
        http_resp_done(&r);
        (*ret_pages)++;
    } while (cursor && *ret_pages < 100);
    free(cursor);
    return n;
}

/* Every child of every level in @node. */
static size_t children_in(const json_t *node)
{
    size_t n = 0;
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(node, "children"), i, c) {
        n += 1 + children_in(c);
    }
    return n;
}

static json_t *child_named(const json_t *node, const char *name)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(node, "children"), i, c) {
        if (strcmp(jstr(c, "name"), name) == 0) {
            return c;
        }
    }
    return NULL;
}

/* With no paging asked, a group over the cap answers its first page (by
 * name) with children_total and next_after; walking the pages gives each
 * child once; deeper listings share the cap over all their levels, a
 * node left without room says so with a cursor from its start; a group
 * within the cap is whole, in creation order, as before. */
static void test_default_page_bounded(void **state)
{
    struct http_resp r;
    size_t pages = 0;
    size_t top;
    size_t room = 10000;
    const json_t *b;
    char first[16];

    (void)state;
    mkdir_in("/api/v1/config/03-group-children", "big");
    items(BIG, 0, BIG_N, true);

    http(&r, "GET", "/api/v1/config" BIG "?values=0", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "children")),
                     1000);
    assert_int_equal(
        json_integer_value(json_object_get(r.json, "children_total")), BIG_N);
    assert_non_null(jstr(r.json, "next_after"));
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "children"), 0), "name"),
        "c00000");
    http_resp_done(&r);

    assert_int_equal(walk_pages("/api/v1/config" BIG "?values=0", &pages),
                     BIG_N);
    assert_int_equal(pages, 11);
    assert_int_equal(walk_pages("/api/v1/node" BIG "?values=1", &pages), BIG_N);

    /* a deeper listing: the cap counts every level */
    mkdir_in("/api/v1/config/03-group-children", "small");
    mkdir_in("/api/v1/config/03-group-children/small", "x");
    http(&r,
         "GET",
         "/api/v1/config/03-group-children?depth=1&values=0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    /* the room big may take: the cap less the top level and the
     * siblings listed before it (pg of the test above) */
    top = json_array_size(json_object_get(r.json, "children"));
    for (size_t i = 0; i < top; i++) {
        const json_t *c =
            json_array_get(json_object_get(r.json, "children"), i);

        if (strcmp(jstr(c, "name"), "big") == 0) {
            break;
        }
        room -= children_in(c);
    }
    room -= top;
    assert_true(children_in(r.json) <= 10000);
    b = child_named(r.json, "big");
    assert_non_null(b);
    assert_int_equal(json_array_size(json_object_get(b, "children")), 1000);
    assert_int_equal(json_integer_value(json_object_get(b, "children_total")),
                     BIG_N);
    assert_non_null(jstr(b, "next_after"));
    http_resp_done(&r);

    /* big takes all the room left: small says it holds 1, none shown,
     * and its cursor reads from the start */
    items(BIG, (int)room, BIG_N, false);
    http(&r,
         "GET",
         "/api/v1/config/03-group-children?depth=1&values=0",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(children_in(r.json), 10000);
    b = child_named(r.json, "big");
    assert_null(json_object_get(b, "children_total"));
    b = child_named(r.json, "small");
    assert_int_equal(json_array_size(json_object_get(b, "children")), 0);
    assert_int_equal(json_integer_value(json_object_get(b, "children_total")),
                     1);
    assert_string_equal(jstr(b, "next_after"), "n");
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/03-group-children/small?after=n",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "children"), 0), "name"),
        "x");
    http_resp_done(&r);

    /* within the cap: whole, in creation order (newest name first here),
     * no page members */
    http(&r, "GET", "/api/v1/config" BIG "?values=0", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "children")),
                     room);
    assert_null(json_object_get(r.json, "children_total"));
    assert_null(json_object_get(r.json, "next_after"));
    (void)snprintf(first, sizeof(first), "c%05d", (int)room - 1);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "children"), 0), "name"),
        first);
    http_resp_done(&r);

    items(BIG, 0, (int)room, false);
    delete_path("/api/v1/config" BIG, 204);
    delete_path("/api/v1/config/03-group-children/small/x", 204);
    delete_path("/api/v1/config/03-group-children/small", 204);
}

#define GADGET "/api/v1/config/usb_gadget/ug"
#define FUNC   "/usb_gadget/ug/functions/ncm.0"
#define LINK   "/usb_gadget/ug/configs/c.1/ncm.0"

/* used_by lists the links that hold a node; rmdir of a held node is EBUSY
 * with them as blockers, of a full one ENOTEMPTY with its children; a
 * batch says the same with its op_index; the tree is unchanged. */
static void test_blockers_and_used_by(void **state)
{
    struct http_resp r;
    json_t *b;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/ug\"},"
              "{\"op\":\"mkdir\",\"path\":\"" FUNC "\"},"
              "{\"op\":\"mkdir\",\"path\":\"/usb_gadget/ug/configs/c.1\"},"
              "{\"op\":\"symlink\",\"path\":\"" LINK "\",\"target\":\"" FUNC
              "\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);

    http(&r, "GET", "/api/v1/config" FUNC "?values=0&used_by=1", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    b = json_object_get(r.json, "used_by");
    assert_int_equal(json_array_size(b), 1);
    assert_string_equal(json_string_value(json_array_get(b, 0)), LINK);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/usb_gadget/ug/configs/c.1?values=0&used_by=1",
         NULL,
         0,
         NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "used_by")), 0);
    http_resp_done(&r);

    http(&r, "DELETE", "/api/v1/config" FUNC, NULL, 0, NULL);
    expect_problem(&r, 409, "EBUSY");
    b = json_object_get(r.json, "blockers");
    assert_int_equal(json_array_size(b), 1);
    assert_string_equal(json_string_value(json_array_get(b, 0)), LINK);
    assert_non_null(strstr(jstr(r.json, "detail"), "linked from " LINK));
    http_resp_done(&r);

    http(&r, "DELETE", GADGET, NULL, 0, NULL);
    expect_problem(&r, 409, "ENOTEMPTY");
    b = json_object_get(r.json, "blockers");
    assert_int_equal(json_array_size(b), 2);
    assert_string_equal(json_string_value(json_array_get(b, 0)), FUNC);
    assert_string_equal(json_string_value(json_array_get(b, 1)),
                        "/usb_gadget/ug/configs/c.1");
    http_resp_done(&r);

    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/ug/"
              "functions/acm.0\"},{\"op\":\"rmdir\",\"path\":\"" FUNC "\"}]}");
    expect_problem(&r, 409, "EBUSY");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     1);
    b = json_object_get(r.json, "blockers");
    assert_string_equal(json_string_value(json_array_get(b, 0)), LINK);
    http_resp_done(&r);

    /* a link to nothing names the target, not the link's folder */
    http_json(&r,
              "PUT",
              "/api/v1/config/usb_gadget/ug/configs/c.1/x",
              "{\"target\":\"/usb_gadget/ug/functions/nope\"}");
    expect_problem(&r, 404, "ENOENT");
    assert_non_null(strstr(jstr(r.json, "detail"),
                           "the target /usb_gadget/ug/functions/nope does "
                           "not exist"));
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"symlink\",\"path\":\"/usb_gadget/ug/configs/"
              "c.1/x\",\"target\":\"/usb_gadget/ug/functions/nope\"}]}");
    expect_problem(&r, 404, "ENOENT");
    assert_non_null(strstr(jstr(r.json, "detail"), "the target"));
    http_resp_done(&r);

    /* nothing of it changed the tree: the link and the function stand */
    http(&r, "GET", "/api/v1/config" LINK, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "target"), FUNC);
    http_resp_done(&r);
    http(&r,
         "GET",
         "/api/v1/config/usb_gadget/ug/functions/acm.0",
         NULL,
         0,
         NULL);
    expect_problem(&r, 404, "ENOENT");
    http_resp_done(&r);
}

/* used_by after two links to one target are removed newest first, then
 * the other: each removal leaves exactly the links that remain (the
 * target's list of links is a doubly linked one: removing its head must
 * leave the next one without a back-pointer to it). */
static void test_used_by_after_unlinks_newest_first(void **state)
{
#define UF "/usb_gadget/uu/functions/ncm.0"
    static const char *const links[] = {"/usb_gadget/uu/configs/c.1/a",
                                        "/usb_gadget/uu/configs/c.1/b",
                                        "/usb_gadget/uu/configs/c.2/c"};
    struct http_resp r;
    char url[256];
    json_t *b;

    (void)state;
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/uu\"},"
              "{\"op\":\"mkdir\",\"path\":\"" UF "\"},"
              "{\"op\":\"mkdir\",\"path\":\"/usb_gadget/uu/configs/c.1\"},"
              "{\"op\":\"mkdir\",\"path\":\"/usb_gadget/uu/configs/c.2\"}]}");
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    for (int round = 0; round < 2; round++) {
        /* made oldest first, removed newest first */
        for (size_t i = 0; i < 3; i++) {
            (void)snprintf(url, sizeof(url), "/api/v1/config%s", links[i]);
            http_json(&r, "PUT", url, "{\"target\":\"" UF "\"}");
            assert_int_equal(r.status, 201);
            http_resp_done(&r);
        }
        for (size_t left = 3; left-- > 0;) {
            (void)snprintf(url, sizeof(url), "/api/v1/config%s", links[left]);
            http(&r, "DELETE", url, NULL, 0, NULL);
            assert_int_equal(r.status, 204);
            http_resp_done(&r);
            http(&r,
                 "GET",
                 "/api/v1/config" UF "?values=0&used_by=1",
                 NULL,
                 0,
                 NULL);
            assert_int_equal(r.status, 200);
            b = json_object_get(r.json, "used_by");
            assert_int_equal(json_array_size(b), left);
            for (size_t i = 0; i < left; i++) {
                assert_string_equal(json_string_value(json_array_get(b, i)),
                                    links[i]);
            }
            http_resp_done(&r);
        }
    }
    /* nothing holds it: it goes */
    http(&r, "DELETE", "/api/v1/config" UF, NULL, 0, NULL);
    assert_int_equal(r.status, 204);
    http_resp_done(&r);
#undef UF
}

/* The schema says how to show an integer and what names a type takes;
 * mkdir refuses a name the pattern rejects, alone and in a batch. */
static void test_schema_hints(void **state)
{
    struct http_resp r;
    json_t *types, *fn, *ex;

    (void)state;
    http(&r, "GET", "/api/v1/schema/usb_gadget", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    types = json_object_get(r.json, "types");
    assert_string_equal(
        jstr(json_object_get(
                 json_object_get(
                     json_object_get(json_object_get(types, "gadget"),
                                     "attributes"),
                     "properties"),
                 "idVendor"),
             "x-display"),
        "hex");
    fn = json_object_get(types, "function");
    assert_non_null(jstr(fn, "name_pattern"));
    ex = json_object_get(fn, "name_examples");
    assert_string_equal(json_string_value(json_array_get(ex, 0)), "ncm.usb0");
    http_resp_done(&r);

    mkdir_in("/api/v1/config/usb_gadget", "hg");
    http_json(&r,
              "POST",
              "/api/v1/config/usb_gadget/hg/functions",
              "{\"name\":\"nodot\"}");
    expect_problem(&r, 422, "EINVAL");
    assert_non_null(strstr(jstr(r.json, "detail"), "must match"));
    assert_non_null(strstr(jstr(r.json, "detail"), "such as ncm.usb0"));
    http_resp_done(&r);
    http_json(&r,
              "POST",
              "/api/v1/batch",
              "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/usb_gadget/hg/"
              "configs/c1\"}]}");
    expect_problem(&r, 422, "EINVAL");
    assert_int_equal(json_integer_value(json_object_get(r.json, "op_index")),
                     0);
    http_resp_done(&r);
    mkdir_in("/api/v1/config/usb_gadget/hg/functions", "ncm.usb0");
    /* a store takes hex; the value is shown as the schema's "format" says */
    http_json(&r,
              "PUT",
              "/api/v1/config/usb_gadget/hg/idVendor",
              "{\"value\":\"0x1d6b\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "value"), "0x1d6b"); /* "format" */
    http_resp_done(&r);
}

/* A subsystem whose items another part of the program pins with
 * configfs_depend_item(), as a target module pins a backstore: "held"
 * records the last item made. */
static struct config_item *held;

static void held_release(struct config_item *item)
{
    free(item);
}

static struct configfs_item_operations held_item_ops = {
    .release = held_release,
};

static const struct config_item_type held_item_type = {
    .ct_name = "held",
    .ct_item_ops = &held_item_ops,
};

static struct config_item *held_make_item(struct config_group *group,
                                          const char *name)
{
    struct config_item *item = calloc(1, sizeof(*item));

    (void)group;
    if (!item) {
        return ERR_PTR(-ENOMEM);
    }
    config_item_init_type_name(item, name, &held_item_type);
    held = item;
    return item;
}

static struct configfs_group_operations held_group_ops = {
    .make_item = held_make_item,
};

static const struct config_item_type held_subsys_type = {
    .ct_name = "held-subsys",
    .ct_group_ops = &held_group_ops,
};

static struct configfs_subsystem held_subsys = {
    .su_group = {.cg_item = {.ci_namebuf = "held",
                             .ci_type = &held_subsys_type}},
};

/* An item pinned by configfs_depend_item() is EBUSY with no link to name:
 * the problem says how many references hold it ("dependents", in detail
 * too), in a batch with op_index;
 * after configfs_undepend_item() the delete goes through. */
static void test_blockers_depend_item(void **state)
{
    struct http_resp r;

    (void)state;
    config_group_init(&held_subsys.su_group);
    assert_int_equal(configfs_register_subsystem(&held_subsys), 0);
    mkdir_in("/api/v1/config/held", "disk0");
    assert_non_null(held);
    http(&r, "GET", "/api/v1/config/held/disk0", NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    http_resp_done(&r);
    mkdir_in("/api/v1/config/held", "disk1");
    {
        struct config_item *disk1 = held;

        assert_int_equal(configfs_depend_item(&held_subsys, disk1), 0);
        assert_int_equal(configfs_depend_item(&held_subsys, disk1), 0);

        http(&r, "DELETE", "/api/v1/config/held/disk1", NULL, 0, NULL);
        expect_problem(&r, 409, "EBUSY");
        assert_null(json_object_get(r.json, "blockers"));
        assert_int_equal(
            json_integer_value(json_object_get(r.json, "dependents")), 2);
        assert_non_null(strstr(jstr(r.json, "detail"),
                               "(held by 2 depend_item references)"));
        http_resp_done(&r);

        /* a batch says the same, with the failed op */
        http_json(&r,
                  "POST",
                  "/api/v1/batch",
                  "{\"ops\":[{\"op\":\"mkdir\",\"path\":\"/held/x\"},"
                  "{\"op\":\"rmdir\",\"path\":\"/held/disk1\"}]}");
        expect_problem(&r, 409, "EBUSY");
        assert_int_equal(
            json_integer_value(json_object_get(r.json, "op_index")), 1);
        assert_int_equal(
            json_integer_value(json_object_get(r.json, "dependents")), 2);
        http_resp_done(&r);

        configfs_undepend_item(disk1);
        http(&r, "DELETE", "/api/v1/config/held/disk1", NULL, 0, NULL);
        expect_problem(&r, 409, "EBUSY");
        assert_int_equal(
            json_integer_value(json_object_get(r.json, "dependents")), 1);
        http_resp_done(&r);
        configfs_undepend_item(disk1);
    }
    http(&r, "GET", "/api/v1/config/held/x", NULL, 0, NULL);
    assert_int_equal(r.status, 404); /* the batch changed nothing */
    http_resp_done(&r);
    delete_path("/api/v1/config/held/disk1", 204);
    delete_path("/api/v1/config/held/disk0", 204);
    configfs_unregister_subsystem(&held_subsys);
}

/* Whether the listing at @url says its child @name has children; the
 * member must be there, a boolean. */
static bool child_has_children(const char *url, const char *name)
{
    struct http_resp r;
    json_t *c;
    size_t i;
    int found = -1;

    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    json_array_foreach(json_object_get(r.json, "children"), i, c) {
        if (strcmp(jstr(c, "name"), name) == 0) {
            json_t *b = json_object_get(c, "has_children");

            assert_true(json_is_boolean(b));
            found = json_is_true(b);
        }
    }
    http_resp_done(&r);
    assert_int_not_equal(found, -1);
    return found == 1;
}

/* A listing says of each child whether it holds anything (has_children),
 * so a tree offers to expand only what can be: default groups count, an
 * empty group does not, a made child turns it true, its rmdir back. */
static void test_children_has_children(void **state)
{
    (void)state;
    assert_false(child_has_children("/api/v1/config/", "01-childless"));
    assert_true(
        child_has_children("/api/v1/config/", "04-committable-children"));
    mkdir_in("/api/v1/config/03-group-children", "hc");
    assert_false(child_has_children(
        "/api/v1/config/03-group-children?values=0&limit=50", "hc"));
    mkdir_in("/api/v1/config/03-group-children/hc", "a");
    assert_true(child_has_children(
        "/api/v1/config/03-group-children?values=0&limit=50", "hc"));
    assert_true(
        child_has_children("/api/v1/config/03-group-children?values=0", "hc"));
    delete_path("/api/v1/config/03-group-children/hc/a", 204);
    assert_false(child_has_children(
        "/api/v1/config/03-group-children?values=0&name_contains=hc", "hc"));
    delete_path("/api/v1/config/03-group-children/hc", 204);
}

#define ENDS "/03-group-children/ends"

/* One page of ENDS with @query: its children's names into @names (at most
 * @max), their count; the page's members into the others (cursors
 * malloc'd, NULL when null). */
struct ends_page {
    char names[64][8];
    size_t n;
    long total;
    long offset;
    char *next;
    char *prev;
};

static void ends_page(const char *query, struct ends_page *pg)
{
    struct http_resp r;
    char url[512];
    json_t *c;
    size_t i;

    (void)snprintf(
        url, sizeof(url), "/api/v1/config" ENDS "?values=0&%s", query);
    http(&r, "GET", url, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    pg->n = 0;
    json_array_foreach(json_object_get(r.json, "children"), i, c) {
        assert_true(pg->n < 64);
        (void)snprintf(
            pg->names[pg->n++], sizeof(pg->names[0]), "%s", jstr(c, "name"));
    }
    pg->total =
        (long)json_integer_value(json_object_get(r.json, "children_total"));
    pg->offset =
        (long)json_integer_value(json_object_get(r.json, "children_offset"));
    assert_true(json_is_integer(json_object_get(r.json, "children_offset")));
    assert_non_null(json_object_get(r.json, "next_after"));
    assert_non_null(json_object_get(r.json, "prev_before"));
    pg->next =
        jstr(r.json, "next_after") ? strdup(jstr(r.json, "next_after")) : NULL;
    pg->prev = jstr(r.json, "prev_before") ? strdup(jstr(r.json, "prev_before"))
                                           : NULL;
    http_resp_done(&r);
}

static void ends_page_done(struct ends_page *pg)
{
    free(pg->next);
    free(pg->prev);
    pg->next = pg->prev = NULL;
}

/* With @n children c00000.. in ENDS and pages of @limit: from=end is the
 * last page, and walking back by prev_before lists every child once, in
 * order, each page's offset its place; each page's next_after reads the
 * page after it; name_from starts at the first name at or past the text,
 * whatever the text (a name, between two names, before all, past all). */
static void check_ends(int n, int limit)
{
    struct ends_page pg = {0};
    char q[600];
    int end = n; /* the children not yet seen, from the end back */
    int pages = 0;

    (void)snprintf(q, sizeof(q), "limit=%d&from=end", limit);
    for (;;) {
        int want = end < limit ? end : limit;

        ends_page(q, &pg);
        assert_int_equal(pg.total, n);
        assert_int_equal(pg.n, want);
        assert_int_equal(pg.offset, end - want);
        for (int i = 0; i < want; i++) {
            char name[8];

            (void)snprintf(name, sizeof(name), "c%05d", end - want + i);
            assert_string_equal(pg.names[i], name);
        }
        /* the last page has no next; any other goes on where it ends */
        if (pages == 0) {
            assert_null(pg.next);
        } else {
            struct ends_page on = {0};
            char name[8];

            assert_non_null(pg.next);
            (void)snprintf(q, sizeof(q), "limit=1&after=%s", pg.next);
            ends_page(q, &on);
            (void)snprintf(name, sizeof(name), "c%05d", end);
            assert_string_equal(on.names[0], name);
            ends_page_done(&on);
        }
        end -= want;
        pages++;
        if (!pg.prev) {
            break;
        }
        assert_true(end > 0);
        (void)snprintf(q, sizeof(q), "limit=%d&before=%s", limit, pg.prev);
        ends_page_done(&pg);
    }
    ends_page_done(&pg);
    assert_int_equal(end, 0);
    assert_int_equal(pages, n ? (n + limit - 1) / limit : 1);

    /* name_from: a name, one between two names, before all, past all */
    for (int i = 0; i <= n; i++) {
        for (int f = 0; f < 3; f++) {
            char text[16];
            int first = f == 1 ? i + 1 : f == 2 ? (i / 10) * 10 : i;

            if (f == 0) {
                (void)snprintf(text, sizeof(text), "c%05d", i);
            } else if (f == 1) {
                (void)snprintf(text, sizeof(text), "c%05d-", i);
            } else {
                (void)snprintf(text, sizeof(text), "c%04d", i / 10);
            }
            (void)snprintf(q, sizeof(q), "limit=%d&name_from=%s", limit, text);
            ends_page(q, &pg);
            first = first > n ? n : first;
            assert_int_equal(pg.offset, first);
            assert_int_equal(pg.n, n - first < limit ? n - first : limit);
            if (pg.n) {
                char name[8];

                (void)snprintf(name, sizeof(name), "c%05d", first);
                assert_string_equal(pg.names[0], name);
            }
            /* a page back exactly when it starts past the first child
             * and holds one */
            assert_true((pg.prev != NULL) == (first > 0 && pg.n > 0));
            assert_true((pg.next != NULL) == (first + limit < n));
            ends_page_done(&pg);
        }
    }
}

/* name_from alone, without limit, asks for paging too (docs/API.md): a
 * page of the default size from the first name at or past the text, with
 * its offset and cursors; never every child from the first. */
static void check_name_from_alone(int n)
{
    for (int i = 0; i <= n; i++) {
        struct ends_page pg = {0};
        char q[64];

        (void)snprintf(q, sizeof(q), "name_from=c%05d", i);
        ends_page(q, &pg);
        assert_int_equal(pg.total, n);
        assert_int_equal(pg.offset, i);
        assert_int_equal(pg.n, n - i); /* all the rest: n < the default */
        if (pg.n) {
            char name[8];

            (void)snprintf(name, sizeof(name), "c%05d", i);
            assert_string_equal(pg.names[0], name);
        }
        assert_null(pg.next);
        assert_true((pg.prev != NULL) == (i > 0 && i < n));
        ends_page_done(&pg);
    }
}

/* Jump to the end and back, and type-to-find, for group sizes from empty
 * to a few pages and pages of one to more than all; bad values are 400
 * and name the rule. */
static void test_children_ends_and_seek(void **state)
{
    static const int limits[] = {1, 2, 3, 7, 50};
    struct http_resp r;
    int made = 0;

    (void)state;
    mkdir_in("/api/v1/config/03-group-children", "ends");
    for (int n = 0; n <= 23; n += n < 3 ? 1 : 5) {
        items(ENDS, made, n, true);
        made = n;
        for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
            check_ends(n, limits[l]);
        }
        check_name_from_alone(n);
    }

    /* a filter and an end: the last of the matching names */
    {
        struct ends_page pg = {0};

        ends_page("name_contains=1&limit=2&from=end", &pg);
        assert_int_equal(pg.n, 2);
        assert_string_equal(pg.names[0], "c00019");
        assert_string_equal(pg.names[1], "c00021");
        assert_non_null(pg.prev);
        ends_page_done(&pg);
        ends_page("from=start&limit=1", &pg);
        assert_string_equal(pg.names[0], "c00000");
        assert_null(pg.prev);
        ends_page_done(&pg);
    }
    /* the typed route pages the same way */
    http(&r,
         "GET",
         "/api/v1/node/03-group-children/ends?values=0&limit=1&from=end",
         NULL,
         0,
         NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(
        jstr(json_array_get(json_object_get(r.json, "children"), 0), "name"),
        "c00022");
    assert_int_equal(
        json_integer_value(json_object_get(r.json, "children_offset")), 22);
    http_resp_done(&r);

    /* bad values: 400 problem+json naming the rule, nothing listed */
    static const char *const bad[][2] = {
        {"from=middle", "from must be start or end"},
        {"from=", "from must be start or end"},
        {"before=c00001", "before must be a prev_before cursor"},
        {"before=n6", "before must be a prev_before cursor"},
        {"after=n&before=n", "give at most one"},
        {"from=end&name_from=c", "give at most one"},
        {"from=end&after=n", "give at most one"},
        {"name_from=c&before=n", "give at most one"},
        {"limit=0&from=end", "limit"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char url[512];

        (void)snprintf(
            url, sizeof(url), "/api/v1/config" ENDS "?%s", bad[i][0]);
        http(&r, "GET", url, NULL, 0, NULL);
        expect_problem(&r, 400, "EINVAL");
        assert_non_null(strstr(jstr(r.json, "detail"), bad[i][1]));
        http_resp_done(&r);
    }
    {
        char url[600] = "/api/v1/config" ENDS "?name_from=";

        memset(url + strlen(url), 'a', 256);
        url[strlen("/api/v1/config" ENDS "?name_from=") + 256] = 0;
        http(&r, "GET", url, NULL, 0, NULL);
        expect_problem(&r, 400, "EINVAL");
        assert_non_null(strstr(jstr(r.json, "detail"), "255 bytes"));
        http_resp_done(&r);
    }

    items(ENDS, 0, made, false);
    delete_path("/api/v1/config" ENDS, 204);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_pages),
        cmocka_unit_test(test_default_page_bounded),
        cmocka_unit_test(test_blockers_and_used_by),
        cmocka_unit_test(test_used_by_after_unlinks_newest_first),
        cmocka_unit_test(test_schema_hints),
        cmocka_unit_test(test_blockers_depend_item),
        cmocka_unit_test(test_children_has_children),
        cmocka_unit_test(test_children_ends_and_seek),
    };

    return cmocka_run_group_tests_name(
        "http-browse", tests, harness_start, harness_stop);
}
