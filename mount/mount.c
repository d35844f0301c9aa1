// SPDX-License-Identifier: MIT
/*
 * mount.c - the FUSE front end: libfuse3's path-based API over the
 * operation layer, one handler per syscall, each giving the errno the
 * kernel's configfs gives (docs/configfs-rules.md; rule numbers below).
 *
 * Reads take no transaction: cfs_stat(), cfs_readdir(), cfs_show() and
 * cfs_readlink() see the tree as it is, and return it once what they saw
 * is committed (read_over()). Every change is one transaction,
 * committed through the options' commit function (the server's durable
 * commit, journaled as "uid:N" of the caller) before the reply goes back
 * to the kernel, so the syscall returns only once the change is durable.
 * Attributes are opened with direct_io and every timeout is 0: the kernel
 * keeps no page or attribute cache, and a change made over HTTP shows at
 * the next open.
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <configfs/cfs.h>

#include "mount.h"

/* Operations run again after losing a race in cluster mode (-ESTALE). */
#define MOUNT_RETRIES 32
/* Threads serving requests: writers wait for their durable commit there,
 * so several let other callers (and the store's group commit) go on. */
#define MOUNT_WORKERS 4

struct cfs_mount {
    struct cfs_mount_options opts;
    char *dir; /* canonical host path of the mount point */
    struct fuse *fuse;
    pthread_t workers[MOUNT_WORKERS];
    size_t n_workers;
    int stop_fd;             /* an eventfd: readable once the mount stops */
    struct timespec started; /* the time every entry shows (F8) */
    uid_t uid;               /* the owner every entry shows (docs/mount.md) */
    gid_t gid;
    /* The mount's device (its file system's identity), to know a
     * caller's directory inside it by any path (SL5); have_dev false when
     * it could not be read: then the mount point's text alone. */
    bool have_dev;
    unsigned dev_major, dev_minor;
    /* The open files and directories (open_lock): freed by stop() when
     * their release never came (the mount went while they were open). */
    pthread_mutex_t open_lock;
    struct mhandle *open;
};

/* What an open file or directory holds: its path, the first member of
 * both. With nullpath_ok libfuse passes no path for calls on an open file
 * (fstat, read, write ...): this one, taken at open, is used instead, and
 * fails ENOENT once the item is gone (RD6, WR7). */
struct mhandle {
    char *path;
    bool file;                   /* the first member of a struct mfile */
    struct mhandle *prev, *next; /* on the mount's open list */
};

/* One open attribute: its snapshot (RD3) or its gathered bytes (BIN4). */
struct mfile {
    struct mhandle h;     /* first */
    pthread_mutex_t lock; /* reads and writes on one open are serialised */
    /* The item it was opened on (cfs_entry.created): a file keeps it, as
     * the kernel's keeps its dentry. Once the item is gone, a namesake
     * made since included, the first read fails ENOENT (RD6), a write
     * too (WR7), and gathered binary bytes are dropped (BIN6). */
    uint64_t created;
    bool binary;
    char *snap; /* text: the show() of this open; binary: what read() gave */
    size_t snap_len;
    bool have_snap;
    char *bin; /* binary: the bytes written so far */
    size_t bin_len;
    size_t max_size; /* binary: cb_max_size, 0 for none */
    bool written;    /* binary: bin holds bytes to deliver at close */
};

/* The path of a call: libfuse's, or that of the open file or directory
 * it is made on; "" when there is neither, which every cfs_*() call
 * refuses (EINVAL) rather than reading a NULL. */
static const char *fh_path(const char *path, const struct fuse_file_info *fi)
{
    if (path) {
        return path;
    }
    return fi && fi->fh ? ((struct mhandle *)(uintptr_t)fi->fh)->path : "";
}

static struct cfs_mount *self(void)
{
    return fuse_get_context()->private_data;
}

/* The attribute at @path is the one an open file was opened on (@created,
 * its item's incarnation): 0, or -ENOENT when the item went away, a
 * namesake made since included (RD6, WR7). */
static int same_item(const char *path, uint64_t created)
{
    struct cfs_entry e;
    int r = cfs_stat(path, &e);

    if (r) {
        return r;
    }
    if (e.created != created) {
        r = -ENOENT;
    }
    cfs_entry_done(&e);
    return r;
}

/* ---- changes ------------------------------------------------------------ */

enum mop { M_MKDIR, M_RMDIR, M_STORE, M_SYMLINK, M_UNLINK, M_RENAME };

/* Run one operation in a transaction of its own and commit it durably
 * before returning; run it again when the cluster moved on (-ESTALE).
 * @created (may be NULL): a store of an open file, which must still find
 * the item it was opened on; checked in the transaction, so no removal
 * can come between; when it does not, -ENOENT and *@ret_gone set. */
