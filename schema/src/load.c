// SPDX-License-Identifier: MIT
/*
 * load.c - from a schema file to checked item types.
 *
 * Parsing is jansson's (duplicate keys rejected); everything after it is a
 * walk over the document that refuses anything it does not know and
 * reports the JSONPath of the first fault. Types are read in two passes so
 * that a type may name another defined later in the file: first every
 * type's keys and attributes, then the references between types, then the
 * whole-schema rules (item types, default-group cycles).
 */
#include "internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct loader {
    const char *file;
    struct cfs_schema_error *err;
    struct schema_jpath path;
    struct cfs_schema *s;
};

static void report(struct loader *L, const char *fmt, ...) CFS_PRINTF(2, 3);

/* Record the first fault at the current path. */
static void report(struct loader *L, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!L->err) {
        return;
    }
    schema_strlcpy(L->err->path, L->path.buf, sizeof(L->err->path));
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    n = vsnprintf(L->err->reason, sizeof(L->err->reason), fmt, ap);
    va_end(ap);
    if (n < 0) {
        L->err->reason[0] = '\0';
    } else if ((size_t)n >= sizeof(L->err->reason)) {
        memcpy(L->err->reason + sizeof(L->err->reason) - 4, "...", 4);
    }
}

/* Report and evaluate to -EINVAL (a macro, so that the analysers see the
 * value: they do not follow variadic calls). */
#define fail(L, ...) (report((L), __VA_ARGS__), -EINVAL)

static void error_file(struct cfs_schema_error *err, const char *file)
{
    if (err) {
        memset(err, 0, sizeof(*err));
        schema_strlcpy(err->file, file, sizeof(err->file));
    }
}

/* ---- small checks ------------------------------------------------------ */

/* Every key of @obj must be in @allowed (NULL-terminated). */
static int check_keys(struct loader *L,
                      json_t *obj,
                      const char *const *allowed,
                      const char *expected)
{
    const char *key;
    json_t *v;

    json_object_foreach(obj, key, v) {
        bool ok = false;

        for (size_t i = 0; allowed[i] && !ok; i++) {
            ok = strcmp(key, allowed[i]) == 0;
        }
        if (!ok) {
            (void)schema_jpath_key(&L->path, key);
            return fail(L, "unknown key (expected %s)", expected);
        }
    }
    return 0;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "?";
}

static int
want(struct loader *L, const json_t *v, json_type t, const char *what)
{
    if (json_typeof(v) != t) {
        return fail(L, "must be %s, not %s", what, json_kind(v));
    }
    return 0;
}

static int check_name(struct loader *L, const char *name, const char *what)
{
    int r = cfs_name_check(name, strlen(name));

    if (r == -ENAMETOOLONG) {
        return fail(L, "%s longer than %d bytes", what, CFS_NAME_MAX);
    }
    if (r < 0) {
        return fail(L,
                    "%s must be 1-%d bytes of UTF-8 without '/' or control "
                    "characters, and not \".\" or \"..\"",
                    what,
                    CFS_NAME_MAX);
    }
    return 0;
}

static struct schema_type *find_type(struct cfs_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_types; i++) {
        if (strcmp(s->types[i].name, name) == 0) {
            return &s->types[i];
        }
    }
    return NULL;
}

/* A string naming a defined type. */
static int type_ref(struct loader *L, json_t *v, struct schema_type **ret)
{
    struct schema_type *t;
    int r = want(L, v, JSON_STRING, "a type name (a string)");

    if (r < 0) {
        return r;
    }
    t = find_type(L->s, json_string_value(v));
    if (!t) {
        return fail(
            L, "type \"%s\" is not defined in $.types", json_string_value(v));
    }
    *ret = t;
    return 0;
}

/* ---- attributes -------------------------------------------------------- */

static const struct {
    const char *name;
    enum schema_kind kind;
} kinds[] = {
    {"string", SCHEMA_STRING},
    {"int", SCHEMA_INT},
    {"uint", SCHEMA_UINT},
    {"bool", SCHEMA_BOOL},
    {"enum", SCHEMA_ENUM},
    {"ipv4", SCHEMA_IPV4},
    {"ipv6", SCHEMA_IPV6},
    {"mac", SCHEMA_MAC},
    {"uuid", SCHEMA_UUID},
    {"hostname", SCHEMA_HOSTNAME},
};

static const char *const attr_keys[] = {"kind",
                                        "mode",
                                        "default",
                                        "pattern",
                                        "max_length",
                                        "min",
                                        "max",
                                        "values",
                                        "display",
                                        "format",
                                        NULL};

static int attr_mode(struct loader *L, json_t *v, struct schema_attr *a)
{
    const char *s;
    size_t n;
    unsigned int mode = 0;
    int r = want(L, v, JSON_STRING, "an octal string such as \"0644\"");

    if (r < 0) {
        return r;
    }
    s = json_string_value(v);
    n = strlen(s);
    if (n < 3 || n > 4) {
        return fail(L, "must be an octal string such as \"0644\"");
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '7') {
            return fail(L, "must be an octal string such as \"0644\"");
        }
        mode = mode * 8 + (unsigned int)(s[i] - '0');
    }
    if (mode & ~0777u) {
        return fail(L,
                    "only permission bits (0777) are allowed, not setuid, "
                    "setgid or sticky");
    }
    a->mode = mode;
    return 0;
}

