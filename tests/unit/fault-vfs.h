/* SPDX-License-Identifier: MIT */
/*
 * fault-vfs.h - a SQLite VFS that wraps the default one and fails writes
 * or syncs of the write-ahead log on demand, so tests can see what a full
 * disk or a failing device does to a commit.
 */
#ifndef FAULT_VFS_H
#define FAULT_VFS_H

#include <stdbool.h>

#define FAULT_VFS_NAME "cfs-fault"

/* Register the VFS (not as the default). Idempotent. @return SQLITE_OK. */
int fault_vfs_register(void);

/*
 * Fail the WAL write (or sync) that comes after @skip more successful ones
 * with SQLite result code @rc (SQLITE_FULL, SQLITE_IOERR_WRITE, ...), once,
 * or every time from then on if @sticky. A sync may first sleep @delay_ms,
 * which holds a commit open long enough for others to queue behind it.
 */
void fault_vfs_fail_write(int skip, int rc, bool sticky);
void fault_vfs_fail_sync(int skip, int rc, bool sticky, int delay_ms);

/* With delay_ms == FAULT_VFS_HOLD, the failing sync waits for this. */
#define FAULT_VFS_HOLD (-1)
void fault_vfs_release(void);

/*
 * Refuse to open a main database for writing with errno @err (EROFS: a
 * read-only file system; EACCES: a file the process may not write), as the
 * default VFS sees it: an existing database opens read-only, a missing one
 * cannot be made (SQLITE_CANTOPEN, and @err as the system errno). 0 stops.
 */
void fault_vfs_deny_write(int err);

/* Stop failing (and release a held sync). */
void fault_vfs_clear(void);

/* Faults injected since the last clear. */
int fault_vfs_hits(void);

#endif
