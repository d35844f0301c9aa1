// SPDX-License-Identifier: MIT
/*
 * schema-test.c - fixtures for the schema unit tests: cmocka's allocator
 * under core, the schema library and jansson; helpers that load, store and
 * show with assertions that print what they expected.
 */
#include "schema-test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- allocation ----------------------------------------------------------
 * cmocka's allocator is not thread-safe: one lock around it and the
 * failure counter, for the tests that show from a second thread. */

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static long fail_at;
static long seen;
static bool fail_hit;

static bool should_fail(void)
{
    if (fail_at <= 0) {
        return false;
    }
    if (++seen == fail_at) {
        fail_hit = true;
        return true;
    }
    return false;
}

static void *t_malloc(size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&alloc_lock);
    if (!should_fail()) {
        p = _test_malloc(size, __FILE__, __LINE__);
    }
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

static void *t_realloc(void *ptr, size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&alloc_lock);
    if (!size || !should_fail()) {
        p = _test_realloc(ptr, size, __FILE__, __LINE__);
    }
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

static void t_free(void *ptr)
{
    if (ptr) {
        pthread_mutex_lock(&alloc_lock);
        _test_free(ptr, __FILE__, __LINE__);
        pthread_mutex_unlock(&alloc_lock);
    }
}

/* The same on libc (CFS_TEST_LIBC_ALLOC=1), for ASan and valgrind. */
static void *l_malloc(size_t size)
{
    bool fail;

    pthread_mutex_lock(&alloc_lock);
    fail = should_fail();
    pthread_mutex_unlock(&alloc_lock);
    return fail ? NULL : malloc(size);
}

static void *l_realloc(void *ptr, size_t size)
{
    bool fail;

    pthread_mutex_lock(&alloc_lock);
    fail = size && should_fail();
    pthread_mutex_unlock(&alloc_lock);
    return fail ? NULL : realloc(ptr, size ? size : 1);
}

/* jansson's memory is leak-checked but never failed on purpose: jansson
 * reports some allocation failures while parsing as syntax errors. */
static bool json_may_fail;

static void *t_json_malloc(size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&alloc_lock);
    if (!json_may_fail || !should_fail()) {
        p = _test_malloc(size, __FILE__, __LINE__);
    }
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

static void *l_json_malloc(size_t size)
{
    bool fail;

    pthread_mutex_lock(&alloc_lock);
    fail = json_may_fail && should_fail();
    pthread_mutex_unlock(&alloc_lock);
    return fail ? NULL : malloc(size);
}

void st_alloc_fail_json(bool on)
{
    json_may_fail = on;
}

void st_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < size);
}

void st_append(char *buf, size_t size, const char *fmt, ...)
{
    size_t off = strlen(buf);
    va_list ap;

    if (off + 1 >= size) {
        return;
    }
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    (void)vsnprintf(buf + off, size - off, fmt, ap);
    va_end(ap);
}

void st_alloc_fail_nth(long nth)
{
    fail_at = nth;
    seen = 0;
    fail_hit = false;
}

bool st_alloc_failed(void)
{
    return fail_hit;
}

/* ---- fixtures ---------------------------------------------------------- */

int st_group_setup(void **state)
{
    static const char probe[] = "{\"subsystem\": \"st-probe\", \"root\": "
                                "\"r\", \"types\": {\"r\": {}}}";
    struct cfs_schema *s = NULL;

    (void)state;
    /* Core keeps its root table once a subsystem was registered; make it
     * now, on libc, so it stays out of every test's leak check. */
    if (cfs_schema_load_buffer(probe, strlen(probe), NULL, &s, NULL) == 0) {
        if (cfs_schema_register(s) != 0) {
            (void)fprintf(stderr, "probe registration failed\n");
        }
        cfs_schema_free(s);
    }
    return 0;
}

int st_setup(void **state)
{
    (void)state;
    st_alloc_fail_nth(0);
    /* CFS_TEST_LIBC_ALLOC=1 leaves everything on libc, so that ASan sees
     * each block (cmocka's guard bytes hide small overflows from it);
     * allocation failures are still injected. */
    if (!getenv("CFS_TEST_LIBC_ALLOC")) {
        cfs_set_alloc_funcs(t_malloc, t_realloc, t_free);
        json_set_alloc_funcs(t_json_malloc, t_free);
    } else {
        cfs_set_alloc_funcs(l_malloc, l_realloc, free);
        json_set_alloc_funcs(l_json_malloc, free);
    }
    cfs_schema_clear_detail();
    return 0;
}