static int change(enum mop op,
                  const char *path,
                  const char *arg,
                  const void *buf,
                  size_t len,
                  const uint64_t *created,
                  bool *ret_gone)
{
    struct cfs_mount *m = self();
    char principal[32];
    unsigned jitter = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&principal;

    (void)snprintf(principal,
                   sizeof(principal),
                   "uid:%u",
                   (unsigned)fuse_get_context()->uid);
    for (unsigned attempt = 0; attempt <= MOUNT_RETRIES; attempt++) {
        struct cfs_txn *txn = NULL;
        int r = cfs_txn_begin(&txn);

        if (r) {
            return r;
        }
        switch (op) {
        case M_MKDIR:
            r = cfs_mkdir(txn, path);
            break;
        case M_RMDIR:
            r = cfs_rmdir(txn, path);
            break;
        case M_STORE:
            r = created ? same_item(path, *created) : 0;
            if (r) {
                (void)cfs_txn_abort(txn); /* nothing changed yet */
                if (ret_gone) {
                    *ret_gone = true;
                }
                return r;
            }
            r = cfs_write(txn, path, buf, len);
            break;
        case M_SYMLINK:
            r = cfs_symlink(txn, path, arg);
            break;
        case M_UNLINK:
            r = cfs_unlink(txn, path);
            break;
        case M_RENAME:
            r = cfs_rename(txn, path, arg);
            break;
        }
        if (r) {
            (void)cfs_txn_abort(txn); /* nothing changed (cfs.h) */
            return r;
        }
        if (!m->opts.commit) {
            cfs_txn_commit(txn);
            return 0;
        }
        r = m->opts.commit(m->opts.ctx, txn, principal);
        if (r != -ESTALE) {
            return r;
        }
        if (attempt >= 4) {
            /* Losing again and again (the commit caught up already): let
             * the others through first, a random and growing while, as
             * the server's own retries do, so that nodes that collide
             * drift apart. */
            struct timespec ts = {0, 0};

            ts.tv_nsec =
                (long)(rand_r(&jitter) % (200u * (attempt + 1))) * 1000;
            (void)nanosleep(&ts, NULL);
        }
    }
    return -EAGAIN; /* lost every race: nothing kept */
}

/* ---- attributes of entries ---------------------------------------------- */

static size_t dir_links(const char *path)
{
    struct cfs_entry *es = NULL;
    size_t n = 0, links = 2;

    if (cfs_readdir(path, &es, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            enum cfs_kind k = es[i].kind;

            links += k != CFS_KIND_ATTR && k != CFS_KIND_BIN_ATTR &&
                     k != CFS_KIND_LINK;
        }
        cfs_entries_free(es, n);
    }
    return links;
}

static void fill_stat(struct cfs_mount *m,
                      const char *path,
                      const struct cfs_entry *e,
                      struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_uid = m->uid;
    st->st_gid = m->gid;
    st->st_atim = st->st_mtim = st->st_ctim = m->started;
    st->st_blksize = 4096;
    switch (e->kind) {
    case CFS_KIND_ATTR:
        st->st_mode = S_IFREG | (e->mode & 07777); /* F4 */
        st->st_size = 4096;
        st->st_nlink = 1;
        break;
    case CFS_KIND_BIN_ATTR:
        st->st_mode = S_IFREG | (e->mode & 07777);
        st->st_size = 0; /* F4, BIN7 */
        st->st_nlink = 1;
        break;
    case CFS_KIND_LINK: {
        char *text = path ? cfs_mount_link_text(path, e->target) : NULL;

        st->st_mode = S_IFLNK | 0777; /* F5 */
        st->st_size = text ? (off_t)strlen(text) : 0;
        st->st_nlink = 1;
        free(text);
        break;
    }
    default:
        st->st_mode = S_IFDIR | 0755;              /* F3 */
        st->st_nlink = path ? dir_links(path) : 2; /* F6 */
        break;
    }
}

/*
 * Committed reads (docs/DESIGN.md §6): what the mount returns is committed
 * state, as over HTTP. A read brackets itself (read_start()); this FUSE
 * thread then waits for the changes to what it read to be committed, and
 * the read runs again when one was undone or another thread changed it
 * while it read. After READ_LOCK_AFTER tries it reads under the mutation
 * lock (it cannot be torn there); after READ_TRIES (undos in a row) it
 * fails EAGAIN rather than return what may be undone.
 */
#define READ_LOCK_AFTER 3
#define READ_TRIES      32

static void read_start(struct cfs_read_mark *rm, int tries)
{
    cfs_read_begin(rm);
    if (tries >= READ_LOCK_AFTER) {
        cfs_read_lock();
    }
}

enum read_state { READ_DONE, READ_AGAIN, READ_GAVE_UP };

/* FUSE threads waiting in read_over() for a commit (tests). */
static atomic_uint reads_waiting;

unsigned cfs_mount_reads_waiting(void)
{
    return atomic_load(&reads_waiting);
}

static enum read_state read_over(struct cfs_read_mark *rm, int *tries)
{
    int r;

    if (*tries >= READ_LOCK_AFTER) {
        /* what it read is fixed before a writer may change it again */
        (void)cfs_read_end(rm);
        cfs_read_unlock();
    }
    atomic_fetch_add(&reads_waiting, 1);
    r = cfs_read_wait(rm);
    atomic_fetch_sub(&reads_waiting, 1);
    if (r == 0) {
        return READ_DONE;
    }
    return ++*tries < READ_TRIES ? READ_AGAIN : READ_GAVE_UP;
}

