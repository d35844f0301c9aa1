// SPDX-License-Identifier: MIT
/*
 * value.c - attribute kinds: what each accepts and how it is shown.
 *
 * One function checks a value against its attribute and returns the text
 * show() prints: int and uint in decimal or as their "format" says, bool
 * as 0 or 1, everything else exactly as written. It serves stores and, at
 * load time, defaults. A formatted number's shown text reads back as the
 * same number (read_int()). The rules are listed in docs/schemas.md; a
 * refusal names the rule.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>

const char *schema_kind_name(enum schema_kind kind)
{
    switch (kind) {
    case SCHEMA_STRING:
        return "string";
    case SCHEMA_INT:
        return "int";
    case SCHEMA_UINT:
        return "uint";
    case SCHEMA_BOOL:
        return "bool";
    case SCHEMA_ENUM:
        return "enum";
    case SCHEMA_IPV4:
        return "ipv4";
    case SCHEMA_IPV6:
        return "ipv6";
    case SCHEMA_MAC:
        return "mac";
    case SCHEMA_UUID:
        return "uuid";
    case SCHEMA_HOSTNAME:
        return "hostname";
    }
    return "?";
}

static void why_set(char *why, size_t size, const char *fmt, ...)
    CFS_PRINTF(3, 4);

static void why_set(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (size == 0) {
        return;
    }
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    n = vsnprintf(why, size, fmt, ap);
    va_end(ap);
    if (n < 0) {
        why[0] = '\0';
    } else if ((size_t)n >= size && size > 4) {
        memcpy(why + size - 4, "...", 4);
    }
}

/* ---- kinds ------------------------------------------------------------- */

static int check_string(const struct schema_attr *a,
                        const char *in,
                        size_t len,
                        char *canon,
                        char *why,
                        size_t why_size)
{
    if (memchr(in, '\0', len)) {
        why_set(why, why_size, "must not contain NUL bytes");
        return -EINVAL;
    }
    if (!cfs_utf8_valid(in, len)) {
        why_set(why, why_size, "must be valid UTF-8");
        return -EINVAL;
    }
    if (a->has_max_length && len > a->max_length) {
        why_set(why, why_size, "at most %zu bytes", a->max_length);
        return -EINVAL;
    }
    if (a->has_re && regexec(&a->re, canon, 0, NULL, 0) != 0) {
        why_set(why, why_size, "must match %s", a->pattern);
        return -EINVAL;
    }
    return 0;
}

/* A number found in a text: its sign and its digits in their base. */
struct number {
    bool neg;
    const char *digits;
    size_t n;
    int base;
};

/* The plain forms (docs/schemas.md, kinds int and uint): decimal, or
 * hexadecimal after "0x" or "0X"; an optional sign; nothing else. */
static bool plain_number(const char *s, size_t len, struct number *ret)
{
    size_t i = 0;

    ret->neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        ret->neg = s[i] == '-';
        i++;
    }
    ret->base = 10;
    if (len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        ret->base = 16;
        i += 2;
    }
    if (i == len) {
        return false;
    }
    for (size_t k = i; k < len; k++) {
        unsigned char c = (unsigned char)s[k];

        if (ret->base == 10 ? !isdigit(c) : !isxdigit(c)) {
            return false;
        }
    }
    ret->digits = s + i;
    ret->n = len - i;
    return true;
}

/* @s is the format's leading text, at least one byte, the trailing text. */
static bool wrapped(const struct schema_attr *a, const char *s, size_t len)
{
    size_t pre = strlen(a->fmt_pre);
    size_t post = strlen(a->fmt_post);

    return len > pre + post && memcmp(s, a->fmt_pre, pre) == 0 &&
           memcmp(s + len - post, a->fmt_post, post) == 0;
}

/* The shown form: what show() prints for some value, read back. The
 * format's leading text; the width's padding (spaces, when the format pads
 * with spaces); '-' for kind int; digits of the conversion's base (hex in
 * either case); the trailing text. */
static bool shown_number(const struct schema_attr *a,
                         const char *s,
                         size_t len,
                         struct number *ret)
{
    size_t i, end;

