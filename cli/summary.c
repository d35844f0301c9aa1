/* SPDX-License-Identifier: MIT */
/*
 * summary.c - the one-line summaries `ls` shows in configfsctl shell after
 * each child's name, as targetcli's "[fileio /path (1G) write-back
 * activated]": a type's "summary" template of its subsystem's schema
 * (GET /api/v1/schema/{subsystem}, docs/schemas.md) filled from the
 * child's attributes and links. A description is asked once per
 * subsystem and kept for the session (c->schemas); the children's values
 * only for the folder listed, in one read (depth 1, the first page), and
 * only when a type of its subsystem declares a summary. The web UI fills
 * the same templates (web/static/js/panel.js, summaryOf).
 *
 * Everything read here came from a server: each member is checked for
 * its type before it is used, and an answer that is not what it should be
 * only means no summaries, never a failed ls.
 */
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "ctl.h"

/* GET @url (freed here) as JSON: a new reference, or NULL when the answer
 * is not a 200 of JSON (a summary is a help: no error of its own). */
static json_t *get_json(struct ctl *c, char *url)
{
    static const char *const accept[] = {"Accept: application/json", NULL};
    json_t *j = NULL;
    struct ctl_resp r;

    if (ctl_request(c, "GET", url, NULL, NULL, 0, accept, &r) == 0 &&
        r.status == 200) {
        j = json_loadb(r.body, r.len, 0, NULL);
    }
    ctl_resp_done(&r);
    free(url);
    return j;
}

/* The "types" of @subsystem's description (borrowed from c->schemas), or
 * NULL when it has none (no such schema, or an answer not understood). */
static const json_t *schema_types(struct ctl *c, const char *subsystem)
{
    const json_t *have = json_object_get(c->schemas, subsystem);
    json_t *desc;
    char *esc;

    if (have) {
        return json_object_get(have, "types"); /* NULL for a json null */
    }
    esc = ctl_query_escape(subsystem);
    desc = get_json(c, ctl_strdup_printf("/api/v1/schema/%s", esc));
    free(esc);
    if (!json_is_object(json_object_get(desc, "types"))) {
        json_decref(desc);
        desc = json_null(); /* asked once: no summaries here */
    }
    json_object_set_new_nocheck(c->schemas, subsystem, desc);
    return json_object_get(desc, "types");
}

/* Does any type of @types declare a summary? */
static bool any_summary(const json_t *types)
{
    const char *name;
    const json_t *t;

    json_object_foreach((json_t *)types, name, t) {
        (void)name;
        if (json_is_string(json_object_get(t, "summary"))) {
            return true;
        }
    }
    return false;
}

static void append(char **buf, size_t *len, const char *s, size_t n)
{
    *buf = ctl_xrealloc(*buf, *len + n + 1);
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* The value of the attribute @name of @node as a summary shows it: its
 * first line, blanks around it trimmed (as cat shows it, an x-format
 * applied by the server); NULL when unset, empty or unreadable. New
 * string. */
static char *attr_text(const json_t *node, const char *name)
{
    const json_t *a;
    size_t i;

    json_array_foreach(json_object_get(node, "attributes"), i, a) {
        const char *v = json_string_value(json_object_get(a, "value"));
        const char *enc = json_string_value(json_object_get(a, "encoding"));
        const char *an = json_string_value(json_object_get(a, "name"));
        char *bytes = NULL;
        size_t len = 0;
        size_t start = 0;

        if (!an || strcmp(an, name) != 0) {
            continue;
        }
        if (!v) {
            return NULL;
        }
        if (enc && ctl_base64_decode(v, &bytes, &len) == 0) {
            /* text up to a NUL: printed escaped anyway */
            len = strnlen(bytes, len);
        } else {
            bytes = ctl_xstrdup(v);
            len = strlen(bytes);
        }
        len = strcspn(bytes, "\n") < len ? strcspn(bytes, "\n") : len;
        while (start < len && (bytes[start] == ' ' || bytes[start] == '\t')) {
            start++;
        }
        while (len > start &&
               (bytes[len - 1] == ' ' || bytes[len - 1] == '\t' ||
                bytes[len - 1] == '\r')) {
            len--;
        }
        if (len == start) {
            free(bytes);
            return NULL;
        }
        bytes[len] = '\0';
        if (start) {
            memmove(bytes, bytes + start, len - start + 1);
        }
        return bytes;
    }
    return NULL;
}

char *ctl_summary_fill(const char *tmpl, const json_t *node)
{
    char *out = ctl_xstrdup("");
    size_t len = 0;
    const char *p = tmpl;

    while (*p) {
        const char *open = strchr(p, '{');
        const char *close = open ? strchr(open + 1, '}') : NULL;
        char *key;

        if (!open || !close || memchr(open + 1, '{', (size_t)(close - open))) {
            size_t n = open ? (size_t)(open - p) + 1 : strlen(p);

            append(&out, &len, p, n); /* text, or a lone '{' */
            p += n;
            continue;
        }
        append(&out, &len, p, (size_t)(open - p));
        key = ctl_xmalloc((size_t)(close - open));
        memcpy(key, open + 1, (size_t)(close - open) - 1);
        key[close - open - 1] = '\0';
        if (strcmp(key, "@links") == 0) {
            const json_t *l;
            size_t i;
            size_t before = len;

            json_array_foreach(json_object_get(node, "links"), i, l) {
                const char *t = json_string_value(json_object_get(l, "target"));

                if (t) {
                    if (len > before) {
                        append(&out, &len, ", ", 2);
                    }
                    append(&out, &len, t, strlen(t));
                }
            }
            if (len == before) {
                append(&out, &len, "-", 1);
            }
        } else {
            char *v = attr_text(node, key);

            append(&out, &len, v ? v : "-", strlen(v ? v : "-"));
            free(v);
        }
        free(key);
        p = close + 1;
    }
    return out;
}

json_t *ctl_summaries(struct ctl *c, const char *path)
{
    const json_t *types;
    const json_t *child;
    json_t *node;
    json_t *out = NULL;
    char *subsystem;
    char *base;
    size_t i;

    if (!c->schemas || strcmp(path, "/") == 0) {
        return NULL;
    }
    subsystem = ctl_xstrdup(path + 1);
    subsystem[strcspn(subsystem, "/")] = '\0';
    types = schema_types(c, subsystem);
    free(subsystem);
    if (!json_is_object(types) || !any_summary(types)) {
        return NULL;
    }
    base = ctl_config_url(path);
    node = get_json(c, ctl_strdup_printf("%s?depth=1&values=1", base));
    free(base);
    json_array_foreach(json_object_get(node, "children"), i, child) {
        const char *name = json_string_value(json_object_get(child, "name"));
        const char *type = json_string_value(json_object_get(child, "type"));
        const json_t *t = type ? json_object_get(types, type) : NULL;
        const char *tmpl = json_string_value(json_object_get(t, "summary"));
        char *text;

        if (!name || !tmpl) {
            continue;
        }
        text = ctl_summary_fill(tmpl, child);
        if (!out) {
            out = json_object();
        }
        /* bytes as they came (a binary value): escaped when printed */
        json_object_set_new(
            out, name, json_stringn_nocheck(text, strlen(text)));
        free(text);
    }
    json_decref(node);
    return out;
}