static int
m_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    struct cfs_read_mark rm;
    struct cfs_entry e;
    enum read_state rs;
    int r, tries = 0;

    path = fh_path(path, fi);
    for (;;) {
        read_start(&rm, tries);
        r = cfs_stat(path, &e);
        rs = read_over(&rm, &tries);
        if (rs == READ_DONE) {
            break;
        }
        if (r == 0) {
            cfs_entry_done(&e);
        }
        if (rs == READ_GAVE_UP) {
            return -EAGAIN;
        }
    }
    if (r) {
        return r;
    }
    fill_stat(self(), path, &e, st);
    cfs_entry_done(&e);
    return 0;
}

/* A directory's path from opendir, for readdir without one
 * (nullpath_ok). */
/* The open list of @m: @h is open / is released. */
static void handle_add(struct cfs_mount *m, struct mhandle *h)
{
    pthread_mutex_lock(&m->open_lock);
    h->prev = NULL;
    h->next = m->open;
    if (m->open) {
        m->open->prev = h;
    }
    m->open = h;
    pthread_mutex_unlock(&m->open_lock);
}

static void handle_del(struct cfs_mount *m, struct mhandle *h)
{
    pthread_mutex_lock(&m->open_lock);
    if (h->prev) {
        h->prev->next = h->next;
    } else {
        m->open = h->next;
    }
    if (h->next) {
        h->next->prev = h->prev;
    }
    h->prev = h->next = NULL;
    pthread_mutex_unlock(&m->open_lock);
}

static int m_opendir(const char *path, struct fuse_file_info *fi)
{
    struct mhandle *h = calloc(1, sizeof(*h));

    if (!h || !(h->path = strdup(path))) {
        free(h);
        return -ENOMEM;
    }
    handle_add(self(), h);
    fi->fh = (uint64_t)(uintptr_t)h;
    return 0;
}

static int m_releasedir(const char *path, struct fuse_file_info *fi)
{
    struct mhandle *h = (struct mhandle *)(uintptr_t)fi->fh;

    (void)path;
    handle_del(self(), h);
    free(h->path);
    free(h);
    return 0;
}

static int m_readdir(const char *path,
                     void *buf,
                     fuse_fill_dir_t fill,
                     off_t off,
                     struct fuse_file_info *fi,
                     enum fuse_readdir_flags flags)
{
    struct cfs_mount *m = self();
    struct cfs_entry *es = NULL;
    struct cfs_read_mark rm;
    struct stat st;
    size_t n = 0;
    int r, tries = 0;

    (void)off;
    (void)flags;
    for (;;) {
        enum read_state rs;

        read_start(&rm, tries);
        r = cfs_readdir(fh_path(path, fi), &es, &n);
        rs = read_over(&rm, &tries);
        if (rs == READ_DONE) {
            break;
        }
        if (r == 0) {
            cfs_entries_free(es, n);
            es = NULL;
            n = 0;
        }
        if (rs == READ_GAVE_UP) {
            return -EAGAIN;
        }
    }
    if (r) {
        return r;
    }
    memset(&st, 0, sizeof(st));
    st.st_mode = S_IFDIR;
    (void)fill(buf, ".", &st, 0, 0);
    (void)fill(buf, "..", &st, 0, 0);
    for (size_t i = 0; i < n; i++) {
        fill_stat(m, NULL, &es[i], &st); /* the type is what counts (F9) */
        if (fill(buf, es[i].name, &st, 0, 0)) {
            break;
        }
    }
    cfs_entries_free(es, n);
    return 0;
}

/* ---- directories and links ---------------------------------------------- */

static int m_mkdir(const char *path, mode_t mode)
{
    (void)mode; /* always 0755 (F3) */
    return change(M_MKDIR, path, NULL, NULL, 0, NULL, NULL);
}

static int m_rmdir(const char *path)
{
    return change(M_RMDIR, path, NULL, NULL, 0, NULL, NULL);
}

static int m_unlink(const char *path)
{
    return change(
        M_UNLINK, path, NULL, NULL, 0, NULL, NULL); /* UL3: EPERM for attrs */
}

static int m_rename(const char *from, const char *to, unsigned int flags)
{
    if (flags) {
        return -EINVAL; /* RN1: renameat2 flags configfs does not take */
    }
    return change(
        M_RENAME, from, to, NULL, 0, NULL, NULL); /* C7, C8; else RN1 EPERM */
}

/* A config path that is a link: its absolute target (for the walk of
 * cfs_mount_resolve()), else NULL. */
static char *follow_link(const char *path)
{
    struct cfs_entry e;
    char *target = NULL;

    if (cfs_stat(path, &e) == 0) {
        if (e.kind == CFS_KIND_LINK && e.target) {
            target = strdup(e.target);
        }
        cfs_entry_done(&e);
    }
    return target;
}

/* ---- where the caller is (SL5) ------------------------------------------ */

