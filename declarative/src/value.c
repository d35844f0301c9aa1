// SPDX-License-Identifier: MIT
/*
 * value.c - attribute kinds: what each accepts and how it is shown.
 *
 * One function checks a value against its attribute and returns the text
 * show() prints: int and uint in decimal, bool as 0 or 1, everything else
 * exactly as written. It serves stores and, at load time, defaults. The
 * rules are listed in docs/schemas.md; a refusal names the rule.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>

const char *cfs_schema_kind_name(enum sch_kind kind)
{
    switch (kind) {
    case SCH_STRING:
        return "string";
    case SCH_INT:
        return "int";
    case SCH_UINT:
        return "uint";
    case SCH_BOOL:
        return "bool";
    case SCH_ENUM:
        return "enum";
    case SCH_IPV4:
        return "ipv4";
    case SCH_IPV6:
        return "ipv6";
    case SCH_MAC:
        return "mac";
    case SCH_UUID:
        return "uuid";
    case SCH_HOSTNAME:
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

static int check_string(const struct sch_attr *a,
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

/* Decimal, or hexadecimal after "0x"; an optional sign; nothing else. */
static bool number_syntax(const char *s, size_t len, bool *ret_neg, int *base)
{
    size_t i = 0;

    *ret_neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        *ret_neg = s[i] == '-';
        i++;
    }
    *base = 10;
    if (len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        *base = 16;
        i += 2;
    }
    if (i == len) {
        return false;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (*base == 10 ? !isdigit(c) : !isxdigit(c)) {
            return false;
        }
    }
    return true;
}

/* A number as the attribute's "format" says, the plain decimal without
 * one: @sv for kind int (@is_signed), @v for uint. */
static char *
format_number(const struct sch_attr *a, bool is_signed, int64_t sv, uint64_t v)
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

/* A formatted number back: what "format" put around it goes, the rest is
 * read as any number, or as hexadecimal digits when the format's own text
 * was around them (*@hex; "FF h" of "%X h"). @return the length of the
 * number within @s, from *@from. */
static size_t unformat(const struct sch_attr *a,
                       const char *s,
                       size_t len,
                       size_t *from,
                       bool *hex)
{
    size_t pre, post;

    *from = 0;
    *hex = false;
    if (!a->format) {
        return len;
    }
    pre = strlen(a->fmt_pre);
    post = strlen(a->fmt_post);
    /* "0x" before a hex conversion is the number's own prefix: kept */
    if (pre == 2 && !strcmp(a->fmt_pre, "0x")) {
        pre = 0;
    }
    if (pre + post < len && !strncmp(s, a->fmt_pre, pre) &&
        !strncmp(s + len - post, a->fmt_post, post)) {
        *from = pre;
        *hex = pre + post > 0 && (a->fmt_conv == 'x' || a->fmt_conv == 'X');
        return len - pre - post;
    }
    return len;
}

static int check_int(const struct sch_attr *a,
                     char *canon,
                     size_t len,
                     char **ret_out,
                     char *why,
                     size_t why_size)
{
    bool neg;
    int base;
    char *end = NULL;
    size_t from = 0;
    bool hex = false;

    len = unformat(a, canon, len, &from, &hex);
    canon += from;
    canon[len] = '\0';
    if (hex && len > 0 && strspn(canon, "0123456789abcdefABCDEF") == len) {
        neg = false;
        base = 16;
    } else if (!number_syntax(canon, len, &neg, &base)) {
        why_set(why,
                why_size,
                "must be %s integer (decimal, or hexadecimal after 0x)",
                a->kind == SCH_INT ? "an" : "a non-negative");
        return -EINVAL;
    }
    errno = 0;
    if (a->kind == SCH_INT) {
        long long v = strtoll(canon, &end, base);

        if (errno == ERANGE) {
            why_set(why, why_size, "must fit in a signed 64-bit integer");
            return -ERANGE;
        }
        if (a->has_min && v < a->min) {
            why_set(why, why_size, "at least %" PRId64, a->min);
            return -EINVAL;
        }
        if (a->has_max && v > a->max) {
            why_set(why, why_size, "at most %" PRId64, a->max);
            return -EINVAL;
        }
        *ret_out = format_number(a, true, (int64_t)v, 0);
    } else {
        unsigned long long v;

        if (neg) {
            why_set(why, why_size, "must not be negative");
            return -EINVAL;
        }
        v = strtoull(canon, &end, base);
        if (errno == ERANGE) {
            why_set(why, why_size, "must fit in an unsigned 64-bit integer");
            return -ERANGE;
        }
        if (a->has_min && v < (uint64_t)a->min) {
            why_set(why, why_size, "at least %" PRId64, a->min);
            return -EINVAL;
        }
        if (a->has_max && v > (uint64_t)a->max) {
            why_set(why, why_size, "at most %" PRId64, a->max);
            return -EINVAL;
        }
        *ret_out = format_number(a, false, 0, (uint64_t)v);
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

static int check_enum(const struct sch_attr *a,
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

int cfs_schema_value_check(const struct sch_attr *a,
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
    case SCH_STRING:
        r = check_string(a, in, len, canon, why, why_size);
        break;
    case SCH_INT:
    case SCH_UINT:
        r = check_int(a, canon, len, &out, why, why_size);
        break;
    case SCH_BOOL:
        r = check_bool(in, len, &out, why, why_size);
        break;
    case SCH_ENUM:
        r = check_enum(a, in, len, why, why_size);
        break;
    case SCH_IPV4:
        if (strlen(canon) != len || inet_pton(AF_INET, canon, addr) != 1) {
            why_set(why, why_size, "must be an IPv4 address (a.b.c.d)");
            r = -EINVAL;
        }
        break;
    case SCH_IPV6:
        if (strlen(canon) != len || inet_pton(AF_INET6, canon, addr) != 1) {
            why_set(why, why_size, "must be an IPv6 address");
            r = -EINVAL;
        }
        break;
    case SCH_MAC:
        if (!mac_valid(in, len)) {
            why_set(why,
                    why_size,
                    "must be a MAC address (xx:xx:xx:xx:xx:xx, hexadecimal)");
            r = -EINVAL;
        }
        break;
    case SCH_UUID:
        if (!uuid_valid(in, len)) {
            why_set(why,
                    why_size,
                    "must be a UUID "
                    "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal)");
            r = -EINVAL;
        }
        break;
    case SCH_HOSTNAME:
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