    if (!a->format || !wrapped(a, s, len)) {
        return false;
    }
    i = strlen(a->fmt_pre);
    end = len - strlen(a->fmt_post);
    if (a->fmt_width > 0 && !a->fmt_zero) {
        while (i < end && s[i] == ' ') {
            i++;
        }
    }
    ret->neg = a->kind == SCHEMA_INT && i < end && s[i] == '-';
    if (ret->neg) {
        i++;
    }
    ret->base = a->fmt_conv == 'x' || a->fmt_conv == 'X' ? 16 : 10;
    if (i == end) {
        return false;
    }
    for (size_t k = i; k < end; k++) {
        unsigned char c = (unsigned char)s[k];

        if (ret->base == 10 ? !isdigit(c) : !isxdigit(c)) {
            return false;
        }
    }
    ret->digits = s + i;
    ret->n = end - i;
    return true;
}

/* The magnitude of @num; false when it does not fit in 64 bits. */
static bool number_magnitude(const struct number *num, uint64_t *ret)
{
    uint64_t v = 0;

    for (size_t i = 0; i < num->n; i++) {
        unsigned char c = (unsigned char)num->digits[i];
        uint64_t d = isdigit(c) ? (uint64_t)(c - '0')
                                : (uint64_t)(tolower(c) - 'a' + 10);

        if (v > (UINT64_MAX - d) / (uint64_t)num->base) {
            return false;
        }
        v = v * (uint64_t)num->base + d;
    }
    *ret = v;
    return true;
}

/*
 * An int or uint value from text, as a store reads it (docs/schemas.md,
 * "format"): the first of these that fits the text's syntax is its value.
 *   1. the shown form of the attribute's format (shown_number());
 *   2. a plain number between the format's leading and trailing text;
 *   3. a plain number, the whole text.
 * So show() printed, stored back, is the same value: the shown form comes
 * first, even where the same text is also a plain number ("10" of "%x" is
 * 16). *@ret_s for kind int, *@ret_u for uint. @return 0, or -EINVAL,
 * -ERANGE with the reason in @why.
 */
static int read_int(const struct schema_attr *a,
                    const char *s,
                    size_t len,
                    int64_t *ret_s,
                    uint64_t *ret_u,
                    char *why,
                    size_t why_size)
{
    struct number num = {0};
    uint64_t mag = 0;
    size_t pre = a->format ? strlen(a->fmt_pre) : 0;
    size_t post = a->format ? strlen(a->fmt_post) : 0;
    bool ok = shown_number(a, s, len, &num) ||
              (a->format && wrapped(a, s, len) &&
               plain_number(s + pre, len - pre - post, &num)) ||
              plain_number(s, len, &num);

    if (!ok) {
        why_set(why,
                why_size,
                "must be %s integer (decimal, or hexadecimal after 0x)%s%s",
                a->kind == SCHEMA_INT ? "an" : "a non-negative",
                a->format ? ", or as shown by " : "",
                a->format ? a->format : "");
        return -EINVAL;
    }
    if (a->kind == SCHEMA_UINT && num.neg) {
        why_set(why, why_size, "must not be negative");
        return -EINVAL;
    }
    if (a->kind == SCHEMA_UINT) {
        if (!number_magnitude(&num, &mag)) {
            why_set(why, why_size, "must fit in an unsigned 64-bit integer");
            return -ERANGE;
        }
        *ret_u = mag;
        return 0;
    }
    if (!number_magnitude(&num, &mag) ||
        mag > (uint64_t)INT64_MAX + (num.neg ? 1 : 0)) {
        why_set(why, why_size, "must fit in a signed 64-bit integer");
        return -ERANGE;
    }
    if (!num.neg) {
        *ret_s = (int64_t)mag;
    } else if (mag == (uint64_t)INT64_MAX + 1) {
        *ret_s = INT64_MIN;
    } else {
        *ret_s = -(int64_t)mag;
    }
    return 0;
}

int schema_value_int(const struct schema_attr *a,
                     const char *s,
                     int64_t *ret_s,
                     uint64_t *ret_u)
{
    int64_t sv = 0;
    uint64_t uv = 0;
    int r = read_int(a, s, strlen(s), &sv, &uv, NULL, 0);

    if (r == 0) {
        *ret_s = sv;
        *ret_u = uv;
    }
    return r;
}

