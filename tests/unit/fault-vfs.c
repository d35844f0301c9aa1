// SPDX-License-Identifier: MIT
/*
 * fault-vfs.c - the fault-injecting SQLite VFS (see fault-vfs.h). Every
 * method forwards to the default VFS; only xWrite and xSync of files opened
 * as write-ahead logs look at the armed fault first.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "fault-vfs.h"

struct fault {
    atomic_int skip; /* successful calls left before the fault; -1: off */
    atomic_int rc;
    atomic_bool sticky;
    atomic_int delay_ms;
};

static struct fault write_fault = {.skip = -1};
static struct fault sync_fault = {.skip = -1};
static atomic_int hits;
static atomic_int deny_write; /* errno, or 0 */
static atomic_bool released;

struct fault_file {
    sqlite3_file base;
    bool wal;
    sqlite3_file *real; /* follows this struct */
};

static sqlite3_vfs fault_vfs;
static sqlite3_io_methods fault_io;

#define REAL(f) (((struct fault_file *)(f))->real)

static int fault_take(struct fault *f)
{
    int skip = atomic_load(&f->skip);

    if (skip < 0) {
        return SQLITE_OK;
    }
    if (skip > 0) {
        atomic_fetch_sub(&f->skip, 1);
        return SQLITE_OK;
    }
    if (!atomic_load(&f->sticky)) {
        atomic_store(&f->skip, -1);
    }
    atomic_fetch_add(&hits, 1);
    if (atomic_load(&f->delay_ms) == FAULT_VFS_HOLD) {
        struct timespec ts = {0, 1000000L};

        while (!atomic_load(&released)) {
            nanosleep(&ts, NULL);
        }
    } else if (atomic_load(&f->delay_ms) > 0) {
        int ms = atomic_load(&f->delay_ms);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
    }
    return atomic_load(&f->rc);
}

static int f_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}

static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    if (((struct fault_file *)f)->wal) {
        int rc = fault_take(&write_fault);

        if (rc != SQLITE_OK) {
            return rc;
        }
    }
    return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
    if (((struct fault_file *)f)->wal) {
        int rc = fault_take(&sync_fault);

        if (rc != SQLITE_OK) {
            return rc;
        }
    }
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int lock)
{
    return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int f_unlock(sqlite3_file *f, int lock)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int f_check_lock(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int f_dev(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
f_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, p);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static sqlite3_io_methods fault_io = {
    .iVersion = 3,
    .xClose = f_close,
    .xRead = f_read,
    .xWrite = f_write,
    .xTruncate = f_truncate,
    .xSync = f_sync,
    .xFileSize = f_size,
    .xLock = f_lock,
    .xUnlock = f_unlock,
    .xCheckReservedLock = f_check_lock,
    .xFileControl = f_control,
    .xSectorSize = f_sector,
    .xDeviceCharacteristics = f_dev,
    .xShmMap = f_shm_map,
    .xShmLock = f_shm_lock,
    .xShmBarrier = f_shm_barrier,
    .xShmUnmap = f_shm_unmap,
    .xFetch = f_fetch,
    .xUnfetch = f_unfetch,
};

static int v_open(sqlite3_vfs *vfs,
                  const char *name,
                  sqlite3_file *file,
                  int flags,
                  int *out_flags)
{
    sqlite3_vfs *real = vfs->pAppData;
    struct fault_file *ff = (struct fault_file *)file;
    int rc;

    memset(ff, 0, sizeof(*ff));
    ff->real = (sqlite3_file *)(ff + 1);
    ff->wal = (flags & SQLITE_OPEN_WAL) != 0;
    if (atomic_load(&deny_write) && (flags & SQLITE_OPEN_MAIN_DB) &&
        (flags & SQLITE_OPEN_READWRITE)) {
        int exists = 0;

        (void)real->xAccess(real, name, SQLITE_ACCESS_EXISTS, &exists);
        if (!exists) {
            return SQLITE_CANTOPEN;
        }
        /* what the default VFS does when O_RDWR is refused */
        flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) |
                SQLITE_OPEN_READONLY;
    }
    rc = real->xOpen(real, name, ff->real, flags, out_flags);
    /* SQLite calls xClose only when pMethods is set. */
    ff->base.pMethods = ff->real->pMethods ? &fault_io : NULL;
    return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xDelete(real, name, sync);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xAccess(real, name, flags, out);
}

static int v_full(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xFullPathname(real, name, n, out);
}

static void *v_dlopen(sqlite3_vfs *vfs, const char *name)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xDlOpen(real, name);
}

static void v_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
    sqlite3_vfs *real = vfs->pAppData;

    real->xDlError(real, n, msg);
}

static void (*v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xDlSym(real, h, sym);
}

static void v_dlclose(sqlite3_vfs *vfs, void *h)
{
    sqlite3_vfs *real = vfs->pAppData;

    real->xDlClose(real, h);
}

static int v_random(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xRandomness(real, n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xSleep(real, us);
}

static int v_time(sqlite3_vfs *vfs, double *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xCurrentTime(real, out);
}

static int v_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    if (atomic_load(&deny_write)) {
        return atomic_load(&deny_write);
    }
    return real->xGetLastError(real, n, out);
}

static int v_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    sqlite3_vfs *real = vfs->pAppData;

    return real->xCurrentTimeInt64(real, out);
}

int fault_vfs_register(void)
{
    sqlite3_vfs *real;

    if (sqlite3_vfs_find(FAULT_VFS_NAME)) {
        return SQLITE_OK;
    }
    real = sqlite3_vfs_find(NULL);
    fault_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct fault_file) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = FAULT_VFS_NAME,
        .pAppData = real,
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_full,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_random,
        .xSleep = v_sleep,
        .xCurrentTime = v_time,
        .xGetLastError = v_last_error,
        .xCurrentTimeInt64 = v_time64,
    };
    return sqlite3_vfs_register(&fault_vfs, 0);
}

static void arm(struct fault *f, int skip, int rc, bool sticky, int delay_ms)
{
    atomic_store(&released, false);
    atomic_store(&f->rc, rc);
    atomic_store(&f->sticky, sticky);
    atomic_store(&f->delay_ms, delay_ms);
    atomic_store(&f->skip, skip);
}

void fault_vfs_fail_write(int skip, int rc, bool sticky)
{
    arm(&write_fault, skip, rc, sticky, 0);
}

void fault_vfs_fail_sync(int skip, int rc, bool sticky, int delay_ms)
{
    arm(&sync_fault, skip, rc, sticky, delay_ms);
}

void fault_vfs_release(void)
{
    atomic_store(&released, true);
}

void fault_vfs_deny_write(int err)
{
    atomic_store(&deny_write, err);
}

void fault_vfs_clear(void)
{
    atomic_store(&deny_write, 0);
    atomic_store(&released, true);
    atomic_store(&write_fault.skip, -1);
    atomic_store(&sync_fault.skip, -1);
    atomic_store(&hits, 0);
}

int fault_vfs_hits(void)
{
    return atomic_load(&hits);
}
