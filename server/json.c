// SPDX-License-Identifier: MIT
/*
 * json.c - the node JSON of docs/DESIGN.md §4: a directory with its
 * attributes (one show() each), children and links, nested ?depth= levels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/base64.h>
#include "json.h"
#include "jsonw.h"
#include "scope.h"
#include "status.h"

void cfs_http_value_json(json_t *obj, const char *data, size_t len)
{
    json_t *s = json_stringn(data, len);

    if (s) {
        json_object_set_new(obj, "value", s);
        return;
    }
    char *b = cfs_base64_encode(data, len);

    json_object_set_new(obj, "value", json_string(b ? b : ""));
    json_object_set_new(obj, "encoding", json_string("base64"));
    free(b);
}

/* @path + "/" + @name (the root is "/"), malloc'd, or NULL. */
char *cfs_http_join(const char *path, const char *name)
{
    size_t pl = strlen(path);
    size_t nl = strlen(name);
    char *p;

    if (pl == 1) {
        pl = 0; /* the root */
    }
    p = malloc(pl + nl + 2);
    if (p) {
        memcpy(p, path, pl);
        p[pl] = '/';
        memcpy(p + pl + 1, name, nl + 1);
    }
    return p;
}

static void jw_mode(struct jw *w, unsigned mode)
{
    char m[5] = {(char)('0' + ((mode >> 9) & 7)),
                 (char)('0' + ((mode >> 6) & 7)),
                 (char)('0' + ((mode >> 3) & 7)),
                 (char)('0' + (mode & 7)),
                 0};

    if (mode > 07777) {
        char big[16];

        (void)snprintf(big, sizeof(big), "%04o", mode);
        jw_str(w, big);
        return;
    }
    jw_str(w, m);
}

/* An attribute's fields after "name" (and "path", "kind"), up to its
 * revision. */
static void attr_fields(struct jw *w, const struct cfs_entry *e)
{
    JW_LIT(w, ",\"mode\":");
    jw_mode(w, e->mode);
    JW_LIT(w, ",\"readable\":");
    jw_bool(w, e->readable);
    JW_LIT(w, ",\"writable\":");
    jw_bool(w, e->writable);
    JW_LIT(w, ",\"binary\":");
    jw_bool(w, e->kind == CFS_KIND_BIN_ATTR);
    JW_LIT(w, ",\"revision\":");
    jw_u64(w, e->revision);
}

/* A value as "value": trailing newline of a text attribute's show() off. */
static void
jw_shown(struct jw *w, const struct cfs_entry *e, const char *buf, size_t len)
{
    if (e->kind == CFS_KIND_ATTR && len > 0 && buf[len - 1] == '\n') {
        len--; /* one trailing newline of show() */
    }
    jw_value(w, buf, len);
}

static void attr_json(struct jw *w,
                      const char *path,
                      const struct cfs_entry *e,
                      bool values)
{
    JW_LIT(w, "{\"name\":");
    jw_str(w, e->name);
    attr_fields(w, e);
    if (values && e->readable) {
        char *p = cfs_http_join(path, e->name);
        char *buf = NULL;
        size_t len = 0;
        int r = p ? cfs_show(p, &buf, &len) : -ENOMEM;

        if (r == 0) {
            jw_shown(w, e, buf, len);
            cfs_free(buf);
        } else {
            JW_LIT(w, ",\"error\":");
            jw_str(w, cfs_http_errno_name(r));
        }
        free(p);
    }
    JW_LIT(w, "}");
}

static int by_name(const void *a, const void *b)
{
    const struct cfs_entry *const *x = a;
    const struct cfs_entry *const *y = b;

    return strcmp((*x)->name, (*y)->name);
}

/* @e (an entry of directory @path) is a child a listing shows: a
 * directory, and one @scope lets through (@covered: @path is inside it). */
