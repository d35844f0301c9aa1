// SPDX-License-Identifier: MIT
/*
 * configfsctl.c - the command line client of configfsd: the configfs
 * shell habits (ls, cat, echo >, mkdir, rmdir, ln -s, rm, mv) plus batch,
 * export/import, history, watch and health, each one or a few requests of
 * the HTTP API (docs/API.md). Plain output for shells, --json for
 * programs; the exit code names the errno (configfsctl(1)).
 */
#include "cmds.h"
#include "ctl.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_SERVER "http://127.0.0.1:8080"
/* The deepest ?depth= the server renders (api/openapi.yaml, Depth). */
#define MAX_DEPTH 64

/* ---- options ----------------------------------------------------------- */

enum {
    O_LONG = 1u << 0,
    O_RECURSIVE = 1u << 1,  /* ls -R */
    O_REMOVE_ALL = 1u << 2, /* rmdir -r */
    O_PARENTS = 1u << 3,
    O_SYMBOLIC = 1u << 4,
    O_BINARY = 1u << 5,
    O_DRY_RUN = 1u << 6,
    O_REPLACE = 1u << 7,
    O_IF_MATCH = 1u << 8,
    O_IF_REVISION = 1u << 9,
    O_LIMIT = 1u << 10,
    O_BEFORE = 1u << 11,
    O_SINCE = 1u << 12,
    O_COUNT = 1u << 13,
    O_ATTR = 1u << 14,
};

struct opts {
    unsigned given; /* O_* */
    bool help;
    const char *if_match;
    unsigned long long if_revision;
    unsigned long long limit;
    unsigned long long before;
    unsigned long long since;
    unsigned long long count;
    const char **attrs; /* NAME=VALUE, for mkdir */
    size_t n_attrs;
};

struct cmd {
    const char *name;
    int (*run)(struct ctl *c, const struct opts *o, int argc, char **argv);
    unsigned allowed; /* O_* */
    int min_args;
    int max_args;
    const char *synopsis;
    const char *help;
};

static const char *prog = "configfsctl";

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    (void)fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    (void)vfprintf(stderr, fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return CTL_EX_USAGE;
}

static bool parse_ull(const char *s, unsigned long long *ret)
{
    char *end;

    if (!s[0] || s[0] == '-' || s[0] == '+') {
        return false;
    }
    errno = 0;
    *ret = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0';
}

/* "42" -> "If-Match: \"42\""; an entity tag, a list or "*" as given. */
static char *if_match_header(const char *v)
{
    unsigned long long n;

    if (parse_ull(v, &n)) {
        return ctl_strdup_printf("If-Match: \"%llu\"", n);
    }
    return ctl_strdup_printf("If-Match: %s", v);
}

/* ---- small helpers ----------------------------------------------------- */