/* A number as the attribute's "format" says, the plain decimal without
 * one: @sv for kind int (@is_signed), @v for uint. */
static char *format_number(const struct schema_attr *a,
                           bool is_signed,
                           int64_t sv,
                           uint64_t v)
{
    char num[80];
    char *out;
    size_t n;
    int w = a->fmt_width;

    switch (a->format ? a->fmt_conv : 'd') {
    case 'x':
        (void)snprintf(
            num, sizeof(num), a->fmt_zero ? "%0*" PRIx64 : "%*" PRIx64, w, v);
        break;
    case 'X':
        (void)snprintf(
            num, sizeof(num), a->fmt_zero ? "%0*" PRIX64 : "%*" PRIX64, w, v);
        break;
    default:
        if (is_signed) {
            (void)snprintf(num,
                           sizeof(num),
                           a->fmt_zero ? "%0*" PRId64 : "%*" PRId64,
                           w,
                           sv);
        } else {
            (void)snprintf(num,
                           sizeof(num),
                           a->fmt_zero ? "%0*" PRIu64 : "%*" PRIu64,
                           w,
                           v);
        }
        break;
    }
    if (!a->format) {
        return cfs_strdup(num);
    }
    n = strlen(a->fmt_pre) + strlen(num) + strlen(a->fmt_post) + 1;
    out = cfs_malloc(n);
    if (out) {
        (void)snprintf(out, n, "%s%s%s", a->fmt_pre, num, a->fmt_post);
    }
    return out;
}

static int check_int(const struct schema_attr *a,
                     const char *in,
                     size_t len,
                     char **ret_out,
                     char *why,
                     size_t why_size)
{
    int64_t sv = 0;
    uint64_t v = 0;
    int r = read_int(a, in, len, &sv, &v, why, why_size);

    if (r < 0) {
        return r;
    }
    if (a->kind == SCHEMA_INT) {
        if (a->has_min && sv < a->min) {
            why_set(why, why_size, "at least %" PRId64, a->min);
            return -EINVAL;
        }
        if (a->has_max && sv > a->max) {
            why_set(why, why_size, "at most %" PRId64, a->max);
            return -EINVAL;
        }
        *ret_out = format_number(a, true, sv, 0);
    } else {
        if (a->has_min && v < (uint64_t)a->min) {
            why_set(why, why_size, "at least %" PRId64, a->min);
            return -EINVAL;
        }
        if (a->has_max && v > (uint64_t)a->max) {
            why_set(why, why_size, "at most %" PRId64, a->max);
            return -EINVAL;
        }
        *ret_out = format_number(a, false, 0, v);
    }
    return *ret_out ? 0 : -ENOMEM;
}

static const char *const bool_true[] = {"1", "true", "yes", "on"};
static const char *const bool_false[] = {"0", "false", "no", "off"};

static bool word_is(const char *in, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(in, word, len) == 0;
}

static int check_bool(
    const char *in, size_t len, char **ret_out, char *why, size_t why_size)
{
    const char *v = NULL;

    for (size_t i = 0; i < 4 && !v; i++) {
        if (word_is(in, len, bool_true[i])) {
            v = "1";
        } else if (word_is(in, len, bool_false[i])) {
            v = "0";
        }
    }
    if (!v) {
        why_set(why,
                why_size,
                "must be one of 0, 1, true, false, yes, no, on, off");
        return -EINVAL;
    }
    *ret_out = cfs_strdup(v);
    return *ret_out ? 0 : -ENOMEM;
}

static int check_enum(const struct schema_attr *a,
                      const char *in,
                      size_t len,
                      char *why,
                      size_t why_size)
{
    size_t off;

    for (size_t i = 0; i < a->n_values; i++) {
        if (strlen(a->values[i]) == len && memcmp(a->values[i], in, len) == 0) {
            return 0;
        }
    }
    why_set(why, why_size, "must be one of: ");
    off = strlen(why);
    for (size_t i = 0; i < a->n_values && off + 1 < why_size; i++) {
        int n = snprintf(
            why + off, why_size - off, "%s%s", i ? ", " : "", a->values[i]);

        if (n < 0 || (size_t)n >= why_size - off) {
            if (why_size > 4) {
                memcpy(why + why_size - 4, "...", 4);
            }
            break;
        }
        off += (size_t)n;
    }
    return -EINVAL;
}