static bool child_shown(const char *path,
                        const struct cfs_entry *e,
                        const struct cfs_http_scope *scope,
                        bool covered)
{
    if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR ||
        e->kind == CFS_KIND_LINK) {
        return false;
    }
    if (!covered) {
        char *cp = cfs_http_join(path, e->name);
        bool sees = cp && cfs_http_scope_sees(scope, cp);

        free(cp);
        return sees;
    }
    return true;
}

/* The index of the first of @sel[0..@k) (sorted by name) whose name
 * sorts after @name (@inclusive: at or after it): a binary search. */
static size_t first_past(struct cfs_entry *const *sel,
                         size_t k,
                         const char *name,
                         bool inclusive)
{
    size_t lo = 0;
    size_t hi = k;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sel[mid]->name, name);

        if (c < 0 || (c == 0 && !inclusive)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The children of @es (directories of @path, in creation order) that
 * @page and @scope let through, sorted by name, at most page->limit of
 * them from where the page asks: a new array of pointers into @es
 * (*ret_n of them), page->total, page->offset, page->next and page->prev
 * set. */
static int page_children(const char *path,
                         struct cfs_entry *es,
                         size_t n,
                         struct cfs_http_page *page,
                         const struct cfs_http_scope *scope,
                         struct cfs_entry ***ret_sel,
                         size_t *ret_n)
{
    bool covered = cfs_http_scope_covers(scope, path);

    struct cfs_entry **sel = malloc((n ? n : 1) * sizeof(struct cfs_entry *));
    size_t k = 0;
    size_t lo = 0;
    size_t hi;

    if (!sel) {
        return -ENOMEM;
    }
    page->total = 0;
    for (size_t i = 0; i < n; i++) {
        struct cfs_entry *e = &es[i];

        if (page->contains && !strstr(e->name, page->contains)) {
            continue;
        }
        if (!child_shown(path, e, scope, covered)) {
            continue;
        }
        page->total++;
        sel[k++] = e;
    }
    qsort(sel, k, sizeof(struct cfs_entry *), by_name);
    /* where the page starts or ends, by name: names that came or went
     * since the last page move nothing else, so a child that stays is
     * listed once */
    if (page->before || page->from_end) {
        hi = page->before ? first_past(sel, k, page->before, true) : k;
        lo = hi > page->limit ? hi - page->limit : 0;
    } else {
        if (page->after) {
            lo = first_past(sel, k, page->after, false);
        } else if (page->name_from) {
            lo = first_past(sel, k, page->name_from, true);
        }
        hi = k - lo > page->limit ? lo + page->limit : k;
    }
    page->offset = lo;
    page->next = NULL;
    page->prev = NULL;
    if (hi < k) {
        /* a page that holds none of them (no budget left) continues
         * after the name before it; at the start, from the empty name,
         * before every name */
        page->next = strdup(hi ? sel[hi - 1]->name : "");
        if (!page->next) {
            free(sel);
            return -ENOMEM;
        }
    }
    if (lo > 0 && lo < hi) {
        page->prev = strdup(sel[lo]->name);
        if (!page->prev) {
            free(page->next);
            page->next = NULL;
            free(sel);
            return -ENOMEM;
        }
    }
    memmove(sel, sel + lo, (hi - lo) * sizeof(struct cfs_entry *));
    *ret_sel = sel;
    *ret_n = hi - lo;
    return 0;
}

/* How many children (directories) of @es @scope lets through. */
static size_t count_children(const char *path,
                             const struct cfs_entry *es,
                             size_t n,
                             const struct cfs_http_scope *scope)
{
    bool covered = cfs_http_scope_covers(scope, path);
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        k += child_shown(path, &es[i], scope, covered);
    }
    return k;
}