/* An answer as the server sent it (--json): through ctl_put_text(). */
static void print_body(const struct ctl_resp *r)
{
    ctl_put_text(stdout, r->body, r->len);
}

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static bool jbool(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

static void put_name(const char *s)
{
    if (s) { /* checked before (node_ok() ...): never NULL but in a bug */
        ctl_put_escaped(stdout, s, strlen(s));
    }
}

/* A value of the API (text, or base64 with "encoding"), for a line:
 * escaped as ctl_put_escaped() does. */
static void put_value(const json_t *o, const char *key, const char *enc_key)
{
    const json_t *v = json_object_get(o, key);
    const char *enc = jstr(o, enc_key);

    char *bytes = NULL;
    size_t len = 0;

    if (enc && json_string_value(v) &&
        ctl_base64_decode(json_string_value(v), &bytes, &len) == 0) {
        ctl_put_escaped(stdout, bytes, len);
        free(bytes);
    } else if (enc) {
        (void)printf("%s:%s", ctl_esc(enc), ctl_esc(json_string_value(v)));
    } else {
        ctl_put_escaped(stdout, json_string_value(v), json_string_length(v));
    }
}

/* " = VALUE", or " =" for an empty value (no trailing blank). */
static void put_assign(const json_t *o, const char *key, const char *enc_key)
{
    const char *v = jstr(o, key);

    (void)fputs(v && v[0] ? " = " : " =", stdout);
    put_value(o, key, enc_key);
}

/* ---- answers: what a command reads of one, checked before it is used --- */

/*
 * A server's answer is data from outside: each member a command reads is
 * checked for its presence and type before it is used, so a missing or
 * mistyped one is "malformed answer from SERVER: WHERE: ..." and exit 1
 * (ctl_malformed()), never a NULL followed. @why_bad says why the last check
 * failed.
 */
static char why_bad[256];

/* @o's member @key: present (when @needed) and of @type (JSON_TRUE: a
 * boolean). */
static bool member(const json_t *o,
                   const char *where,
                   const char *key,
                   json_type type,
                   bool needed)
{
    static const char *const names[] = {
        [JSON_OBJECT] = "an object",
        [JSON_ARRAY] = "an array",
        [JSON_STRING] = "a string",
        [JSON_INTEGER] = "an integer",
        [JSON_REAL] = "a number",
        [JSON_TRUE] = "a boolean",
        [JSON_FALSE] = "a boolean",
        [JSON_NULL] = "null",
    };
    const json_t *v = json_object_get(o, key);

    if ((!v && !needed) || (v && json_typeof(v) == type) ||
        (v && type == JSON_TRUE && json_is_boolean(v))) {
        return true;
    }
    (void)snprintf(why_bad,
                   sizeof(why_bad),
                   "%s: \"%s\" is %s%s",
                   where,
                   key,
                   v ? "not " : "missing",
                   v ? names[type] : "");
    return false;
}

/* Each element of @o's array @key (if any) an object that @ok accepts. */
static bool each(const json_t *o,
                 const char *where,
                 const char *key,
                 bool (*ok)(const json_t *e, const char *where))
{
    const json_t *e;
    size_t i;
    char at[128];

    if (!member(o, where, key, JSON_ARRAY, false)) {
        return false;
    }
    json_array_foreach(json_object_get(o, key), i, e) {
        (void)snprintf(at, sizeof(at), "%s[%zu]", key, i);
        if (!json_is_object(e)) {
            (void)snprintf(why_bad, sizeof(why_bad), "%s: not an object", at);
            return false;
        }
        if (!ok(e, at)) {
            return false;
        }
    }
    return true;
}

static bool attr_ok(const json_t *e, const char *where)
{
    return member(e, where, "name", JSON_STRING, true) &&
           member(e, where, "mode", JSON_STRING, false) &&
           member(e, where, "value", JSON_STRING, false) &&
           member(e, where, "encoding", JSON_STRING, false) &&
           member(e, where, "error", JSON_STRING, false);
}

static bool link_ok(const json_t *e, const char *where)
{
    return member(e, where, "name", JSON_STRING, true) &&
           member(e, where, "target", JSON_STRING, true);
}

static bool node_ok(const json_t *n, const char *where);

/* Each child's path is its parent's and its name: a server cannot send
 * the client round in circles (a child that is its parent again) or out
 * of the tree it asked for; and no path is longer than a config path can
 * be (CFS_PATH_MAX, 4096). */
static bool children_below(const json_t *n, const char *where)
{
    const char *path = json_string_value(json_object_get(n, "path"));
    const json_t *e;
    size_t i;

    if (strlen(path) >= 4096) {
        (void)snprintf(why_bad,
                       sizeof(why_bad),
                       "%s: a path longer than a config path can be",
                       where);
        return false;
    }
    json_array_foreach(json_object_get(n, "children"), i, e) {
        const char *cp = json_string_value(json_object_get(e, "path"));
        const char *name = json_string_value(json_object_get(e, "name"));
        size_t pl = strcmp(path, "/") == 0 ? 0 : strlen(path);

        if (strncmp(cp, path, pl) != 0 || cp[pl] != '/' ||
            strcmp(cp + pl + 1, name) != 0) {
            (void)snprintf(why_bad,
                           sizeof(why_bad),
                           "%s: children[%zu]: its path is not the node's "
                           "path and its name",
                           where,
                           i);
            return false;
        }
    }
    return true;
}

static bool child_ok(const json_t *e, const char *where)
{
    return member(e, where, "name", JSON_STRING, true) &&
           member(e, where, "kind", JSON_STRING, true) &&
           member(e, where, "path", JSON_STRING, true) &&
           (!json_object_get(e, "attributes") || node_ok(e, where));
}

/* A node of GET /api/v1/config/PATH (docs/API.md), its children too. */
static bool node_ok(const json_t *n, const char *where)
{
    const char *kind = json_string_value(json_object_get(n, "kind"));

    if (!json_is_object(n)) {
        (void)snprintf(why_bad, sizeof(why_bad), "%s: not an object", where);
        return false;
    }
    if (!member(n, where, "kind", JSON_STRING, false) ||
        !member(n, where, "path", JSON_STRING, true) ||
        (!json_is_null(json_object_get(n, "next_after")) &&
         !member(n, where, "next_after", JSON_STRING, false)) ||
        !each(n, where, "attributes", attr_ok) ||
        !each(n, where, "children", child_ok) ||
        !each(n, where, "links", link_ok)) {
        return false;
    }
    if (kind && strcmp(kind, "attribute") == 0) {
        return attr_ok(n, where);
    }
    if (kind && strcmp(kind, "link") == 0) {
        return link_ok(n, where);
    }
    return children_below(n, where);
}

/* One operation of an import's plan. */
static bool op_ok(const json_t *e, const char *where)
{
    const char *op = json_string_value(json_object_get(e, "op"));
    bool rename = op && strcmp(op, "rename") == 0;

    return member(e, where, "op", JSON_STRING, true) &&
           member(e, where, "from", JSON_STRING, rename) &&
           member(e, where, "to", JSON_STRING, rename) &&
           member(e, where, "path", JSON_STRING, !rename) &&
           member(e, where, "target", JSON_STRING, false) &&
           member(e, where, "value", JSON_STRING, false) &&
           member(e, where, "encoding", JSON_STRING, false);
}

/* A change record: a history entry or an event. */
static bool change_ok(const json_t *e, const char *where)
{
    const char *op = json_string_value(json_object_get(e, "op"));
    bool rename = op && strcmp(op, "rename") == 0;
    const json_t *who = json_object_get(e, "principal");

    if (who && !json_is_null(who) &&
        !member(e, where, "principal", JSON_STRING, false)) {
        return false;
    }
    return member(e, where, "op", JSON_STRING, true) &&
           member(e, where, "revision", JSON_INTEGER, true) &&
           member(e, where, "time", JSON_STRING, false) &&
           member(e, where, "to", JSON_STRING, false) &&
           member(e, where, "from", JSON_STRING, false) &&
           member(e, where, "path", JSON_STRING, !rename) &&
           (!rename || json_object_get(e, "path") ||
            member(e, where, "from", JSON_STRING, true)) &&
           member(e, where, "target", JSON_STRING, false) &&
           member(e, where, "value", JSON_STRING, false) &&
           member(e, where, "encoding", JSON_STRING, false) &&
           member(e, where, "old", JSON_STRING, false) &&
           member(e, where, "old_encoding", JSON_STRING, false);
}

/* The server answers at most 10000 children at once: a node beyond that
 * (or one a deep listing had no room for) comes as its first page by
 * name, next_after set. Read the rest of @node's children (@base: its
 * URL) and append them, so @node is whole; @r's body then becomes the
 * whole node too. @return 0 or an exit code (printed).
 *
 * The pages are bounded, whatever the server sends: each next_after must
 * sort after the cursor it answers (names come sorted by strcmp), or the
 * server is repeating itself and is refused; every page's bytes count
 * against --max-answer with the rest of the command's answers (ctl.c),
 * and so does the memory the growing node holds (ctl_budget_*). */
static int read_on(struct ctl *c,
                   const char *path,
                   const char *base,
                   int depth,
                   bool values,
                   json_t *node,
                   struct ctl_resp *r)
{
    static const char *const accept[] = {"Accept: application/json", NULL};
    bool more = false;

    while (json_is_string(json_object_get(node, "next_after"))) {
        char *cur = ctl_query_escape(jstr(node, "next_after"));
        char *url = ctl_strdup_printf(
            "%s?depth=%d&values=%d&after=%s", base, depth, values ? 1 : 0, cur);
        struct ctl_resp pr;
        json_t *page = NULL;
        int ex = ctl_request(c, "GET", url, NULL, NULL, 0, accept, &pr);

        free(cur);
        free(url);
        if (ex == 0 && !ctl_ok(&pr)) {
            ex = ctl_fail(c, path, &pr);
        } else if (ex == 0) {
            page = ctl_resp_json(&pr);
            ex = !page                      ? CTL_EX_FAIL
                 : !node_ok(page, "a page") ? ctl_malformed(c, "%s", why_bad)
                                            : 0;
        }
        ctl_resp_done(&pr);
        if (ex) {
            return ex;
        }
        if (json_is_string(json_object_get(page, "next_after")) &&
            strcmp(jstr(page, "next_after"), jstr(node, "next_after")) <= 0) {
            ex = ctl_malformed(c,
                               "%s: the server repeats a cursor: next_after "
                               "\"%s\" does not advance past \"%s\"",
                               path,
                               jstr(page, "next_after"),
                               jstr(node, "next_after"));
        } else if (json_array_extend(json_object_get(node, "children"),
                                     json_object_get(page, "children")) ||
                   json_object_set(node,
                                   "next_after",
                                   json_object_get(page, "next_after"))) {
            ex = CTL_EX_FAIL; /* out of the bound: ctl_budget_end() says */
        }
        json_decref(page);
        if (ex) {
            return ex;
        }
        more = true;
    }
    if (more) {
        char *text;

        json_object_del(node, "next_after");
        json_object_del(node, "prev_before");
        json_object_del(node, "children_offset");
        json_object_del(node, "children_total");
        text = json_dumps(node, JSON_COMPACT);
        if (!text) {
            return CTL_EX_FAIL;
        }
        free(r->body);
        r->body = text;
        r->len = strlen(text);
        r->cap = r->len + 1;
    }
    return 0;
}

/* GET the node at @path as JSON (@depth levels of children, values or
 * not), whole (read_on). @return 0 with *ret a new reference, or an exit
 * code (printed). */
static int get_node(struct ctl *c,
                    const char *path,
                    int depth,
                    bool values,
                    struct ctl_resp *r,
                    json_t **ret)
{
    static const char *const accept[] = {"Accept: application/json", NULL};
    char *base = ctl_config_url(path);
    char *url =
        ctl_strdup_printf("%s?depth=%d&values=%d", base, depth, values ? 1 : 0);
    int ex = ctl_request(c, "GET", url, NULL, NULL, 0, accept, r);

    free(url);
    if (ex) {
        free(base);
        return ex;
    }
    if (!ctl_ok(r)) {
        free(base);
        return ctl_fail(c, path, r);
    }
    *ret = ctl_resp_json(r);
    ex = *ret ? read_on(c, path, base, depth, values, *ret, r) : CTL_EX_FAIL;
    free(base);
    if (ex == 0 && !node_ok(*ret, "the node")) {
        ex = ctl_malformed(c, "%s", why_bad);
    } else if (ex == 0 && strcmp(jstr(*ret, "path"), path) != 0) {
        ex = ctl_malformed(
            c, "asked for %s, answered with %s", path, jstr(*ret, "path"));
    }
    if (ex) { /* nothing for the caller to free */
        json_decref(*ret);
        *ret = NULL;
    }
    return ex;
}

/* A whole node for a child that came as a summary (beyond ?depth=) or
 * as a page of its children (past the server's cap). */
static int full_child(struct ctl *c, json_t *child, bool values, json_t **ret)
{
    struct ctl_resp r;
    int ex;

    if (json_object_get(child, "attributes") &&
        !json_is_string(json_object_get(child, "next_after"))) {
        *ret = json_incref(child); /* whole */
        return 0;
    }
    ex = get_node(c, jstr(child, "path"), MAX_DEPTH, values, &r, ret);
    ctl_resp_done(&r);
    return ex;
}

/* The rwx string of an octal mode ("0644"), with its type letter. */
static void mode_string(char type, const char *mode, char out[11])
{
    unsigned long m = mode ? strtoul(mode, NULL, 8) : 0;
    static const char rwx[] = "rwxrwxrwx";

    out[0] = type;
    for (int i = 0; i < 9; i++) {
        out[i + 1] = '-';
        if (m & (0400u >> i)) {
            out[i + 1] = rwx[i];
        }
    }
    out[10] = '\0';
}

/* ---- ls ---------------------------------------------------------------- */

/* "  [SUMMARY]" of the entry @e when @sums has one for its name. */
static void put_summary(const json_t *e, const json_t *sums)
{
    const json_t *s = json_object_get(sums, jstr(e, "name"));

    if (json_is_string(s)) {
        (void)fputs("  [", stdout);
        ctl_put_escaped(stdout, json_string_value(s), json_string_length(s));
        (void)putchar(']');
    }
}

/* One entry; @sums: the children's summaries by name, or NULL. */
static void
ls_line(const json_t *e, const char *kind, bool long_fmt, const json_t *sums)
{
    char mode[11];
    const json_t *rev = json_object_get(e, "revision");
    char revs[24] = "-";

    if (!long_fmt) {
        put_name(jstr(e, "name"));
        put_summary(e, sums);
        (void)putchar('\n');
        return;
    }
    if (strcmp(kind, "link") == 0) {
        mode_string('l', "0777", mode);
    } else if (strcmp(kind, "attribute") == 0) {
        mode_string('-', jstr(e, "mode"), mode);
        if (jbool(e, "binary")) {
            kind = "binary";
        }
    } else {
        mode_string('d', "0755", mode);
    }
    if (json_is_integer(rev)) {
        (void)snprintf(
            revs, sizeof(revs), "%lld", (long long)json_integer_value(rev));
    }
    (void)printf("%s  %-9s %6s  ", mode, ctl_esc(kind), revs);
    put_name(jstr(e, "name"));
    if (strcmp(kind, "link") == 0) {
        (void)fputs(" -> ", stdout);
        put_name(jstr(e, "target"));
    }
    put_summary(e, sums);
    (void)putchar('\n');
}

static void ls_entries(const json_t *node, bool long_fmt, const json_t *sums)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(node, "attributes"), i, e) {
        ls_line(e, "attribute", long_fmt, NULL);
    }
    json_array_foreach(json_object_get(node, "children"), i, e) {
        ls_line(e, jstr(e, "kind"), long_fmt, sums);
    }
    json_array_foreach(json_object_get(node, "links"), i, e) {
        ls_line(e, "link", long_fmt, NULL);
    }
}

static int ls_recursive(struct ctl *c, json_t *node, bool long_fmt, bool first)
{
    size_t i;
    json_t *e;

    if (!first) {
        (void)putchar('\n');
    }
    put_name(jstr(node, "path"));
    (void)fputs(":\n", stdout);
    ls_entries(node, long_fmt, NULL);
    json_array_foreach(json_object_get(node, "children"), i, e) {
        json_t *child = NULL;
        int ex = full_child(c, e, false, &child);

        if (ex) {
            return ex;
        }
        ex = ls_recursive(c, child, long_fmt, false);
        json_decref(child);
        if (ex) {
            return ex;
        }
    }
    return 0;
}

static int cmd_ls(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    bool long_fmt = o->given & O_LONG;
    bool rec = o->given & O_RECURSIVE;
    char *path = ctl_abs_path(argc ? argv[0] : "/");
    struct ctl_resp r;
    json_t *node = NULL;
    const char *kind;
    int ex;

    ex = get_node(c,
                  path,
                  rec        ? MAX_DEPTH
                  : long_fmt ? 1
                             : 0,
                  false,
                  &r,
                  &node);
    if (ex) {
        goto out;
    }
    if (c->json) {
        print_body(&r);
        goto out;
    }
    kind = jstr(node, "kind");
    if (kind && (strcmp(kind, "attribute") == 0 || strcmp(kind, "link") == 0)) {
        ls_line(node, kind, long_fmt, NULL);
    } else if (rec) {
        ex = ls_recursive(c, node, long_fmt, true);
    } else {
        /* in the shell, each child's summary (summary.c) */
        json_t *sums = json_array_size(json_object_get(node, "children"))
                           ? ctl_summaries(c, path)
                           : NULL;

        ls_entries(node, long_fmt, sums);
        json_decref(sums);
    }
out:
    json_decref(node);
    ctl_resp_done(&r);
    free(path);
    return ex;
}

/* ---- tree -------------------------------------------------------------- */

