// SPDX-License-Identifier: MIT
/*
 * describe.c - a subsystem's types as JSON, for clients that render forms
 * and validate before sending (GET /api/v1/schema/{subsystem}).
 *
 * Each type's attributes become one JSON Schema (2020-12) object; the
 * shape around them, and how kinds map onto JSON Schema keywords, is in
 * docs/schemas.md. Any allocation failure makes the whole answer -ENOMEM.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>

/* Builders that remember a failure instead of checking every call. */
struct jb {
    bool ok;
};

/* Both steal @v, also when they fail. */
static void jset(struct jb *b, json_t *obj, const char *key, json_t *v)
{
    if (!obj) {
        json_decref(v);
    }
    if (!v || !obj || json_object_set_new(obj, key, v) < 0) {
        b->ok = false;
    }
}

static void jappend(struct jb *b, json_t *arr, json_t *v)
{
    if (!arr) {
        json_decref(v);
    }
    if (!v || !arr || json_array_append_new(arr, v) < 0) {
        b->ok = false;
    }
}

static json_t *mode_string(unsigned int mode)
{
    char buf[8];

    (void)snprintf(buf, sizeof(buf), "%04o", mode);
    return json_string(buf);
}

/* The default as a JSON value of the attribute's JSON Schema type; a
 * number read from its shown text as a store reads it (a formatted one,
 * "0x0200", is 512). */
static json_t *default_value(const struct schema_attr *a)
{
    int64_t sv = 0;
    uint64_t uv = 0;
    char text[24];

    switch (a->kind) {
    case SCHEMA_BOOL:
        return json_boolean(!strcmp(a->def, "1"));
    case SCHEMA_INT:
    case SCHEMA_UINT:
        if (schema_value_int(a, a->def, &sv, &uv) < 0) {
            return json_string(a->def); /* not reached: checked at load */
        }
        if (a->kind == SCHEMA_INT) {
            return json_integer((json_int_t)sv);
        }
        if (uv <= INT64_MAX) {
            return json_integer((json_int_t)uv);
        }
        /* beyond what JSON integers carry: a decimal string */
        (void)snprintf(text, sizeof(text), "%" PRIu64, uv);
        return json_string(text);
    default:
        return json_string(a->def);
    }
}

static json_t *attr_schema(struct jb *b, const struct schema_attr *a)
{
    json_t *p = json_object();

    switch (a->kind) {
    case SCHEMA_STRING:
        jset(b, p, "type", json_string("string"));
        if (a->has_max_length) {
            /* JSON Schema counts characters; the limit is in bytes, which
             * x-max-bytes states exactly. */
            jset(b, p, "maxLength", json_integer((json_int_t)a->max_length));
            jset(b, p, "x-max-bytes", json_integer((json_int_t)a->max_length));
        }
        if (a->pattern) {
            jset(b, p, "pattern", json_string(a->pattern));
        }
        break;
    case SCHEMA_INT:
    case SCHEMA_UINT:
        jset(b, p, "type", json_string("integer"));
        if (a->kind == SCHEMA_INT) {
            jset(b, p, "format", json_string("int64"));
        }
        if (a->has_min) {
            jset(b, p, "minimum", json_integer((json_int_t)a->min));
        } else if (a->kind == SCHEMA_UINT) {
            jset(b, p, "minimum", json_integer(0));
        }
        if (a->has_max) {
            jset(b, p, "maximum", json_integer((json_int_t)a->max));
        }
        if (a->display_hex) {
            jset(b, p, "x-display", json_string("hex"));
        }
        if (a->format) {
            jset(b, p, "x-format", json_string(a->format));
        }
        break;
    case SCHEMA_BOOL:
        jset(b, p, "type", json_string("boolean"));
        break;
    case SCHEMA_ENUM: {
        json_t *values = json_array();

        for (size_t i = 0; i < a->n_values; i++) {
            jappend(b, values, json_string(a->values[i]));
        }
        jset(b, p, "type", json_string("string"));
        jset(b, p, "enum", values);
        break;
    }
    case SCHEMA_IPV4:
    case SCHEMA_IPV6:
    case SCHEMA_UUID:
    case SCHEMA_HOSTNAME:
        jset(b, p, "type", json_string("string"));
        jset(b, p, "format", json_string(schema_kind_name(a->kind)));
        break;
    case SCHEMA_MAC:
        jset(b, p, "type", json_string("string"));
        jset(b,
             p,
             "pattern",
             json_string("^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"));
        break;
    }
    if (a->def) {
        jset(b, p, "default", default_value(a));
    }
    if (!(a->mode & 0222)) {
        jset(b, p, "readOnly", json_true());
    }
    if (!(a->mode & 0444)) {
        jset(b, p, "writeOnly", json_true());
    }
    jset(b, p, "x-kind", json_string(schema_kind_name(a->kind)));
    jset(b, p, "x-mode", mode_string(a->mode));
    return p;
}