/* What a node says of itself, before its attributes. */
static void
self_json(struct jw *w, const char *path, const struct cfs_entry *self)
{
    JW_LIT(w, "{\"name\":");
    jw_str(w, self->name);
    JW_LIT(w, ",\"path\":");
    jw_str(w, path);
    JW_LIT(w, ",\"kind\":");
    jw_str(w, cfs_kind_name(self->kind));
    JW_LIT(w, ",\"type\":");
    jw_str(w, self->type_name);
    JW_LIT(w, ",\"default_group\":");
    jw_bool(w, self->default_group);
    JW_LIT(w, ",\"revision\":");
    jw_u64(w, self->revision);
    JW_LIT(w, ",\"creates\":");
    jw_str(w,
           self->creates == CFS_KIND_GROUP  ? "group"
           : self->creates == CFS_KIND_ITEM ? "item"
                                            : NULL);
    JW_LIT(w, ",\"committable\":");
    jw_bool(w, self->committable);
    if (self->kind != CFS_KIND_ROOT && self->kind != CFS_KIND_SUBSYSTEM) {
        JW_LIT(w, ",\"live\":");
        jw_bool(w, self->live);
    }
}

/* A child of a listing that is not rendered whole (depth reached). */
static void
child_stub_json(struct jw *w, const char *cp, const struct cfs_entry *e)
{
    JW_LIT(w, "{\"name\":");
    jw_str(w, e->name);
    JW_LIT(w, ",\"kind\":");
    jw_str(w, cfs_kind_name(e->kind));
    JW_LIT(w, ",\"path\":");
    jw_str(w, cp);
    JW_LIT(w, ",\"default_group\":");
    jw_bool(w, e->default_group);
    JW_LIT(w, ",\"has_children\":");
    jw_bool(w, e->has_children);
    JW_LIT(w, "}");
}

/* The links of @es @scope lets the token see, in the page's filter. */
static void links_json(struct jw *w,
                       const struct cfs_entry *es,
                       size_t n,
                       bool covered,
                       const struct cfs_http_page *pg,
                       const struct cfs_http_scope *scope)
{
    bool first = true;

    JW_LIT(w, ",\"links\":[");
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (covered && e->kind == CFS_KIND_LINK &&
            cfs_http_scope_covers(scope, e->target) &&
            !(pg && pg->contains && !strstr(e->name, pg->contains))) {
            if (!first) {
                JW_LIT(w, ",");
            }
            first = false;
            JW_LIT(w, "{\"name\":");
            jw_str(w, e->name);
            JW_LIT(w, ",\"target\":");
            jw_str(w, e->target);
            JW_LIT(w, "}");
        }
    }
    JW_LIT(w, "]");
}

/* ?used_by: the links to @path that @scope lets the token see. */
static int
used_by_json(struct jw *w, const char *path, const struct cfs_http_scope *scope)
{
    char **paths = NULL;
    size_t np = 0;
    bool first = true;
    int r = cfs_links_to(path, &paths, &np);

    JW_LIT(w, ",\"used_by\":[");
    for (size_t i = 0; r == 0 && i < np; i++) {
        if (!cfs_http_scope_covers(scope, paths[i])) {
            continue; /* a link outside the token's subtrees */
        }
        if (!first) {
            JW_LIT(w, ",");
        }
        first = false;
        jw_str(w, paths[i]);
    }
    JW_LIT(w, "]");
    if (r == 0) {
        cfs_paths_free(paths, np);
    }
    return r;
}

/* A paged listing says how many children there are and where to read
 * on. */
static int cursor_json(struct jw *w, const char *name)
{
    char *c;

    if (!name) {
        JW_LIT(w, "null");
        return 0;
    }
    c = cfs_http_cursor(name);
    jw_str(w, c);
    free(c);
    return c ? 0 : -ENOMEM;
}

static int page_json(struct jw *w, const struct cfs_http_page *pg)
{
    int r;
    int pr;

    JW_LIT(w, ",\"children_total\":");
    jw_u64(w, pg->total);
    JW_LIT(w, ",\"children_offset\":");
    jw_u64(w, pg->offset);
    JW_LIT(w, ",\"next_after\":");
    r = cursor_json(w, pg->next);
    JW_LIT(w, ",\"prev_before\":");
    pr = cursor_json(w, pg->prev);
    return r ? r : pr;
}