/* Where the caller sees the tree: the places of its mount namespace where
 * the mount's file system is mounted, read from /proc/PID/mountinfo by
 * the device, so a bind mount, a container's -v or a bind of one folder
 * are the tree as much as the mount point is. */
struct caller {
    struct cfs_mount_view *views;
    uint64_t *ids; /* their mount IDs (statx's stx_mnt_id) */
    size_t n, cap_views, cap_ids;
    int cwd_view;       /* the view the working directory is in, or -1 */
    char cwd[PATH_MAX]; /* its config path then, else its host path */
};

static void caller_done(struct caller *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free((char *)c->views[i].mountpoint);
        free((char *)c->views[i].root);
    }
    cfs_free(c->views);
    cfs_free(c->ids);
}

/* A field of mountinfo, its octal escapes (\040 ...) undone. */
static char *unescape(const char *f)
{
    char *out = malloc(strlen(f) + 1), *o = out;

    if (!out) {
        return NULL;
    }
    while (*f) {
        if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] >= '0' &&
            f[2] <= '7' && f[3] >= '0' && f[3] <= '7') {
            *o++ = (char)((f[1] - '0') * 64 + (f[2] - '0') * 8 + (f[3] - '0'));
            f += 4;
        } else {
            *o++ = *f++;
        }
    }
    *o = '\0';
    return out;
}

/* Add a view to @c; consumes @mp and @root (NULL: out of memory). */
static int add_view(struct caller *c, uint64_t id, char *mp, char *root)
{
    if (!mp || !root ||
        cfs_grow(&c->views, &c->cap_views, c->n, sizeof(*c->views), 4) < 0 ||
        cfs_grow(&c->ids, &c->cap_ids, c->n, sizeof(*c->ids), 4) < 0) {
        free(mp);
        free(root);
        return -ENOMEM;
    }
    c->views[c->n].mountpoint = mp;
    c->views[c->n].root = root;
    c->ids[c->n++] = id;
    return 0;
}

/* The mounts of the mount's device in the caller's namespace (mount ID,
 * parent, major:minor, root, mount point, ...: proc(5)), in mount order. */
static int read_views(struct cfs_mount *m, long pid, struct caller *c)
{
    char path[64], *line = NULL;
    size_t cap = 0;
    FILE *f;
    int r = 0;

    (void)snprintf(path, sizeof(path), "/proc/%ld/mountinfo", pid);
    f = fopen(path, "re");
    if (!f) {
        return -errno;
    }
    while (r == 0 && getline(&line, &cap, f) > 0) {
        /* the fields are escaped: none holds a blank */
        char *save = NULL, *end = NULL;
        const char *id = strtok_r(line, " \n", &save);
        const char *parent = id ? strtok_r(NULL, " \n", &save) : NULL;
        const char *dev = parent ? strtok_r(NULL, " \n", &save) : NULL;
        const char *root = dev ? strtok_r(NULL, " \n", &save) : NULL;
        const char *mp = root ? strtok_r(NULL, " \n", &save) : NULL;
        unsigned long long mnt_id;
        unsigned long maj, min;

        if (!mp) {
            continue;
        }
        mnt_id = strtoull(id, &end, 10);
        if (*end != '\0') {
            continue;
        }
        maj = strtoul(dev, &end, 10);
        if (*end != ':') {
            continue;
        }
        min = strtoul(end + 1, &end, 10);
        if (*end == '\0' && maj == m->dev_major && min == m->dev_minor) {
            r = add_view(c, mnt_id, unescape(mp), unescape(root));
        }
    }
    free(line);
    (void)fclose(f);
    return r;
}

/* @path without the leading @dir ("/" for @path itself), or NULL when
 * @path is not inside @dir. */
static const char *inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    while (n > 0 && dir[n - 1] == '/') {
        n--;
    }
    if (strncmp(path, dir, n) != 0) {
        return NULL;
    }
    if (path[n] == '\0') {
        return "/";
    }
    return path[n] == '/' ? path + n : NULL;
}

/* Fill @c for the process that made the call: FUSE gives its pid, /proc
 * the rest. Its working directory is known to be in the tree by its
 * identity, the device and mount ID statx() gives for /proc/PID/cwd
 * (AT_STATX_DONT_SYNC: from the kernel's inode, no request to this
 * mount); only the part of its path below that mount's point is text.
 * @need_cwd: a relative target. */
