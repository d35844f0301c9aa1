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