/* Which page of @path's children the answer holds: @page when the client
 * asked for one; else all of them when they fit in *@budget, or a first
 * page of them in @own. Takes the children shown from *@budget. @return
 * the page (NULL: all), with its entries in *@ret_sel / *@ret_nsel. */
static int choose_page(const char *path,
                       struct cfs_entry *es,
                       size_t n,
                       struct cfs_http_page *page,
                       struct cfs_http_page *own,
                       const struct cfs_http_scope *scope,
                       size_t *budget,
                       struct cfs_http_page **ret_pg,
                       struct cfs_entry ***ret_sel,
                       size_t *ret_nsel)
{
    struct cfs_http_page *pg = NULL;
    int r;

    if (page && page->paged) {
        pg = page;
        if (pg->limit > *budget) {
            pg->limit = *budget;
        }
    } else {
        size_t k = count_children(path, es, n, scope);

        if (k <= *budget) {
            *budget -= k;
        } else {
            own->paged = true;
            own->limit = *budget < CFS_HTTP_PAGE_DEFAULT
                             ? *budget
                             : CFS_HTTP_PAGE_DEFAULT;
            pg = own;
        }
    }
    *ret_pg = pg;
    if (!pg) {
        return 0;
    }
    r = page_children(path, es, n, pg, scope, ret_sel, ret_nsel);
    if (r == 0) {
        *budget -= *ret_nsel;
    }
    return r;
}

/* @budget: how many more children (at any level) the answer may hold.
 * A node whose children fit is rendered whole, in creation order; one
 * whose children do not (or that @page asks to page) holds a page of
 * them by name, with children_total and next_after, so that the client
 * sees the listing is partial and can read on. */
static int node_json(struct jw *w,
                     const char *path,
                     const struct cfs_entry *self,
                     int depth,
                     bool values,
                     struct cfs_http_page *page,
                     const struct cfs_http_scope *scope,
                     size_t *budget)
{
    struct cfs_entry *es = NULL;
    struct cfs_entry **sel = NULL;
    struct cfs_http_page own = {0};
    struct cfs_http_page *pg = NULL; /* the page of children, if paged */
    size_t n = 0;
    size_t nsel = 0;
    bool first;
    /* above the token's subtrees: a path leading to them, nothing more */
    bool covered = cfs_http_scope_covers(scope, path);
    int r = cfs_readdir(path, &es, &n);

    if (r < 0) {
        return r;
    }
    r = choose_page(path, es, n, page, &own, scope, budget, &pg, &sel, &nsel);
    if (r < 0) {
        cfs_entries_free(es, n);
        return r;
    }
    self_json(w, path, self);
    /* three passes over the entries, one per array */
    JW_LIT(w, ",\"attributes\":[");
    first = true;
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (covered &&
            (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR)) {
            if (!first) {
                JW_LIT(w, ",");
            }
            first = false;
            attr_json(w, path, e, values);
        }
    }
    JW_LIT(w, "],\"children\":[");
    first = true;
    for (size_t i = 0; i < (sel ? nsel : n) && r == 0; i++) {
        const struct cfs_entry *e = sel ? sel[i] : &es[i];
        char *cp;
        size_t mark = w->len;

        if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR ||
            e->kind == CFS_KIND_LINK) {
            continue;
        }
        cp = cfs_http_join(path, e->name);
        if (!cp) {
            r = -ENOMEM;
            break;
        }
        if (!covered && !cfs_http_scope_sees(scope, cp)) {
            free(cp);
            continue;
        }
        if (!first) {
            JW_LIT(w, ",");
        }
        if (depth > 0) {
            r = node_json(w, cp, e, depth - 1, values, NULL, scope, budget);
            if (r == -ENOENT) {
                r = 0; /* removed meanwhile: take back its comma */
                w->len = mark;
                free(cp);
                continue;
            }
        } else {
            child_stub_json(w, cp, e);
        }
        first = false;
        free(cp);
    }
    JW_LIT(w, "]");
    links_json(w, es, n, covered, pg, scope);
    if (page && page->used_by && r == 0) {
        r = used_by_json(w, path, scope);
    }
    if (pg) {
        int pr = page_json(w, pg);

        r = r ? r : pr;
    }
    JW_LIT(w, "}");
    free(own.next);
    free(own.prev);
    free(sel);
    cfs_entries_free(es, n);
    return r;
}