static int tree_node(struct ctl *c, const json_t *node, const char *prefix)
{
    size_t na = json_array_size(json_object_get(node, "attributes"));
    size_t nc = json_array_size(json_object_get(node, "children"));
    size_t nl = json_array_size(json_object_get(node, "links"));
    size_t total = na + nc + nl;

    for (size_t k = 0; k < total; k++) {
        bool last = k + 1 == total;
        const char *branch = last ? "`-- " : "|-- ";
        json_t *e;

        (void)printf("%s%s", prefix, branch);
        if (k < na) {
            e = json_array_get(json_object_get(node, "attributes"), k);
            put_name(jstr(e, "name"));
            if (json_object_get(e, "value")) {
                put_assign(e, "value", "encoding");
            } else if (jstr(e, "error")) {
                (void)printf(" (error: %s)", ctl_esc(jstr(e, "error")));
            }
            (void)putchar('\n');
        } else if (k < na + nc) {
            json_t *child = NULL;
            char *sub;
            int ex;

            e = json_array_get(json_object_get(node, "children"), k - na);
            put_name(jstr(e, "name"));
            (void)fputs("/\n", stdout);
            ex = full_child(c, e, true, &child);
            if (ex) {
                return ex;
            }
            sub = ctl_strdup_printf("%s%s", prefix, last ? "    " : "|   ");
            ex = tree_node(c, child, sub);
            free(sub);
            json_decref(child);
            if (ex) {
                return ex;
            }
        } else {
            e = json_array_get(json_object_get(node, "links"), k - na - nc);
            put_name(jstr(e, "name"));
            (void)fputs(" -> ", stdout);
            put_name(jstr(e, "target"));
            (void)putchar('\n');
        }
    }
    return 0;
}

static int cmd_tree(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    char *path = ctl_abs_path(argc ? argv[0] : "/");
    struct ctl_resp r;
    json_t *node = NULL;
    int ex;

    (void)o;
    ex = get_node(c, path, MAX_DEPTH, true, &r, &node);
    if (ex == 0) {
        if (c->json) {
            print_body(&r);
        } else {
            put_name(path);
            (void)putchar('\n');
            ex = tree_node(c, node, "");
        }
    }
    json_decref(node);
    ctl_resp_done(&r);
    free(path);
    return ex;
}

/* ---- cat, write -------------------------------------------------------- */

static int cmd_cat(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    static const char *const json_accept[] = {"Accept: application/json", NULL};
    char *path = ctl_abs_path(argv[0]);
    char *url = ctl_config_url(path);
    struct ctl_resp r;
    int ex;

    (void)o;
    (void)argc;
    ex = ctl_request(
        c, "GET", url, NULL, NULL, 0, c->json ? json_accept : NULL, &r);
    if (ex) {
        goto out;
    }
    if (!ctl_ok(&r)) {
        ex = ctl_fail(c, path, &r);
    } else if (c->json) {
        print_body(&r);
    } else if (r.ctype && strncmp(r.ctype, "application/json", 16) == 0) {
        /* a group, item or link: as cat(1) says of a directory */
        (void)fprintf(stderr, "%s: cat %s: Is a directory\n", prog, path);
        ex = CTL_EX_FAIL;
    } else if (r.len && isatty(STDOUT_FILENO)) {
        /* the bytes, but none a terminal would act on */
        ctl_term_write(stdout, r.body, r.len, true);
    } else if (r.len && fwrite(r.body, 1, r.len, stdout) != r.len) {
        ex = CTL_EX_FAIL;
    }
out:
    ctl_resp_done(&r);
    free(url);
    free(path);
    return ex;
}

static int cmd_write(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    bool binary = o->given & O_BINARY;
    const char *headers[2] = {NULL, NULL};
    char *path = ctl_abs_path(argv[0]);
    char *url = ctl_config_url(path);
    char *value = NULL;
    size_t len = 0;
    struct ctl_resp r = {0};
    int ex;

    if (argc > 1) {
        value = ctl_xstrdup(argv[1]);
        len = strlen(value);
    } else {
        int e = ctl_read_file("-", &value, &len);

        if (e < 0) {
            (void)fprintf(stderr, "%s: stdin: %s\n", prog, strerror(-e));
            ex = ctl_exit_errno(-e);
            goto out;
        }
    }
    if (!binary && memchr(value, '\0', len)) {
        (void)fprintf(stderr,
                      "%s: write %s: the value holds a NUL byte; "
                      "give --binary to store raw bytes\n",
                      prog,
                      path);
        ex = CTL_EX_INVAL;
        goto out;
    }
    if (o->if_match) {
        headers[0] = if_match_header(o->if_match);
    }
    ex = ctl_request(c,
                     "PUT",
                     url,
                     binary ? "application/octet-stream"
                            : "text/plain; charset=utf-8",
                     value,
                     len,
                     headers,
                     &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, path, &r);
        } else if (c->json) {
            print_body(&r);
        }
    }
out:
    free((char *)headers[0]);
    ctl_resp_done(&r);
    free(value);
    free(url);
    free(path);
    return ex;
}

/* ---- mkdir ------------------------------------------------------------- */

/* POST {"name": ..., "attributes": ...} to the parent of @path. */
static int mkdir_one(struct ctl *c,
                     const struct opts *o,
                     const char *path,
                     bool with_attrs,
                     bool print)
{
    char *parent = ctl_dirname(path);
    char *url = ctl_config_url(parent);
    json_t *body = json_pack("{s:s}", "name", ctl_basename(path));
    const char *headers[2] = {NULL, NULL};
    struct ctl_resp r = {0};
    char *text = NULL;
    int ex = 0;

    if (with_attrs && o->n_attrs) {
        json_t *attrs = json_object();

        for (size_t i = 0; i < o->n_attrs; i++) {
            const char *eq = strchr(o->attrs[i], '=');
            char *name = strndup(o->attrs[i], (size_t)(eq - o->attrs[i]));
            json_t *v = json_string(eq + 1);

            if (!v || json_object_set_new(attrs, name, v) < 0) {
                free(name);
                json_decref(attrs);
                (void)fprintf(stderr,
                              "%s: mkdir %s: -a %s: not UTF-8 (store such a "
                              "value with write)\n",
                              prog,
                              path,
                              o->attrs[i]);
                ex = CTL_EX_INVAL;
                goto out;
            }
            free(name);
        }
        json_object_set_new(body, "attributes", attrs);
    }
    text = json_dumps(body, JSON_COMPACT);
    if (!text) {
        (void)fprintf(
            stderr, "%s: mkdir %s: a name or value is not UTF-8\n", prog, path);
        ex = CTL_EX_INVAL;
        goto out;
    }
    if (o->if_match && with_attrs) {
        headers[0] = if_match_header(o->if_match);
    }
    ex = ctl_request(
        c, "POST", url, "application/json", text, strlen(text), headers, &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, path, &r);
        } else if (c->json && print) {
            print_body(&r);
        }
    }
out:
    free((char *)headers[0]);
    ctl_resp_done(&r);
    free(text);
    json_decref(body);
    free(url);
    free(parent);
    return ex;
}

static int cmd_mkdir(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    char *path = ctl_abs_path(argv[0]);
    int ex = 0;

    (void)argc;
    for (size_t i = 0; i < o->n_attrs; i++) {
        if (!strchr(o->attrs[i], '=') || o->attrs[i][0] == '=') {
            ex = usage_error("--attr wants NAME=VALUE, not '%s'", o->attrs[i]);
            goto out;
        }
    }
    if (strcmp(path, "/") == 0) {
        (void)fprintf(stderr, "%s: mkdir /: File exists\n", prog);
        ex = CTL_EX_EXIST;
        goto out;
    }
    if (o->given & O_PARENTS) {
        /* Each missing folder from the top; the existing ones are kept. */
        for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
            bool last = s == NULL;
            struct ctl_resp r;
            json_t *node = NULL;
            char *base;
            char *url;

            if (s) {
                *s = '\0';
            }
            base = ctl_config_url(path);
            url = ctl_strdup_printf("%s?values=0", base);
            ex = ctl_request(c, "GET", url, NULL, NULL, 0, NULL, &r);
            free(url);
            free(base);
            if (ex == 0 && r.status == 404) {
                ex = mkdir_one(c, o, path, last, last);
            } else if (ex == 0 && !ctl_ok(&r)) {
                ex = ctl_fail(c, path, &r);
            } else if (ex == 0 && last && c->json) {
                ctl_resp_done(&r);
                ex = get_node(c, path, 0, true, &r, &node);
                if (ex == 0) {
                    print_body(&r);
                }
            }
            json_decref(node);
            ctl_resp_done(&r);
            if (s) {
                *s = '/';
            }
            if (ex || last) {
                break;
            }
        }
    } else {
        ex = mkdir_one(c, o, path, true, true);
    }
out:
    free(path);
    return ex;
}

/* ---- batches: rm, rmdir, batch ----------------------------------------- */

/* POST a batch; @return 0 or the exit code (printed). The plain output is
 * the revision; --json prints the BatchResult. */
static int post_batch(struct ctl *c, json_t *doc, const char *what, bool quiet)
{
    size_t held = ctl_budget_hold(); /* a request, not an answer */
    char *text = json_dumps(doc, JSON_COMPACT);
    struct ctl_resp r = {0};
    json_t *res = NULL;
    int ex;

    ctl_budget_release(held);
    if (!text) {
        (void)fprintf(stderr, "%s: %s: a path is not UTF-8\n", prog, what);
        return CTL_EX_INVAL;
    }
    ex = ctl_request(c,
                     "POST",
                     "/api/v1/batch",
                     "application/json",
                     text,
                     strlen(text),
                     NULL,
                     &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, what, &r);
        } else if (c->json) {
            print_body(&r);
        } else if (!quiet && (res = ctl_resp_json(&r))) {
            const json_t *ok = json_object_get(res, "succeeded");

            (void)printf(
                "revision %lld%s\n",
                (long long)json_integer_value(json_object_get(res, "revision")),
                !json_is_boolean(ok) ? ""
                : json_is_true(ok)   ? " (the compares held: ops ran)"
                                     : " (a compare did not hold: else ran)");
        }
    }
    json_decref(res);
    ctl_resp_done(&r);
    free(text);
    return ex;
}

static json_t *op_path(const char *op, const char *path)
{
    return json_pack("{s:s,s:s}", "op", op, "path", path);
}

