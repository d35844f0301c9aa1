/* SPDX-License-Identifier: MIT */
/*
 * scope.h - per-path access control: the subtrees a token is limited to
 * (the paths after its hash in the --tokens file), and how a config path
 * is matched against them.
 *
 * A path is matched segment by segment, never by bytes: the subtree
 * /usb holds /usb and /usb/... but not /usb_gadget; empty segments ("//",
 * a trailing "/") are ignored. A token without paths has the whole tree
 * (a NULL scope). What a scoped token may do with a path:
 *   - covered: the path is one of its subtrees or below one: everything
 *     its role allows;
 *   - above: the path is an ancestor of one of its subtrees (the root, a
 *     subsystem above /target/iscsi ...): it may read it as a path, and
 *     see only the children that lead to its subtrees; no attribute, no
 *     link, no write;
 *   - anything else: 403 EACCES, decided on the path alone before the
 *     tree is looked at, so the answer is the same whether it exists.
 *
 * Links: the tree follows a link in the middle of a path, so a path is
 * judged twice, as written and as resolved (cfs_http_scope_resolve()). A
 * link whose target is outside the token's subtrees is hidden from it: it
 * is neither listed nor followed, and a path that ends at it or crosses it
 * answers exactly as a path that does not exist (404 ENOENT), on every
 * route, for reads and writes alike; so it cannot be read, written
 * through, or removed by that token. A link a scoped token makes has its
 * target judged as resolved, so it never leads outside either.
 */
#ifndef CFS_HTTP_SCOPE_H
#define CFS_HTTP_SCOPE_H

#include <stdbool.h>
#include <stddef.h>

struct cfs_http_req;
struct cfs_http_tokens;

/* At most this many paths per token. */
#define CFS_SCOPE_PATHS_MAX 64

struct cfs_http_scope {
    size_t n;
    char **paths; /* normalized: "/a/b", no trailing or double '/' */
};

/* @path is in or below one of @s's subtrees; always true for a NULL
 * scope (the whole tree) and for a NULL path. */
bool cfs_http_scope_covers(const struct cfs_http_scope *s, const char *path);
/* @path is covered, or an ancestor of one of @s's subtrees. */
bool cfs_http_scope_sees(const struct cfs_http_scope *s, const char *path);

/* @path (absolute) with every link it crosses replaced by its target, as
 * the tree resolves it: the part that does not exist is kept as written;
 * a link at its end is followed only when @follow_last. 0 and *ret_path
 * (new) when each link met, the last one included, leads inside @s; 1 and
 * *ret_path NULL when one is hidden from @s; -ENOMEM. A NULL @s sees
 * every link. */
int cfs_http_scope_resolve(const struct cfs_http_scope *s,
                           const char *path,
                           bool follow_last,
                           char **ret_path);

/* cfs_http_scope_covers() (@write) or _sees() of @path as resolved, with
 * no link hidden from @s on the way: false too when one is, or on ENOMEM. */
bool cfs_http_scope_reaches(const struct cfs_http_scope *s,
                            const char *path,
                            bool write,
                            bool follow_last);

/* The normalized form of a scope path as written in the tokens file
 * (absolute; every segment a valid name), new string; NULL and *why set
 * when it is not one, or on ENOMEM. */
char *cfs_http_scope_path(const char *text, const char **why);

/* The subtrees of the entry @name of @tokens (the principal
 * cfs_http_tokens_find() returned, borrowed from @tokens), or NULL for the
 * whole tree. */
const struct cfs_http_scope *
cfs_http_tokens_scope(const struct cfs_http_tokens *tokens, const char *name);
/* @now gives the token of @name (from @then) the same subtrees as @then
 * did. */
bool cfs_http_tokens_scope_same(const struct cfs_http_tokens *then,
                                const char *name,
                                const struct cfs_http_tokens *now);

#endif /* CFS_HTTP_SCOPE_H */
