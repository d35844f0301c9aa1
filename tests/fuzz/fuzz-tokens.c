// SPDX-License-Identifier: MIT
/*
 * fuzz-tokens.c - the --tokens file parser: the input is the file (read
 * through a memfd), then tokens are looked up in the table it gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cfs_http_tokens *t = NULL;
    char path[64], err[256];
    int fd = memfd_create("tokens", MFD_CLOEXEC);
    const char *name = NULL;

    if (fd < 0) {
        return 0;
    }
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    (void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (cfs_http_tokens_load(path, &t, err, sizeof(err)) == 0) {
        if (cfs_http_tokens_count(t) == 0) {
            abort(); /* a table is never empty */
        }
        /* the input itself and a well-formed token as bearer tokens */
        (void)cfs_http_tokens_find(t, (const char *)data, size, &name);
        if (cfs_http_tokens_find(t, "s3cret-token-0123456789", 23, &name) !=
            CFS_ROLE_NONE) {
            (void)cfs_http_tokens_role_now(t, name, t);
        }
        cfs_http_tokens_unref(t);
    } else if (memchr(err, '\0', sizeof(err)) == NULL) {
        abort();
    }
    close(fd);
    return 0;
}