static int
one_op(struct ctl *c, const struct opts *o, const char *op, const char *arg)
{
    char *path = ctl_abs_path(arg);
    json_t *doc = json_pack("{s:[o]}", "ops", op_path(op, path));
    char *what = ctl_strdup_printf("%s %s", op, path);
    int ex;

    if (o->given & O_IF_REVISION) {
        json_object_set_new(
            doc, "if_revision", json_integer((json_int_t)o->if_revision));
    }
    ex = post_batch(c, doc, what, true);
    free(what);
    json_decref(doc);
    free(path);
    return ex;
}

static int cmd_rm(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    (void)argc;
    return one_op(c, o, "unlink", argv[0]);
}

/* The unlinks (into @unlinks) and rmdirs, children first (into @rmdirs),
 * that remove @node's subtree; a committed item is uncommitted first, as
 * configfs refuses rmdir in live/ (docs/configfs-rules.md rule C6).
 * Default groups go with their parents, except @top itself: rmdir -r of
 * a default group, a subsystem or the root ends with its rmdir, which
 * configfs refuses, so nothing is removed. @parent_live: the parent is the
 * live/ group of a committable group. */
static int plan_rmdir(struct ctl *c,
                      const char *top,
                      json_t *node,
                      bool parent_live,
                      json_t *unlinks,
                      json_t *rmdirs)
{
    const char *path = jstr(node, "path");
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(node, "links"), i, e) {
        char *lp = ctl_strdup_printf("%s/%s", path, jstr(e, "name"));

        json_array_append_new(unlinks, op_path("unlink", lp));
        free(lp);
    }
    json_array_foreach(json_object_get(node, "children"), i, e) {
        json_t *child = NULL;
        int ex = full_child(c, e, false, &child);

        if (ex == 0) {
            ex = plan_rmdir(c,
                            top,
                            child,
                            jbool(node, "default_group") && jbool(node, "live"),
                            unlinks,
                            rmdirs);
        }
        json_decref(child);
        if (ex) {
            return ex;
        }
    }
    if (jbool(node, "default_group") && strcmp(path, top) != 0) {
        return 0; /* goes with its parent (docs/configfs-rules.md rule RM3) */
    }
    if (parent_live) {
        char *live = ctl_dirname(path);
        char *group = ctl_dirname(live);
        char *pending = ctl_strdup_printf("%s/pending/%s",
                                          strcmp(group, "/") ? group : "",
                                          ctl_basename(path));

        json_array_append_new(
            rmdirs,
            json_pack(
                "{s:s,s:s,s:s}", "op", "rename", "from", path, "to", pending));
        json_array_append_new(rmdirs, op_path("rmdir", pending));
        free(pending);
        free(group);
        free(live);
    } else {
        json_array_append_new(rmdirs, op_path("rmdir", path));
    }
    return 0;
}

/* The global revision (GET /api/v1). */
static int global_revision(struct ctl *c, unsigned long long *ret)
{
    struct ctl_resp r;
    json_t *info = NULL;
    int ex = ctl_request(c, "GET", "/api/v1", NULL, NULL, 0, NULL, &r);

    if (ex == 0 && !ctl_ok(&r)) {
        ex = ctl_fail(c, "GET /api/v1", &r);
    } else if (ex == 0) {
        info = ctl_resp_json(&r);
        if (!json_is_integer(json_object_get(info, "revision"))) {
            ex = CTL_EX_FAIL;
        } else {
            *ret = (unsigned long long)json_integer_value(
                json_object_get(info, "revision"));
        }
    }
    json_decref(info);
    ctl_resp_done(&r);
    return ex;
}

static int cmd_rmdir(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    char *path = NULL;
    struct ctl_resp r = {0};
    json_t *node = NULL;
    json_t *unlinks = NULL;
    json_t *rmdirs = NULL;
    json_t *doc = NULL;
    unsigned long long rev = o->if_revision;
    bool parent_live = false;
    char *what = NULL;
    int ex;

    (void)argc;
    if (!(o->given & O_REMOVE_ALL)) {
        return one_op(c, o, "rmdir", argv[0]);
    }
    /* The subtree is read, then removed as one batch that runs only if
     * nothing changed in between (if_revision = the revision read before
     * it): all of it goes, or nothing. */
    path = ctl_abs_path(argv[0]);
    what = ctl_strdup_printf("rmdir -r %s", path);
    if (!(o->given & O_IF_REVISION)) {
        ex = global_revision(c, &rev);
        if (ex) {
            goto out;
        }
    }
    ex = get_node(c, path, MAX_DEPTH, false, &r, &node);
    if (ex) {
        goto out;
    }
    if (jstr(node, "kind") && (strcmp(jstr(node, "kind"), "attribute") == 0 ||
                               strcmp(jstr(node, "kind"), "link") == 0)) {
        (void)fprintf(stderr, "%s: rmdir %s: Not a directory\n", prog, path);
        ex = CTL_EX_FAIL;
        goto out;
    }
    if (jbool(node, "live") && !jbool(node, "default_group") &&
        strcmp(path, "/") != 0) {
        char *parent = ctl_dirname(path);
        struct ctl_resp pr;
        json_t *pn = NULL;

        ex = get_node(c, parent, 0, false, &pr, &pn);
        parent_live =
            ex == 0 && jbool(pn, "default_group") && jbool(pn, "live");
        json_decref(pn);
        ctl_resp_done(&pr);
        free(parent);
        if (ex) {
            goto out;
        }
    }
    unlinks = json_array();
    rmdirs = json_array();
    ex = plan_rmdir(c, path, node, parent_live, unlinks, rmdirs);
    if (ex) {
        goto out;
    }
    json_array_extend(unlinks, rmdirs);
    doc =
        json_pack("{s:O,s:I}", "ops", unlinks, "if_revision", (json_int_t)rev);
    ex = post_batch(c, doc, what, true);
out:
    json_decref(doc);
    json_decref(rmdirs);
    json_decref(unlinks);
    json_decref(node);
    ctl_resp_done(&r);
    free(what);
    free(path);
    return ex;
}

static int cmd_batch(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    json_error_t jerr;
    json_t *doc = NULL;
    char *buf = NULL;
    size_t len = 0;
    size_t held;
    int e;
    int ex;

    (void)argc;
    e = ctl_read_file(argv[0], &buf, &len);
    if (e < 0) {
        (void)fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(-e));
        return ctl_exit_errno(-e);
    }
    held = ctl_budget_hold(); /* the user's file: --max-answer is not
                                 about it */
    doc = json_loadb(buf, len, 0, &jerr);
    ctl_budget_release(held);
    free(buf);
    if (!doc) {
        (void)fprintf(stderr,
                      "%s: %s:%d:%d: %s\n",
                      prog,
                      argv[0],
                      jerr.line,
                      jerr.column,
                      jerr.text);
        return CTL_EX_INVAL;
    }
    if (json_is_array(doc)) { /* a bare list of operations */
        json_t *w = json_pack("{s:o}", "ops", doc);

        doc = w;
    }
    if (o->given & O_IF_REVISION) {
        json_object_set_new(
            doc, "if_revision", json_integer((json_int_t)o->if_revision));
    }
    ex = post_batch(c, doc, "batch", false);
    json_decref(doc);
    return ex;
}

/* ---- ln -s, mv --------------------------------------------------------- */

static int cmd_ln(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    size_t n = strlen(argv[1]);
    char *link = ctl_abs_path(argv[1]);
    char *dir = NULL;
    char *target = NULL;
    char *url = NULL;
    char *text = NULL;
    json_t *body = NULL;
    const char *headers[2] = {NULL, NULL};
    struct ctl_resp r = {0};
    int ex = 0;

    (void)argc;
    if (!(o->given & O_SYMBOLIC)) {
        ex = usage_error("%s", "ln: configfs has symbolic links only: ln -s");
        goto out;
    }
    /* A relative target is relative to the link's folder, as ln -s does. */
    if (n && argv[1][n - 1] == '/') {
        dir = ctl_xstrdup(link);
    } else {
        dir = ctl_dirname(link);
    }
    target = ctl_resolve_path(dir, argv[0]);
    if (!target) {
        ex = ctl_above_root("ln -s", dir, argv[0]);
        goto out;
    }
    if (n && argv[1][n - 1] == '/') { /* ln -s T DIR/: the name of T */
        char *l = ctl_strdup_printf(
            "%s/%s", strcmp(link, "/") ? link : "", ctl_basename(target));

        free(link);
        link = l;
    }
    url = ctl_config_url(link);
    body = json_pack("{s:s}", "target", target);
    text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!text) {
        (void)fprintf(stderr, "%s: ln: the target is not UTF-8\n", prog);
        ex = CTL_EX_INVAL;
        goto out;
    }
    if (o->if_match) {
        headers[0] = if_match_header(o->if_match);
    }
    ex = ctl_request(
        c, "PUT", url, "application/json", text, strlen(text), headers, &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, link, &r);
        } else if (c->json) {
            print_body(&r);
        }
    }
out:
    free((char *)headers[0]);
    ctl_resp_done(&r);
    json_decref(body);
    free(text);
    free(url);
    free(target);
    free(dir);
    free(link);
    return ex;
}

static int cmd_mv(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    char *from = ctl_abs_path(argv[0]);
    char *to = ctl_abs_path(argv[1]);
    size_t n = strlen(argv[1]);
    const char *headers[2] = {NULL, NULL};
    struct ctl_resp r = {0};
    json_t *node = NULL;
    json_t *body = NULL;
    char *text = NULL;
    bool into = n && argv[1][n - 1] == '/';
    int ex = 0;

    (void)argc;
    if (!into) { /* mv pending/x live: into the folder, as mv(1) */
        char *url = ctl_config_url(to);
        static const char *const accept[] = {"Accept: application/json", NULL};

        ex = ctl_request(c, "GET", url, NULL, NULL, 0, accept, &r);
        free(url);
        if (ex) {
            goto out;
        }
        if (ctl_ok(&r) && (node = ctl_json_parse(r.body, r.len, NULL))) {
            const char *kind = jstr(node, "kind");

            into = kind && strcmp(kind, "attribute") != 0 &&
                   strcmp(kind, "link") != 0;
        }
        ctl_resp_done(&r);
    }
    if (into) {
        char *t = ctl_strdup_printf(
            "%s/%s", strcmp(to, "/") ? to : "", ctl_basename(from));

        free(to);
        to = t;
    }
    body = json_pack("{s:s,s:s}", "from", from, "to", to);
    text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!text) {
        (void)fprintf(stderr, "%s: mv: a path is not UTF-8\n", prog);
        ex = CTL_EX_INVAL;
        goto out;
    }
    if (o->if_match) {
        headers[0] = if_match_header(o->if_match);
    }
    ex = ctl_request(c,
                     "POST",
                     "/api/v1/rename",
                     "application/json",
                     text,
                     strlen(text),
                     headers,
                     &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, from, &r);
        } else if (c->json) {
            print_body(&r);
        }
    }
