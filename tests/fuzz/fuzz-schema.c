// SPDX-License-Identifier: MIT
/*
 * fuzz-schema.c - the schema loader (schema/): the input is a schema
 * file; one that loads is registered, described and unregistered again.
 */
#include <stdlib.h>
#include <string.h>

#include <configfs/schema.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cfs_schema *s = NULL;
    struct cfs_schema_error err;
    char line[1024];
    json_t *doc = NULL;

    if (cfs_schema_load_buffer(
            (const char *)data, size, "fuzz.json", &s, &err) < 0) {
        (void)cfs_schema_error_format(&err, line, sizeof(line));
        return 0;
    }
    if (cfs_schema_describe(s, &doc) == 0) {
        json_decref(doc);
    }
    if (cfs_schema_register(s) == 0) {
        cfs_schema_unregister(s);
    }
    cfs_schema_free(s);
    return 0;
}