static json_t *type_json(struct jb *b, const struct schema_type *t)
{
    json_t *o = json_object();
    json_t *attrs = json_object();
    json_t *props = json_object();
    json_t *dgs = json_object();

    jset(b,
         attrs,
         "$schema",
         json_string("https://json-schema.org/draft/2020-12/schema"));
    jset(b, attrs, "type", json_string("object"));
    for (size_t i = 0; i < t->n_attrs; i++) {
        jset(b, props, t->attrs[i].name, attr_schema(b, &t->attrs[i]));
    }
    jset(b, attrs, "properties", props);
    jset(b, attrs, "additionalProperties", json_false());
    jset(b, o, "attributes", attrs);

    if (t->name_pattern) {
        jset(b, o, "name_pattern", json_string(t->name_pattern));
    }
    if (t->n_name_examples) {
        json_t *ex = json_array();

        for (size_t i = 0; i < t->n_name_examples; i++) {
            jappend(b, ex, json_string(t->name_examples[i]));
        }
        jset(b, o, "name_examples", ex);
    }
    if (t->summary) {
        jset(b, o, "summary", json_string(t->summary));
    }
    if (t->creates) {
        jset(b,
             o,
             "creates",
             json_pack("{s:s, s:s}",
                       "kind",
                       t->creates_kind == SCHEMA_MAKE_GROUP ? "group" : "item",
                       "type",
                       t->creates->name));
    } else {
        jset(b, o, "creates", json_null());
    }

    for (size_t i = 0; i < t->n_dgroups; i++) {
        jset(b, dgs, t->dgroups[i].name, json_string(t->dgroups[i].type->name));
    }
    jset(b, o, "default_groups", dgs);

    if (t->has_links) {
        json_t *allow = json_array();

        for (size_t i = 0; i < t->n_allow; i++) {
            jappend(b, allow, json_string(t->allow[i]->name));
        }
        jset(b, o, "links", json_pack("{s:o}", "allow", allow));
    } else {
        jset(b, o, "links", json_null());
    }

    if (t->commit_type) {
        json_t *req = json_array();

        for (size_t i = 0; i < t->n_required; i++) {
            jappend(b,
                    req,
                    json_string(t->commit_type->attrs[t->required[i]].name));
        }
        jset(b,
             o,
             "committable",
             json_pack("{s:s, s:s, s:{s:o}}",
                       "type",
                       t->commit_type->name,
                       "kind",
                       t->commit_kind == SCHEMA_MAKE_GROUP ? "group" : "item",
                       "commit",
                       "required",
                       req));
    } else {
        jset(b, o, "committable", json_null());
    }

    jset(b,
         o,
         "max_children",
         t->has_max_children ? json_integer((json_int_t)t->max_children)
                             : json_null());
    return o;
}

int cfs_schema_describe(const struct cfs_schema *s, json_t **ret_json)
{
    struct jb b = {.ok = true};
    json_t *doc = json_object();
    json_t *types = json_object();

    jset(&b, doc, "subsystem", json_string(s->subsystem));
    if (s->description) {
        jset(&b, doc, "description", json_string(s->description));
    }
    jset(&b, doc, "root", json_string(s->root->name));
    for (size_t i = 0; i < s->n_types; i++) {
        jset(&b, types, s->types[i].name, type_json(&b, &s->types[i]));
    }
    jset(&b, doc, "types", types);
    if (!b.ok) {
        json_decref(doc);
        return -ENOMEM;
    }
    *ret_json = doc;
    return 0;
}