out:
    free((char *)headers[0]);
    ctl_resp_done(&r);
    json_decref(node);
    json_decref(body);
    free(text);
    free(to);
    free(from);
    return ex;
}

/* ---- export, import ---------------------------------------------------- */

struct export_out {
    long long bytes;
    char last;
    struct ctl_progress progress;
};

static bool export_chunk(const char *data, size_t len, void *ud)
{
    struct export_out *out = ud;

    if (len == 0) {
        return true;
    }
    if (isatty(STDOUT_FILENO)) {
        /* the document, but no byte a terminal would act on */
        ctl_term_write(stdout, data, len, true);
    } else if (fwrite(data, 1, len, stdout) != len) {
        return false; /* stdout closed: stop */
    }
    out->bytes += (long long)len;
    out->last = data[len - 1];
    ctl_progress_show(&out->progress, out->bytes);
    return true;
}

static int
cmd_export(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    static const volatile sig_atomic_t never = 0;
    struct export_out out = {0};
    char *url;
    struct ctl_resp r;
    int ex;

    (void)o;
    if (argc) {
        char *path = ctl_abs_path(argv[0]);
        char *q = ctl_query_escape(path);

        url = ctl_strdup_printf("/api/v1/export?path=%s", q);
        free(q);
        free(path);
    } else {
        url = ctl_xstrdup("/api/v1/export");
    }
    /* the document, always JSON, to stdout as it arrives */
    ctl_progress_init(&out.progress, "received", -1);
    ex = ctl_stream(c, url, NULL, export_chunk, &out, &never, &r);
    ctl_progress_end(&out.progress);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, "export", &r);
        } else if (out.bytes && out.last != '\n') {
            (void)putchar('\n');
        }
    }
    if (fflush(stdout) != 0 && ex == 0) {
        (void)fprintf(stderr, "%s: export: %s\n", prog, strerror(errno));
        ex = CTL_EX_FAIL;
    }
    ctl_resp_done(&r);
    free(url);
    return ex;
}

/* One operation of a plan or batch as a line. */
static void put_op(const json_t *op)
{
    const char *name = jstr(op, "op");

    (void)printf("%s ", ctl_esc(name));
    if (strcmp(name, "rename") == 0) {
        put_name(jstr(op, "from"));
        (void)fputs(" -> ", stdout);
        put_name(jstr(op, "to"));
    } else {
        put_name(jstr(op, "path"));
        if (jstr(op, "target")) {
            (void)fputs(" -> ", stdout);
            put_name(jstr(op, "target"));
        }
        if (json_is_string(json_object_get(op, "value"))) {
            put_assign(op, "value", "encoding");
        }
    }
    (void)putchar('\n');
}

/* The document to import, read as it is sent: @path ("-": stdin), and its
 * size when it is a regular file (else -1: sent chunked). */
static FILE *open_input(const char *path, long long *ret_len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    struct stat st;

    *ret_len = -1;
    if (f && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        off_t pos = ftello(f);

        *ret_len = (long long)(st.st_size - (pos > 0 ? pos : 0));
    }
    return f;
}

static int
cmd_import(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    const char *headers[2] = {NULL, NULL};
    struct ctl_resp r = {0};
    json_t *res = NULL;
    long long len = -1;
    FILE *in;
    char *url;
    int ex;

    (void)argc;
    in = open_input(argv[0], &len);
    if (!in) {
        int e = errno;

        (void)fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(e));
        return ctl_exit_errno(e);
    }
    url = ctl_strdup_printf("/api/v1/import?mode=%s%s",
                            (o->given & O_REPLACE) ? "replace" : "merge",
                            (o->given & O_DRY_RUN) ? "&dry_run=1" : "");
    if (o->if_match) {
        headers[0] = if_match_header(o->if_match);
    }
    ex = ctl_upload(c, "POST", url, "application/json", in, len, headers, &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, "import", &r);
        } else if (c->json) {
            print_body(&r);
        } else if (!(res = ctl_resp_json(&r))) {
            ex = CTL_EX_FAIL;
        } else if (!each(res, "the import", "ops", op_ok)) {
            ex = ctl_malformed(c, "%s", why_bad);
        } else {
            size_t i;
            json_t *op;
            json_t *ops = json_object_get(res, "ops");

            json_array_foreach(ops, i, op) {
                put_op(op);
            }
            if (jbool(res, "dry_run")) {
                (void)printf("dry run: %zu operations, nothing changed\n",
                             json_array_size(ops));
            } else if (jbool(res, "changed")) {
                (void)printf("revision %lld: %zu operations\n",
                             (long long)json_integer_value(
                                 json_object_get(res, "revision")),
                             json_array_size(ops));
            } else {
                (void)puts("no changes");
            }
        }
    }
    json_decref(res);
    free((char *)headers[0]);
    ctl_resp_done(&r);
    free(url);
    if (in != stdin) {
        (void)fclose(in);
    }
    return ex;
}

/* ---- history, watch ---------------------------------------------------- */

/* A change record (history entry or event) as one line after its
 * revision. */
static void put_change(const json_t *ch)
{
    const char *op = jstr(ch, "op");

    (void)printf("%s ", op ? ctl_esc(op) : "?");
    if (op && strcmp(op, "rename") == 0 && jstr(ch, "to")) {
        put_name(jstr(ch, "from") ? jstr(ch, "from") : jstr(ch, "path"));
        (void)fputs(" -> ", stdout);
        put_name(jstr(ch, "to"));
    } else {
        put_name(jstr(ch, "path") ? jstr(ch, "path") : "");
        if (jstr(ch, "target")) {
            (void)fputs(" -> ", stdout);
            put_name(jstr(ch, "target"));
        }
        if (json_is_string(json_object_get(ch, "value"))) {
            put_assign(ch, "value", "encoding");
        } else if (jbool(ch, "write_only")) {
            (void)fputs(" (write-only)", stdout);
        }
        if (json_is_string(json_object_get(ch, "old"))) {
            (void)fputs(" (was ", stdout);
            put_value(ch, "old", "old_encoding");
            (void)putchar(')');
        }
    }
    (void)putchar('\n');
}

/* @url with "@key=@value&" appended (@url is freed). */
static char *url_add(char *url, const char *key, const char *value)
{
    char *u = ctl_strdup_printf("%s%s=%s&", url, key, value);

    free(url);
    return u;
}

/* url_add() of a number. */
static char *url_add_number(char *url, const char *key, unsigned long long v)
{
    char n[24];

    (void)snprintf(n, sizeof(n), "%llu", v);
    return url_add(url, key, n);
}

/* @url with "path=P&" appended for the config path @arg (@url is freed). */
static char *url_add_path(char *url, const char *arg)
{
    char *path = ctl_abs_path(arg);
    char *q = ctl_query_escape(path);

    url = url_add(url, "path", q);
    free(q);
    free(path);
    return url;
}

static int
cmd_history(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    char *url = ctl_xstrdup("/api/v1/history?");
    struct ctl_resp r;
    json_t *page = NULL;
    int ex;

    if (argc) {
        url = url_add_path(url, argv[0]);
    }
    if (o->given & O_LIMIT) {
        url = url_add_number(url, "limit", o->limit);
    }
    if (o->given & O_BEFORE) {
        url = url_add_number(url, "before", o->before);
    }
    url[strlen(url) - 1] = '\0'; /* the last '&' or '?' */
    ex = ctl_request(c, "GET", url, NULL, NULL, 0, NULL, &r);
    if (ex == 0) {
        if (!ctl_ok(&r)) {
            ex = ctl_fail(c, "history", &r);
        } else if (c->json) {
            print_body(&r);
        } else if ((page = ctl_resp_json(&r)) &&
                   !each(page, "the history", "entries", change_ok)) {
            ex = ctl_malformed(c, "%s", why_bad);
        } else if (page) {
            size_t i;
            json_t *e;

            json_array_foreach(json_object_get(page, "entries"), i, e) {
                const char *who = jstr(e, "principal");

                (void)printf("%lld %s %s ",
                             (long long)json_integer_value(
                                 json_object_get(e, "revision")),
                             jstr(e, "time") ? ctl_esc(jstr(e, "time")) : "-",
                             who ? ctl_esc(who) : "-");
                put_change(e);
            }
        } else {
            ex = CTL_EX_FAIL;
        }
    }
    json_decref(page);
    ctl_resp_done(&r);
    free(url);
    return ex;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Server-Sent Events, parsed line by line. */
struct sse {
    const struct ctl *c;
    char *line;
    size_t len;
    size_t cap;
    char event[32];
    char *data;
    unsigned long long seen;
    unsigned long long count; /* 0: no end */
    char last_id[24];         /* the last revision received whole */
    bool failed;              /* a malformed event: said, the stream ends */
};

static bool sse_dispatch(struct sse *s)
{
    json_t *d;

    if (!s->data) {
        return true;
    }
    d = s->c->json ? NULL : ctl_json_parse(s->data, strlen(s->data), NULL);
    if (!s->c->json &&
        (!d || (strcmp(s->event, "reset") == 0
                    ? !member(d, "a reset", "revision", JSON_INTEGER, true) ||
                          !member(d, "a reset", "reason", JSON_STRING, false)
                    : !change_ok(d, "an event")))) {
        (void)ctl_malformed(s->c, "%s", d ? why_bad : "an event is not JSON");
        json_decref(d);
        s->failed = true;
        return false;
    }
    if (s->c->json) {
        ctl_put_text(stdout, s->data, strlen(s->data));
    } else {
        if (strcmp(s->event, "reset") == 0) {
            (void)printf(
                "reset: revision %lld (%s): reload the tree and "
                "watch --since %lld\n",
                (long long)json_integer_value(json_object_get(d, "revision")),
                jstr(d, "reason") ? ctl_esc(jstr(d, "reason")) : "?",
                (long long)json_integer_value(json_object_get(d, "revision")));
        } else {
            (void)printf(
                "%lld ",
                (long long)json_integer_value(json_object_get(d, "revision")));
            put_change(d);
        }
        json_decref(d);
    }
    (void)fflush(stdout);
    free(s->data);
    s->data = NULL;
    s->event[0] = '\0';
    s->seen++;
    return !(s->count && s->seen >= s->count);
}

static bool sse_line(struct sse *s, char *line)
{
    char *v;

    if (line[0] == '\0') {
        return sse_dispatch(s);
    }
    if (line[0] == ':') {
        return true; /* a heartbeat */
    }
    v = strchr(line, ':');
    if (!v) {
        return true;
    }
    *v++ = '\0';
    if (*v == ' ') {
        v++;
    }
    if (strcmp(line, "id") == 0) {
        unsigned long long rev;

        /* only a revision: it is printed and sent back (Last-Event-ID);
         * anything else leaves the last one */
        if (v[0] >= '0' && v[0] <= '9' && parse_ull(v, &rev)) {
            (void)snprintf(s->last_id, sizeof(s->last_id), "%s", v);
        }
    } else if (strcmp(line, "event") == 0) {
        (void)snprintf(s->event, sizeof(s->event), "%s", v);
    } else if (strcmp(line, "data") == 0) {
        if (s->data) {
            char *d = ctl_strdup_printf("%s\n%s", s->data, v);

            free(s->data);
            s->data = d;
        } else {
            s->data = ctl_xstrdup(v);
        }
    }
    return true;
}

static bool sse_feed(const char *data, size_t len, void *ud)
{
    struct sse *s = ud;

    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            bool go;

            if (s->len && s->line[s->len - 1] == '\r') {
                s->len--;
            }
            s->line[s->len] = '\0';
            s->len = 0;
            go = sse_line(s, s->line);
            if (!go) {
                return false;
            }
            continue;
        }
        if (s->c->max_answer && s->len + 2 > s->c->max_answer) {
            (void)ctl_malformed(s->c,
                                "an event line is larger than --max-answer "
                                "(%zu bytes)",
                                s->c->max_answer);
            s->failed = true;
            return false;
        }
        if (s->len + 2 > s->cap) {
            s->cap = s->cap ? s->cap * 2 : 256;
            s->line = ctl_xrealloc(s->line, s->cap);
        }
        s->line[s->len++] = data[i];
    }
    return true;
}