static int caller_of(struct cfs_mount *m, bool need_cwd, struct caller *c)
{
    long pid = (long)fuse_get_context()->pid;
    char proc[64], text[PATH_MAX], root[PATH_MAX];
    const char *rel = text, *below;
    struct statx stx;
    ssize_t n;

    memset(c, 0, sizeof(*c));
    c->cwd_view = -1;
    if (!m->have_dev || read_views(m, pid, c) != 0 || c->n == 0) {
        /* /proc unreadable: the mount point as this process sees it */
        caller_done(c);
        memset(c, 0, sizeof(*c));
        c->cwd_view = -1;
        if (add_view(c, 0, strdup(m->dir), strdup("/"))) {
            caller_done(c);
            return -ENOMEM;
        }
    }
    if (!need_cwd) {
        return 0;
    }
    (void)snprintf(proc, sizeof(proc), "/proc/%ld/cwd", pid);
    n = readlink(proc, text, sizeof(text) - 1);
    if (n < 0) {
        int r = -errno;

        caller_done(c);
        return r == -ENOENT ? -ESRCH : r; /* the caller is gone */
    }
    text[n] = '\0';
    /* the text is from this process's root: make it the caller's, as
     * its mountinfo is (a chroot) */
    (void)snprintf(proc, sizeof(proc), "/proc/%ld/root", pid);
    n = readlink(proc, root, sizeof(root) - 1);
    if (n > 1) {
        root[n] = '\0';
        below = inside(text, root);
        rel = below ? below : text;
    }
    (void)snprintf(c->cwd, sizeof(c->cwd), "%s", rel);
    (void)snprintf(proc, sizeof(proc), "/proc/%ld/cwd", pid);
    if (!m->have_dev ||
        statx(AT_FDCWD,
              proc,
              AT_STATX_DONT_SYNC,
              STATX_INO | STATX_MNT_ID,
              &stx) != 0 ||
        stx.stx_dev_major != m->dev_major ||
        stx.stx_dev_minor != m->dev_minor || !(stx.stx_mask & STATX_MNT_ID)) {
        return 0; /* outside the tree (or unknown): walked as text */
    }
    for (size_t i = c->n; i-- > 0;) {
        if (c->ids[i] == stx.stx_mnt_id &&
            (below = inside(rel, c->views[i].mountpoint)) != NULL) {
            const char *vroot = c->views[i].root;
            size_t rl = strlen(vroot);
            char cfg[PATH_MAX];

            while (rl > 0 && vroot[rl - 1] == '/') {
                rl--; /* "/" + "/usb_gadget" is "/usb_gadget" */
            }
            if (snprintf(cfg,
                         sizeof(cfg),
                         "%.*s%s",
                         (int)rl,
                         vroot,
                         rl > 0 && strcmp(below, "/") == 0 ? "" : below) >=
                (int)sizeof(cfg)) {
                caller_done(c);
                return -ENAMETOOLONG;
            }
            (void)snprintf(c->cwd, sizeof(c->cwd), "%s", cfg);
            c->cwd_view = (int)i;
            break;
        }
    }
    return 0;
}

static int m_symlink(const char *text, const char *path)
{
    struct cfs_mount *m = self();
    struct caller c;
    char *target = NULL;
    int r;

    r = caller_of(m, text[0] != '/', &c);
    if (r) {
        return r;
    }
    r = cfs_mount_resolve_at(
        c.views, c.n, c.cwd_view, c.cwd, text, follow_link, &target);
    caller_done(&c);
    if (r) {
        return r;
    }
    r = change(M_SYMLINK, path, target, NULL, 0, NULL, NULL);
    free(target);
    return r;
}

static int m_readlink(const char *path, char *buf, size_t size)
{
    char *target = NULL, *text;
    struct cfs_read_mark rm;
    int r, tries = 0;

    for (;;) {
        enum read_state rs;

        read_start(&rm, tries);
        r = cfs_readlink(path, &target);
        rs = read_over(&rm, &tries);
        if (rs == READ_DONE) {
            break;
        }
        cfs_free(target);
        target = NULL;
        if (rs == READ_GAVE_UP) {
            return -EAGAIN;
        }
    }
    if (r) {
        return r;
    }
    text = cfs_mount_link_text(path, target); /* RL1 */
    cfs_free(target);
    if (!text) {
        return -ENOMEM;
    }
    (void)snprintf(buf, size, "%s", text);
    free(text);
    return 0;
}

/* ---- refusals (X1, and what configfsd does not keep) -------------------- */

static int m_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)path;
    (void)mode;
    (void)fi;
    return -EACCES; /* X1: no regular file can be made */
}

static int m_mknod(const char *path, mode_t mode, dev_t dev)
{
    (void)path;
    (void)mode;
    (void)dev;
    return -EPERM; /* X1 */
}

static int m_link(const char *from, const char *to)
{
    (void)from;
    (void)to;
    return -EPERM; /* X1 */
}

/* F7: the kernel keeps a changed mode or owner in the inode until it is
 * evicted; configfsd keeps none (docs/mount.md): refused, not pretended. */
static int m_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)path;
    (void)mode;
    (void)fi;
    return -EPERM;
}

static int
m_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    (void)path;
    (void)uid;
    (void)gid;
    (void)fi;
    return -EPERM;
}

static int m_utimens(const char *path,
                     const struct timespec tv[2],
                     struct fuse_file_info *fi)
{
    struct cfs_entry e;
    int r;

    (void)tv;
    /* F7: works (touch), keeps nothing (F8) */
    r = cfs_stat(fh_path(path, fi), &e);
    if (r == 0) {
        cfs_entry_done(&e);
    }
    return r;
}

