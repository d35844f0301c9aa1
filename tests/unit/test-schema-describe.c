// SPDX-License-Identifier: MIT
/*
 * test-schema-describe.c - the machine-readable description of a
 * subsystem's types (what GET /api/v1/schema/{subsystem} will serve): each
 * type's attributes as JSON Schema, what mkdir creates, default groups,
 * link targets, committable, max_children, the summary template.
 */
#include "schema-test.h"

static const char desc_json[] =
    "{\"subsystem\": \"desc\", \"description\": \"for clients\", \"root\": "
    "\"root\", \"types\": {"
    " \"root\": {\"creates\": {\"kind\": \"group\", \"type\": \"dev\"},"
    "  \"max_children\": 4, \"default_groups\": {\"q\": \"queue\"}},"
    " \"queue\": {\"committable\": {\"type\": \"job\", \"commit\": "
    "{\"required\": [\"name\"]}}},"
    " \"job\": {\"attributes\": {\"name\": {\"kind\": \"string\"}}},"
    " \"dev\": {\"links\": {\"allow\": [\"dev\", \"job\"]},"
    "  \"summary\": \"{path} ({size} bytes) -> {@links}\", \"attributes\": {"
    "  \"path\": {\"kind\": \"string\", \"pattern\": \"^/dev/\", "
    "\"max_length\": 64, \"default\": \"/dev/null\"},"
    "  \"size\": {\"kind\": \"uint\", \"max\": 65535, \"default\": \"0x10\"},"
    "  \"offset\": {\"kind\": \"int\", \"min\": -5},"
    "  \"big\": {\"kind\": \"uint\", \"default\": \"18446744073709551615\"},"
    "  \"rw\": {\"kind\": \"bool\", \"default\": \"on\"},"
    "  \"mode\": {\"kind\": \"enum\", \"values\": [\"a\", \"b\"]},"
    "  \"ip\": {\"kind\": \"ipv4\", \"mode\": \"0444\"},"
    "  \"ip6\": {\"kind\": \"ipv6\"},"
    "  \"mac\": {\"kind\": \"mac\"},"
    "  \"id\": {\"kind\": \"uuid\"},"
    "  \"host\": {\"kind\": \"hostname\", \"mode\": \"0200\"}"
    " }}}}";

static json_t *doc;
static struct cfs_schema *schema;

static void before(void)
{
    schema = st_load(desc_json);
    assert_ok(cfs_schema_describe(schema, &doc));
}

static void after(void)
{
    json_decref(doc);
    doc = NULL;
    cfs_schema_free(schema);
}

/* Compare a JSON value with the JSON text @expected. */
static void json_eq(const json_t *got, const char *expected)
{
    json_error_t e;
    json_t *want = json_loads(expected, JSON_DECODE_ANY, &e);

    if (!want) {
        fail_msg("bad expectation %s: %s", expected, e.text);
    }
    if (!json_equal(got, want)) {
        char *text = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
        char copy[4096];
        json_malloc_t m;
        json_free_t f;

        st_fmt(copy, sizeof(copy), "%s", text ? text : "(null)");
        json_get_alloc_funcs(&m, &f);
        f(text);
        json_decref(want);
        fail_msg("got %s\nexpected %s", copy, expected);
    }
    json_decref(want);
}

static json_t *type(const char *name)
{
    json_t *t = json_object_get(json_object_get(doc, "types"), name);

    assert_non_null(t);
    return t;
}

static json_t *prop(const char *name)
{
    return json_object_get(
        json_object_get(json_object_get(type("dev"), "attributes"),
                        "properties"),
        name);
}

static void test_describe_top(void **state)
{
    (void)state;
    assert_string_equal(json_string_value(json_object_get(doc, "subsystem")),
                        "desc");
    assert_string_equal(json_string_value(json_object_get(doc, "description")),
                        "for clients");
    assert_string_equal(json_string_value(json_object_get(doc, "root")),
                        "root");
    assert_int_equal(json_object_size(json_object_get(doc, "types")), 4);
}

/* The shape around the attributes: creates, default groups, links,
 * committable, max_children; null where a type has none. */
static void test_describe_types(void **state)
{
    json_t *root = type("root");

    (void)state;
    json_eq(json_object_get(root, "creates"),
            "{\"kind\": \"group\", \"type\": \"dev\"}");
    json_eq(json_object_get(root, "default_groups"), "{\"q\": \"queue\"}");
    json_eq(json_object_get(root, "links"), "null");
    json_eq(json_object_get(root, "committable"), "null");
    json_eq(json_object_get(root, "max_children"), "4");
    json_eq(json_object_get(type("queue"), "committable"),
            "{\"type\": \"job\", \"kind\": \"item\", \"commit\": "
            "{\"required\": [\"name\"]}}");
    json_eq(json_object_get(type("queue"), "max_children"), "null");
    json_eq(json_object_get(type("dev"), "links"),
            "{\"allow\": [\"dev\", \"job\"]}");
    json_eq(json_object_get(type("dev"), "creates"), "null");
    /* the summary template, as written; absent where a type has none */
    json_eq(json_object_get(type("dev"), "summary"),
            "\"{path} ({size} bytes) -> {@links}\"");
    assert_null(json_object_get(root, "summary"));
    json_eq(json_object_get(type("job"), "attributes"),
            "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\","
            " \"type\": \"object\", \"additionalProperties\": false,"
            " \"properties\": {\"name\": {\"type\": \"string\", \"x-kind\": "
            "\"string\", \"x-mode\": \"0644\"}}}");
}

