/* SPDX-License-Identifier: MIT */
/*
 * mount.h - the tree as a filesystem: `configfsd --mount DIR` serves the
 * live tree over FUSE (libfuse3), in the daemon's process and on the same
 * operation layer (<configfs/cfs.h>) as the HTTP server, with the kernel's
 * configfs semantics syscall by syscall (docs/mount.md). Every change made
 * through it goes through the caller's commit function (the server's
 * durable commit) before the syscall returns.
 */
#ifndef CFS_MOUNT_H
#define CFS_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

struct cfs_mount;
struct cfs_txn;

struct cfs_mount_options {
    const char *dir;  /* the mount point: an existing, empty directory */
    bool allow_other; /* other users too (allow_other), under the modes */
    /* Make @txn durable and announce it; consumes it. @principal is
     * "uid:N" of the calling process. @return 0 or a negative errno (the
     * change was undone); -ESTALE: run the operation again. NULL: the
     * change is committed in memory only. */
    int (*commit)(void *ctx, struct cfs_txn *txn, const char *principal);
    void *ctx;
};

/** Mount and serve in threads of its own (signals stay blocked in them).
 *  @return 0 and *ret_mount, or -ENOTDIR (not a directory), -ENOTEMPTY,
 *  -ENODEV (no /dev/fuse), -ENOENT, -EACCES, -EIO (libfuse refused; its
 *  reason is on stderr), -ENOMEM; @err (may be NULL) then says why. */
int cfs_mount_start(const struct cfs_mount_options *opts,
                    struct cfs_mount **ret_mount,
                    char *err,
                    size_t err_size);

/** Unmount (lazily, so a busy mount point does not stop the daemon), wait
 *  for the requests in flight, free. NULL-safe. */
void cfs_mount_stop(struct cfs_mount *mount);

/** FUSE threads of any mount waiting for a change to what they read to be
 *  committed (docs/mount.md, "Committed reads"): for tests. */
unsigned cfs_mount_reads_waiting(void);

/* ---- the pure parts, for tests ----------------------------------------- */

/** The text readlink(2) gives for a link at @link (absolute config path)
 *  to @target (absolute config path): one "../" per level of the link's
 *  directory, then the target from the root (rule RL1). Ownership: new
 *  (free()), NULL without memory. */
char *cfs_mount_link_text(const char *link, const char *target);

/**
 * Resolve the text @text given to symlink(2) as the kernel does (SL5):
 * relative to @cwd (the caller's working directory, absolute host path)
 * unless it is absolute, components one by one, following links of the
 * tree (@follow, which gives the absolute target of a config path that is
 * a link, or NULL), '..' after links. @mountpoint is the mount's host
 * path. @return 0 and *@ret (an absolute config path, new), -EPERM (the
 * target is outside the mount), -ENOENT (empty), -ENAMETOOLONG, -ELOOP,
 * -ENOMEM.
 */
int cfs_mount_resolve(const char *mountpoint,
                      const char *cwd,
                      const char *text,
                      char *(*follow)(const char *config_path),
                      char **ret);

/* One place the mount's file system is mounted in the caller's view
 * (its mount namespace): @mountpoint, a host path, shows the tree from
 * @root, a config path ("/" for the mount itself, a folder of the tree
 * for a bind mount of that folder). */
struct cfs_mount_view {
    const char *mountpoint;
    const char *root;
};

/**
 * cfs_mount_resolve() through every place the tree is mounted (@views, at
 * least one): the walk enters the tree where it reaches a view's mount
 * point, and leaves it by '..' above the view's root, into the directory
 * holding the mount point. @cwd_view >= 0: the caller's working directory
 * is inside the tree, through views[@cwd_view], at the config path @cwd
 * (found by the identity of the directory, not its text); else @cwd is a
 * host path outside it, walked as text. Errors and ownership as
 * cfs_mount_resolve().
 */
int cfs_mount_resolve_at(const struct cfs_mount_view *views,
                         size_t n_views,
                         int cwd_view,
                         const char *cwd,
                         const char *text,
                         char *(*follow)(const char *config_path),
                         char **ret);

#endif /* CFS_MOUNT_H */