static int m_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct cfs_entry e;
    int r;

    (void)size;
    r = cfs_stat(fh_path(path, fi), &e);
    if (r) {
        return r;
    }
    /* WR4, X3: O_TRUNC and truncate(2) succeed and call nothing */
    r = e.kind == CFS_KIND_ATTR || e.kind == CFS_KIND_BIN_ATTR ? 0 : -EISDIR;
    cfs_entry_done(&e);
    return r;
}

static int m_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    (void)datasync;
    (void)fi;
    return -EINVAL; /* F10 (each change is durable when its write returns) */
}

/* ---- attribute files ---------------------------------------------------- */

static int m_open(const char *path, struct fuse_file_info *fi)
{
    struct cfs_entry e;
    struct mfile *f;
    int acc = fi->flags & O_ACCMODE, r;

    r = cfs_stat(path, &e);
    if (r) {
        return r; /* RD2: ENOENT */
    }
    if (e.kind != CFS_KIND_ATTR && e.kind != CFS_KIND_BIN_ATTR) {
        cfs_entry_done(&e);
        return -EISDIR;
    }
    /* RD1, BIN1: a read bit and show/read, a write bit and store/write,
     * for root too */
    if (((acc == O_RDONLY || acc == O_RDWR) && !e.readable) ||
        ((acc == O_WRONLY || acc == O_RDWR) && !e.writable)) {
        cfs_entry_done(&e);
        return -EACCES;
    }
    f = calloc(1, sizeof(*f));
    if (!f) {
        cfs_entry_done(&e);
        return -ENOMEM;
    }
    pthread_mutex_init(&f->lock, NULL);
    f->binary = e.kind == CFS_KIND_BIN_ATTR;
    f->max_size = e.max_size;
    f->created = e.created;
    f->h.path = strdup(path);
    if (!f->h.path) {
        free(f);
        cfs_entry_done(&e);
        return -ENOMEM;
    }
    cfs_entry_done(&e);
    f->h.file = true;
    handle_add(self(), &f->h);
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->direct_io = 1; /* no page cache: each open sees its own show */
    fi->keep_cache = 0;
    fi->nonseekable = f->binary; /* BIN7 */
    return 0;
}

static struct mfile *mfile_of(const struct fuse_file_info *fi)
{
    return (struct mfile *)(uintptr_t)fi->fh;
}

static int m_read(const char *path,
                  char *buf,
                  size_t size,
                  off_t off,
                  struct fuse_file_info *fi)
{
    struct mfile *f = mfile_of(fi);
    int r = 0;

    pthread_mutex_lock(&f->lock);
    if (f->binary && f->written) {
        r = -ETXTBSY; /* BIN2 */
        goto out;
    }
    if (!f->have_snap) {
        char *data = NULL;
        size_t len = 0;
        struct cfs_read_mark rm;
        int tries = 0;

        path = fh_path(path, fi);
        for (;;) {
            enum read_state rs;

            read_start(&rm, tries);
            /* RD6: the item it was opened on, before and after the show,
             * so that a namesake's value is never this file's */
            r = same_item(path, f->created);
            if (r == 0) {
                r = cfs_show(path, &data, &len); /* RD3 */
            }
            if (r == 0 && (r = same_item(path, f->created)) != 0) {
                cfs_free(data);
                data = NULL;
            }
            rs = read_over(&rm, &tries);
            if (rs == READ_DONE) {
                break;
            }
            cfs_free(data);
            data = NULL;
            if (rs == READ_GAVE_UP) {
                r = -EAGAIN;
                goto out;
            }
        }
        if (r) {
            goto out; /* RD5: the next read tries again */
        }
        if (f->binary && f->max_size && len > f->max_size) {
            cfs_free(data);
            r = -EFBIG; /* BIN3 */
            goto out;
        }
        f->snap = data;
        f->snap_len = len;
        f->have_snap = true;
    }
    if (off < 0 || (size_t)off >= f->snap_len) {
        r = 0; /* RD4 */
        goto out;
    }
    if (size > f->snap_len - (size_t)off) {
        size = f->snap_len - (size_t)off;
    }
    memcpy(buf, f->snap + off, size);
    r = (int)size;
out:
    pthread_mutex_unlock(&f->lock);
    return r;
}

static int m_write(const char *path,
                   const char *buf,
                   size_t size,
                   off_t off,
                   struct fuse_file_info *fi)
{
    struct mfile *f = mfile_of(fi);
    int r;

