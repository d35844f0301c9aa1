// SPDX-License-Identifier: MIT
/*
 * fuzz-path.c - the config path and name parser of core: the input is two
 * paths, one per line, resolved by every read (stat, readdir, readlink,
 * show) and every mutation (mkdir, store, symlink, rename, unlink, rmdir)
 * in a transaction that is then aborted, over the samples and the shipped
 * schemas. The tree is the same after each input.
 */
#include <stdlib.h>
#include <string.h>

#include <configfs/cfs.h>
#include <configfs/schema.h>

#include "fuzz.h"
#include "samples.h"

static struct cfs_schema_set *set; /* registered for the process's life */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (cfs_samples_register() < 0 ||
        cfs_schema_load_dir(CFS_SOURCE_ROOT "/schemas", &set, NULL) < 0 ||
        cfs_schema_set_register(set, NULL) < 0) {
        abort();
    }
    return 0;
}

static void reads(const char *path)
{
    struct cfs_entry e, *es = NULL;
    size_t n = 0;
    char *s = NULL;

    if (cfs_stat(path, &e) == 0) {
        cfs_entry_done(&e);
    }
    if (cfs_readdir(path, &es, &n) == 0) {
        cfs_entries_free(es, n);
    }
    if (cfs_readlink(path, &s) == 0) {
        cfs_free(s);
    }
    s = NULL;
    if (cfs_show(path, &s, &n) == 0) {
        cfs_free(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *a = malloc(size + 1);
    char *b;
    struct cfs_txn *txn = NULL;

    if (!a) {
        return 0;
    }
    memcpy(a, data, size);
    a[size] = '\0';
    (void)cfs_name_check(a, size);
    b = memchr(a, '\n', size);
    if (b) {
        *b++ = '\0';
    } else {
        b = a;
    }
    reads(a);
    reads(b);
    if (cfs_txn_begin(&txn) == 0) {
        (void)cfs_mkdir(txn, a);
        (void)cfs_write(txn, b, a, strlen(a));
        (void)cfs_symlink(txn, b, a);
        (void)cfs_rename(txn, a, b);
        (void)cfs_unlink(txn, b);
        (void)cfs_rmdir(txn, b);
        (void)cfs_txn_abort(txn);
    }
    free(a);
    return 0;
}