static int cmd_watch(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    /* a line buffer from the start: a stream may begin with an empty
     * line */
    struct sse s = {
        .c = c, .count = o->count, .line = ctl_xmalloc(256), .cap = 256};
    struct sigaction sa = {.sa_handler = on_signal};
    char *url = ctl_xstrdup("/api/v1/events?");
    struct ctl_resp r;
    char resume[48];
    const char *const resume_headers[] = {resume, NULL};
    unsigned long long since = o->since;
    unsigned long long seen = 0;
    unsigned attempt = 0;
    int ex;

    interrupted = 0; /* the shell runs watch again after a ^C */
    if (argc) {
        url = url_add_path(url, argv[0]);
    }
    /* A stream that breaks resumes after the last event it delivered
     * (Last-Event-ID), or after the revision it started from: without
     * --since, the revision of now. */
    if (!(o->given & O_SINCE) && (ex = global_revision(c, &since)) != 0) {
        free(url);
        return ex;
    }
    url = url_add_number(url, "since", since);
    url[strlen(url) - 1] = '\0';
    (void)snprintf(s.last_id, sizeof(s.last_id), "%llu", since);
    (void)sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    for (;;) {
        ex = ctl_stream(c,
                        url,
                        attempt ? resume_headers : NULL,
                        sse_feed,
                        &s,
                        &interrupted,
                        &r);
        if (s.failed) { /* a malformed event: said, not resumed */
            ex = CTL_EX_FAIL;
            break;
        }
        if (ex == 0 && !ctl_ok(&r)) {
            ex = ctl_fail(c, "watch", &r);
            break;
        }
        if (interrupted || (s.count && s.seen >= s.count)) {
            break;
        }
        /* the stream broke (a restart, a failover): resume, with the
         * server's replay or its "reset" event, until the back-off gives
         * up; progress restarts the back-off */
        if (s.seen != seen) {
            seen = s.seen;
            attempt = 0;
        }
        if (attempt == 0) {
            (void)fprintf(stderr,
                          "%s: the stream ended after revision %s; "
                          "resuming\n",
                          prog,
                          s.last_id);
        }
        if (!ctl_endpoints_backoff(c, attempt++, &interrupted)) {
            if (!interrupted) {
                (void)fprintf(stderr,
                              "%s: received up to revision %s; resume with "
                              "--since %s\n",
                              prog,
                              s.last_id,
                              s.last_id);
                ex = CTL_EX_UNREACHABLE;
            }
            break;
        }
        ctl_resp_done(&r);
        s.len = 0; /* a half-received event is received again */
        free(s.data);
        s.data = NULL;
        s.event[0] = '\0';
        (void)snprintf(resume, sizeof(resume), "Last-Event-ID: %s", s.last_id);
    }
    if (interrupted) {
        ex = 0;
    }
    ctl_resp_done(&r);
    free(s.line);
    free(s.data);
    free(url);
    return ex;
}

/* ---- health ------------------------------------------------------------ */

static int
cmd_health(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    struct ctl_resp h = {0};
    struct ctl_resp r = {0};
    json_t *ready = NULL;
    int ex;

    (void)o;
    (void)argc;
    (void)argv;
    ex = ctl_request(c, "GET", "/healthz", NULL, NULL, 0, NULL, &h);
    if (ex) {
        goto out;
    }
    if (!ctl_ok(&h)) {
        ex = ctl_fail(c, "healthz", &h);
        goto out;
    }
    ex = ctl_request(c, "GET", "/readyz", NULL, NULL, 0, NULL, &r);
    if (ex) {
        goto out;
    }
    if (c->json) {
        json_t *both = json_pack("{s:o*,s:o*}",
                                 "healthz",
                                 ctl_json_parse(h.body, h.len, NULL),
                                 "readyz",
                                 ctl_json_parse(r.body, r.len, NULL));
        char *text = json_dumps(both, JSON_COMPACT);

        ctl_put_text(stdout, text ? text : "{}", text ? strlen(text) : 2);
        free(text);
        json_decref(both);
        ex = ctl_ok(&r) ? 0 : CTL_EX_AGAIN;
    } else if (!ctl_ok(&r)) {
        json_t *p = ctl_json_parse(r.body, r.len, NULL);
        size_t i;
        json_t *e;

        (void)puts("alive, not ready");
        json_array_foreach(json_object_get(p, "problems"), i, e) {
            (void)printf("problem: %s ",
                         jstr(e, "step") ? ctl_esc(jstr(e, "step")) : "?");
            put_name(jstr(e, "path") ? jstr(e, "path") : "?");
            (void)printf(": %s\n",
                         jstr(e, "errno") ? ctl_esc(jstr(e, "errno")) : "?");
        }
        json_decref(p);
        (void)ctl_fail(c, "readyz", &r);
        ex = CTL_EX_AGAIN; /* 503, as ctl_fail() maps it */
    } else if ((ready = ctl_resp_json(&r))) {
        (void)printf(
            "alive, ready at revision %lld\n",
            (long long)json_integer_value(json_object_get(ready, "revision")));
    }
out:
    json_decref(ready);
    ctl_resp_done(&r);
    ctl_resp_done(&h);
    return ex;
}

/* ---- the command table, help, main ------------------------------------- */