    pthread_mutex_lock(&f->lock);
    if (!f->binary) {
        /* WR1: one store of at most 4095 bytes, the position plays no
         * part; WR4: nothing written is EFAULT */
        if (size == 0) {
            r = -EFAULT;
        } else {
            if (size > CONFIGFS_PAGE_SIZE - 1) {
                size = CONFIGFS_PAGE_SIZE - 1; /* WR3: the caller loops */
            }
            /* WR7: the item it was opened on, not a namesake */
            r = change(
                M_STORE, fh_path(path, fi), NULL, buf, size, &f->created, NULL);
            if (r == 0) {
                r = (int)size;
                f->have_snap = false; /* WR6 */
                cfs_free(f->snap);
                f->snap = NULL;
            }
        }
    } else if (f->have_snap) {
        r = -ETXTBSY; /* BIN2 */
    } else if (off < 0 || (f->max_size && (size_t)off + size > f->max_size)) {
        r = -EFBIG; /* BIN4 */
    } else {
        size_t end = (size_t)off + size;

        if (end > f->bin_len) {
            char *nb = cfs_realloc(f->bin, end);

            if (!nb) {
                r = -ENOMEM;
                goto out;
            }
            memset(nb + f->bin_len, 0, end - f->bin_len); /* gaps: zeros */
            f->bin = nb;
            f->bin_len = end;
        }
        memcpy(f->bin + off, buf, size);
        f->written = true;
        r = (int)size;
    }
out:
    pthread_mutex_unlock(&f->lock);
    return r;
}

/* BIN5: the gathered bytes are delivered in one write() when the file is
 * closed. Done at flush, which close(2) waits for, so the change is
 * durable when close returns and its error is close's (the kernel
 * delivers at release and drops the error: docs/mount.md). */
static int deliver(const char *path, struct mfile *f)
{
    int r = 0;

    pthread_mutex_lock(&f->lock);
    if (f->binary && f->written) {
        bool gone = false;

        path = path ? path : f->h.path;
        r = change(M_STORE, path, NULL, f->bin, f->bin_len, &f->created, &gone);
        if (gone) {
            r = 0; /* BIN6: the item went away: skipped without a word */
        }
        f->written = false;
    }
    pthread_mutex_unlock(&f->lock);
    return r;
}

static int m_flush(const char *path, struct fuse_file_info *fi)
{
    return deliver(path, mfile_of(fi));
}

static void mfile_free(struct mfile *f)
{
    pthread_mutex_destroy(&f->lock);
    cfs_free(f->snap);
    cfs_free(f->bin);
    free(f->h.path);
    free(f);
}

static int m_release(const char *path, struct fuse_file_info *fi)
{
    struct mfile *f = mfile_of(fi);

    handle_del(self(), &f->h);
    (void)deliver(path, f); /* written without a flush: still delivered */
    mfile_free(f);
    return 0;
}

/* ---- the session --------------------------------------------------------- */

static void *m_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->direct_io = 1;
    cfg->kernel_cache = 0;
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->use_ino = 0;
    cfg->hard_remove = 1;
    cfg->nullpath_ok = 1; /* read, write, flush, release: see fh_path() */
    return fuse_get_context()->private_data;
}

static const struct fuse_operations mount_ops = {
    .init = m_init,
    .getattr = m_getattr,
    .opendir = m_opendir,
    .releasedir = m_releasedir,
    .readdir = m_readdir,
    .readlink = m_readlink,
    .mkdir = m_mkdir,
    .rmdir = m_rmdir,
    .unlink = m_unlink,
    .symlink = m_symlink,
    .rename = m_rename,
    .link = m_link,
    .mknod = m_mknod,
    .create = m_create,
    .chmod = m_chmod,
    .chown = m_chown,
    .utimens = m_utimens,
    .truncate = m_truncate,
    .open = m_open,
    .read = m_read,
    .write = m_write,
    .flush = m_flush,
    .release = m_release,
    .fsync = m_fsync,
};

/* One of the threads that serve the kernel's requests: libfuse's own
 * loop, but also woken by the stop (stop_fd), so that a mount kept busy
 * by a process inside it does not keep the daemon from stopping. The
 * device is non-blocking: of the threads woken for one request, one gets
 * it and the others EAGAIN. */
static void *worker(void *arg)
{
    struct cfs_mount *m = arg;
    struct fuse_session *se = fuse_get_session(m->fuse);
    struct fuse_buf buf = {0};
    struct pollfd p[2] = {
        {.fd = fuse_session_fd(se), .events = POLLIN},
        {.fd = m->stop_fd, .events = POLLIN},
    };

    while (!fuse_session_exited(se)) {
        int r;

        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (p[1].revents) {
            break; /* cfs_mount_stop() */
        }
        r = fuse_session_receive_buf(se, &buf);
        if (r == -EAGAIN || r == -EINTR) {
            continue;
        }
        if (r <= 0) {
            break; /* unmounted (0), or the device failed */
        }
        fuse_session_process_buf(se, &buf);
    }
    free(buf.mem);
    return NULL;
}

static int fail(char *err, size_t err_size, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_size, int r, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return r;
}

/* The mount point: a directory with nothing in it. */
static int check_dir(const char *dir, char *err, size_t err_size)
{
    struct stat st;
    DIR *d;
    const struct dirent *de;
    int r = 0;

    if (stat(dir, &st) < 0) {
        r = -errno;
        return fail(err, err_size, r, "%s: %s", dir, strerror(-r));
    }
    if (!S_ISDIR(st.st_mode)) {
        return fail(err, err_size, -ENOTDIR, "%s is not a directory", dir);
    }
    d = opendir(dir);
    if (!d) {
        r = -errno;
        return fail(err, err_size, r, "%s: %s", dir, strerror(-r));
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            r = fail(err,
                     err_size,
                     -ENOTEMPTY,
                     "%s is not empty (it holds '%s'): mount on an empty "
                     "directory",
                     dir,
                     de->d_name);
            break;
        }
    }
    (void)closedir(d);
    return r;
}