/* A cursor is "n" and the name in hex: opaque to clients, and any name
 * (bytes 1-255) round-trips. */
char *cfs_http_cursor(const char *name)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = strlen(name);
    char *c = malloc(2 * len + 2);

    if (!c) {
        return NULL;
    }
    c[0] = 'n';
    for (size_t i = 0; i < len; i++) {
        c[1 + 2 * i] = hex[(unsigned char)name[i] >> 4];
        c[2 + 2 * i] = hex[(unsigned char)name[i] & 15];
    }
    c[1 + 2 * len] = 0;
    return c;
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

int cfs_http_cursor_name(const char *cursor, char **ret_name)
{
    size_t len = strlen(cursor);
    char *name;

    /* "n" alone: the empty name, before every name (the start) */
    if (cursor[0] != 'n' || len % 2 == 0 || len > 1 + 2 * 255) {
        return -EINVAL;
    }
    name = malloc(len / 2 + 1);
    if (!name) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < len / 2; i++) {
        int hi = unhex(cursor[1 + 2 * i]);
        int lo = unhex(cursor[2 + 2 * i]);

        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(name);
            return -EINVAL;
        }
        name[i] = (char)(hi << 4 | lo);
    }
    name[len / 2] = 0;
    *ret_name = name;
    return 0;
}

int cfs_http_attr_text(const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len,
                       char **ret_text,
                       size_t *ret_len)
{
    struct jw w = {0};

    JW_LIT(&w, "{\"name\":");
    jw_str(&w, e->name);
    JW_LIT(&w, ",\"path\":");
    jw_str(&w, path);
    JW_LIT(&w, ",\"kind\":\"attribute\"");
    attr_fields(&w, e);
    if (buf) {
        jw_shown(&w, e, buf, len);
    }
    JW_LIT(&w, "}");
    return jw_finish(&w, ret_text, ret_len);
}

int cfs_http_node_text(const char *path,
                       const struct cfs_entry *self,
                       int depth,
                       bool values,
                       const struct cfs_http_scope *scope,
                       char **ret_text,
                       size_t *ret_len)
{
    return cfs_http_node_page_text(
        path, self, depth, values, scope, NULL, ret_text, ret_len);
}

int cfs_http_node_page_text(const char *path,
                            const struct cfs_entry *self,
                            int depth,
                            bool values,
                            const struct cfs_http_scope *scope,
                            struct cfs_http_page *page,
                            char **ret_text,
                            size_t *ret_len)
{
    struct cfs_entry st;
    struct jw w = {0};
    size_t budget = CFS_HTTP_PAGE_MAX;
    int r = 0;

    if (!self) {
        r = cfs_stat(path, &st);
        if (r < 0) {
            return r;
        }
        self = &st;
    }
    r = node_json(&w, path, self, depth, values, page, scope, &budget);
    if (self == &st) {
        cfs_entry_done(&st);
    }
    if (r < 0) {
        free(w.buf);
        return r;
    }
    return jw_finish(&w, ret_text, ret_len);
}

/* ---- what blocks an rmdir ----------------------------------------------- */

#define BLOCKERS_MAX 50

static void push_path(json_t *a, const char *dir, const char *name)
{
    char *p = cfs_http_join(dir, name);

    if (p && json_array_size(a) < BLOCKERS_MAX) {
        json_array_append_new(a, json_string(p));
    }
    free(p);
}