static int
attr_int(struct loader *L, json_t *v, const struct schema_attr *a, int64_t *ret)
{
    int r = want(L, v, JSON_INTEGER, "an integer");

    if (r < 0) {
        return r;
    }
    if (a->kind == SCHEMA_UINT && json_integer_value(v) < 0) {
        return fail(L, "must not be negative for kind uint");
    }
    *ret = (int64_t)json_integer_value(v);
    return 0;
}

static int attr_values(struct loader *L, json_t *v, struct schema_attr *a)
{
    size_t i;
    json_t *e;
    int r = want(L, v, JSON_ARRAY, "an array of strings");

    if (r < 0) {
        return r;
    }
    if (json_array_size(v) == 0) {
        return fail(L, "must list at least one value");
    }
    a->values = cfs_zalloc(json_array_size(v) * sizeof(char *));
    if (!a->values) {
        return -ENOMEM;
    }
    json_array_foreach(v, i, e) {
        size_t at = schema_jpath_index(&L->path, i);
        const char *s;

        r = want(L, e, JSON_STRING, "a string");
        if (r < 0) {
            return r;
        }
        s = json_string_value(e);
        if (!*s) {
            return fail(L, "must not be empty");
        }
        if (strchr(s, '\n')) {
            return fail(L, "must not contain a newline");
        }
        for (size_t k = 0; k < a->n_values; k++) {
            if (strcmp(a->values[k], s) == 0) {
                return fail(L, "\"%s\" is listed twice", s);
            }
        }
        a->values[a->n_values] = cfs_strdup(s);
        if (!a->values[a->n_values]) {
            return -ENOMEM;
        }
        a->n_values++;
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

static int attr_pattern(struct loader *L, json_t *v, struct schema_attr *a)
{
    char msg[256];
    int rc;
    int r = want(L, v, JSON_STRING, "a string (a POSIX extended regex)");

    if (r < 0) {
        return r;
    }
    a->pattern = cfs_strdup(json_string_value(v));
    if (!a->pattern) {
        return -ENOMEM;
    }
    rc = regcomp(&a->re, a->pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        (void)regerror(rc, &a->re, msg, sizeof(msg));
        return fail(L, "not a POSIX extended regular expression: %s", msg);
    }
    a->has_re = true;
    return 0;
}

/* The literal text of a format, "%%" unescaped; NULL without memory or
 * when it holds another '%' or a control character (*@bad set). */
static char *format_text(const char *s, size_t n, bool *bad)
{
    char *out = cfs_malloc(n + 1);
    size_t o = 0;

    if (!out) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 1 < n && s[i + 1] == '%') {
            i++;
        } else if (s[i] == '%' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            *bad = true;
            cfs_free(out);
            return NULL;
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

/* A character that could be part of a number of conversion @conv. */
static bool number_char(char conv, char c)
{
    return (conv == 'x' || conv == 'X') ? isxdigit((unsigned char)c)
                                        : isdigit((unsigned char)c);
}

/* The shown text must say where its number begins and ends, or it is
 * ambiguous (docs/schemas.md, "format"): text that ends in a sign or a
 * digit of the conversion's base just before the number, or begins with
 * such a digit just after it, reads as part of it ("%d0" would show 1 as
 * "10"; "-%d" would show 5 as "-5"). */
static int format_touches(struct loader *L, const struct schema_attr *a)
{
    size_t pre = strlen(a->fmt_pre);
    char last = '\0';
    char first = a->fmt_post[0];

    if (pre > 0) {
        last = a->fmt_pre[pre - 1];
    }
    if (last == '-' || last == '+' ||
        (last && number_char(a->fmt_conv, last))) {
        return fail(L,
                    "the text before the conversion ends in '%c', which "
                    "reads as part of the number: the shown text would be "
                    "ambiguous (put a space or other text between them)",
                    last);
    }
    if (first && number_char(a->fmt_conv, first)) {
        return fail(L,
                    "the text after the conversion begins with '%c', which "
                    "reads as part of the number: the shown text would be "
                    "ambiguous (put a space or other text between them)",
                    first);
    }
    return 0;
}

/* "format": text, one conversion %[0][WIDTH](d|u|x|X), text; as the
 * kernel's show() prints the number (USB's idVendor: "0x%04x"). */
static int attr_format(struct loader *L, json_t *v, struct schema_attr *a)
{
    const char *s, *c;
    bool bad = false;
    int r = want(L, v, JSON_STRING, "a format such as \"0x%04x\"");

    if (r < 0) {
        return r;
    }
    s = json_string_value(v);
    /* the conversion: the first '%' not part of "%%" */
    for (c = s; *c; c++) {
        if (c[0] == '%' && c[1] == '%') {
            c++;
        } else if (c[0] == '%') {
            break;
        }
    }
    if (!*c || strlen(s) > 64) {
        return fail(L,
                    "must hold one conversion %%[0][WIDTH](d|u|x|X), "
                    "such as \"0x%%04x\" (at most 64 bytes)");
    }
    a->fmt_pre = format_text(s, (size_t)(c - s), &bad);
    c++;
    if (*c == '0') {
        a->fmt_zero = true;
        c++;
    }
    while (*c >= '0' && *c <= '9' && a->fmt_width <= 64) {
        a->fmt_width = a->fmt_width * 10 + (*c++ - '0');
    }
    if (*c) {
        a->fmt_conv = *c;
        c++;
    }
    if (!bad) {
        a->fmt_post = format_text(c, strlen(c), &bad);
    }
    if (!bad && (!a->fmt_pre || !a->fmt_post)) {
        return -ENOMEM;
    }
    if (bad || a->fmt_width > 64 || !a->fmt_conv ||
        !strchr("duxX", a->fmt_conv)) {
        return fail(L,
                    "must hold one conversion %%[0][WIDTH](d|u|x|X) and "
                    "no other '%%' (\"%%%%\" for one), such as \"0x%%04x\"");
    }
    if (a->kind == SCHEMA_INT && a->fmt_conv != 'd') {
        return fail(L,
                    "kind int takes %%d only (a negative number has no "
                    "unsigned form)");
    }
    r = format_touches(L, a);
    if (r < 0) {
        return r;
    }
    a->format = cfs_strdup(s);
    return a->format ? 0 : -ENOMEM;
}

/* Options that only make sense for some kinds. */
static int attr_option_allowed(struct loader *L,
                               const char *key,
                               const struct schema_attr *a)
{
    bool ok = true;
    const char *only = NULL;

    if (!strcmp(key, "pattern") || !strcmp(key, "max_length")) {
        ok = a->kind == SCHEMA_STRING;
        only = "string";
    } else if (!strcmp(key, "min") || !strcmp(key, "max") ||
               !strcmp(key, "display") || !strcmp(key, "format")) {
        ok = a->kind == SCHEMA_INT || a->kind == SCHEMA_UINT;
        only = "int and uint";
    } else if (!strcmp(key, "values")) {
        ok = a->kind == SCHEMA_ENUM;
        only = "enum";
    }
    if (!ok) {
        return fail(L,
                    "applies to kind %s only, not %s",
                    only,
                    schema_kind_name(a->kind));
    }
    return 0;
}

static int
attr_option(struct loader *L, const char *key, json_t *v, struct schema_attr *a)
{
    int r = attr_option_allowed(L, key, a);

    if (r < 0) {
        return r;
    }
    if (!strcmp(key, "mode")) {
        return attr_mode(L, v, a);
    }
    if (!strcmp(key, "pattern")) {
        return attr_pattern(L, v, a);
    }
    if (!strcmp(key, "max_length")) {
        r = want(L, v, JSON_INTEGER, "an integer");
        if (r == 0 && (json_integer_value(v) < 0 ||
                       json_integer_value(v) > CFS_STORE_MAX)) {
            r = fail(L, "must be between 0 and %d", CFS_STORE_MAX);
        }
        if (r == 0) {
            a->has_max_length = true;
            a->max_length = (size_t)json_integer_value(v);
        }
        return r;
    }
    if (!strcmp(key, "min")) {
        r = attr_int(L, v, a, &a->min);
        a->has_min = r == 0;
        return r;
    }
    if (!strcmp(key, "max")) {
        r = attr_int(L, v, a, &a->max);
        a->has_max = r == 0;
        if (r == 0 && a->has_min && a->max < a->min) {
            r = fail(L, "must not be below min (%" PRId64 ")", a->min);
        }
        return r;
    }
    if (!strcmp(key, "values")) {
        return attr_values(L, v, a);
    }
    if (!strcmp(key, "format")) {
        return attr_format(L, v, a);
    }
    if (!strcmp(key, "display")) {
        r = want(L, v, JSON_STRING, "\"hex\" or \"decimal\"");
        if (r == 0 && strcmp(json_string_value(v), "hex") != 0 &&
            strcmp(json_string_value(v), "decimal") != 0) {
            r = fail(L, "must be \"hex\" or \"decimal\"");
        }
        a->display_hex = r == 0 && !strcmp(json_string_value(v), "hex");
        return r;
    }
    return 0; /* kind and default: handled by the caller */
}

static int attr_parse(struct loader *L,
                      struct schema_type *t,
                      const char *name,
                      json_t *obj,
                      struct schema_attr *a)
{
    const char *key;
    json_t *v;
    json_t *kind;
    json_t *def;
    char why[CFS_SCHEMA_ERROR_TEXT_LEN];
    size_t at;
    int r;

    a->type = t;
    a->mode = 0644;
    a->name = cfs_strdup(name);
    if (!a->name) {
        return -ENOMEM;
    }
    r = check_name(L, name, "an attribute name");
    if (r == 0) {
        r = want(L, obj, JSON_OBJECT, "an object");
    }
    if (r == 0) {
        r = check_keys(L,
                       obj,
                       attr_keys,
                       "kind, mode, default, pattern, max_length, min, max, "
                       "values, display or format");
    }
    if (r < 0) {
        return r;
    }
    kind = json_object_get(obj, "kind");
    if (!kind) {
        return fail(L, "missing \"kind\"");
    }
    at = schema_jpath_key(&L->path, "kind");
    r = want(L, kind, JSON_STRING, "a string");
    if (r < 0) {
        return r;
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (!strcmp(json_string_value(kind), kinds[i].name)) {
            a->kind = kinds[i].kind;
        }
    }
    if (!a->kind) {
        return fail(L,
                    "unknown kind \"%s\" (expected string, int, uint, bool, "
                    "enum, ipv4, ipv6, mac, uuid or hostname)",
                    json_string_value(kind));
    }
    schema_jpath_pop(&L->path, at);
    json_object_foreach(obj, key, v) {
        at = schema_jpath_key(&L->path, key);
        r = attr_option(L, key, v, a);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if (a->kind == SCHEMA_ENUM && !a->values) {
        return fail(L, "kind enum needs \"values\"");
    }
    if (a->display_hex && a->format && !*a->fmt_pre && !*a->fmt_post &&
        a->fmt_conv != 'd' && a->fmt_conv != 'u') {
        /* forms read a value of digits only as decimal (web/ displayValue) */
        (void)schema_jpath_key(&L->path, "display"); /* where it fails */
        return fail(L,
                    "\"hex\" with format \"%s\" would lose the value: "
                    "forms read a shown value of digits only (\"10\", 16) "
                    "as decimal; give the format text before the number "
                    "(\"0x%%x\") or leave display out",
                    a->format);
    }
    def = json_object_get(obj, "default");
    if (def) {
        at = schema_jpath_key(&L->path, "default");
        r = want(L,
                 def,
                 JSON_STRING,
                 "a string (the text a store would take, e.g. \"0\")");
        if (r < 0) {
            return r;
        }
        if (json_string_length(def) > CFS_STORE_MAX) {
            return fail(L, "longer than %d bytes", CFS_STORE_MAX);
        }
        r = schema_value_check(a,
                               json_string_value(def),
                               json_string_length(def),
                               &a->def,
                               why,
                               sizeof(why));
        if (r == -ENOMEM) {
            return r;
        }
        if (r < 0) {
            return fail(L, "not a valid value of this attribute: %s", why);
        }
        schema_jpath_pop(&L->path, at);
    }
    a->ca.ca_name = a->name;
    a->ca.ca_mode = (unsigned short)a->mode;
    return 0;
}

/* ---- types: pass 1, keys and attributes -------------------------------- */

static const char *const type_keys[] = {"attributes",
                                        "creates",
                                        "default_groups",
                                        "links",
                                        "committable",
                                        "max_children",
                                        "name",
                                        "summary",
                                        NULL};

/* "name": {"pattern": ERE, "examples": [names]}: what objects of this type
 * are called; mkdir refuses a name the pattern does not match (EINVAL). */
static int type_name(struct loader *L, struct schema_type *t, json_t *obj)
{
    static const char *const keys[] = {"pattern", "examples", NULL};
    json_t *pat;
    json_t *ex;
    json_t *v;
    size_t i;
    char msg[128];
    int r = want(L, obj, JSON_OBJECT, "an object {\"pattern\", \"examples\"}");

    if (r == 0) {
        r = check_keys(L, obj, keys, "pattern or examples");
    }
    if (r < 0) {
        return r;
    }
    pat = json_object_get(obj, "pattern");
    ex = json_object_get(obj, "examples");
    if (pat) {
        size_t at = schema_jpath_key(&L->path, "pattern");
        int rc;

        r = want(L, pat, JSON_STRING, "a string");
        if (r < 0) {
            return r;
        }
        t->name_pattern = cfs_strdup(json_string_value(pat));
        if (!t->name_pattern) {
            return -ENOMEM;
        }
        rc = regcomp(&t->name_re, t->name_pattern, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            (void)regerror(rc, &t->name_re, msg, sizeof(msg));
            return fail(L, "not a POSIX extended regular expression: %s", msg);
        }
        t->has_name_re = true;
        schema_jpath_pop(&L->path, at);
    }
    if (ex) {
        size_t at = schema_jpath_key(&L->path, "examples");

        r = want(L, ex, JSON_ARRAY, "an array of names");
        if (r < 0) {
            return r;
        }
        t->name_examples =
            cfs_zalloc((json_array_size(ex) + 1) * sizeof(char *));
        if (!t->name_examples) {
            return -ENOMEM;
        }
        json_array_foreach(ex, i, v) {
            const char *n = json_string_value(v);

            if (!n || cfs_name_check(n, strlen(n)) < 0) {
                return fail(L, "each example must be a valid name");
            }
            if (t->has_name_re && regexec(&t->name_re, n, 0, NULL, 0) != 0) {
                return fail(L, "the example %s does not match the pattern", n);
            }
            t->name_examples[t->n_name_examples] = cfs_strdup(n);
            if (!t->name_examples[t->n_name_examples]) {
                return -ENOMEM;
            }
            t->n_name_examples++;
        }
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

/* "summary": a one-line template; each "{...}" names an attribute of
 * the type, or is "{@links}" (the type must take links). Checked after
 * the attributes and links are read (pass 2). */
static int type_summary(struct loader *L, struct schema_type *t, json_t *v)
{
    const char *s;
    int r = want(L, v, JSON_STRING, "a string");

    if (r < 0) {
        return r;
    }
    s = json_string_value(v);
    if (strlen(s) > 255 || strchr(s, '\n')) {
        return fail(L, "a summary is one line of at most 255 bytes");
    }
    for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
        const char *end = strchr(p, '}');
        size_t n = end ? (size_t)(end - p - 1) : 0;
        bool found = false;

        if (!end || n == 0) {
            return fail(L, "an unclosed or empty {} in the summary");
        }
        if (n == 6 && strncmp(p + 1, "@links", 6) == 0) {
            if (!t->allow) {
                return fail(L,
                            "{@links} in the summary of a type without links");
            }
            continue;
        }
        for (size_t i = 0; i < t->n_attrs && !found; i++) {
            found = strlen(t->attrs[i].name) == n &&
                    strncmp(t->attrs[i].name, p + 1, n) == 0;
        }
        if (!found) {
            return fail(L,
                        "{%.*s} in the summary names no attribute of this type",
                        (int)n,
                        p + 1);
        }
    }
    t->summary = cfs_strdup(s);
    return t->summary ? 0 : -ENOMEM;
}

static int
type_attributes(struct loader *L, struct schema_type *t, json_t *attrs)
{
    const char *name;
    json_t *v;
    int r = want(L, attrs, JSON_OBJECT, "an object of attributes");

    if (r < 0) {
        return r;
    }
    t->attrs = cfs_zalloc(json_object_size(attrs) * sizeof(*t->attrs));
    t->ct_attrs = cfs_zalloc((json_object_size(attrs) + 1) *
                             sizeof(struct configfs_attribute *));
    if (!t->attrs || !t->ct_attrs) {
        return -ENOMEM;
    }
    json_object_foreach(attrs, name, v) {
        struct schema_attr *a = &t->attrs[t->n_attrs];
        size_t at = schema_jpath_key(&L->path, name);

        a->index = (unsigned int)t->n_attrs;
        t->n_attrs++; /* counted now so that destroy frees a half-read one */
        r = attr_parse(L, t, name, v, a);
        if (r < 0) {
            return r;
        }
        t->ct_attrs[a->index] = &a->ca;
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

static int type_pass1(struct loader *L, struct schema_type *t, json_t *obj)
{
    json_t *attrs;
    size_t at;
    int r = want(L, obj, JSON_OBJECT, "an object");

    if (r == 0) {
        r = check_keys(L,
                       obj,
                       type_keys,
                       "attributes, creates, default_groups, links, "
                       "committable, max_children, name or summary");
    }
    if (r < 0) {
        return r;
    }
    if (json_object_get(obj, "name")) {
        at = schema_jpath_key(&L->path, "name");
        r = type_name(L, t, json_object_get(obj, "name"));
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    attrs = json_object_get(obj, "attributes");
    if (attrs) {
        at = schema_jpath_key(&L->path, "attributes");
        r = type_attributes(L, t, attrs);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

/* ---- types: pass 2, references ----------------------------------------- */

static struct schema_attr *find_attr(struct schema_type *t, const char *name)
{
    for (size_t i = 0; i < t->n_attrs; i++) {
        if (!strcmp(t->attrs[i].name, name)) {
            return &t->attrs[i];
        }
    }
    return NULL;
}

static int type_creates(struct loader *L, struct schema_type *t, json_t *obj)
{
    static const char *const keys[] = {"kind", "type", NULL};
    json_t *kind;
    json_t *type;
    size_t at;
    int r = want(L, obj, JSON_OBJECT, "an object {\"kind\", \"type\"}");

    if (r == 0) {
        r = check_keys(L, obj, keys, "kind or type");
    }
    if (r < 0) {
        return r;
    }
    kind = json_object_get(obj, "kind");
    type = json_object_get(obj, "type");
    if (!kind) {
        return fail(L, "missing \"kind\" (\"item\" or \"group\")");
    }
    if (!type) {
        return fail(L, "missing \"type\"");
    }
    at = schema_jpath_key(&L->path, "kind");
    r = want(L, kind, JSON_STRING, "\"item\" or \"group\"");
    if (r < 0) {
        return r;
    }
    if (!strcmp(json_string_value(kind), "item")) {
        t->creates_kind = SCHEMA_MAKE_ITEM;
    } else if (!strcmp(json_string_value(kind), "group")) {
        t->creates_kind = SCHEMA_MAKE_GROUP;
    } else {
        return fail(L, "must be \"item\" or \"group\"");
    }
    schema_jpath_pop(&L->path, at);
    at = schema_jpath_key(&L->path, "type");
    r = type_ref(L, type, &t->creates);
    if (r < 0) {
        return r;
    }
    schema_jpath_pop(&L->path, at);
    return 0;
}

static bool reserved_by_commit(const char *name)
{
    return !strcmp(name, "pending") || !strcmp(name, "live");
}

static int type_default_groups(struct loader *L,
                               struct schema_type *t,
                               json_t *obj,
                               bool committable)
{
    const char *name;
    json_t *v;
    int r = want(L, obj, JSON_OBJECT, "an object {name: type}");

    if (r < 0) {
        return r;
    }
    t->dgroups = cfs_zalloc(json_object_size(obj) * sizeof(*t->dgroups));
    if (!t->dgroups) {
        return -ENOMEM;
    }
    json_object_foreach(obj, name, v) {
        struct schema_default_group *dg = &t->dgroups[t->n_dgroups];
        size_t at = schema_jpath_key(&L->path, name);

        r = check_name(L, name, "a default group name");
        if (r < 0) {
            return r;
        }
        if (find_attr(t, name)) {
            return fail(L,
                        "clashes with the attribute \"%s\" of this type "
                        "(docs/configfs-rules.md rule L4)",
                        name);
        }
        if (committable && reserved_by_commit(name)) {
            return fail(
                L, "clashes with the %s/ group of a committable type", name);
        }
        r = type_ref(L, v, &dg->type);
        if (r < 0) {
            return r;
        }
        dg->name = cfs_strdup(name);
        if (!dg->name) {
            return -ENOMEM;
        }
        t->n_dgroups++;
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

static int type_links(struct loader *L, struct schema_type *t, json_t *obj)
{
    static const char *const keys[] = {"allow", NULL};
    json_t *allow;
    json_t *e;
    size_t i;
    size_t at;
    int r = want(L, obj, JSON_OBJECT, "an object {\"allow\": [type...]}");

    if (r == 0) {
        r = check_keys(L, obj, keys, "allow");
    }
    if (r < 0) {
        return r;
    }
    allow = json_object_get(obj, "allow");
    if (!allow) {
        return fail(L, "missing \"allow\"");
    }
    at = schema_jpath_key(&L->path, "allow");
    r = want(L, allow, JSON_ARRAY, "an array of type names");
    if (r < 0) {
        return r;
    }
    if (json_array_size(allow) == 0) {
        return fail(L,
                    "must list at least one type (leave \"links\" out to "
                    "refuse every link)");
    }
    t->allow =
        cfs_zalloc(json_array_size(allow) * sizeof(struct schema_type *));
    if (!t->allow) {
        return -ENOMEM;
    }
    json_array_foreach(allow, i, e) {
        size_t at2 = schema_jpath_index(&L->path, i);
        struct schema_type *target = NULL;

        r = type_ref(L, e, &target);
        if (r < 0) {
            return r;
        }
        for (size_t k = 0; k < t->n_allow; k++) {
            if (t->allow[k] == target) {
                return fail(L, "type \"%s\" is listed twice", target->name);
            }
        }
        t->allow[t->n_allow++] = target;
        schema_jpath_pop(&L->path, at2);
    }
    schema_jpath_pop(&L->path, at);
    t->has_links = true;
    return 0;
}

static int commit_required(struct loader *L, struct schema_type *t, json_t *req)
{
    json_t *e;
    size_t i;
    int r = want(L, req, JSON_ARRAY, "an array of attribute names");

    if (r < 0) {
        return r;
    }
    t->required = cfs_zalloc(json_array_size(req) * sizeof(*t->required));
    if (!t->required) {
        return -ENOMEM;
    }
    json_array_foreach(req, i, e) {
        size_t at = schema_jpath_index(&L->path, i);
        struct schema_attr *a;

        r = want(L, e, JSON_STRING, "an attribute name (a string)");
        if (r < 0) {
            return r;
        }
        a = find_attr(t->commit_type, json_string_value(e));
        if (!a) {
            return fail(L,
                        "type \"%s\" has no attribute \"%s\"",
                        t->commit_type->name,
                        json_string_value(e));
        }
        for (size_t k = 0; k < t->n_required; k++) {
            if (t->required[k] == a->index) {
                return fail(L, "\"%s\" is listed twice", a->name);
            }
        }
        t->required[t->n_required++] = a->index;
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

static int
type_committable(struct loader *L, struct schema_type *t, json_t *obj)
{
    static const char *const keys[] = {"type", "commit", NULL};
    static const char *const commit_keys[] = {"required", NULL};
    json_t *type;
    json_t *commit;
    json_t *req;
    size_t at;
    int r = want(L, obj, JSON_OBJECT, "an object {\"type\", \"commit\"?}");

    if (r == 0) {
        r = check_keys(L, obj, keys, "type or commit");
    }
    if (r < 0) {
        return r;
    }
    if (t->creates) {
        return fail(L,
                    "a type cannot have both \"creates\" and "
                    "\"committable\" (mkdir happens in pending/)");
    }
    type = json_object_get(obj, "type");
    if (!type) {
        return fail(L, "missing \"type\"");
    }
    at = schema_jpath_key(&L->path, "type");
    r = type_ref(L, type, &t->commit_type);
    if (r < 0) {
        return r;
    }
    schema_jpath_pop(&L->path, at);
    commit = json_object_get(obj, "commit");
    if (!commit) {
        return 0;
    }
    at = schema_jpath_key(&L->path, "commit");
    r = want(L, commit, JSON_OBJECT, "an object {\"required\": [...]}");
    if (r == 0) {
        r = check_keys(L, commit, commit_keys, "required");
    }
    if (r < 0) {
        return r;
    }
    req = json_object_get(commit, "required");
    if (req) {
        size_t at2 = schema_jpath_key(&L->path, "required");

        r = commit_required(L, t, req);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at2);
    }
    schema_jpath_pop(&L->path, at);
    return 0;
}

static int type_pass2(struct loader *L, struct schema_type *t, json_t *obj)
{
    json_t *v;
    size_t at;
    int r = 0;
    bool committable = json_object_get(obj, "committable") != NULL;

    if ((v = json_object_get(obj, "creates"))) {
        at = schema_jpath_key(&L->path, "creates");
        r = type_creates(L, t, v);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if ((v = json_object_get(obj, "committable"))) {
        at = schema_jpath_key(&L->path, "committable");
        r = type_committable(L, t, v);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if (committable) {
        for (size_t i = 0; i < t->n_attrs; i++) {
            if (reserved_by_commit(t->attrs[i].name)) {
                (void)schema_jpath_key(&L->path, "attributes");
                (void)schema_jpath_key(&L->path, t->attrs[i].name);
                return fail(L,
                            "clashes with the %s/ group of a committable "
                            "type",
                            t->attrs[i].name);
            }
        }
    }
    if ((v = json_object_get(obj, "default_groups"))) {
        at = schema_jpath_key(&L->path, "default_groups");
        r = type_default_groups(L, t, v, committable);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if ((v = json_object_get(obj, "links"))) {
        at = schema_jpath_key(&L->path, "links");
        r = type_links(L, t, v);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if ((v = json_object_get(obj, "summary"))) {
        at = schema_jpath_key(&L->path, "summary");
        r = type_summary(L, t, v);
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    if ((v = json_object_get(obj, "max_children"))) {
        at = schema_jpath_key(&L->path, "max_children");
        r = want(L, v, JSON_INTEGER, "an integer");
        if (r == 0 && json_integer_value(v) < 0) {
            r = fail(L, "must not be negative");
        }
        if (r == 0 && !t->creates && !t->commit_type) {
            r = fail(L,
                     "needs \"creates\" or \"committable\": nothing is made "
                     "in this type");
        }
        if (r < 0) {
            return r;
        }
        t->has_max_children = true;
        t->max_children = (uint64_t)json_integer_value(v);
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

/* ---- whole-schema rules ------------------------------------------------ */

static bool has_group_parts(const struct schema_type *t)
{
    return t->creates || t->commit_type || t->n_dgroups;
}

/* A type made by make_item is a leaf: nothing can be made in it and it has
 * no default groups (the kernel only looks for those in groups). */
static int check_items(struct loader *L)
{
    for (size_t i = 0; i < L->s->n_types; i++) {
        struct schema_type *t = &L->s->types[i];

        if (t->creates_kind != SCHEMA_MAKE_ITEM ||
            !has_group_parts(t->creates)) {
            continue;
        }
        (void)schema_jpath_key(&L->path, "types");
        (void)schema_jpath_key(&L->path, t->name);
        (void)schema_jpath_key(&L->path, "creates");
        (void)schema_jpath_key(&L->path, "kind");
        return fail(L,
                    "type \"%s\" has creates, committable or default_groups, "
                    "so it must be made as a \"group\"",
                    t->creates->name);
    }
    return 0;
}

/* Default groups are built when their parent is, so they must not nest
 * forever. @return 0 or the fault, with the path of the closing edge. */
static int dg_cycle(struct loader *L, struct schema_type *t)
{
    t->visit = 1;
    for (size_t i = 0; i < t->n_dgroups; i++) {
        struct schema_type *c = t->dgroups[i].type;
        int r;

        if (c->visit == 1) {
            (void)schema_jpath_key(&L->path, "types");
            (void)schema_jpath_key(&L->path, t->name);
            (void)schema_jpath_key(&L->path, "default_groups");
            (void)schema_jpath_key(&L->path, t->dgroups[i].name);
            return fail(L,
                        "default groups nest forever: type \"%s\" is "
                        "already an enclosing default group",
                        c->name);
        }
        if (c->visit == 0) {
            r = dg_cycle(L, c);
            if (r < 0) {
                return r;
            }
        }
    }
    t->visit = 2;
    return 0;
}

/* ---- the document ------------------------------------------------------ */

static const char *const top_keys[] = {
    "subsystem", "description", "root", "types", NULL};

/* Run @pass over every type, in file order, with the JSON path at it. */
static int
each_type(struct loader *L,
          json_t *types,
          int (*pass)(struct loader *, struct schema_type *, json_t *))
{
    const char *name;
    json_t *v;
    size_t i = 0;

    json_object_foreach(types, name, v) {
        size_t at = schema_jpath_key(&L->path, name);
        int r = pass(L, &L->s->types[i++], v);

        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    return 0;
}

static int load_types(struct loader *L, json_t *types)
{
    const char *name;
    json_t *v;
    size_t at;
    int r;

    L->s->types = cfs_zalloc(json_object_size(types) * sizeof(*L->s->types));
    if (!L->s->types) {
        return -ENOMEM;
    }
    json_object_foreach(types, name, v) {
        struct schema_type *t = &L->s->types[L->s->n_types];

        at = schema_jpath_key(&L->path, name);
        t->schema = L->s;
        t->name = cfs_strdup(name);
        if (!t->name) {
            return -ENOMEM;
        }
        L->s->n_types++;
        r = check_name(L, name, "a type name");
        if (r < 0) {
            return r;
        }
        schema_jpath_pop(&L->path, at);
    }
    r = each_type(L, types, type_pass1);
    return r < 0 ? r : each_type(L, types, type_pass2);
}

static int load_doc(struct loader *L, json_t *doc)
{
    json_t *sub, *desc, *root, *types;
    size_t at;
    int r = want(L, doc, JSON_OBJECT, "an object");

    if (r == 0) {
        r = check_keys(
            L, doc, top_keys, "subsystem, description, root or types");
    }
    if (r < 0) {
        return r;
    }
    sub = json_object_get(doc, "subsystem");
    desc = json_object_get(doc, "description");
    root = json_object_get(doc, "root");
    types = json_object_get(doc, "types");
    if (!sub) {
        return fail(L, "missing \"subsystem\"");
    }
    if (!root) {
        return fail(L, "missing \"root\"");
    }
    if (!types) {
        return fail(L, "missing \"types\"");
    }
    at = schema_jpath_key(&L->path, "subsystem");
    r = want(L, sub, JSON_STRING, "a string");
    if (r == 0) {
        r = check_name(L, json_string_value(sub), "the subsystem name");
    }
    if (r < 0) {
        return r;
    }
    L->s->subsystem = cfs_strdup(json_string_value(sub));
    if (!L->s->subsystem) {
        return -ENOMEM;
    }
    schema_jpath_pop(&L->path, at);
    if (desc) {
        at = schema_jpath_key(&L->path, "description");
        r = want(L, desc, JSON_STRING, "a string");
        if (r < 0) {
            return r;
        }
        L->s->description = cfs_strdup(json_string_value(desc));
        if (!L->s->description) {
            return -ENOMEM;
        }
        schema_jpath_pop(&L->path, at);
    }
    at = schema_jpath_key(&L->path, "types");
    r = want(L, types, JSON_OBJECT, "an object of types");
    if (r == 0 && json_object_size(types) == 0) {
        r = fail(L, "must define at least one type");
    }
    if (r == 0) {
        r = load_types(L, types);
    }
    if (r < 0) {
        return r;
    }
    schema_jpath_pop(&L->path, at);
    at = schema_jpath_key(&L->path, "root");
    r = type_ref(L, root, &L->s->root);
    if (r < 0) {
        return r;
    }
    schema_jpath_pop(&L->path, at);
    r = check_items(L);
    for (size_t i = 0; r == 0 && i < L->s->n_types; i++) {
        if (L->s->types[i].visit == 0) {
            r = dg_cycle(L, &L->s->types[i]);
        }
    }
    return r;
}

int cfs_schema_load_buffer(const char *buf,
                           size_t len,
                           const char *file,
                           struct cfs_schema **ret_schema,
                           struct cfs_schema_error *err)
{
    struct loader L = {.err = err};
    json_error_t jerr;
    json_t *doc = NULL;
    int r;

    if (!file) {
        file = "<buffer>";
    }
    L.file = file;
    error_file(err, file);
    schema_jpath_init(&L.path);
    if (len > CFS_SCHEMA_FILE_MAX) {
        if (err) {
            (void)snprintf(err->reason,
                           sizeof(err->reason),
                           "larger than %zu bytes",
                           CFS_SCHEMA_FILE_MAX);
        }
        return -EFBIG;
    }
    doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        /* jansson leaves the text empty when its very first allocation
         * fails. */
        if (json_error_code(&jerr) == json_error_out_of_memory ||
            !jerr.text[0]) {
            if (err) {
                schema_strlcpy(
                    err->reason, "out of memory", sizeof(err->reason));
            }
            return -ENOMEM;
        }
        if (err) {
            struct schema_jpath p;

            schema_jpath_at(buf, len, (size_t)jerr.position, &p);
            schema_strlcpy(err->path, p.buf, sizeof(err->path));
            schema_strlcpy(err->reason, jerr.text, sizeof(err->reason));
            err->line = jerr.line;
            err->column = jerr.column;
        }
        return -EINVAL;
    }
    L.s = cfs_zalloc(sizeof(*L.s));
    r = -ENOMEM;
    if (L.s) {
        atomic_init(&L.s->refs, 1);
        L.s->file = cfs_strdup(file);
        r = L.s->file ? load_doc(&L, doc) : -ENOMEM;
    }
    json_decref(doc);
    if (r < 0) {
        if (r == -ENOMEM && err) {
            schema_strlcpy(err->reason, "out of memory", sizeof(err->reason));
        }
        if (L.s) {
            schema_destroy(L.s);
        }
        return r;
    }
    schema_wire_types(L.s);
    if (err) {
        memset(err, 0, sizeof(*err));
    }
    *ret_schema = L.s;
    return 0;
}

int cfs_schema_load_file(const char *path,
                         struct cfs_schema **ret_schema,
                         struct cfs_schema_error *err)
{
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    int fd;
    int r = 0;

    error_file(err, path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        goto out;
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        r = -EISDIR;
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        r = -EINVAL;
        goto out;
    }
    if ((size_t)st.st_size > CFS_SCHEMA_FILE_MAX) {
        r = -EFBIG;
        goto out;
    }
    buf = cfs_malloc((size_t)st.st_size + 1);
    if (!buf) {
        r = -ENOMEM;
        goto out;
    }
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            r = -errno;
            goto out;
        }
        if (n == 0) {
            break; /* shrank meanwhile: parse what is there */
        }
        got += (size_t)n;
    }
    (void)close(fd);
    fd = -1;
    r = cfs_schema_load_buffer(buf, got, path, ret_schema, err);

out:
    if (fd >= 0) {
        (void)close(fd);
    }
    cfs_free(buf);
    if (r < 0 && err && !err->reason[0]) {
        if (r == -EFBIG) {
            (void)snprintf(err->reason,
                           sizeof(err->reason),
                           "larger than %zu bytes",
                           CFS_SCHEMA_FILE_MAX);
        } else if (r == -EINVAL) {
            schema_strlcpy(
                err->reason, "not a regular file", sizeof(err->reason));
        } else {
            schema_strlcpy(err->reason, strerror(-r), sizeof(err->reason));
        }
    }
    return r;
}

char *cfs_schema_error_format(const struct cfs_schema_error *err,
                              char *buf,
                              size_t size)
{
    int n;

    if (size == 0) {
        return buf;
    }
    if (err->line > 0) {
        n = snprintf(buf,
                     size,
                     "%s:%d:%d: %s%s%s",
                     err->file,
                     err->line,
                     err->column,
                     err->path,
                     err->path[0] ? ": " : "",
                     err->reason);
    } else {
        n = snprintf(buf,
                     size,
                     "%s: %s%s%s",
                     err->file,
                     err->path,
                     err->path[0] ? ": " : "",
                     err->reason);
    }
    if (n < 0) {
        buf[0] = '\0';
    }
    return buf;
}