/* The requests in flight finish and the workers end; then the unmount,
 * lazy (MNT_DETACH as root, fusermount3 -z otherwise): a process still
 * inside the mount sees it go when the device closes (ENOTCONN). */
static void stop(struct cfs_mount *m)
{
    fuse_exit(m->fuse);
    if (m->stop_fd >= 0) {
        (void)eventfd_write(m->stop_fd, 1);
    }
    for (size_t i = 0; i < m->n_workers; i++) {
        pthread_join(m->workers[i], NULL);
    }
    fuse_unmount(m->fuse);
    fuse_destroy(m->fuse);
    /* opens whose release never came: the mount went under them (their
     * gathered binary bytes are dropped, as the kernel drops a dead
     * daemon's) */
    while (m->open) {
        struct mhandle *h = m->open;

        m->open = h->next;
        if (h->file) {
            mfile_free((struct mfile *)h);
        } else {
            free(h->path);
            free(h);
        }
    }
    pthread_mutex_destroy(&m->open_lock);
    if (m->stop_fd >= 0) {
        (void)close(m->stop_fd);
    }
    free(m->dir);
    free(m);
}

int cfs_mount_start(const struct cfs_mount_options *opts,
                    struct cfs_mount **ret_mount,
                    char *err,
                    size_t err_size)
{
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    struct cfs_mount *m;
    char resolved[PATH_MAX];
    int r;

    if (err && err_size) {
        err[0] = '\0';
    }
    r = check_dir(opts->dir, err, err_size);
    if (r) {
        return r;
    }
    if (access("/dev/fuse", R_OK | W_OK) < 0) {
        r = -errno;
        return fail(err,
                    err_size,
                    r == -ENOENT ? -ENODEV : r,
                    "/dev/fuse: %s (FUSE is needed for --mount; in a "
                    "container: --device /dev/fuse --cap-add SYS_ADMIN)",
                    strerror(-r));
    }
    if (!realpath(opts->dir, resolved)) {
        r = -errno;
        return fail(err, err_size, r, "%s: %s", opts->dir, strerror(-r));
    }
    m = calloc(1, sizeof(*m));
    if (!m || !(m->dir = strdup(resolved))) {
        free(m);
        return fail(err, err_size, -ENOMEM, "out of memory");
    }
    m->stop_fd = -1;
    pthread_mutex_init(&m->open_lock, NULL);
    m->opts = *opts;
    m->uid = getuid();
    m->gid = getgid();
    clock_gettime(CLOCK_REALTIME, &m->started);
    if (fuse_opt_add_arg(&args, "configfsd") || fuse_opt_add_arg(&args, "-o") ||
        fuse_opt_add_arg(&args,
                         opts->allow_other
                             ? "fsname=configfsd,subtype=configfsd,"
                               "default_permissions,allow_other"
                             : "fsname=configfsd,subtype=configfsd,"
                               "default_permissions")) {
        fuse_opt_free_args(&args);
        free(m->dir);
        free(m);
        return fail(err, err_size, -ENOMEM, "out of memory");
    }
    m->fuse = fuse_new(&args, &mount_ops, sizeof(mount_ops), m);
    fuse_opt_free_args(&args);
    if (!m->fuse) {
        free(m->dir);
        free(m);
        return fail(err, err_size, -EIO, "libfuse refused the options");
    }
    if (fuse_mount(m->fuse, m->dir) != 0) {
        fuse_destroy(m->fuse);
        free(m->dir);
        free(m);
        return fail(err,
                    err_size,
                    -EIO,
                    "cannot mount on %s (libfuse said why, above)",
                    resolved);
    }
    m->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (m->stop_fd < 0 ||
        fcntl(fuse_session_fd(fuse_get_session(m->fuse)), F_SETFL, O_NONBLOCK) <
            0) {
        r = -errno;
        stop(m);
        return fail(err, err_size, r, "cannot start: %s", strerror(-r));
    }
    {
        /* the mount's device, before the workers read it: from the
         * kernel's root inode (AT_STATX_DONT_SYNC sends no request) */
        struct statx stx;

        if (statx(AT_FDCWD, m->dir, AT_STATX_DONT_SYNC, STATX_INO, &stx) == 0) {
            m->dev_major = stx.stx_dev_major;
            m->dev_minor = stx.stx_dev_minor;
            m->have_dev = true;
        }
    }
    for (size_t i = 0; i < MOUNT_WORKERS; i++) {
        r = -pthread_create(&m->workers[i], NULL, worker, m);
        if (r) {
            stop(m);
            return fail(err, err_size, r, "cannot start: %s", strerror(-r));
        }
        m->n_workers++;
    }
    *ret_mount = m;
    return 0;
}

void cfs_mount_stop(struct cfs_mount *m)
{
    if (m) {
        stop(m);
    }
}
