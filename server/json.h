/* SPDX-License-Identifier: MIT */
/*
 * json.h - the JSON the server renders from the tree: nodes, attributes and
 * values (docs/DESIGN.md §4). Reads the object model only.
 */
#ifndef CFS_HTTP_JSON_H
#define CFS_HTTP_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <configfs/cfs.h>

struct cfs_http_scope;

/* The node JSON for a group/item/subsystem/root, as compact JSON text.
 * @self: the node's cfs_stat(), or NULL to stat it here. @depth: levels of
 * children rendered as full nodes; @values: call show(). @scope (NULL:
 * the whole tree) filters it as scope.h says: a node above the token's
 * subtrees shows only the children that lead to them, and no attribute or
 * link; a link shows when its target is in the subtrees too.
 * @return 0 and *ret_text (malloc'd) or a negative errno. */
int cfs_http_node_text(const char *path,
                       const struct cfs_entry *self,
                       int depth,
                       bool values,
                       const struct cfs_http_scope *scope,
                       char **ret_text,
                       size_t *ret_len);
/* An answer holds at most CFS_HTTP_PAGE_MAX children, counted over all
 * its levels: a node whose children fit in what is left is whole (in
 * creation order); one whose children do not is a page of them, the first
 * CFS_HTTP_PAGE_DEFAULT by name (or fewer: what is left, down to none),
 * with children_total and next_after, as if ?limit= had been given. A
 * paged request (below) pages the top node; the same cap holds. */
#define CFS_HTTP_PAGE_DEFAULT 1000
#define CFS_HTTP_PAGE_MAX     10000

/* A page of a node's children (GET ?limit=&after=&name_contains=, or
 * &before=, &from=end, &name_from=): the children whose name holds
 * @contains (any, when NULL), sorted by name (bytewise); the page is the
 * first @limit after the name @after, or the last @limit before the name
 * @before, or the last @limit of all (@from_end), or the first @limit
 * from the first name at or past @name_from (none of them: from the
 * start). Links are filtered by @contains but not paged. Out: @total, the
 * children that pass the filter; @offset, how many of them sort before
 * the page; @next, the name to continue after (NULL when this page is the
 * last; malloc'd); @prev, the name to read back before (NULL when the
 * page starts at the first child or is empty; malloc'd). */
struct cfs_http_page {
    bool paged;   /* else every child that fits, in creation order */
    bool used_by; /* add "used_by": the links that point at the node */
    size_t limit;
    const char *after;
    const char *before;
    bool from_end;
    const char *name_from;
    const char *contains;
    size_t total;
    size_t offset;
    char *next;
    char *prev;
};

/* cfs_http_node_text() with @page (NULL: every child that fits the cap,
 * in creation order, no used_by) applied to the top node; page->limit is
 * lowered to the cap, page->next is set when the page is not the last
 * and page->prev when it is not the first (the caller frees both);
 * children and used_by outside @scope are left out (and not counted in
 * page->total). */
int cfs_http_node_page_text(const char *path,
                            const struct cfs_entry *self,
                            int depth,
                            bool values,
                            const struct cfs_http_scope *scope,
                            struct cfs_http_page *page,
                            char **ret_text,
                            size_t *ret_len);
/* The opaque cursor of a page's last name (malloc'd; NULL), and back
 * (-EINVAL for a string that is no cursor). The empty name's cursor
 * continues from the start: a page that could hold none of the
 * children. */
char *cfs_http_cursor(const char *name);
int cfs_http_cursor_name(const char *cursor, char **ret_name);
/* For a refused rmdir, what blocks it: -ENOTEMPTY the children and links
 * it (or a default group of it) holds, -EBUSY the links that point at it;
 * at most 50 paths, as a JSON array (new reference), or NULL for any other
 * errno or when none can be named (a depend_item); paths outside @scope
 * (NULL: the whole tree) are left out. */
json_t *cfs_http_blockers(int err,
                          const char *path,
                          const struct cfs_http_scope *scope);
/* " (it holds /a/b, /a/c and 4 more)" for a problem's detail. */
void cfs_http_blockers_text(const json_t *blockers,
                            int err,
                            char *buf,
                            size_t size);
/* Everything a refused rmdir of @path (errno @err) can say about what
 * holds it: "blockers" (the paths above) and, for -EBUSY, "dependents"
 * (the count of configfs_depend_item() references: the API keeps no
 * record of who took them) are set in @extra; @buf gets the text for the
 * detail (" (linked from /a; held by 1 depend_item reference)"), or "".
 * Paths outside @scope are left out (the count is kept: it names
 * nothing). */
void cfs_http_refusal(int err,
                      const char *path,
                      const struct cfs_http_scope *scope,
                      json_t *extra,
                      char *buf,
                      size_t size);
/* Why a symlink at @path to @target found nothing (ENOENT), for a
 * problem's detail: " (the target T does not exist)" or " (the folder
 * D does not exist)"; empty when both are there. */
void cfs_http_missing_target(const char *path,
                             const char *target,
                             char *buf,
                             size_t size);
/* The attribute JSON (with "value" when @buf, a show() result), as compact
 * JSON text. @return 0 and *ret_text (malloc'd) or -ENOMEM. */
int cfs_http_attr_text(const char *path,
                       const struct cfs_entry *e,
                       const char *buf,
                       size_t len,
                       char **ret_text,
                       size_t *ret_len);
/* @path + "/" + @name, the root being "/" (new, malloc'd; NULL). */
char *cfs_http_join(const char *path, const char *name);
/* A value as JSON: a string if it is UTF-8, else base64 with "encoding". */
void cfs_http_value_json(json_t *obj, const char *data, size_t len);

#endif /* CFS_HTTP_JSON_H */
