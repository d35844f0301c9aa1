// SPDX-License-Identifier: MIT
/*
 * base64.c - base64 through nettle (already linked for SHA-256), strict on
 * the way in: the project's one codec (configfs/base64.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include <configfs/base64.h>

char *cfs_base64_encode(const void *in, size_t len)
{
    size_t n = BASE64_ENCODE_RAW_LENGTH(len);
    char *out = malloc(n + 1);

    if (!out) {
        return NULL;
    }
    base64_encode_raw(out, len, in);
    out[n] = '\0';
    return out;
}

int cfs_base64_decode(const char *in, size_t len, char **ret, size_t *ret_len)
{
    struct base64_decode_ctx ctx;
    size_t cap = BASE64_DECODE_LENGTH(len);
    size_t n = cap;
    char *out;
    int r = 0;

    if (len % 4 != 0) {
        return -EINVAL; /* unpadded, or a character short or over */
    }
    out = malloc(cap + 1);
    if (!out) {
        return -ENOMEM;
    }
    base64_decode_init(&ctx);
    /* nettle refuses what is outside the alphabet, and padding that is not
     * at the end, but skips whitespace and lets bits left over by padding
     * through: the round trip below catches those. */
    if (!base64_decode_update(&ctx, &n, (uint8_t *)out, len, in) ||
        !base64_decode_final(&ctx)) {
        r = -EINVAL;
    } else {
        char *again = cfs_base64_encode(out, n);

        if (!again) {
            r = -ENOMEM;
        } else if (strlen(again) != len || memcmp(again, in, len) != 0) {
            r = -EINVAL; /* whitespace, or non-zero padding bits */
        }
        free(again);
    }
    if (r < 0) {
        free(out);
        return r;
    }
    out[n] = '\0';
    *ret = out;
    *ret_len = n;
    return 0;
}