static const struct cmd cmds[] = {
    {"ls",
     cmd_ls,
     O_LONG | O_RECURSIVE,
     0,
     1,
     "ls [-l] [-R] [PATH]",
     "List a folder: its attributes, children and links, one name a line\n"
     "(declaration, then creation order). -l adds the mode, kind and\n"
     "revision and each link's target; -R lists the subfolders too. On an\n"
     "attribute or link, that entry alone. --json: the node as the server\n"
     "sends it (GET /api/v1/config/PATH)."},
    {"tree",
     cmd_tree,
     0,
     0,
     1,
     "tree [PATH]",
     "Draw the tree under PATH (default /) with attribute values\n"
     "(escaped: \\n, \\xHH) and link targets. --json: the nested node."},
    {"cat",
     cmd_cat,
     0,
     1,
     1,
     "cat PATH",
     "Print an attribute's value: exactly the bytes show() returned,\n"
     "nothing added or stripped. --json: the attribute as JSON (value\n"
     "without its trailing newline, mode, revision)."},
    {"write",
     cmd_write,
     O_BINARY | O_IF_MATCH,
     1,
     2,
     "write [--binary] PATH [VALUE]",
     "Store VALUE (exactly these bytes, no newline added) or, without\n"
     "VALUE, all of stdin into an attribute: one store(). A value holding\n"
     "NUL bytes needs --binary (sent as application/octet-stream).\n"
     "--if-match REV: only if the attribute is still at revision REV."},
    {"mkdir",
     cmd_mkdir,
     O_PARENTS | O_ATTR | O_IF_MATCH,
     1,
     1,
     "mkdir [-p] [-a NAME=VALUE]... PATH",
     "Make a group or item (make_item/make_group of its parent). -p makes\n"
     "missing parents and accepts an existing PATH. -a stores attributes\n"
     "in the same change (all or nothing). --if-match REV: only if the\n"
     "parent is still at revision REV."},
    {"rmdir",
     cmd_rmdir,
     O_REMOVE_ALL | O_IF_REVISION,
     1,
     1,
     "rmdir [-r] PATH",
     "Remove a group or item. -r removes the whole subtree as one batch\n"
     "(one revision, all or nothing): the links inside it first, then the\n"
     "folders bottom-up, committed items uncommitted before; it runs only\n"
     "if nothing changed since the subtree was read. --if-revision REV:\n"
     "only if the global revision is still REV."},
    {"ln",
     cmd_ln,
     O_SYMBOLIC | O_IF_MATCH,
     2,
     2,
     "ln -s TARGET LINKPATH",
     "Make a link to the item TARGET (absolute, or relative to LINKPATH's\n"
     "folder as ln -s takes it). A LINKPATH ending in / gets TARGET's name.\n"
     "--if-match REV: only if the link's folder is still at revision REV."},
    {"rm",
     cmd_rm,
     O_IF_REVISION,
     1,
     1,
     "rm LINKPATH",
     "Remove a link (never a folder: that is rmdir).\n"
     "--if-revision REV: only if the global revision is still REV."},
    {"mv",
     cmd_mv,
     O_IF_MATCH,
     2,
     2,
     "mv FROM TO",
     "Commit (pending/X to live/) or uncommit (live/X to pending/) an item\n"
     "of a committable group. TO may be the folder. --if-match REV: only if\n"
     "FROM is still at revision REV."},
    {"batch",
     cmd_batch,
     O_IF_REVISION,
     1,
     1,
     "batch FILE",
     "Run a batch document ({\"ops\": [...]}, or just the list of ops) from\n"
     "FILE (- for stdin) as one transaction; prints the new revision.\n"
     "{\"op\": \"compare\", \"path\": P, \"value\": V} ops make it "
     "conditional\n"
     "on values, as etcd's txn: a compare that does not hold fails it (exit\n"
     "9, op_index on stderr, nothing changed), or with {\"else\": [...]}\n"
     "runs those ops instead (said after the revision).\n"
     "--if-revision REV: only if the global revision is still REV."},
    {"export",
     cmd_export,
     0,
     0,
     1,
     "export [PATH]",
     "Print the written state (of PATH's subtree) as an export document."},
    {"import",
     cmd_import,
     O_DRY_RUN | O_REPLACE | O_IF_MATCH,
     1,
     1,
     "import [--dry-run] [--replace] FILE",
     "Make the tree match an export document from FILE (- for stdin):\n"
     "prints the operations planned. --replace also removes what the\n"
     "document lacks; --dry-run changes nothing. --if-match REV: only if\n"
     "the global revision is still REV (an export's revision)."},
    {"history",
     cmd_history,
     O_LIMIT | O_BEFORE,
     0,
     1,
     "history [--limit N] [--before REV] [PATH]",
     "The journal, newest first: revision, time, principal, operation,\n"
     "path, value (and the old value). PATH keeps changes at or under it."},
    {"watch",
     cmd_watch,
     O_SINCE | O_COUNT,
     0,
     1,
     "watch [--since REV] [--count N] [PATH]",
     "Print changes (at or under PATH) as they happen, one a line, until\n"
     "interrupted (exit 0) or N changes were printed. --since REV first\n"
     "replays the changes after REV. --json: each event's JSON, a line."},
    {"health",
     ctl_cmd_health,
     0,
     0,
     0,
     "health",
     "Ask /healthz and /readyz. Exit 0 when ready, 9 when not ready.\n"
     "With several servers, each of them: the worst exit status."},
    {"cluster",
     ctl_cmd_cluster,
     0,
     0,
     0,
     "cluster",
     "One line per server of --server: its health, revision, how far it\n"
     "applied the shared log (applied, head), whether it is the writer and\n"
     "whether it is stale (behind the log or not following it). Exit 0\n"
     "when all are ready, 9 when one is not, 10 when one is unreachable.\n"
     "--json: an array of {id, endpoint, health, info, stale}."},
    {"shell",
     ctl_cmd_shell,
     0,
     0,
     0,
     "shell",
     "An interactive shell, as targetcli's: cd, pwd, ls, tree and every\n"
     "command above, with paths relative to the working directory (ln -s\n"
     "TARGET too, as configfs resolves it), ls showing each child's summary\n"
     "as its schema declares it, tab completion of commands and paths, and\n"
     "history (~/.configfsctl_history). Read from a pipe, it\n"
     "runs the lines given, one command each, and exits with the last\n"
     "one's status."},
    {"completion",
     ctl_cmd_completion,
     0,
     1,
     1,
     "completion bash|zsh",
     "Print the completion script for bash or zsh (installed with\n"
     "configfsctl; to try it: source <(configfsctl completion bash))."},
    {"__complete",
     ctl_cmd_complete_path,
     0,
     0,
     1,
     "__complete [PREFIX]",
     "The names under PREFIX's folder that start with its last segment,\n"
     "folders with a trailing /: what the completion scripts ask."},
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char exit_codes_text[] =
    "Exit status:\n"
    "  0  success              6  EACCES, EPERM (401, 403)\n"
    "  1  other failure        7  EBUSY\n"
    "  2  usage                8  ENOTEMPTY\n"
    "  3  ENOENT (404)         9  412 (ESTALE), 503 (EAGAIN ...): retry\n"
    "  4  EEXIST              10  server unreachable\n"
    "  5  EINVAL, ERANGE, EFBIG, E2BIG ... (400, 413, 415, 422)\n";

static void usage(FILE *out)
{
    (void)fprintf(out,
                  "Usage: %s [OPTION]... COMMAND [ARG]...\n"
                  "Drive a configfsd server over its HTTP API.\n\n"
                  "Commands:\n",
                  prog);
    for (size_t i = 0; i < N_CMDS; i++) {
        if (cmds[i].name[0] != '_') { /* __complete is the scripts' */
            (void)fprintf(out, "  %s\n", cmds[i].synopsis);
        }
    }
    (void)fprintf(
        out,
        "\nOptions (before or after the command):\n"
        "  --server URL[,URL]...  the server, or servers to fail over "
        "between\n"
        "                     (CONFIGFSCTL_SERVER; default " DEFAULT_SERVER
        ")\n"
        "  --token TOKEN      bearer token (CONFIGFSCTL_TOKEN)\n"
        "  --token-file FILE  read the token from FILE "
        "(CONFIGFSCTL_TOKEN_FILE)\n"
        "  --cacert FILE      CA certificate for https (CONFIGFSCTL_CACERT)\n"
        "  --timeout SECONDS  give up on a request after this long "
        "(default 60;\n"
        "                     0: never; watch never times out)\n"
        "  --max-answer BYTES refuse answers past this, in all: their bytes, "
        "and\n"
        "                     their memory parsed (default 256M; K, M, G; "
        "0: no cap)\n"
        "  --cwd DIR          the working directory: relative paths (ln -s "
        "TARGET\n"
        "                     too, as configfs takes it) are taken from DIR\n"
        "                     (CONFIGFSCTL_CWD; default: none, paths from /)\n"
        "  --json             print the server's JSON, for programs\n"
        "  -h, --help         this text; COMMAND --help: the command's\n"
        "  --version          print the version\n\n"
        "Paths are config paths (/subsystem/group/item/attribute); the "
        "leading\n"
        "/ may be left out. Errors print the server's problem (detail, "
        "status,\n"
        "errno, op_index) on stderr.\n\n%s"
        "\nSee configfsctl(1).\n",
        exit_codes_text);
}

static void cmd_usage(const struct cmd *cmd)
{
    (void)printf("Usage: %s [OPTION]... %s\n\n%s\n\n%s",
                 prog,
                 cmd->synopsis,
                 cmd->help,
                 exit_codes_text);
}

enum {
    OPT_SERVER = 256,
    OPT_TOKEN,
    OPT_TOKEN_FILE,
    OPT_CACERT,
    OPT_TIMEOUT,
    OPT_MAX_ANSWER,
    OPT_JSON,
    OPT_VERSION,
    OPT_BINARY,
    OPT_DRY_RUN,
    OPT_REPLACE,
    OPT_IF_MATCH,
    OPT_IF_REVISION,
    OPT_LIMIT,
    OPT_BEFORE,
    OPT_SINCE,
    OPT_COUNT,
    OPT_CWD,
};

static const struct option long_opts[] = {
    {"server", required_argument, NULL, OPT_SERVER},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-answer", required_argument, NULL, OPT_MAX_ANSWER},
    {"cwd", required_argument, NULL, OPT_CWD},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"long", no_argument, NULL, 'l'},
    {"recursive", no_argument, NULL, 'r'},
    {"parents", no_argument, NULL, 'p'},
    {"symbolic", no_argument, NULL, 's'},
    {"attr", required_argument, NULL, 'a'},
    {"binary", no_argument, NULL, OPT_BINARY},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"replace", no_argument, NULL, OPT_REPLACE},
    {"if-match", required_argument, NULL, OPT_IF_MATCH},
    {"if-revision", required_argument, NULL, OPT_IF_REVISION},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"before", required_argument, NULL, OPT_BEFORE},
    {"since", required_argument, NULL, OPT_SINCE},
    {"count", required_argument, NULL, OPT_COUNT},
    {NULL, 0, NULL, 0},
};

/* ---- for cmds.h ---------------------------------------------------------- */

const char *ctl_cmd_name(size_t i)
{
    return i < N_CMDS ? cmds[i].name : NULL;
}

unsigned ctl_cmd_allowed(size_t i)
{
    return cmds[i].allowed;
}

static const char *option_name(unsigned bit);

const char *ctl_option_name(unsigned bit)
{
    return option_name(bit);
}

const struct option *ctl_long_options(void)
{
    return long_opts;
}

int ctl_cmd_health_one(struct ctl *c,
                       const struct opts *o,
                       int argc,
                       char **argv)
{
    return cmd_health(c, o, argc, argv);
}

/* The token from --token-file: its first line, trailing blanks dropped.
 * @return 0 or an exit code (printed). */
static int read_token_file(const char *file, char **ret)
{
    char *buf = NULL;
    size_t len = 0;
    int e = ctl_read_file(file, &buf, &len);

    if (e < 0) {
        (void)fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(-e));
        return ctl_exit_errno(-e);
    }
    buf[strcspn(buf, "\r\n")] = '\0';
    len = strlen(buf);
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t')) {
        buf[--len] = '\0';
    }
    *ret = buf;
    return 0;
}

struct globals {
    const char *server;
    const char *token;
    const char *token_file;
    const char *cacert;
    const char *timeout;
    const char *max_answer;
    const char *cwd;
    bool json;
    bool version;
};

static int
parse_number(const char *name, const char *arg, unsigned long long *ret)
{
    if (!parse_ull(arg, ret)) {
        (void)fprintf(stderr,
                      "%s: %s wants a number, not '%s'\nTry '%s --help'.\n",
                      prog,
                      name,
                      arg,
                      prog);
        return CTL_EX_USAGE;
    }
    return 0;
}

/* A number of bytes, with an optional K, M or G (powers of 1024). */
static int parse_size(const char *name, const char *arg, size_t *ret)
{
    size_t n = strlen(arg);
    const char *units = "KMG";
    const char *u = n ? strchr(units, arg[n - 1]) : NULL;
    char *num = strndup(arg, u ? n - 1 : n);
    unsigned long long v;
    int ex;

    if (!num) {
        return CTL_EX_FAIL;
    }
    ex = parse_number(name, num, &v);
    free(num);
    if (ex) {
        return ex;
    }
    for (const char *k = units; u && k <= u; k++) {
        if (v > SIZE_MAX / 1024) {
            return usage_error("%s: '%s' is too large", name, arg);
        }
        v *= 1024;
    }
    *ret = (size_t)v;
    return 0;
}

