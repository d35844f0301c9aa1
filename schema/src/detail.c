// SPDX-License-Identifier: MIT
/*
 * detail.c - the reason a schema callback gave for its last refusal.
 *
 * Callbacks return a bare errno to core; the words that explain it ("at
 * most 65535") are kept per thread, because core runs every callback on
 * the thread of the operation that triggered it.
 */
#include "internal.h"

#include <stdarg.h>

static _Thread_local char detail[CFS_SCHEMA_DETAIL_LEN];

const char *cfs_schema_last_detail(void)
{
    return detail;
}

void cfs_schema_clear_detail(void)
{
    detail[0] = '\0';
}

void schema_set_detail(const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): started above */
    n = vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    if (n < 0) {
        detail[0] = '\0';
    } else if ((size_t)n >= sizeof(detail)) {
        memcpy(detail + sizeof(detail) - 4, "...", 4);
    }
}