int st_teardown(void **state)
{
    (void)state;
    st_alloc_fail_nth(0);
    json_may_fail = false;
    cfs_set_alloc_funcs(NULL, NULL, NULL);
    json_set_alloc_funcs(malloc, free);
    return 0;
}

void st_body(void **state)
{
    const struct st_case *c = *state;

    if (c->before) {
        c->before();
    }
    c->fn(state);
    if (c->after) {
        c->after();
    }
}

const char *st_data_dir(void)
{
    return CFS_TEST_DATA_DIR;
}

const char *st_shipped_dir(void)
{
    return CFS_SHIPPED_SCHEMA_DIR;
}

/* ---- helpers ----------------------------------------------------------- */

struct cfs_schema *st_load(const char *json)
{
    struct cfs_schema_error err;
    struct cfs_schema *s = NULL;
    int r = cfs_schema_load_buffer(json, strlen(json), "test.json", &s, &err);

    if (r != 0) {
        char line[2048];

        fail_msg("load failed (%d): %s",
                 r,
                 cfs_schema_error_format(&err, line, sizeof(line)));
    }
    return s;
}

struct cfs_schema *st_load_register(const char *json)
{
    struct cfs_schema *s = st_load(json);

    assert_ok(cfs_schema_register(s));
    return s;
}

void st_load_fails(const char *json, const char *path, const char *reason_part)
{
    struct cfs_schema_error err;
    struct cfs_schema *s = NULL;
    int r = cfs_schema_load_buffer(json, strlen(json), "bad.json", &s, &err);

    if (r == 0) {
        cfs_schema_free(s);
        fail_msg("loaded, expected an error at %s", path);
    }
    assert_int_equal(r, -EINVAL);
    assert_string_equal(err.file, "bad.json");
    assert_string_equal(err.path, path);
    if (!strstr(err.reason, reason_part)) {
        fail_msg("reason \"%s\" lacks \"%s\"", err.reason, reason_part);
    }
}

void st_show_eq(const char *path, const char *expected)
{
    char *buf = NULL;
    size_t len = 0;
    size_t n = strlen(expected);
    int r = cfs_show(path, &buf, &len);

    if (r != 0) {
        fail_msg("show %s: %d", path, r);
    }
    if (len != n + 1 || memcmp(buf, expected, n) != 0 || buf[n] != '\n') {
        fail_msg("show %s: \"%.*s\", expected \"%s\\n\"",
                 path,
                 (int)len,
                 buf,
                 expected);
    }
    cfs_free(buf);
}

int st_store(const char *path, const char *value)
{
    return cfs_write(NULL, path, value, strlen(value));
}

void st_detail_has(const char *part)
{
    if (!strstr(cfs_schema_last_detail(), part)) {
        fail_msg("detail \"%s\" lacks \"%s\"", cfs_schema_last_detail(), part);
    }
}

void st_store_fails(const char *path,
                    const char *value,
                    int err,
                    const char *detail_part)
{
    int r;

    cfs_schema_clear_detail();
    r = st_store(path, value);
    if (r != err) {
        fail_msg("store \"%s\" into %s: %d, expected %d", value, path, r, err);
    }
    st_detail_has(detail_part);
}

char *st_readdir(const char *path)
{
    struct cfs_entry *e = NULL;
    size_t n = 0;
    size_t len = 1;
    char *out;

    assert_ok(cfs_readdir(path, &e, &n));
    for (size_t i = 0; i < n; i++) {
        len += strlen(e[i].name) + 1;
    }
    out = test_malloc(len);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        st_append(out, len, "%s%s", i ? " " : "", e[i].name);
    }
    cfs_entries_free(e, n);
    return out;
}

void st_readdir_eq(const char *path, const char *expected)
{
    char *got = st_readdir(path);

    if (strcmp(got, expected) != 0) {
        char copy[4096];

        (void)snprintf(copy, sizeof(copy), "%s", got);
        test_free(got);
        fail_msg("readdir %s: \"%s\", expected \"%s\"", path, copy, expected);
    }
    test_free(got);
}

void st_type_eq(const char *path, const char *type)
{
    struct cfs_entry e;

    assert_ok(cfs_stat(path, &e));
    if (!e.type_name || strcmp(e.type_name, type) != 0) {
        char got[256];

        (void)snprintf(
            got, sizeof(got), "%s", e.type_name ? e.type_name : "(null)");
        cfs_entry_done(&e);
        fail_msg("type of %s: %s, expected %s", path, got, type);
    }
    cfs_entry_done(&e);
}