static bool hex_at(const char *s, size_t from, size_t n)
{
    for (size_t i = from; i < from + n; i++) {
        if (!isxdigit((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

static bool mac_valid(const char *s, size_t len)
{
    if (len != 17) {
        return false;
    }
    for (size_t i = 0; i < 6; i++) {
        if (!hex_at(s, i * 3, 2) || (i < 5 && s[i * 3 + 2] != ':')) {
            return false;
        }
    }
    return true;
}

static bool uuid_valid(const char *s, size_t len)
{
    static const size_t groups[] = {8, 4, 4, 4, 12};
    size_t at = 0;

    if (len != 36) {
        return false;
    }
    for (size_t g = 0; g < 5; g++) {
        if (!hex_at(s, at, groups[g])) {
            return false;
        }
        at += groups[g];
        if (g < 4) {
            if (s[at] != '-') {
                return false;
            }
            at++;
        }
    }
    return true;
}

/* RFC 1123 host name: dot-separated labels of 1-63 letters, digits and
 * hyphens, not starting or ending with a hyphen; 253 bytes at most. */
static bool hostname_valid(const char *s, size_t len)
{
    size_t label = 0;

    if (len == 0 || len > 253) {
        return false;
    }
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (label == 0 || label > 63 || s[i - 1] == '-') {
                return false;
            }
            label = 0;
            continue;
        }
        if (!(isalnum((unsigned char)s[i]) || s[i] == '-') ||
            (label == 0 && s[i] == '-')) {
            return false;
        }
        label++;
    }
    return true;
}

int schema_value_check(const struct schema_attr *a,
                       const char *in,
                       size_t len,
                       char **ret_canon,
                       char *why,
                       size_t why_size)
{
    char *canon = cfs_memdup(in, len); /* NUL-terminated copy */
    char *out = NULL;
    unsigned char addr[16];
    int r = 0;

    if (why_size) {
        why[0] = '\0';
    }
    if (!canon) {
        return -ENOMEM;
    }
    switch (a->kind) {
    case SCHEMA_STRING:
        r = check_string(a, in, len, canon, why, why_size);
        break;
    case SCHEMA_INT:
    case SCHEMA_UINT:
        r = check_int(a, in, len, &out, why, why_size);
        break;
    case SCHEMA_BOOL:
        r = check_bool(in, len, &out, why, why_size);
        break;
    case SCHEMA_ENUM:
        r = check_enum(a, in, len, why, why_size);
        break;
    case SCHEMA_IPV4:
        if (strlen(canon) != len || inet_pton(AF_INET, canon, addr) != 1) {
            why_set(why, why_size, "must be an IPv4 address (a.b.c.d)");
            r = -EINVAL;
        }
        break;
    case SCHEMA_IPV6:
        if (strlen(canon) != len || inet_pton(AF_INET6, canon, addr) != 1) {
            why_set(why, why_size, "must be an IPv6 address");
            r = -EINVAL;
        }
        break;
    case SCHEMA_MAC:
        if (!mac_valid(in, len)) {
            why_set(why,
                    why_size,
                    "must be a MAC address (xx:xx:xx:xx:xx:xx, hexadecimal)");
            r = -EINVAL;
        }
        break;
    case SCHEMA_UUID:
        if (!uuid_valid(in, len)) {
            why_set(why,
                    why_size,
                    "must be a UUID "
                    "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal)");
            r = -EINVAL;
        }
        break;
    case SCHEMA_HOSTNAME:
        if (!hostname_valid(in, len)) {
            why_set(why,
                    why_size,
                    "must be a host name (RFC 1123: dot-separated labels of "
                    "1-63 letters, digits or hyphens, no hyphen first or "
                    "last, 253 bytes at most)");
            r = -EINVAL;
        }
        break;
    }
    if (r < 0 || out) {
        cfs_free(canon);
        canon = out;
    }
    if (r == 0) {
        *ret_canon = canon;
    }
    return r;
}