static int parse_args(int argc, char **argv, struct globals *g, struct opts *o)
{
    int ch;

    opterr = 1;
    while ((ch = getopt_long(argc, argv, "hlRrpsa:", long_opts, NULL)) != -1) {
        int ex = 0;

        switch (ch) {
        case OPT_SERVER:
            g->server = optarg;
            break;
        case OPT_TOKEN:
            g->token = optarg;
            break;
        case OPT_TOKEN_FILE:
            g->token_file = optarg;
            break;
        case OPT_CACERT:
            g->cacert = optarg;
            break;
        case OPT_MAX_ANSWER:
            g->max_answer = optarg;
            break;
        case OPT_TIMEOUT:
            g->timeout = optarg;
            break;
        case OPT_CWD:
            g->cwd = optarg;
            break;
        case OPT_JSON:
            g->json = true;
            break;
        case OPT_VERSION:
            g->version = true;
            break;
        case 'h':
            o->help = true;
            break;
        case 'l':
            o->given |= O_LONG;
            break;
        case 'R':
            o->given |= O_RECURSIVE;
            break;
        case 'r':
            o->given |= O_REMOVE_ALL;
            break;
        case 'p':
            o->given |= O_PARENTS;
            break;
        case 's':
            o->given |= O_SYMBOLIC;
            break;
        case 'a':
            o->given |= O_ATTR;
            o->attrs =
                ctl_xrealloc(o->attrs, (o->n_attrs + 1) * sizeof(*o->attrs));
            o->attrs[o->n_attrs++] = optarg;
            break;
        case OPT_BINARY:
            o->given |= O_BINARY;
            break;
        case OPT_DRY_RUN:
            o->given |= O_DRY_RUN;
            break;
        case OPT_REPLACE:
            o->given |= O_REPLACE;
            break;
        case OPT_IF_MATCH:
            o->given |= O_IF_MATCH;
            o->if_match = optarg;
            break;
        case OPT_IF_REVISION:
            o->given |= O_IF_REVISION;
            ex = parse_number("--if-revision", optarg, &o->if_revision);
            break;
        case OPT_LIMIT:
            o->given |= O_LIMIT;
            ex = parse_number("--limit", optarg, &o->limit);
            break;
        case OPT_BEFORE:
            o->given |= O_BEFORE;
            ex = parse_number("--before", optarg, &o->before);
            break;
        case OPT_SINCE:
            o->given |= O_SINCE;
            ex = parse_number("--since", optarg, &o->since);
            break;
        case OPT_COUNT:
            o->given |= O_COUNT;
            ex = parse_number("--count", optarg, &o->count);
            break;
        default: /* getopt printed it */
            (void)fprintf(stderr, "Try '%s --help'.\n", prog);
            return CTL_EX_USAGE;
        }
        if (ex) {
            return ex;
        }
    }
    return 0;
}

static const char *option_name(unsigned bit)
{
    static const char *const names[] = {
        "-l",
        "-R",
        "-r",
        "-p",
        "-s",
        "--binary",
        "--dry-run",
        "--replace",
        "--if-match",
        "--if-revision",
        "--limit",
        "--before",
        "--since",
        "--count",
        "-a/--attr",
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (bit == 1u << i) {
            return names[i];
        }
    }
    return "?";
}

static int setup_ctl(struct ctl *c, const struct globals *g)
{
    const char *server = g->server ? g->server : getenv("CONFIGFSCTL_SERVER");
    const char *token = g->token;
    const char *token_file = g->token_file;
    const char *cwd;
    unsigned long long timeout = 60;
    char *file_token = NULL;
    int ex;

    if (g->token && g->token_file) {
        return usage_error("%s", "give --token or --token-file, not both");
    }
    if (!token && !token_file) {
        token = getenv("CONFIGFSCTL_TOKEN");
        token_file = token ? NULL : getenv("CONFIGFSCTL_TOKEN_FILE");
    }
    if (token_file) {
        ex = read_token_file(token_file, &file_token);
        if (ex) {
            return ex;
        }
        token = file_token;
    }
    if (token && token[0]) {
        for (const char *s = token; *s; s++) {
            if ((unsigned char)*s < 0x21 || *s == 0x7F) {
                free(file_token);
                return usage_error("%s",
                                   "the token holds a blank or "
                                   "control character");
            }
        }
        c->auth = ctl_strdup_printf("Authorization: Bearer %s", token);
    }
    free(file_token);
    c->max_answer = CTL_MAX_ANSWER_DEFAULT;
    if (g->max_answer) {
        ex = parse_size("--max-answer", g->max_answer, &c->max_answer);
        if (ex) {
            return ex;
        }
    }
    if (g->timeout) {
        ex = parse_number("--timeout", g->timeout, &timeout);
        if (ex) {
            return ex;
        }
    }
    c->timeout = (long)timeout;
    c->json = g->json;
    c->cacert = g->cacert ? g->cacert : getenv("CONFIGFSCTL_CACERT");
    cwd = g->cwd ? g->cwd : getenv("CONFIGFSCTL_CWD");
    if (cwd && cwd[0]) { /* the leading / may be left out, as in paths */
        c->cwd = ctl_resolve_path("/", cwd);
        if (!c->cwd) {
            return ctl_above_root("--cwd", "/", cwd);
        }
    }
    ex = ctl_endpoints_set(c, server && server[0] ? server : DEFAULT_SERVER);
    if (ex) {
        return ex;
    }
    c->curl = curl_easy_init();
    if (!c->curl) {
        (void)fprintf(stderr, "%s: libcurl did not start\n", prog);
        return CTL_EX_FAIL;
    }
    return 0;
}

/* The command @name for @o and @nargs arguments: 0 and *ret (NULL when
 * --help printed its usage), or a usage exit code (said). */
static int find_cmd(const char *name,
                    const struct opts *o,
                    int nargs,
                    const struct cmd **ret)
{
    const struct cmd *cmd = NULL;

    *ret = NULL;
    for (size_t i = 0; i < N_CMDS; i++) {
        if (strcmp(name, cmds[i].name) == 0) {
            cmd = &cmds[i];
        }
    }
    if (!cmd) {
        return usage_error("unknown command '%s'", name);
    }
    if (o->help) {
        cmd_usage(cmd);
        return 0;
    }
    if (o->given & ~cmd->allowed) {
        unsigned bad = o->given & ~cmd->allowed;

        return usage_error("%s does not apply here", option_name(bad & -bad));
    }
    if (nargs < cmd->min_args || nargs > cmd->max_args) {
        (void)fprintf(stderr,
                      "Usage: %s %s\nTry '%s %s --help'.\n",
                      prog,
                      cmd->synopsis,
                      prog,
                      cmd->name);
        return CTL_EX_USAGE;
    }
    *ret = cmd;
    return 0;
}

int ctl_run_line(struct ctl *c, int argc, char **argv)
{
    struct globals g = {0};
    struct opts o = {0};
    const struct cmd *cmd = NULL;
    bool json = c->json;
    int ex;

    optind = 0; /* getopt starts over */
    ex = parse_args(argc, argv, &g, &o);
    if (ex == 0 && optind >= argc) {
        ex = usage_error("%s", "which command?");
    }
    if (ex == 0 && (g.server || g.token || g.token_file || g.cacert ||
                    g.timeout || g.version || g.max_answer || g.cwd)) {
        ex = usage_error("%s",
                         "only --json applies to one command here (cd "
                         "changes the working directory)");
    }
    if (ex == 0) {
        ex = find_cmd(argv[optind], &o, argc - optind - 1, &cmd);
    }
    if (ex == 0 && cmd) {
        c->json = json || g.json;
        ctl_budget_begin(c);
        ex = cmd->run(c, &o, argc - optind - 1, argv + optind + 1);
        ex = ctl_budget_end(c, ex);
        c->json = json;
    }
    free(o.attrs);
    return ex;
}

/* Run @cmd on the words @words (the command and its arguments, @n of
 * them), its config paths taken from the working directory c->cwd as
 * the shell takes them (paths.c). */
static int run_from_cwd(struct ctl *c,
                        const struct cmd *cmd,
                        const struct opts *o,
                        int n,
                        char **words)
{
    char **v = ctl_xmalloc(((size_t)n + 1) * sizeof(*v));
    int ex;

    for (int i = 0; i < n; i++) {
        v[i] = ctl_xstrdup(words[i]);
    }
    v[n] = NULL;
    n = ctl_resolve_args(c->cwd, &v, n, true);
    ex = n < 0 ? -n : cmd->run(c, o, n - 1, v + 1);
    ctl_strv_free(v);
    return ex;
}

int main(int argc, char **argv)
{
    struct globals g = {0};
    struct opts o = {0};
    struct ctl c = {0};
    const struct cmd *cmd = NULL;
    int nargs;
    int ex;

    ctl_budget_init(); /* before any JSON is made */
    ex = parse_args(argc, argv, &g, &o);
    if (ex) {
        goto out;
    }
    if (g.version) {
        (void)printf("configfsctl %s\n", CFS_VERSION);
        goto out;
    }
    if (optind >= argc) {
        if (o.help) {
            usage(stdout);
        } else {
            usage(stderr);
            ex = CTL_EX_USAGE;
        }
        goto out;
    }
    nargs = argc - optind - 1;
    ex = find_cmd(argv[optind], &o, nargs, &cmd);
    if (ex || !cmd) {
        goto out;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        (void)fprintf(stderr, "%s: libcurl did not start\n", prog);
        ex = CTL_EX_FAIL;
        goto out;
    }
    ex = setup_ctl(&c, &g);
    if (ex == 0) {
        ctl_budget_begin(&c);
    }
    if (ex == 0 && c.cwd) {
        ex = run_from_cwd(&c, cmd, &o, nargs + 1, argv + optind);
    } else if (ex == 0) {
        ex = cmd->run(&c, &o, nargs, argv + optind + 1);
    }
    if (c.curl) {
        ex = ctl_budget_end(&c, ex);
    }
    if (c.curl) {
        curl_easy_cleanup(c.curl);
    }
    curl_global_cleanup();
out:
    if (fflush(stdout) != 0 && ex == 0) {
        (void)fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
        ex = CTL_EX_FAIL;
    }
    ctl_endpoints_free(&c);
    free(c.cwd);
    free(c.auth);
    free(o.attrs);
    return ex;
}
