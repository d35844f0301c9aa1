// SPDX-License-Identifier: MIT
/*
 * fuzz-base64.c - the base64 codec of values: any bytes encoded as the
 * server sends them (a string if UTF-8, else base64) and decoded as it
 * accepts them back must come out the same; any text given as base64 is
 * either refused or decoded without overrun.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "body.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = json_object();
    json_t *text;
    const char *why = NULL;
    size_t len = 0;
    char *out;

    if (!obj) {
        return 0;
    }
    /* round trip */
    cfs_http_value_json(obj, (const char *)data, size);
    out = cfs_http_json_value_bytes(json_object_get(obj, "value"),
                                    json_object_get(obj, "encoding"),
                                    &len,
                                    &why);
    if (!out || len != size || (size && memcmp(out, data, size) != 0)) {
        abort();
    }
    free(out);
    json_decref(obj);
    /* the input as base64 text */
    text = json_stringn_nocheck((const char *)data, size);
    obj = json_string("base64");
    out = cfs_http_json_value_bytes(text, obj, &len, &why);
    if (out && len > size / 4 * 3 + 2) {
        abort();
    }
    free(out);
    json_decref(text);
    json_decref(obj);
    return 0;
}