/* The user children and links of @path and of its default groups (RM7). */
static void children_of(json_t *a, const char *path)
{
    struct cfs_entry *es = NULL;
    size_t n = 0;

    if (cfs_readdir(path, &es, &n) < 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cfs_entry *e = &es[i];

        if (e->kind == CFS_KIND_ATTR || e->kind == CFS_KIND_BIN_ATTR) {
            continue;
        }
        if (e->default_group) {
            char *p = cfs_http_join(path, e->name);

            if (p) {
                children_of(a, p);
            }
            free(p);
        } else {
            push_path(a, path, e->name);
        }
    }
    cfs_entries_free(es, n);
}

json_t *
cfs_http_blockers(int err, const char *path, const struct cfs_http_scope *scope)
{
    json_t *a;

    if (err != -ENOTEMPTY && err != -EBUSY) {
        return NULL;
    }
    a = json_array();
    if (!a) {
        return NULL;
    }
    if (err == -ENOTEMPTY) {
        children_of(a, path);
    } else {
        char **paths = NULL;
        size_t n = 0;

        if (cfs_links_to(path, &paths, &n) == 0) {
            for (size_t i = 0; i < n && i < BLOCKERS_MAX; i++) {
                json_array_append_new(a, json_string(paths[i]));
            }
            cfs_paths_free(paths, n);
        }
    }
    /* a scoped token is not told of what lies outside its subtrees */
    for (size_t i = json_array_size(a); i-- > 0;) {
        if (!cfs_http_scope_covers(scope,
                                   json_string_value(json_array_get(a, i)))) {
            json_array_remove(a, i);
        }
    }
    if (json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

void cfs_http_blockers_text(const json_t *blockers,
                            int err,
                            char *buf,
                            size_t size)
{
    size_t n = json_array_size(blockers);
    size_t len;

    (void)snprintf(
        buf, size, " (%s ", err == -EBUSY ? "linked from" : "it holds");
    for (size_t i = 0; i < n && i < 3; i++) {
        len = strlen(buf);
        (void)snprintf(buf + len,
                       size - len,
                       "%s%s",
                       i ? ", " : "",
                       json_string_value(json_array_get(blockers, i)));
    }
    len = strlen(buf);
    if (n > 3) {
        (void)snprintf(buf + len, size - len, " and %zu more)", n - 3);
    } else {
        (void)snprintf(buf + len, size - len, ")");
    }
}

void cfs_http_refusal(int err,
                      const char *path,
                      const struct cfs_http_scope *scope,
                      json_t *extra,
                      char *buf,
                      size_t size)
{
    json_t *blockers = cfs_http_blockers(err, path, scope);
    unsigned long deps = 0;
    size_t len;

    *buf = '\0';
    if (blockers) {
        cfs_http_blockers_text(blockers, err, buf, size);
        json_object_set_new(extra, "blockers", blockers);
    }
    if (err != -EBUSY || cfs_dependents(path, &deps) < 0 || deps == 0) {
        return;
    }
    json_object_set_new(extra, "dependents", json_integer((json_int_t)deps));
    len = strlen(buf);
    if (len && buf[len - 1] == ')') {
        len--; /* "(linked from /a; held by ...)" */
    }
    (void)snprintf(buf + len,
                   size - len,
                   "%sheld by %lu depend_item reference%s)",
                   len ? "; " : " (",
                   deps,
                   deps == 1 ? "" : "s");
}

void cfs_http_missing_target(const char *path,
                             const char *target,
                             char *buf,
                             size_t size)
{
    struct cfs_entry e;
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;

    buf[0] = 0;
    if (target && cfs_stat(target, &e) < 0) {
        (void)snprintf(buf, size, " (the target %s does not exist)", target);
    } else if (target) {
        cfs_entry_done(&e);
    }
    if (!buf[0] && slash) {
        *slash = 0;
        if (*dir && cfs_stat(dir, &e) < 0) {
            (void)snprintf(buf, size, " (the folder %s does not exist)", dir);
        } else if (*dir) {
            cfs_entry_done(&e);
        }
    }
    free(dir);
}