/* Attribute order is declaration order, as in listings. */
static void test_describe_order(void **state)
{
    static const char *const names[] = {"path",
                                        "size",
                                        "offset",
                                        "big",
                                        "rw",
                                        "mode",
                                        "ip",
                                        "ip6",
                                        "mac",
                                        "id",
                                        "host"};
    json_t *props = json_object_get(json_object_get(type("dev"), "attributes"),
                                    "properties");
    const char *key;
    json_t *v;
    size_t i = 0;

    (void)state;
    json_object_foreach(props, key, v) {
        assert_true(i < 11);
        assert_string_equal(key, names[i++]);
    }
    assert_int_equal(i, 11);
}

static void test_describe_kinds(void **state)
{
    (void)state;
    json_eq(prop("path"),
            "{\"type\": \"string\", \"maxLength\": 64, \"x-max-bytes\": 64, "
            "\"pattern\": \"^/dev/\", \"default\": \"/dev/null\", "
            "\"x-kind\": \"string\", \"x-mode\": \"0644\"}");
    json_eq(prop("size"),
            "{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 65535, "
            "\"default\": 16, \"x-kind\": \"uint\", \"x-mode\": \"0644\"}");
    json_eq(prop("offset"),
            "{\"type\": \"integer\", \"format\": \"int64\", \"minimum\": -5,"
            " \"x-kind\": \"int\", \"x-mode\": \"0644\"}");
    json_eq(prop("big"),
            "{\"type\": \"integer\", \"minimum\": 0, \"default\": "
            "\"18446744073709551615\", \"x-kind\": \"uint\", \"x-mode\": "
            "\"0644\"}");
    json_eq(prop("rw"),
            "{\"type\": \"boolean\", \"default\": true, \"x-kind\": \"bool\","
            " \"x-mode\": \"0644\"}");
    json_eq(prop("mode"),
            "{\"type\": \"string\", \"enum\": [\"a\", \"b\"], \"x-kind\": "
            "\"enum\", \"x-mode\": \"0644\"}");
    json_eq(prop("ip"),
            "{\"type\": \"string\", \"format\": \"ipv4\", \"readOnly\": true,"
            " \"x-kind\": \"ipv4\", \"x-mode\": \"0444\"}");
    json_eq(prop("ip6"),
            "{\"type\": \"string\", \"format\": \"ipv6\", \"x-kind\": "
            "\"ipv6\", \"x-mode\": \"0644\"}");
    json_eq(prop("mac"),
            "{\"type\": \"string\", \"pattern\": "
            "\"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$\", \"x-kind\": \"mac\", "
            "\"x-mode\": \"0644\"}");
    json_eq(prop("id"),
            "{\"type\": \"string\", \"format\": \"uuid\", \"x-kind\": "
            "\"uuid\", \"x-mode\": \"0644\"}");
    json_eq(prop("host"),
            "{\"type\": \"string\", \"format\": \"hostname\", \"writeOnly\": "
            "true, \"x-kind\": \"hostname\", \"x-mode\": \"0200\"}");
}

/* The description does not depend on registration. */
static void test_describe_registered(void **state)
{
    json_t *again = NULL;

    (void)state;
    assert_ok(cfs_schema_register(schema));
    assert_ok(cfs_schema_describe(schema, &again));
    assert_true(json_equal(again, doc));
    json_decref(again);
}

static void test_describe_oom(void **state)
{
    long n;

    (void)state;
    st_alloc_fail_json(true);
    for (n = 1; n < 10000; n++) {
        json_t *j = NULL;
        int r;

        st_alloc_fail_nth(n);
        r = cfs_schema_describe(schema, &j);
        st_alloc_fail_nth(0);
        if (r == 0) {
            assert_false(st_alloc_failed());
            assert_true(json_equal(j, doc));
            json_decref(j);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_null(j);
    }
    st_alloc_fail_json(false);
    assert_true(n > 50);
}

/* A formatted default is served as the number it holds, read as a store
 * reads it: "0x0200" of "0x%04x" is 512, not the 0 its leading "0" made
 * of it when it was read as decimal. */
static void test_describe_format_default(void **state)
{
    static const char json[] =
        "{\"subsystem\": \"fmtd\", \"root\": \"r\", \"types\": {"
        " \"r\": {\"attributes\": {"
        "  \"usb\": {\"kind\": \"uint\", \"format\": \"0x%04x\","
        "          \"default\": \"0x0200\"},"
        "  \"hex\": {\"kind\": \"uint\", \"format\": \"%x\", "
        "\"default\": \"10\"},"
        "  \"big\": {\"kind\": \"uint\", \"format\": \"%X h\","
        "          \"default\": \"FFFFFFFFFFFFFFFF h\"},"
        "  \"neg\": {\"kind\": \"int\", \"format\": \"%5d C\", "
        "\"default\": \"  -40 C\"}"
        " }}}}";
    struct cfs_schema *s = st_load(json);
    json_t *d = NULL;
    json_t *props;

    (void)state;
    assert_ok(cfs_schema_describe(s, &d));
    props = json_object_get(
        json_object_get(json_object_get(json_object_get(d, "types"), "r"),
                        "attributes"),
        "properties");
    json_eq(json_object_get(json_object_get(props, "usb"), "default"), "512");
    json_eq(json_object_get(json_object_get(props, "hex"), "default"), "16");
    json_eq(json_object_get(json_object_get(props, "big"), "default"),
            "\"18446744073709551615\"");
    json_eq(json_object_get(json_object_get(props, "neg"), "default"), "-40");
    json_decref(d);
    cfs_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) ST_TEST(fn, before, after)
        T(test_describe_top),
        T(test_describe_types),
        T(test_describe_order),
        T(test_describe_kinds),
        T(test_describe_registered),
        T(test_describe_oom),
        ST_TEST(test_describe_format_default, NULL, NULL),
#undef T
    };

    return cmocka_run_group_tests(tests, st_group_setup, NULL);
}
