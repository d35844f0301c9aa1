// SPDX-License-Identifier: MIT
/*
 * fuzz-query.c - the server's URL decoding: percent-decoding (query values
 * and path segments) and the URL path under /api/v1/config turned into a
 * config path, with the invariants a caller relies on checked.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    char *d, *path = NULL;
    size_t dlen = 0;

    if (!s) {
        return 0;
    }
    memcpy(s, data, size);
    s[size] = '\0';
    d = cfs_http_pct_decode(s, size, &dlen);
    if (d) {
        /* never longer than the input, always terminated */
        if (dlen > size || d[dlen] != '\0') {
            abort();
        }
        free(d);
    }
    if (cfs_http_config_path(s, &path) == 0) {
        /* absolute, no empty, "." or ".." segment, no NUL inside */
        if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") ||
            strstr(path, "/../")) {
            abort();
        }
        size_t n = strlen(path);
        if (n > 1 && path[n - 1] == '/') {
            abort();
        }
        free(path);
    }
    free(s);
    return 0;
}
